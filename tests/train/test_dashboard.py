"""DashboardRenderer: the live rich dashboard, drawn into a pseudo-terminal by a real training run.

The pty tests start a child that trains a small linear regression with no renderer given: stdout
is the pty, so the Learner must pick the dashboard by itself. The screen bytes it draws are read
back and checked for the metric names, the final values the child reports, and the epoch progress.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from ferrum.data.dataloader import Progress
from ferrum.train import MetricState, Split, TrainingProgress
from ferrum.train.metric import MetricEntry, NumericEntry
from ferrum.train.renderer import PlainRenderer, default_renderer

rich_console = pytest.importorskip("rich.console")

from ferrum.train.renderer.dashboard import DashboardRenderer, sparkline  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import json, sys, tempfile
    from ferrum.backend import Autodiff, NdArray
    from ferrum.data.dataloader import DataLoaderBuilder
    from ferrum.data.dataset import InMemDataset
    from ferrum.nn import LinearConfig
    from ferrum.optim import SgdConfig
    from ferrum.train import Learner, Split, SupervisedTraining
    from ferrum.train.metric import LossMetric
    from tests.support.line_regression import Line, Pairs

    data = InMemDataset([i / 40 for i in range(40)])
    train = DataLoaderBuilder(Pairs(Autodiff[NdArray].device())).batch_size(8).build(data)
    valid = DataLoaderBuilder(Pairs(NdArray.device())).batch_size(20).build(data)
    model = Line(LinearConfig(1, 1).init(Autodiff[NdArray].device()))
    training = (
        SupervisedTraining(tempfile.mkdtemp(), train, valid)
        .metrics(LossMetric())
        .num_epochs(2)
        .with_plots(False)
        .with_application_logger(False)
    )
    result = training.launch(Learner(model, SgdConfig().init(), 0.05))
    last = {s.value: result.summary.metric("Loss", s).last for s in (Split.Train, Split.Valid)}
    print("RESULT " + json.dumps(last), flush=True)
    """
)


