"""The README's Python examples run as written, in order, in one namespace."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(python_blocks()) >= 4


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the training example saves a record file
    # A registered module, since dataclasses (modules, configs) look their module up.
    module = types.ModuleType("readme_examples")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in python_blocks():
        exec(compile(block, str(README), "exec"), module.__dict__)
    assert (tmp_path / "mlp.mpk").stat().st_size > 0
