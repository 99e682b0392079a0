"""What the Learner adds to a training epoch: ``python benches/learner_overhead.py``.

The Burn Book guide's CNN (``examples/guide``) on the shipped MNIST sample
(4,000 digits, batch 64, 63 steps, no worker threads), one training epoch
per variant:

- ``hand``: the hand-written loop: forward, loss, backward, Adam step;
- ``hand+metrics``: the same, plus the work the Learner's metrics do (the
  output synced to the inner backend, ``LossMetric`` and ``AccuracyMetric``
  updated with each step's metadata): the same work as the Learner's loop;
- ``learner``: ``SupervisedTraining(...).metrics(AccuracyMetric(), LossMetric())``
  launched for one epoch, its training epoch timed from the renderer's
  ``start`` to its ``end`` (metric logs written, plain-line renderer).

Each round runs every variant once, in a rotating order (``harness.alternate``),
from the same seed and model, each variant timing its own epoch; the ratio of
a round is learner / hand+metrics, and the figure is the median of the rounds'
ratios (the machine is shared: single epochs swing by several percent). Then
the Learner's own work per step, timed without a model (one real output
reused: metric updates alone, then the Learner's loop around them, taking
turns), which the machine's noise hardly touches. A
last table times a whole one-epoch ``launch``
(setup, training, validation, a checkpoint with ``CompactRecorder``)
against the hand loop's training and validation epochs; plots are
left out there: a separate process draws them, and waiting for its last
drawing adds about a second once per launch, not per epoch.

Flags: --rounds N (default 7), --items N (training digits, default all
4,000), --tiny (a seconds-long smoke run, used by the tests), --json PATH
(save the rows with the machine), --compare-with OLD.json (new/old against
an earlier run).
"""

from __future__ import annotations

import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository root, for the guide's package examples.guide

from ferrum.backend import Autodiff, NdArray  # noqa: E402
from ferrum.data.dataloader import DataLoader, DataLoaderBuilder, Progress  # noqa: E402
from ferrum.data.dataset import PartialDataset  # noqa: E402
from ferrum.data.dataset.vision import MnistDataset  # noqa: E402
from ferrum.optim import AdamConfig, GradientsParams  # noqa: E402
from ferrum.record import CompactRecorder  # noqa: E402
from ferrum.train import (  # noqa: E402
    ClassificationOutput,
    Learner,
    MetricState,
    PlainRenderer,
    Split,
    SupervisedTraining,
    TrainingProgress,
)
from ferrum.train.logger import FileMetricLogger  # noqa: E402
from ferrum.train.metric import AccuracyMetric, LossMetric, Metric, MetricMetadata  # noqa: E402
from ferrum.train.output import sync_item  # noqa: E402
from ferrum.train.processor import EventProcessor, SplitMetrics, loss_value  # noqa: E402
from ferrum.train.store import MetricStore  # noqa: E402
from harness import Report, Stats, alternate, bench_parser, reported, round_ratios  # noqa: E402

from examples.guide.data import MnistBatch, MnistBatcher  # noqa: E402
from examples.guide.model import Model, ModelConfig  # noqa: E402

TrainB = Autodiff[NdArray]
SEED = 42
LR = 1e-3
BATCH = 64


def loaders(items: int) -> tuple[DataLoader[MnistBatch[TrainB]], DataLoader[MnistBatch[NdArray]]]:
    train = (
        DataLoaderBuilder(MnistBatcher(TrainB.device()))
        .batch_size(BATCH)
        .shuffle(SEED)
        .build(PartialDataset(MnistDataset.sample("train"), 0, items))
    )
    valid = (
        DataLoaderBuilder(MnistBatcher(NdArray.device())).batch_size(BATCH).build(MnistDataset.sample("test"))
    )
    return train, valid


def fresh_model() -> Model[TrainB]:
    TrainB.seed(SEED)
    return ModelConfig(10, 512).init(TrainB.device())


def hand_epoch(items: int, with_metrics: bool) -> float:
    """One hand-written training epoch; seconds."""
    train, _ = loaders(items)
    model, optim = fresh_model(), AdamConfig().init()
    metrics: list[Metric[Any]] = [AccuracyMetric(), LossMetric()]
    start = time.perf_counter()
    iterator = iter(train)
    for iteration, batch in enumerate(iterator, 1):
        item = model.forward_classification(batch.images, batch.targets)
        grads = GradientsParams.from_grads(item.loss.backward(), model)
        model = optim.step(LR, model, grads)
        if with_metrics:
            synced = sync_item(item)
            metadata = MetricMetadata(iterator.progress(), 1, 1, iteration, LR)
            for metric in metrics:
                metric.update(synced, metadata)
    return time.perf_counter() - start


