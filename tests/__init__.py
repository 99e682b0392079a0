"""ferrum's test suite: one sub-package per area of the package (see tests/README.md)."""
