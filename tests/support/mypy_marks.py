"""Running mypy on snippet files and checking them against the marks they carry inline.

A snippet line ending in ``# E: <text>`` expects a mypy error on that line
containing <text>; ``# R: <type>`` expects ``reveal_type`` there to show
<type>. Every other line must be free of errors. Used by the typing tests
(tests/typing) and the named-tensor tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mypy import api

REPO_PYTHON = Path(__file__).resolve().parents[2] / "python"
LINE = re.compile(r"^(?P<file>[^:]+\.py):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$")

#: ``(kind, line, message)`` of each mypy report on a snippet file.
Reports = list[tuple[str, int, str]]


@dataclass(frozen=True)
class Finding:
    kind: str  # "E" for an error, "R" for a revealed type
    line: int
    text: str


def expected(source: str) -> set[Finding]:
    """The ``# E:`` and ``# R:`` marks of ``source``, with their line numbers."""
    marks = set()
    for number, line in enumerate(source.splitlines(), 1):
        match = re.search(r"# (?P<kind>[ER]): (?P<text>.*)$", line)
        if match:
            marks.add(Finding(match["kind"], number, match["text"].strip()))
    return marks


def run_mypy(directory: Path, files: list[str], plugin: bool, extra_config: str = "") -> dict[str, Reports]:
    """mypy --strict (with ferrum's plugin when ``plugin``) on ``files``: the reports per file stem."""
    config_file = directory / "mypy.ini"
    config_file.write_text(
        "[mypy]\nstrict = True\n"
        f"mypy_path = {REPO_PYTHON}\n"
        + ("plugins = ferrum.mypy\n" if plugin else "")
        + extra_config
    )
    stdout, stderr, _ = api.run(
        ["--config-file", str(config_file), "--cache-dir", str(directory / ".mypy_cache"),
         "--no-error-summary", "--hide-error-context", "--no-pretty", *files]
    )
    assert not stderr, stderr
    findings: dict[str, Reports] = {}
    for raw in stdout.splitlines():
        match = LINE.match(raw)
        assert match, f"unexpected mypy output: {raw}"
        if Path(match["file"]).resolve().parent != directory.resolve():
            continue  # ferrum's own modules are checked by the project's mypy run
        name = Path(match["file"]).stem
        findings.setdefault(name, []).append((match["kind"], int(match["line"]), match["message"]))
    return findings


def check_marks(name: str, source: str, got: Reports) -> None:
    """Assert that mypy's reports ``got`` on snippet ``name`` are exactly what ``source``'s marks expect."""
    wanted = expected(source)
    errors = {(line, message) for kind, line, message in got if kind == "error"}
    revealed = {
        (line, message.removeprefix("Revealed type is ").strip('"'))
        for _, line, message in got
        if message.startswith("Revealed type is")
    }
    for mark in wanted:
        if mark.kind == "E":
            hit = any(line == mark.line and mark.text in message for line, message in errors)
        else:
            hit = (mark.line, mark.text) in revealed
        assert hit, f"{name}:{mark.line}: expected {mark.kind} {mark.text!r}, mypy said {sorted(got)}"
    marked_errors = {mark.line for mark in wanted if mark.kind == "E"}
    assert {line for line, _ in errors} == marked_errors, f"{name}: mypy said {sorted(got)}"
