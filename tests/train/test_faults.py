"""Training runs that end badly: killed saving or deleting, SIGTERM, unwritable directories, full disks.

A checkpoint is complete (its ``manifest-N.json`` written last) or is never resumed from; the
next run clears what a kill left; SIGTERM writes a checkpoint before the process exits.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import numpy as np
import pytest
from ferrum.record import DefaultRecorder
from ferrum.train import Interrupter, KeepLastNCheckpoints, Split
from ferrum.train.checkpoint import IncompleteCheckpointError, LearningCheckpointer
from ferrum.train.logger import FileMetricLogger
from ferrum.train.metric import MetricEntry
from ferrum.train.supervised import TrainingTerminated

from tests.support.train_setup import Recorder, learner, training, weights

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

KILLED_BEFORE_THE_MANIFEST = """
import os, signal, sys
from pathlib import Path

from ferrum.train.checkpoint import LearningCheckpointer
from tests.support.train_setup import learner, training

write = LearningCheckpointer._write_manifest


def killed_at_epoch_3(self, epoch):
    # Every other file of the checkpoint is on disk: the worst moment to die.
    if epoch == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    write(self, epoch)


LearningCheckpointer._write_manifest = killed_at_epoch_3
training(Path(sys.argv[1]), epochs=4).launch(learner())
"""

TERMINATED_AT_A_STEP = """
import sys
from pathlib import Path

from ferrum.train import Interrupter
from tests.support.train_setup import StepAnnouncer, learner, training

