"""``ARCHITECTURE.md`` is a map of the repository: every path it names in backticks exists.

A span in backticks is taken for a path when it has a slash (``rust/ferrum-core/src/ops/``) or
ends with a file extension (``stubtest-allowlist.txt``); names of code (``Var::matmul``,
``Tensor.matmul``, ``mypy --strict``) are not paths.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "ARCHITECTURE.md"
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"[\w.-]+(/[\w.-]*)*")
EXTENSIONS = (".md", ".py", ".pyi", ".rs", ".toml", ".txt", ".sh", ".yml", ".json")


def named_paths(text: str) -> list[str]:
    """The spans of ``text`` in backticks that name a path (folders end with a slash)."""
    found = []
    for span in SPAN.findall(text):
        if "::" in span or not PATH.fullmatch(span):
            continue
        if "/" in span or span.endswith(EXTENSIONS):
            found.append(span)
    return found


def test_the_map_names_paths() -> None:
    paths = named_paths(MAP.read_text(encoding="utf-8"))
    assert len(paths) > 50, paths
    assert "rust/ferrum-core/src/ops/matmul.rs" in paths
    assert "python/ferrum/store/" in paths


def test_every_path_in_the_map_exists() -> None:
    missing = [path for path in named_paths(MAP.read_text(encoding="utf-8")) if not (ROOT / path).exists()]
    assert missing == [], f"ARCHITECTURE.md names paths that do not exist: {missing}"