def hand_train_and_valid(items: int) -> float:
    """A hand-written training epoch with metrics, then validation with metrics; seconds."""
    train_time = hand_epoch(items, with_metrics=True)
    _, valid = loaders(items)
    model = fresh_model().valid()
    metrics: list[Metric[Any]] = [AccuracyMetric(), LossMetric()]
    start = time.perf_counter()
    iterator = iter(valid)
    for iteration, batch in enumerate(iterator, 1):
        synced = sync_item(model.inference_step(batch))
        for metric in metrics:
            metric.update(synced, MetricMetadata(iterator.progress(), 1, 1, iteration, None))
    return train_time + time.perf_counter() - start


class EpochTimer(PlainRenderer):
    """Plain lines into memory, and the time from the training epoch's start to its end."""

    def __init__(self) -> None:
        super().__init__(interval=10.0, stream=io.StringIO())
        self.train_seconds = float("nan")
        self._t0 = 0.0

    def start(self, progress: TrainingProgress) -> None:
        super().start(progress)
        if progress.split is Split.Train:
            self._t0 = time.perf_counter()

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        super().update(progress, metrics)

    def end(self, progress: TrainingProgress) -> None:
        super().end(progress)
        if progress.split is Split.Train:
            self.train_seconds = time.perf_counter() - self._t0


def learner_run(items: int, *, whole: bool) -> float:
    """The Learner for one epoch: its training epoch's seconds, or the whole launch's."""
    train, valid = loaders(items)
    timer = EpochTimer()
    with tempfile.TemporaryDirectory() as directory:
        training = (
            SupervisedTraining(directory, train, valid)
            .metrics(AccuracyMetric(), LossMetric())
            .num_epochs(1)
            .renderer(timer)
        )
        training = training.with_plots(False)
        if whole:
            training = training.with_file_checkpointer(CompactRecorder())
        start = time.perf_counter()
        training.launch(Learner(fresh_model(), AdamConfig().init(), LR))
        launch_seconds = time.perf_counter() - start
    return launch_seconds if whole else timer.train_seconds


def reused_output() -> ClassificationOutput[TrainB]:
    """One real output of the guide CNN's training step, to feed the Learner's bookkeeping without a model."""
    train, _ = loaders(BATCH)
    batch = next(iter(train))
    return fresh_model().forward_classification(batch.images, batch.targets)


def metric_updates(item: ClassificationOutput[TrainB], steps: int) -> float:
    """Seconds per step of the metric updates alone (output synced, ``AccuracyMetric`` and ``LossMetric``)."""
    progress = Progress(BATCH, BATCH)
    metrics: list[Metric[Any]] = [AccuracyMetric(), LossMetric()]
    start = time.perf_counter()
    for iteration in range(1, steps + 1):
        synced = sync_item(item)
        metadata = MetricMetadata(progress, 1, 1, iteration, LR)
        for metric in metrics:
            metric.update(synced, metadata)
    return (time.perf_counter() - start) / steps


def learner_loop(item: ClassificationOutput[TrainB], steps: int) -> float:
    """Seconds per step of everything the Learner does around a step, ``item`` being every step's output.

    No model time is in it: against ``metric_updates`` the difference is the
    Learner's own work (metadata, the loss check, the schedule, log files, the
    store, the renderer), free of the machine's noise on whole epochs.
    """
    progress = Progress(BATCH, BATCH)
    learner = Learner(fresh_model(), AdamConfig().init(), LR)
    split = SplitMetrics(Split.Train)
    for metric in (AccuracyMetric(), LossMetric()):
        split.register(metric, numeric=True)
    with tempfile.TemporaryDirectory() as directory:
        logger = FileMetricLogger(directory)
        renderer = PlainRenderer(interval=10.0, stream=io.StringIO())
        processor = EventProcessor(
            split, SplitMetrics(Split.Valid), [logger], MetricStore([logger]), renderer
        )
        processor.start(Split.Train, 1, 1, steps * BATCH)
        start = time.perf_counter()
        for iteration in range(1, steps + 1):
            learner.lr_step()
            loss_value(item)
            processor.process(Split.Train, item, progress, 1, 1, iteration, learner.lr_current())
        seconds = (time.perf_counter() - start) / steps
        processor.end(Split.Train, 1, 1, steps, progress)
    return seconds


def take_turns(variants: dict[str, Callable[[], float]], count: int) -> dict[str, Stats]:
    """``count`` rounds of every variant once, in a rotating order, each returning its own seconds."""
    return alternate(variants, count, measure=reported, rotate=True)


