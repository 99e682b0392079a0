"""``DashboardRenderer``: a live terminal dashboard of the run, as Burn's TUI (extra ``[dashboard]``, rich).

Redrawn in place a few times a second while training runs::

    ╭─────────────────────────────── ferrum ───────────────────────────────╮
    │ Training  epoch 2/5  iteration 37  items 296/400                       │
    │ epoch  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╺━━━━━━━━━━   74%  ETA 3s         │
    │ total  ━━━━━━━━━━━━━╺━━━━━━━━━━━━━━━━━━━━━━━━━━━━   35%  ETA 41s        │
    │  Metric     Split   Value     Recent steps          Epochs             │
    │  Loss       train   0.3127    ▇▇▆▅▅▄▃▃▂▂▂▁▁▁         ▇▃                 │
    │  Loss       valid   0.3504                          ▆▂                 │
    ╰────────────────────────────────────────────────────────────────────────╯

One row per metric and split: the epoch's running value (a text metric's
text), a sparkline of the last steps' values (Burn's recent history) and one
of the epoch values (its full history). The two bars are the split's epoch
and the whole training, each with its ETA. The last frame stays on screen
when training ends. The Learner picks it by itself when stdout is a terminal
and rich is installed (``pip install 'ferrum-dl[dashboard]'``).

Example:
    >>> import io
    >>> from rich.console import Console
    >>> from ferrum.data.dataloader import Progress
    >>> from ferrum.train.metric import MetricEntry, NumericEntry
    >>> from ferrum.train.renderer import MetricState, TrainingProgress
    >>> from ferrum.train.renderer.dashboard import DashboardRenderer
    >>> from ferrum.train.store import Split
    >>> out = io.StringIO()
    >>> renderer = DashboardRenderer(console=Console(file=out, width=80, force_terminal=True))
    >>> renderer.start(TrainingProgress(Split.Train, 1, 1, 0, Progress(0, 4)))
    >>> loss = MetricState(MetricEntry("Loss", "", "0.5,4"), NumericEntry(0.5, 4), NumericEntry(0.5, 4))
    >>> renderer.update(TrainingProgress(Split.Train, 1, 1, 1, Progress(4, 4)), [loss])
    >>> renderer.end(TrainingProgress(Split.Train, 1, 1, 1, Progress(4, 4)))
    >>> renderer.close()
    >>> "Loss" in out.getvalue() and "0.5" in out.getvalue()
    True
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ferrum.train.renderer.base import MetricState, TrainingProgress, _number, format_duration
from ferrum.train.store import Split

__all__ = ["DashboardRenderer", "sparkline"]

_BLOCKS = "▁▂▃▄▅▆▇█"
_SPLIT_STYLE = {Split.Train: "green", Split.Valid: "blue", Split.Test: "magenta"}
_MODE = {Split.Train: "Training", Split.Valid: "Validating", Split.Test: "Evaluating"}


def sparkline(values: Sequence[float], width: int | None = None) -> str:
    """The last ``width`` values as block characters from ``▁`` (lowest) to ``█`` (highest).

    Values that are not finite show as spaces; equal values as a flat ``▄`` line.

    Example:
        >>> sparkline([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
        '▁▂▃▄▅▆▇█'
        >>> sparkline([0.5, float("nan"), 0.5])
        '▄ ▄'
    """
    shown = list(values)[-width:] if width else list(values)
    finite = [v for v in shown if math.isfinite(v)]
    if not finite:
        return " " * len(shown)
    low, high = min(finite), max(finite)
    span = high - low
    chars = []
    for value in shown:
        if not math.isfinite(value):
            chars.append(" ")
        elif span == 0:
            chars.append(_BLOCKS[3])
        else:
            chars.append(_BLOCKS[min(len(_BLOCKS) - 1, int((value - low) / span * len(_BLOCKS)))])
    return "".join(chars)


@dataclass
class _Row:
    """One metric of one split: its latest shown value and its histories."""

    text: str = ""
    steps: deque[float] = field(default_factory=deque)
    epochs: dict[int, float] = field(default_factory=dict)


class DashboardRenderer:
    """A live rich dashboard: status, epoch and total progress with ETAs, and every metric with sparklines.

    Args:
        console: Where to draw (default: a rich ``Console`` on stdout).
        refresh_per_second: At most this many redraws a second between the start and end of a split.
        history: How many recent step values each metric's step sparkline shows.
        clock: The time source, for tests.

    Force it with ``SupervisedTraining(...).renderer(DashboardRenderer())``;
    ``PlainRenderer`` and ``ProgressBarRenderer`` stay available the same way.

    Example:
        >>> DashboardRenderer(history=20).history
        20
    """

    def __init__(
        self,
        console: Console | None = None,
        refresh_per_second: float = 8.0,
        history: int = 40,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not refresh_per_second > 0:
            raise ValueError(
                f"DashboardRenderer.refresh_per_second must be > 0, found {refresh_per_second!r}"
            )
        if isinstance(history, bool) or not isinstance(history, int) or history < 1:
            raise ValueError(f"DashboardRenderer.history must be an int >= 1, found {history!r}")
        self.console = console
        self.refresh_per_second = refresh_per_second
        self.history = history
        self._clock = clock
        self._live: Live | None = None
        self._rows: dict[tuple[str, Split], _Row] = {}
        self._progress: TrainingProgress | None = None
        self._split_started = 0.0
        self._train_started: float | None = None
        self._drawn_at = -math.inf

    # ---- MetricsRenderer

    def start(self, progress: TrainingProgress) -> None:
        """A split's epoch begins: open the dashboard if it is not showing, and draw."""
        now = self._clock()
        if self._live is None:
            console = self.console or Console()
            self._live = Live(console=console, auto_refresh=False, transient=False)
            self._live.start()
        if progress.split is Split.Train and self._train_started is None:
            self._train_started = now
        self._split_started = now
        for (_, split), row in self._rows.items():
            if split is progress.split:
                row.steps.clear()
        self._progress = progress
        self._draw(now)

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        """Record the step's values; redraw when ``1 / refresh_per_second`` seconds have passed."""
        self._progress = progress
        for state in metrics:
            row = self._row(state.name, progress.split)
            if state.running is not None:
                row.text = _number(state.running.value)
                row.epochs[progress.epoch] = state.running.value
            else:
                row.text = state.entry.formatted
            if state.value is not None:
                row.steps.append(state.value.value)
                while len(row.steps) > self.history:
                    row.steps.popleft()
        now = self._clock()
        if now - self._drawn_at >= 1.0 / self.refresh_per_second:
            self._draw(now)

    def end(self, progress: TrainingProgress) -> None:
        """Draw the split's final values; after the last validation epoch or an evaluation, close."""
        self._progress = progress
        self._draw(self._clock())
        last_valid = progress.split is Split.Valid and progress.epoch >= progress.epoch_total
        if last_valid or progress.split is Split.Test:
            self.close()

    def close(self) -> None:
        """Leave the last frame on screen and give the terminal back (the cursor shows again)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        self._train_started = None

    # ---- drawing

    def _row(self, name: str, split: Split) -> _Row:
        row = self._rows.get((name, split))
        if row is None:
            row = self._rows[(name, split)] = _Row(steps=deque())
        return row

    def _draw(self, now: float) -> None:
        if self._live is None or self._progress is None:
            return
        self._drawn_at = now
        self._live.update(self.frame(now), refresh=True)

    def frame(self, now: float | None = None) -> Panel:
        """The dashboard as a rich renderable (what is drawn; tests print it to a file)."""
        now = self._clock() if now is None else now
        progress = self._progress
        parts: list[Table | Text] = []
        if progress is not None:
            parts.append(self._status(progress))
            parts.append(self._bars(progress, now))
        parts.append(self._metrics())
        return Panel(Group(*parts), title="ferrum", border_style="bright_black")

    def _status(self, progress: TrainingProgress) -> Text:
        mode = _MODE[progress.split]
        if progress.evaluation is not None:
            mode = f"{mode} {progress.evaluation}"
        status = Text(mode, style=f"bold {_SPLIT_STYLE[progress.split]}")
        items = progress.progress
        status.append(
            f"  epoch {progress.epoch}/{progress.epoch_total}  iteration {progress.iteration}"
            f"  items {items.items_processed}/{items.items_total}"
        )
        return status

    def _bars(self, progress: TrainingProgress, now: float) -> Table:
        items = progress.progress
        task = items.items_processed / items.items_total if items.items_total else 1.0
        split_elapsed = now - self._split_started
        task_eta = split_elapsed * (1 - task) / task if task > 0 else math.nan
        total = self._total_fraction(progress, task)
        total_elapsed = now - self._train_started if self._train_started is not None else math.nan
        total_eta = total_elapsed * (1 - total) / total if total > 0 else math.nan
        bars = Table.grid(padding=(0, 1))
        bars.add_column(width=5)
        bars.add_column(ratio=1)
        bars.add_column(justify="right", width=4)
        bars.add_column(width=12)
        style = _SPLIT_STYLE[progress.split]
        rows = (("epoch", task, task_eta, style), ("total", total, total_eta, "yellow"))
        for label, done, eta, color in rows:
            bar = ProgressBar(total=1.0, completed=min(done, 1.0), complete_style=color, finished_style=color)
            bars.add_row(label, bar, f"{done:.0%}", f"ETA {format_duration(eta)}")
        return bars

    @staticmethod
    def _total_fraction(progress: TrainingProgress, task: float) -> float:
        """How much of the run is done: training epochs count, validation runs inside its epoch (as Burn)."""
        if progress.epoch_total <= 0:
            return task
        done_epochs = progress.epoch - 1 + (task if progress.split is Split.Train else 1.0)
        if progress.split is Split.Test:
            return task
        return min(1.0, done_epochs / progress.epoch_total)

    def _metrics(self) -> Table:
        table = Table(expand=True, box=None, padding=(0, 1), header_style="bold")
        table.add_column("Metric", no_wrap=True)
        table.add_column("Split", no_wrap=True)
        table.add_column("Value", no_wrap=True, overflow="ellipsis", max_width=24)
        table.add_column("Recent steps", no_wrap=True, ratio=2)
        table.add_column("Epochs", no_wrap=True, ratio=1)
        names = list(dict.fromkeys(name for name, _ in self._rows))
        for name in names:
            for split in Split:
                row = self._rows.get((name, split))
                if row is None:
                    continue
                epochs = [row.epochs[e] for e in sorted(row.epochs)]
                table.add_row(
                    name,
                    Text(split.value, style=_SPLIT_STYLE[split]),
                    row.text,
                    Text(sparkline(list(row.steps), self.history), style=_SPLIT_STYLE[split]),
                    Text(sparkline(epochs, self.history), style=_SPLIT_STYLE[split]),
                )
        return table
