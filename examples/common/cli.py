"""The command line every example starts from: ``python -m examples.<name>``, described by its docstring."""

from __future__ import annotations

import argparse
import os
import tempfile


def example_parser(
    name: str,
    doc: str | None,
    *,
    epochs: int | None = None,
    artifact_dir: bool = False,
    smoke: bool = False,
) -> argparse.ArgumentParser:
    """A parser for ``python -m examples.<name>`` whose description is the first line of ``doc``.

    Each example passes its module docstring (``__doc__``), asks for the options
    most examples share, and adds its own:

    - ``epochs``: ``--epochs N``, with this default;
    - ``artifact_dir``: ``--artifact-dir DIR``, by default ``<temp dir>/<name>``;
    - ``smoke``: ``--smoke``, a seconds-long run on a few items (what the tests run).

    Example:
        >>> parser = example_parser("xor", "Learn XOR.\\n\\nMore text.", epochs=3, smoke=True)
        >>> parser.prog, parser.description
        ('python -m examples.xor', 'Learn XOR.')
        >>> args = parser.parse_args(["--smoke"])
        >>> args.epochs, args.smoke
        (3, True)
    """
    summary = doc.splitlines()[0] if doc else None
    parser = argparse.ArgumentParser(prog=f"python -m examples.{name}", description=summary)
    if artifact_dir:
        parser.add_argument("--artifact-dir", default=os.path.join(tempfile.gettempdir(), name))
    if epochs is not None:
        parser.add_argument("--epochs", type=int, default=epochs)
    if smoke:
        parser.add_argument("--smoke", action="store_true", help="a seconds-long run on a few items")
    return parser
