"""The Python examples of the README and the documentation pages run as written and pass ``mypy --strict``.

Each ``python`` block is a program of its own (its imports included), except
a block right after the line ``<!-- continues -->``, which continues the
program of the block before it, as the reader's session would. Every program
runs in a fresh namespace in an empty working directory; then all of them
are type-checked in one mypy run with ferrum's plugin. A block right after
``<!-- not run: <reason> -->`` is a fragment (it needs files made by
PyTorch, say) and is neither run nor checked.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from mypy import api as mypy_api

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!-- continues -->\n|<!-- not run: [^>]*\S -->\n)?```python\n(.*?)```", flags=re.S)


def programs(page: Path) -> list[str]:
    """The page's programs: standalone blocks with their continuations appended."""
    found: list[str] = []
    for marker, code in BLOCK.findall(page.read_text(encoding="utf-8")):
        if marker.startswith("<!-- not run"):
            continue
        if marker:
            assert found, f"{page.name}: a continuing block comes first"
            found[-1] += "\n" + code
        else:
            found.append(code)
    return found


ALL = [(page, i, code) for page in PAGES for i, code in enumerate(programs(page))]


def test_pages_have_examples() -> None:
    assert len(programs(ROOT / "README.md")) >= 4
    assert {page.name for page, _, _ in ALL} >= {"tensors.md", "autodiff.md", "modules.md", "training.md"}


@pytest.mark.parametrize(("page", "index", "code"), ALL, ids=[f"{p.name}-{i}" for p, i, _ in ALL])
def test_example_runs(
    page: Path, index: int, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # examples write record files and training runs
    # A registered module, since dataclasses (modules, configs) look their module up.
    module = types.ModuleType(f"example_{page.stem.replace('-', '_')}_{index}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, f"{page.name} (example {index + 1})", "exec"), module.__dict__)


def test_examples_pass_mypy_strict(tmp_path: Path) -> None:
    for page, index, code in ALL:
        (tmp_path / f"{page.stem.replace('-', '_')}_{index}.py").write_text(code, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\nplugins = ferrum.mypy\n", encoding="utf-8")
    out, err, status = mypy_api.run(
        ["--config-file", str(tmp_path / "mypy.ini"), "--cache-dir", str(tmp_path / "cache"), str(tmp_path)]
    )
    assert status == 0, out + err
