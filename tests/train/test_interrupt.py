"""Ctrl-C during training, for real: SIGINT sent to a training process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import sys
from pathlib import Path

import numpy as np
from ferrum.train import Interrupter
from tests.support.train_setup import StepAnnouncer, learner, training, weights

interrupter = Interrupter()
# The step named by argv[2] waits until the first Ctrl-C has landed, then argv[3] seconds more.
announce = StepAnnouncer(interrupter, sys.argv[2], float(sys.argv[3]))
training = training(Path(sys.argv[1]), epochs=1000).renderer(announce).with_interrupter(interrupter)
result = training.launch(learner())
print("returned:", result.stop_reason, flush=True)
print("finite:", all(np.isfinite(w).all() for w in weights(result.model).values()), flush=True)
"""

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def start(tmp_path: Path, wait_at: str, after: float) -> subprocess.Popen[str]:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "run"), wait_at, str(after)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for_step(proc: subprocess.Popen[str], wanted: str) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:
        if line.strip() == wanted:
            return
        assert time.monotonic() < deadline, "the training never reached " + wanted
    raise AssertionError(f"the process ended before {wanted}: {proc.stderr.read() if proc.stderr else ''}")


def test_ctrl_c_finishes_the_step_writes_a_checkpoint_and_returns(tmp_path: Path) -> None:
    proc = start(tmp_path, "step 2 3", 0.0)
    wait_for_step(proc, "step 2 3")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "returned: interrupted (Ctrl-C)" in out and "finite: True" in out
    assert "Ctrl-C: finishing the current step" in err and "press Ctrl-C again to abort" in err
    assert "checkpoint written" in err
    state = json.loads((tmp_path / "run" / "checkpoint" / "training-2.json").read_text())
    assert (state["complete"], state["epoch"], state["iteration"]) == (False, 2, 3)
    for stem in ("model", "optim", "scheduler"):
        assert (tmp_path / "run" / "checkpoint" / f"{stem}-2.mpk").is_file()
    assert "training stopped: interrupted (Ctrl-C)" in (tmp_path / "run" / "experiment.log").read_text()


def test_a_second_ctrl_c_aborts(tmp_path: Path) -> None:
    proc = start(tmp_path, "step 1 1", 30.0)  # after the first Ctrl-C, the step lasts until the second
    wait_for_step(proc, "step 1 1")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err and "returned:" not in out
