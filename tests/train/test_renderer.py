"""Renderers: plain lines for non-terminals, tqdm bars for terminals, and which one is the default."""

from __future__ import annotations

import io
import sys

import pytest
from ferrum.data.dataloader import Progress
from ferrum.train import MetricsRenderer, MetricState, PlainRenderer, Split, TrainingProgress
from ferrum.train.metric import MetricEntry, NumericEntry
from ferrum.train.renderer import default_renderer
from ferrum.train.renderer.base import format_duration, format_metrics


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def progress(done: int, iteration: int, split: Split = Split.Train) -> TrainingProgress:
    return TrainingProgress(split, 2, 5, iteration, Progress(done, 1000))


STATES = [
    MetricState(
        MetricEntry("Loss", "epoch 0.31 - batch 0.29", "0.29,100"),
        NumericEntry(0.29, 100),
        NumericEntry(0.3127, 300),
    ),
    MetricState(MetricEntry("Note", "warming up", "warming up")),
]


def test_plain_renderer_writes_a_line_per_interval_and_one_at_the_end() -> None:
    out, clock = io.StringIO(), Clock()
    renderer = PlainRenderer(interval=10.0, stream=out, clock=clock)
    renderer.start(progress(0, 0))
    for step in range(1, 11):
        clock.now += 2.5  # 400 items in 10 s
        renderer.update(progress(100 * step, step), STATES)
    renderer.end(progress(1000, 10))
    lines = out.getvalue().splitlines()
    assert lines == [
        "[train] epoch 2/5  400/1000 items (40%)  40 items/s  ETA 15s  Loss 0.3127  Note warming up",
        "[train] epoch 2/5  800/1000 items (80%)  40 items/s  ETA 5s  Loss 0.3127  Note warming up",
        "[train] epoch 2/5  done: 1000 items in 25s (40 items/s)  Loss 0.3127  Note warming up",
    ]


def test_plain_renderer_says_when_an_epoch_was_cut_short() -> None:
    out, clock = io.StringIO(), Clock()
    renderer = PlainRenderer(stream=out, clock=clock)
    renderer.start(progress(0, 0, Split.Valid))
    clock.now += 1.0
    renderer.end(progress(300, 3, Split.Valid))
    assert out.getvalue() == "[valid] epoch 2/5  done: 300 of 1000 items in 1s (300 items/s)\n"


def test_plain_renderer_defaults_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    renderer = PlainRenderer(interval=0.0)
    renderer.start(progress(0, 0))
    renderer.update(progress(10, 1), STATES[:1])
    assert capsys.readouterr().out.startswith("[train] epoch 2/5  10/1000 items (1%)")
    with pytest.raises(ValueError, match="interval must be >= 0 seconds"):
        PlainRenderer(interval=-1.0)


def test_progress_bar_shows_items_speed_eta_and_metrics() -> None:
    from ferrum.train.renderer import ProgressBarRenderer

    out = io.StringIO()
    renderer = ProgressBarRenderer(stream=out)
    renderer.start(progress(0, 0))
    renderer.update(progress(500, 5), STATES)
    renderer.end(progress(1000, 10))
    text = out.getvalue()
    assert "train 2/5: 100%" in text and "1000/1000" in text
    assert "item/s" in text and "<00:00" in text  # speed and remaining time
    assert "Loss 0.3127" in text
    assert isinstance(renderer, MetricsRenderer)


def test_default_renderer_is_plain_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert isinstance(default_renderer(), PlainRenderer)


def test_default_renderer_is_a_bar_in_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from ferrum.train.renderer import ProgressBarRenderer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    assert isinstance(default_renderer(), ProgressBarRenderer)


def test_without_tqdm_a_terminal_gets_lines_and_one_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ferrum.train.renderer as renderer_module

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    monkeypatch.delitem(sys.modules, "ferrum.train.renderer.bar", raising=False)
    monkeypatch.setattr(renderer_module, "_hinted", False)
    monkeypatch.setattr(sys, "stdout", Terminal())
    assert isinstance(default_renderer(), PlainRenderer)
    assert isinstance(default_renderer(), PlainRenderer)
    assert capsys.readouterr().err.count("progress bars need tqdm: pip install 'ferrum-dl[progress]'") == 1


def test_formatting_helpers() -> None:
    assert format_metrics(STATES) == "Loss 0.3127  Note warming up"
    assert (
        format_metrics([MetricState(MetricEntry("LR", "", ""), None, NumericEntry(1e-5))]) == "LR 1.000e-05"
    )
    assert [format_duration(s) for s in (4.4, 187, 3725, float("nan"))] == ["4s", "3m07s", "1h02m", "?"]


def read_until(fd: int, wanted: str, timeout: float = 10.0) -> str:
    """What a terminal shows, read until ``wanted`` appears: one read returns only
    what the pty has passed on so far, which may be the first line alone."""
    import os
    import select
    import time

    shown = b""  # bytes: a read may end inside a bar's multi-byte block character
    deadline = time.monotonic() + timeout
    while wanted.encode() not in shown and (left := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            shown += os.read(fd, 65536)
    return shown.decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")
def test_progress_bar_shows_on_a_terminal_that_reports_no_size() -> None:
    import os
    import pty

    from ferrum.train.renderer import ProgressBarRenderer

    main_fd, side_fd = pty.openpty()  # a fresh pseudo-terminal reports 0 columns and 0 rows
    with os.fdopen(side_fd, "w") as terminal:
        renderer = ProgressBarRenderer(stream=terminal)
        renderer.start(progress(0, 0))
        renderer.end(progress(1000, 10))
        terminal.flush()
        shown = read_until(main_fd, "1000/1000")
    os.close(main_fd)
    assert "train 2/5: 100%" in shown and "1000/1000" in shown
