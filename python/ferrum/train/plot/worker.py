"""The plotting process the Learner starts (see ``background.py``): ``python -m ferrum.train.plot.worker``.

Reads ``plot <last_epoch>`` lines on stdin, redraws the plots of the
metrics named on the command line, answers ``done`` or ``error <message>``.
Nothing imports this module: run by ``-m``, it must not be in
``sys.modules`` already.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ferrum.train.plot import write_plots

# The worker asks for less CPU than training: it uses what training leaves idle.
_NICENESS = 10


def serve(directory: Path, names: list[str]) -> None:
    """Answer drawing requests until stdin closes."""
    try:
        os.nice(_NICENESS)
    except (AttributeError, OSError):
        pass
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command != "plot":
            continue
        try:
            write_plots(directory, names or None, last_epoch=int(argument) if argument else None)
        except Exception as err:  # reported to the Learner, which logs it and trains on
            print(f"error {type(err).__name__}: {err}".replace("\n", " "), flush=True)
        else:
            print("done", flush=True)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.argv[2:])
