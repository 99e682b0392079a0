"""Run the examples the README quotes, record their figures and write them into README.md.

    python scripts/update_readme_figures.py              # the figures that do not depend on the machine
    python scripts/update_readme_figures.py --with-time  # also the training time (on an idle machine)

The README's "Set up" section says what ``python -m examples.guide`` reaches:
its validation accuracy after the 10 epochs (the last ``Valid | Accuracy``
of the Learner's summary it prints) and how long training took (the
"trained in N s" line). The run is seeded, so the accuracy is the same on
every run; the time depends on the machine and its load, so it is only
measured with ``--with-time``, which refuses to measure on a busy machine.
The figures go to ``tests/package/readme_figures.json``, which
``tests/package/test_readme_figures.py`` compares with the README (and, for
the accuracy, with a fresh run of the example).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIGURES = ROOT / "tests" / "package" / "readme_figures.json"

GUIDE_COMMAND = ["-m", "examples.guide"]
# The README's sentence about the guide run: the accuracy, then the seconds.
README_GUIDE = re.compile(
    r"It reaches (?P<accuracy>\d+(?:\.\d+)?)% validation accuracy"
    r"\s+in about\s+(?P<seconds>\d+) seconds on two\s+cores"
)
_VALID_ACCURACY = re.compile(r"^\| Valid \| Accuracy +\|.*\| +(?P<last>[\d.]+) +\|$", re.MULTILINE)
_TRAINED_IN = re.compile(r"trained in (?P<seconds>[\d.]+)s$", re.MULTILINE)


def guide_accuracy(stdout: str) -> str:
    """The last validation accuracy of the summary the guide prints, as the README writes it (``96.8``)."""
    found = _VALID_ACCURACY.findall(stdout)
    if len(found) != 1:
        raise ValueError(f"expected one '| Valid | Accuracy |' row in the guide's output, found {len(found)}")
    return f"{float(found[0]):.1f}"


def guide_seconds(stdout: str) -> float:
    """The training time the guide prints ("trained in 14.2s")."""
    found = _TRAINED_IN.search(stdout)
    if found is None:
        raise ValueError("the guide's output has no 'trained in Ns' line")
    return float(found["seconds"])


def run_guide() -> str:
    """The standard output of ``python -m examples.guide`` (as the README runs it), in a fresh directory."""
    with tempfile.TemporaryDirectory() as directory:
        done = subprocess.run(
            [sys.executable, *GUIDE_COMMAND, "--artifact-dir", os.path.join(directory, "guide")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"python -m examples.guide failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def readme_figures(text: str) -> dict[str, str]:
    """The guide's figures as README.md states them."""
    found = list(README_GUIDE.finditer(text))
    if len(found) != 1:
        raise ValueError(
            f"README.md: expected one sentence 'It reaches N% validation accuracy ...', found {len(found)}"
        )
    return {"valid_accuracy": found[0]["accuracy"], "train_seconds": found[0]["seconds"]}


def rewrite_readme(text: str, figures: dict[str, str]) -> str:
    """``text`` with the guide's sentence stating ``figures``."""

    def sentence(match: re.Match[str]) -> str:
        old = match.group(0)
        start = match.start()
        accuracy = (match.start("accuracy") - start, match.end("accuracy") - start)
        seconds = (match.start("seconds") - start, match.end("seconds") - start)
        return (
            old[: accuracy[0]]
            + figures["valid_accuracy"]
            + old[accuracy[1] : seconds[0]]
            + figures["train_seconds"]
            + old[seconds[1] :]
        )

    return README_GUIDE.sub(sentence, text, count=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--with-time", action="store_true", help="also measure the training time")
    args = parser.parse_args()

    readme = README.read_text(encoding="utf-8")
    figures = readme_figures(readme)
    if args.with_time:
        load = os.getloadavg()[0]
        cores = os.cpu_count() or 1
        if load > 0.5 * cores:
            busy = f"load average {load:.1f} on {cores} cores"
            print(f"error: {busy}: the time would measure the load", file=sys.stderr)
            return 1
    stdout = run_guide()
    figures["valid_accuracy"] = guide_accuracy(stdout)
    if args.with_time:
        figures["train_seconds"] = str(round(guide_seconds(stdout)))
    FIGURES.write_text(json.dumps({"guide": figures}, indent=2) + "\n", encoding="utf-8")
    README.write_text(rewrite_readme(readme, figures), encoding="utf-8")
    print(f"examples.guide: {figures['valid_accuracy']}% validation accuracy, {figures['train_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
