"""The README's figures about the examples are the examples' own: recorded by a run, checked against a run.

``scripts/update_readme_figures.py`` runs ``python -m examples.guide``, writes
what it printed into ``readme_figures.json`` and the README's sentence. These
tests check that the README states the recorded figures, and run the guide
(about 35 s on two cores) to check that it still prints the recorded
accuracy (it is seeded: the same on every run).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((Path(__file__).parent / "readme_figures.json").read_text(encoding="utf-8"))


def script() -> ModuleType:
    path = ROOT / "scripts" / "update_readme_figures.py"
    spec = importlib.util.spec_from_file_location("update_readme_figures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


FIGURES = script()

SUMMARY = """\
| Split | Metric   | Min.     | Epoch    | Max.     | Epoch    | Last     |
|-------|----------|----------|----------|----------|----------|----------|
| Train | Accuracy | 68.675   | 1        | 96.350   | 10       | 96.350   |
| Valid | Accuracy | 88.900   | 1        | 97.100   | 9        | 96.800   |
| Valid | Loss     | 0.114    | 10       | 0.392    | 1        | 0.114    |
8/10 test digits right; trained in 14.6s
"""


def test_the_output_is_read_as_the_readme_states_it() -> None:
    # The last epoch's accuracy, not the best one; the time the guide measured.
    assert FIGURES.guide_accuracy(SUMMARY) == "96.8"
    assert FIGURES.guide_seconds(SUMMARY) == 14.6
    text = "x. It reaches 95.5% validation accuracy in about 15 seconds on two\ncores, the same ..."
    rewritten = FIGURES.rewrite_readme(text, {"valid_accuracy": "96.8", "train_seconds": "12"})
    assert rewritten == text.replace("95.5%", "96.8%").replace("15 seconds", "12 seconds")


def test_the_readme_states_the_recorded_figures() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert FIGURES.readme_figures(readme) == RECORDED["guide"], (
        "README.md's figures for examples.guide differ from tests/package/readme_figures.json:"
        " run python scripts/update_readme_figures.py"
    )


def test_the_guide_prints_the_recorded_accuracy() -> None:
    printed = FIGURES.guide_accuracy(FIGURES.run_guide())
    assert printed == RECORDED["guide"]["valid_accuracy"], (
        f"python -m examples.guide reaches {printed}% now: run python scripts/update_readme_figures.py"
    )
