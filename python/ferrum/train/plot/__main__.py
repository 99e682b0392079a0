"""``python -m ferrum.train.plot ARTIFACT_DIR``: redraw the metric plots of an experiment from its logs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ferrum.extras import run_main
from ferrum.train.plot import read_history, write_plots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ferrum.train.plot",
        description="Draw one PNG per numeric metric (train and valid, per epoch and per iteration) "
        "into ARTIFACT_DIR/plots, from the metric logs the Learner wrote.",
    )
    parser.add_argument("artifact_dir", type=Path, help="the directory given to SupervisedTraining")
    args = parser.parse_args(argv)
    directory: Path = args.artifact_dir
    if not directory.is_dir():
        print(f"error: {directory} is not a directory", file=sys.stderr)
        return 2
    if not read_history(directory):
        print(
            f"error: no numeric metric logs (train/epoch-N/*.log, valid/...) under {directory}",
            file=sys.stderr,
        )
        return 1
    written = write_plots(directory)  # without matplotlib: one line from run_main, status 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    run_main(main)
