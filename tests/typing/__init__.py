"""Typing: the mypy plugin, pyright on the examples, the stub and docstring coverage."""
