"""The distribution as a whole: metadata, README and docstring examples, examples, error types."""
