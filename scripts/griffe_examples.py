"""A griffe extension for the documentation site (mkdocs.yml loads it).

ferrum's docstrings title their doctests ``Example:``, but griffe's Google
style reads only ``Examples:`` as examples (``Example:`` becomes a note, and
its ``>>>`` lines plain text, where ``[1.0, 2.0]`` reads as a Markdown link).
The section is renamed before the docstring is parsed, so the examples render
as code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Renames every docstring's ``Example:`` section to ``Examples:``."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is not None:
            docstring.value = _EXAMPLE.sub(r"\1Examples:", docstring.value)