def _run_in_pty(env_renderer: str | None = None, columns: int = 110, rows: int = 40) -> str:
    """The child's screen output, read from the main side of a pseudo-terminal sized columns x rows."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    main_fd, side_fd = pty.openpty()
    fcntl.ioctl(side_fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("FERRUM_RENDERER", "NO_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    env["COLUMNS"], env["LINES"] = str(columns), str(rows)
    if env_renderer is not None:
        env["FERRUM_RENDERER"] = env_renderer
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=side_fd, stdout=side_fd, stderr=side_fd, env=env, cwd=REPO
    )
    os.close(side_fd)
    shown = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if select.select([main_fd], [], [], 1.0)[0]:
                try:
                    chunk = os.read(main_fd, 65536)
                except OSError:  # EIO: the child closed its side
                    break
                if not chunk:
                    break
                shown += chunk
            elif child.poll() is not None:
                break
    finally:
        os.close(main_fd)
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
    text = shown.decode(errors="replace")
    assert child.returncode == 0, text[-3000:]
    return text


def _result(text: str) -> dict[str, float]:
    match = re.search(r"RESULT (\{.*?\})", ANSI.sub("", text))
    assert match is not None, text[-2000:]
    values: dict[str, float] = json.loads(match.group(1))
    return values


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")
def test_a_training_in_a_terminal_draws_the_dashboard() -> None:
    text = _run_in_pty()
    screen = ANSI.sub("", text)
    last = _result(text)
    assert "╭" in screen and " ferrum " in screen  # the dashboard's panel, not bars nor lines
    assert "[train] epoch" not in screen and "it/s" not in screen
    assert "Metric" in screen and "Recent steps" in screen and "Epochs" in screen
    assert "Training  epoch 1/2" in screen and "Validating  epoch 2/2" in screen
    assert "items 40/40" in screen  # the training epoch's progress
    assert "100%" in screen and "ETA" in screen
    # The final frame (left on screen) shows each split's last epoch value, as the run reported it.
    final = screen[screen.rindex(" ferrum ") :]
    for split in ("train", "valid"):
        rows = [line for line in final.splitlines() if re.search(rf"\bLoss\s+{split}\b", line)]
        assert len(rows) == 1, final
        assert f"{last[split]:.4g}" in rows[0], (rows[0], last[split])
        assert re.search(r"[▁▂▃▄▅▆▇█]", rows[0]), rows[0]  # the sparklines


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")
@pytest.mark.parametrize(("kind", "sign"), [("plain", "[train] epoch 1/2"), ("bar", "train 1/2:")])
def test_the_environment_variable_forces_another_renderer(kind: str, sign: str) -> None:
    text = _run_in_pty(kind)
    screen = ANSI.sub("", text)
    assert sign in screen and " ferrum " not in screen
    _result(text)


def test_an_unknown_forced_renderer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERRUM_RENDERER", "fancy")
    expected = "FERRUM_RENDERER must be one of dashboard, bar, plain, found 'fancy'"
    with pytest.raises(ValueError, match=expected):
        default_renderer()
    monkeypatch.setenv("FERRUM_RENDERER", "plain")
    assert isinstance(default_renderer(), PlainRenderer)
    monkeypatch.setenv("FERRUM_RENDERER", "dashboard")
    assert isinstance(default_renderer(), DashboardRenderer)


def test_a_missing_rich_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERRUM_RENDERER", "dashboard")
    monkeypatch.setitem(sys.modules, "rich.console", None)
    monkeypatch.delitem(sys.modules, "ferrum.train.renderer.dashboard", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'ferrum-dl\[dashboard\]'"):
        default_renderer()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _state(value: float, running: float) -> MetricState:
    entry = MetricEntry("Loss", "", f"{value},4")
    return MetricState(entry, NumericEntry(value, 4), NumericEntry(running, 8))


def test_frame_values_sparklines_and_etas() -> None:
    clock = Clock()
    out = io.StringIO()
    console = rich_console.Console(file=out, width=100, force_terminal=False, color_system=None)
    renderer = DashboardRenderer(console=console, clock=clock, history=4)
    renderer.start(TrainingProgress(Split.Train, 1, 2, 0, Progress(0, 100)))
    for step, value in enumerate([8.0, 4.0, 2.0, 1.0, 0.5], 1):
        clock.now += 0.4
        at = TrainingProgress(Split.Train, 1, 2, step, Progress(5 * step, 100))
        renderer.update(at, [_state(value, 3.1)])
    note = MetricState(MetricEntry("Note", "warming up", "warming up"))
    renderer.update(TrainingProgress(Split.Train, 1, 2, 5, Progress(25, 100)), [_state(0.5, 3.1), note])
    probe = rich_console.Console(file=io.StringIO(), width=100, color_system=None)
    with probe.capture() as captured:
        probe.print(renderer.frame())
    frame = captured.get()
    assert "Training  epoch 1/2  iteration 5  items 25/100" in frame
    # 2 s for a quarter of the epoch: 6 s left in it; an eighth of the run: 14 s left in all.
    assert re.search(r"epoch .* 25% ETA 6s", frame) and re.search(r"total .* 12% ETA 14s", frame)
    loss = next(line for line in frame.splitlines() if "Loss" in line)
    # The running value, and the last 4 steps (4, 2, 1, 0.5, then 0.5 again) from high to low.
    assert "3.1" in loss and sparkline([2.0, 1.0, 0.5, 0.5]) in loss
    assert "warming up" in next(line for line in frame.splitlines() if "Note" in line)
    renderer.end(TrainingProgress(Split.Test, 1, 1, 1, Progress(1, 1)))  # an evaluation ends: closed
    renderer.close()


def test_sparkline() -> None:
    assert sparkline([0.0, 1.0]) == "▁█"
    assert sparkline([3.0, 3.0, 3.0]) == "▄▄▄"
    assert sparkline([1.0, float("inf"), 2.0, float("nan")], width=3) == " ▄ "  # one finite value: flat
    assert sparkline([]) == ""
    assert sparkline([float("nan")]) == " "
    assert sparkline(list(range(100)), width=8) == "▁▂▃▄▅▆▇█"


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="history must be an int >= 1, found 0"):
        DashboardRenderer(history=0)
    with pytest.raises(ValueError, match="refresh_per_second must be > 0"):
        DashboardRenderer(refresh_per_second=0)
