"""Running a bench script of benches/ from a test, and reading what ``--compare-with`` printed."""

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

BENCHES = Path(__file__).resolve().parents[2] / "benches"


def bench_process(
    script: str, *args: str, python_flags: Sequence[str] = (), launcher: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """``python benches/<script> args`` (under ``launcher``, e.g. ``mpiexec -n 2``), its output captured."""
    return subprocess.run(
        [*launcher, sys.executable, *python_flags, str(BENCHES / script), *args],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def run_bench(
    script: str, *args: str, python_flags: Sequence[str] = (), launcher: Sequence[str] = ()
) -> str:
    """The standard output of a ``bench_process`` that must succeed (else its output fails the test)."""
    proc = bench_process(script, *args, python_flags=python_flags, launcher=launcher)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def compared(out: str) -> list[list[str]]:
    """The new/old lines of ``--compare-with``'s table, split: ``row... metric... old new new/old faster``."""
    return [line.split() for line in out.splitlines() if line.endswith((" now", " then", " same"))]
