"""pyright (VS Code's Pylance) on the examples and the API contract: it has no plugins, so it may only miss
what plain typing cannot express, which ferrum's mypy plugin adds for mypy users; and it rejects each of
the contract's typing mistakes (``typing_rejects/``) on the marked line, as mypy does.

Those are two things (docs/habits.md): the members ``@config`` adds to a class (``with_<field>``
builders, ``save``, ``load``, ``to_dict``, ``from_dict``: a decorator cannot add methods to the type it
returns), and ``valid()``/the Learner's model on the inner backend (``M[Autodiff[I]] -> M[I]`` needs
higher-kinded types). Every other pyright error fails the test, so dataclass_transform, overloads,
typed tensors and ``model(x)`` stay checked under pyright. The contract lives outside the repository
(``../shared/contract``, or ``$FERRUM_CONTRACT_DIR``); without it only the examples are checked.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NO_PYRIGHT = importlib.util.find_spec("pyright") is None
CONTRACT = Path(os.environ.get("FERRUM_CONTRACT_DIR", REPO.parent / "shared" / "contract"))

#: Members @config adds at run time, which only the mypy plugin can type.
CONFIG_MEMBER = re.compile(r'Cannot access attribute "(with_\w+|save|load|to_dict|from_dict)" for class')
#: A quoted generic type in a message, with its first type argument (the backend): "Tensor[TrainB, D2]".
GENERIC = re.compile(r'"(\w+)\[(\w+(?:\[\w+\])?)')
#: A generic of a generic, with the inner one's backend: "LearningResult[Model[TrainB]]".
NESTED = re.compile(r'"(\w+)\[(\w+)\[(\w+(?:\[\w+\])?)\]\]"')
AUTODIFF = {"TrainB", "Autodiff[NdArray]"}
INNER = {"NdArray", "InferB"}


def inner_backend(message: str) -> bool:
    """One class on the autodiff backend where the other side wants it on the inner one (or back)."""
    first = message.splitlines()[0]
    found = GENERIC.findall(first) + [(f"{outer}[{inner}]", b) for outer, inner, b in NESTED.findall(first)]
    backends = {cls: {b for c, b in found if c == cls} for cls, _ in found}
    return any(kinds & AUTODIFF and kinds & INNER for kinds in backends.values())


def plugin_only(message: str) -> bool:
    return bool(CONFIG_MEMBER.search(message)) or inner_backend(message)


Diagnostic = dict[str, Any]


@pytest.fixture(scope="module")
def diagnostics(tmp_path_factory: pytest.TempPathFactory) -> list[Diagnostic]:
    """pyright's errors on the examples, the contract's steps and its typing rejects, in one run."""
    if NO_PYRIGHT:
        pytest.skip("pyright is not installed (the [test] extra brings it)")
    files = [str(REPO / "examples")]
    if CONTRACT.is_dir():
        files += sorted(str(p) for p in [*CONTRACT.glob("step*.py"), *CONTRACT.glob("typing_rejects/*.py")])
    project = tmp_path_factory.mktemp("pyright")
    (project / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "standard"}))
    proc = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable,
         "--project", str(project), *files],
        capture_output=True, text=True, timeout=600,
    )
    report = json.loads(proc.stdout)
    assert report["summary"]["filesAnalyzed"] >= len(files)
    return [d for d in report["generalDiagnostics"] if d["severity"] == "error"]


def line(d: Diagnostic) -> int:
    return int(d["range"]["start"]["line"]) + 1


def test_pyright_misses_only_what_needs_the_mypy_plugin(diagnostics: list[Diagnostic]) -> None:
    checked = [d for d in diagnostics if "typing_rejects" not in Path(d["file"]).parts]
    unexpected = [f"{d['file']}:{line(d)}: {d['message']}" for d in checked if not plugin_only(d["message"])]
    assert not unexpected, "\n".join(unexpected)


@pytest.mark.skipif(not CONTRACT.is_dir(), reason="the API contract is not beside the repository")
def test_pyright_rejects_the_contracts_typing_mistakes(diagnostics: list[Diagnostic]) -> None:
    for path in sorted(CONTRACT.glob("typing_rejects/*.py")):
        marked = {n for n, text in enumerate(path.read_text().splitlines(), 1) if text.endswith("# rejected")}
        found = {line(d) for d in diagnostics if Path(d["file"]).resolve() == path.resolve()}
        assert found == marked, (path.name, found, marked)
