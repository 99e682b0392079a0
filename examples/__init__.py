"""ferrum's examples: run each from the repository root with ``python -m examples.<name>``."""
