"""Run an example as a user does, ``python -m examples.<name>`` from the repository root, and read
numbers from what it prints: what the example tests (tests/package/test_examples_gallery*.py) share."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.mpi import MPIEXEC

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, timeout: float = 120, ranks: int | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m <args>`` from the repository root; under ``mpiexec -n ranks`` when given.

    On several ranks each process keeps one engine thread, so that the ranks do not fight for cores.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    launcher: list[str] = []
    if ranks:
        env["RAYON_NUM_THREADS"] = "1"
        launcher = [MPIEXEC or "mpiexec", "-n", str(ranks)]
    return subprocess.run(
        [*launcher, sys.executable, "-m", *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env,
    )  # fmt: skip


def smoke(name: str, *extra: str, timeout: float = 120) -> str:
    """What ``python -m examples.<name> --smoke <extra>`` prints; its output in the failure when it fails."""
    done = run(f"examples.{name}", "--smoke", *extra, timeout=timeout)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def floats(pattern: str, text: str) -> list[tuple[float, ...]]:
    """Every match of ``pattern`` in ``text``, its groups as floats."""
    return [tuple(float(g) for g in m.groups()) for m in re.finditer(pattern, text)]