def main() -> None:
    parser = bench_parser(__doc__, rounds=7)
    parser.add_argument("--items", type=int, default=4000)
    args = parser.parse_args()
    count, items = (1, 256) if args.tiny else (args.rounds, args.items)
    steps = -(-items // BATCH)
    report = Report("learner_overhead", {"rounds": count, "items": items, "batch": BATCH})

    hand_epoch(items, with_metrics=True)  # warm up: imports, allocator, caches
    # Each variant times its own training epoch (past building its loaders and model).
    epoch = take_turns(
        {
            "hand": lambda: hand_epoch(items, with_metrics=False),
            "hand+metrics": lambda: hand_epoch(items, with_metrics=True),
            "learner": lambda: learner_run(items, whole=False),
        },
        count,
    )
    print(
        f"training epoch, guide CNN, {items} items, batch {BATCH}, {steps} steps, 0 workers, {count} rounds"
    )
    print(f"{'variant':<14} {'median s':>9} {'min s':>7} {'ratio':>7}  ratios of the rounds")
    for name, denominator in (("hand", None), ("hand+metrics", "hand"), ("learner", "hand+metrics")):
        seconds = epoch[name]
        row = f"{name:<14} {seconds.median:>9.3f} {seconds.best:>7.3f}"
        metrics = {"median s": seconds.median, "min s": seconds.best}
        if denominator is None:
            print(row)
        else:
            per_round = round_ratios(seconds, epoch[denominator])
            print(f"{row} {statistics.median(per_round):>6.3f}x  {' '.join(f'{r:.3f}' for r in per_round)}")
            metrics["ratio"] = statistics.median(per_round)
        report.add(name, metrics, seconds)
    learner, with_metrics = epoch["learner"], epoch["hand+metrics"]
    overhead = statistics.median(round_ratios(learner, with_metrics)) - 1
    of_medians = learner.median / with_metrics.median - 1
    per_step = (learner.median - with_metrics.median) / steps
    bare = statistics.median(round_ratios(learner, epoch["hand"])) - 1
    print(
        f"Learner overhead: {100 * overhead:+.1f}% of a training epoch "
        f"(ratio of the medians {100 * of_medians:+.1f}%, {1e6 * per_step:+.0f} us per step; "
        f"vs the bare loop {100 * bare:+.1f}%)"
    )
    report.add(
        "Learner overhead",
        {
            "%": 100 * overhead,
            "of medians %": 100 * of_medians,
            # a difference of medians, either sign under noise: recorded, not compared as a time
            "us per step": 1e6 * per_step,
            "vs bare %": 100 * bare,
        },
    )

    item, bookkeeping_steps = reused_output(), 200 if args.tiny else 2000
    bookkeeping = alternate(
        {
            "metric updates": lambda: metric_updates(item, bookkeeping_steps),
            "learner loop": lambda: learner_loop(item, bookkeeping_steps),
        },
        count,
        measure=reported,
    )
    alone, around = bookkeeping["metric updates"].median * 1e6, bookkeeping["learner loop"].median * 1e6
    step = with_metrics.median / steps
    share = 100 * (around - alone) / (1e6 * step)
    print(
        f"per step, no model (medians of {count}): metric updates {alone:.0f} us, "
        f"the Learner's loop around them {around:.0f} us: "
        f"its own work is {around - alone:.0f} us, {share:.2f}% of a {1e3 * step:.1f} ms step"
    )
    report.add("metric updates per step", {"us": alone}, bookkeeping["metric updates"])
    report.add("Learner loop per step", {"us": around}, bookkeeping["learner loop"])
    report.add("Learner's own work", {"us per step": around - alone, "% of a step": share})

    whole = take_turns(
        {
            "hand train+valid": lambda: hand_train_and_valid(items),
            "learner launch": lambda: learner_run(items, whole=True),
        },
        count,
    )
    print()
    print("a whole epoch: training and validation; the Learner's launch also sets up and checkpoints")
    for name, seconds in whole.items():
        print(f"{name:<18} {seconds.median:>9.3f} s median")
    ratio = statistics.median(round_ratios(whole["learner launch"], whole["hand train+valid"]))
    print(f"ratio {ratio:.3f}x")
    hand, launch = whole["hand train+valid"], whole["learner launch"]
    report.add("hand train+valid", {"median s": hand.median}, hand)
    report.add("learner launch", {"median s": launch.median, "ratio": ratio}, launch)
    report.finish(args)


if __name__ == "__main__":
    main()
