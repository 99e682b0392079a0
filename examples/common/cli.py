"""The command line every example starts from: ``python -m examples.<name>``, described by its docstring."""

from __future__ import annotations

import argparse


def example_parser(name: str, doc: str | None) -> argparse.ArgumentParser:
    """A parser for ``python -m examples.<name>`` whose description is the first line of ``doc``.

    Each example passes its module docstring (``__doc__``) and adds its own options.

    Example:
        >>> parser = example_parser("xor", "Learn XOR.\\n\\nMore text.")
        >>> parser.prog, parser.description
        ('python -m examples.xor', 'Learn XOR.')
    """
    summary = doc.splitlines()[0] if doc else None
    return argparse.ArgumentParser(prog=f"python -m examples.{name}", description=summary)