interrupter = Interrupter()
# Step 2 3 waits until SIGTERM has landed.
announce = StepAnnouncer(interrupter, "step 2 3")
training(Path(sys.argv[1]), epochs=1000).renderer(announce).with_interrupter(interrupter).launch(learner())
print("launch returned", flush=True)
"""


def run_script(tmp_path: Path, source: str, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "script.py"
    script.write_text(source)
    path = os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=path),
    )


def checkpointer(run: Path) -> LearningCheckpointer:
    return LearningCheckpointer(DefaultRecorder(), run / "checkpoint", KeepLastNCheckpoints(2))


def assert_same_weights(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for path in a:
        np.testing.assert_array_equal(b[path], a[path], err_msg=path)


@posix
def test_a_save_killed_before_its_manifest_is_refused_and_latest_resumes_bit_for_bit(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = run_script(tmp_path, KILLED_BEFORE_THE_MANIFEST, str(run))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err
    folder = run / "checkpoint"
    for name in ("model-3.mpk", "optim-3.mpk", "scheduler-3.mpk", "training-3.json"):
        assert (folder / name).is_file(), name
    assert not (folder / "manifest-3.json").exists()

    with pytest.raises(IncompleteCheckpointError) as info:
        training(run, epochs=4).checkpoint(3).launch(learner())
    assert info.value.missing == ("manifest-3.json",) and info.value.epoch == 3
    message = str(info.value)
    assert f"manifest-3.json missing from {folder}" in message and "save or deletion was cut short" in message
    assert (folder / "model-3.mpk").is_file()  # a refused resume removes nothing

    straight = training(tmp_path / "straight", epochs=4).launch(learner())
    resumed = training(run, epochs=4).checkpoint("latest").launch(learner(seed=99))
    assert "resumed from the checkpoint of epoch 2" in (run / "experiment.log").read_text()
    assert_same_weights(weights(straight.model), weights(resumed.model))
    assert (
        resumed.summary.metric("Loss", Split.Valid).entries
        == straight.summary.metric("Loss", Split.Valid).entries
    )
    assert checkpointer(run).latest() == 4 and not checkpointer(run).missing(3)


def test_missing_parts_are_named_and_latest_skips_incomplete_checkpoints(tmp_path: Path) -> None:
    training(tmp_path, epochs=2).launch(learner())
    folder = tmp_path / "checkpoint"
    (folder / "manifest-2.json").unlink()
    (folder / "training-2.json").unlink()
    with pytest.raises(IncompleteCheckpointError, match=r"manifest-2\.json, training-2\.json missing"):
        training(tmp_path, epochs=3).checkpoint(2).launch(learner())
    assert checkpointer(tmp_path).complete_epochs() == [1]

    # A damaged file of a complete checkpoint: its size is not the manifest's.
    with (folder / "optim-1.mpk").open("ab") as file:
        file.write(b"\0")
    with pytest.raises(IncompleteCheckpointError, match=r"optim-1\.mpk \(\d+ bytes, manifest-1\.json says"):
        training(tmp_path, epochs=3).checkpoint(1).launch(learner())
    assert checkpointer(tmp_path).latest() is None
    with pytest.raises(ValueError, match="an epoch \\(an int >= 1\\) or 'latest', found 'last'"):
        training(tmp_path).checkpoint("last")  # type: ignore[arg-type]


def test_latest_without_a_complete_checkpoint_starts_fresh(tmp_path: Path) -> None:
    result = training(tmp_path, epochs=2).checkpoint("latest").launch(learner())
    assert [e for e, _ in result.summary.metric("Loss", Split.Valid).entries] == [1, 2]
    log = (tmp_path / "experiment.log").read_text()
    assert "INFO ferrum.train: checkpoint('latest'): no complete checkpoint in" in log
    assert "training starts at epoch 1" in log and "resumed from" not in log


def test_an_older_ferrums_checkpoint_is_resumed_with_a_warning(tmp_path: Path) -> None:
    # What ferrum wrote before manifests: no manifest, a version-1 training state (written last).
    straight = training(tmp_path / "straight", epochs=3).launch(learner())
    run = tmp_path / "run"
    training(run, epochs=2).launch(learner())
    folder = run / "checkpoint"
    for epoch in (1, 2):
        (folder / f"manifest-{epoch}.json").unlink()
        state = json.loads((folder / f"training-{epoch}.json").read_text())
        (folder / f"training-{epoch}.json").write_text(json.dumps({**state, "version": 1}))
    assert checkpointer(run).latest() == 2
    assert checkpointer(run).remove_incomplete() == []  # complete, so no orphans
    resumed = training(run, epochs=3).checkpoint("latest").launch(learner(seed=99))
    assert "has no manifest-2.json (written by an older ferrum)" in (run / "experiment.log").read_text()
    assert_same_weights(weights(straight.model), weights(resumed.model))
    # A version-2 state without its manifest is a save cut short, not an older ferrum's checkpoint.
    (folder / "manifest-3.json").unlink()
    with pytest.raises(IncompleteCheckpointError, match=r"manifest-3\.json missing"):
        training(run, epochs=4).checkpoint(3).launch(learner())


@posix
def test_the_next_run_removes_what_killed_saves_and_deletions_left(tmp_path: Path) -> None:
    training(tmp_path, epochs=2).launch(learner())
    folder = tmp_path / "checkpoint"
    # Killed deleting epoch 1: the manifest went first, then the model.
    (folder / "manifest-1.json").unlink()
    (folder / "model-1.mpk").unlink()
    # Killed saving epoch 7 (a longer run before): every file but the manifest.
    for stem, ext in (("model", "mpk"), ("optim", "mpk"), ("scheduler", "mpk"), ("training", "json")):
        (folder / f"{stem}-7.{ext}").write_bytes((folder / f"{stem}-2.{ext}").read_bytes())
    # Killed inside the engine's atomic write: its temporary file, of a process that is gone.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    temporary = folder / f".model-9.mpk.{gone.pid}.0.tmp"
    temporary.write_bytes(b"half")
    unrelated = folder / "notes.txt"
    unrelated.write_text("mine")

    result = training(tmp_path, epochs=3).checkpoint("latest").launch(learner())
    assert result.stop_reason is None
    stems = (
        ("model", "mpk"),
        ("optim", "mpk"),
        ("scheduler", "mpk"),
        ("training", "json"),
        ("manifest", "json"),
    )
    kept = [f"{stem}-{epoch}.{ext}" for epoch in (2, 3) for stem, ext in stems]
    assert sorted(p.name for p in folder.iterdir()) == sorted([*kept, "notes.txt"])
    assert "removed the incomplete checkpoints of epochs 1, 7" in (tmp_path / "experiment.log").read_text()


def test_a_checkpoint_directory_under_a_file_is_refused_before_training(tmp_path: Path) -> None:
    tmp_path.joinpath("checkpoint").write_text("not a directory")
    out = Recorder()
    with pytest.raises(
        OSError, match=rf"the checkpoint directory {tmp_path / 'checkpoint'} cannot be written"
    ):
        training(tmp_path).renderer(out).launch(learner())
    assert out.calls == [] and not (tmp_path / "train").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_read_only_checkpoint_directory_is_refused_before_training(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("permissions do not apply to this user (root)")
        with pytest.raises(PermissionError, match=rf"the checkpoint directory {folder} cannot be written"):
            training(tmp_path).launch(learner())
        assert not (tmp_path / "train").exists()
    finally:
        folder.chmod(stat.S_IRWXU)


@posix
def test_sigterm_writes_a_checkpoint_that_resumes_and_exits_with_143(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = run_script(tmp_path, TERMINATED_AT_A_STEP, str(run))
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:
        if line.strip() == "step 2 3":
            break
        assert time.monotonic() < deadline, "the training never reached step 2 3"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "launch returned" not in out and "Traceback" not in err
    assert "SIGTERM: finishing the current step, then writing a checkpoint" in err
    assert "checkpoint written" in err
    log = (run / "experiment.log").read_text()
    assert "training terminated by SIGTERM at epoch 2; checkpoint of epoch 2 written" in log
    assert not checkpointer(run).missing(2)
    state = json.loads((run / "checkpoint" / "training-2.json").read_text())
    assert (state["epoch"], state["complete"], state["iteration"]) == (2, False, 3)
    assert not (run / "result.json").exists()  # a cut run: no result

    resumed = training(run, epochs=3).checkpoint("latest").launch(learner(seed=99))
    assert resumed.stop_reason is None
    assert json.loads((run / "result.json").read_text()) == {
        "status": "finished",
        "last_epoch": 3,
        "num_epochs": 3,
        "stop_reason": None,
        "world_size": 1,
    }
    assert [e for e, _ in resumed.summary.metric("Loss", Split.Train).entries][-1] == 3
    assert "resumed from the checkpoint of epoch 2" in (run / "experiment.log").read_text()


@posix
def test_sigterm_in_process_raises_after_the_checkpoint_and_restores_the_handler(tmp_path: Path) -> None:
    seen: list[int] = []

    def mine(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, mine)
    try:

        class TermAtTwo(Recorder):
            def update(self, progress, metrics):  # type: ignore[no-untyped-def]
                super().update(progress, metrics)
                if progress.split is Split.Train and (progress.epoch, progress.iteration) == (1, 2):
                    os.kill(os.getpid(), signal.SIGTERM)

        with pytest.raises(TrainingTerminated) as info:
            training(tmp_path, epochs=3).renderer(TermAtTwo()).launch(learner())
        assert isinstance(info.value, SystemExit) and info.value.code == 143
        assert info.value.checkpoint == 1 and not checkpointer(tmp_path).missing(1)
        assert signal.getsignal(signal.SIGTERM) is mine and seen == []
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_run_outside_the_main_thread_leaves_signals_alone(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    before = signal.getsignal(signal.SIGTERM)

    def train() -> None:
        try:
            training(tmp_path, epochs=1).launch(learner())
        except BaseException as err:  # reported to the test below
            errors.append(err)

    thread = threading.Thread(target=train)
    thread.start()
    thread.join(60)
    assert errors == [] and signal.getsignal(signal.SIGTERM) is before
    assert not checkpointer(tmp_path).missing(1)


def test_an_interrupter_stop_still_returns(tmp_path: Path) -> None:
    # The SIGTERM path raises; a stop from code (or Ctrl-C) still returns the model.
    interrupter = Interrupter()
    interrupter.stop("enough")
    result = training(tmp_path, epochs=2).with_interrupter(interrupter).launch(learner())
    assert result.stop_reason == "interrupted (enough)" and not checkpointer(tmp_path).missing(1)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_metric_log_that_cannot_be_flushed_names_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ferrum.train.logger as logger_module

    # The log's buffered lines reach the disk at close: /dev/full refuses them, as a full disk would.
    monkeypatch.setattr(logger_module, "open_no_follow", lambda path, mode: open("/dev/full", mode))
    logger = FileMetricLogger(tmp_path)
    logger.log([MetricEntry("Loss", "0.5", "0.5,2"), MetricEntry("Accuracy", "50", "50,2")], 1, Split.Train)
    with pytest.raises(OSError, match="No space left") as info:
        logger.end_epoch(1, Split.Train)
    assert str(tmp_path / "train" / "epoch-1" / "Loss.log") in str(info.value)
    assert "cannot write the metric log" in str(info.value)
    logger.end_epoch(1, Split.Train)  # every file was closed all the same: nothing left to fail
