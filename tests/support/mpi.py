"""Where the tests find ``mpiexec`` for runs on several MPI ranks, and why they skip when they cannot.

``MPIEXEC`` is the launcher beside the interpreter (a venv's mpi4py wheel
ships one) or on PATH, or None; ``WHY`` says what is missing; ``needs_mpi``
skips a test without it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


def find_mpiexec() -> str | None:
    """The ``mpiexec`` beside the interpreter, else the one on PATH, else None."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


MPIEXEC: str | None
try:
    import mpi4py  # noqa: F401

    MPIEXEC = find_mpiexec()
    WHY = "mpiexec not found beside the interpreter or on PATH"
except ImportError:
    MPIEXEC = None
    WHY = "mpi4py is not installed (pip install 'ferrum-dl[mpi]')"

needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason=WHY)
