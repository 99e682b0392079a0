"""The data loader: batching, shuffling per epoch, worker threads, early stops and errors."""

from __future__ import annotations

import gc
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from ferrum import D1, D2, Device, Int, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import (
    Batcher,
    DataLoader,
    DataLoaderBuilder,
    DataLoaderIterator,
    Progress,
    takes_device,
)
from ferrum.data.dataset import InMemDataset

from tests.support.holey_dataset import Holey
from tests.support.loader_workers import workers_gone


class AsList(Batcher[int, list[int]]):
    def batch(self, items: list[int]) -> list[int]:
        return list(items)


class Calling(Batcher[int, list[int]]):
    """Runs ``hook(items)`` before returning the items: lets tests slow, block, count or fail batches."""

    def __init__(self, hook: Callable[[list[int]], object]) -> None:
        self.hook = hook

    def batch(self, items: list[int]) -> list[int]:
        self.hook(items)
        return list(items)


def loader(
    size: int,
    batch_size: int,
    *,
    seed: int | None = None,
    workers: int = 0,
    batcher: Batcher[int, list[int]] | None = None,
) -> DataLoader[list[int]]:
    builder = DataLoaderBuilder(batcher or AsList()).batch_size(batch_size).num_workers(workers)
    if seed is not None:
        builder = builder.shuffle(seed)
    return builder.build(InMemDataset(range(size)))


@pytest.fixture(autouse=True)
def no_leftover_workers() -> None:
    assert workers_gone()


def test_batches_in_order_keep_the_last_partial_batch() -> None:
    data = loader(10, 4)
    assert len(data) == 3 and data.num_items() == 10 and data.batch_size == 4
    assert list(data) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert list(data) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # iterable again: one epoch per iteration
    assert len(loader(8, 4)) == 2 and len(loader(1, 4)) == 1


def test_defaults_batch_size_one_no_shuffle_no_workers() -> None:
    data = DataLoaderBuilder(AsList()).build(InMemDataset([5, 6]))
    assert (data.batch_size, data.num_workers) == (1, 0)
    assert list(data) == [[5], [6]]


def test_empty_dataset_has_no_batches() -> None:
    data = loader(0, 3, seed=1, workers=2)
    assert len(data) == 0 and list(data) == []


@pytest.mark.parametrize("workers", [0, 3])
def test_shuffle_gives_every_item_once_and_a_new_order_each_epoch(workers: int) -> None:
    data = loader(103, 10, seed=42, workers=workers)
    epochs = [[x for batch in data for x in batch] for _ in range(3)]
    for order in epochs:
        assert sorted(order) == list(range(103))
        assert order != list(range(103))
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2]
    assert [len(b) for b in data] == [10] * 10 + [3]
    assert data.epoch == 4


def test_same_seed_same_orders_across_builds_and_worker_counts() -> None:
    def run(seed: int, workers: int) -> list[list[list[int]]]:
        data = loader(57, 8, seed=seed, workers=workers)
        return [list(data), list(data)]

    reference = run(7, 0)
    assert run(7, 0) == reference
    assert run(7, 4) == reference
    assert run(8, 0) != reference


@pytest.mark.parametrize("workers", [0, 2])
def test_set_epoch_replays_an_epochs_order_in_a_new_loader(workers: int) -> None:
    first = loader(57, 8, seed=3, workers=workers)
    orders = [list(first) for _ in range(4)]
    resumed = loader(57, 8, seed=3, workers=workers)
    resumed.set_epoch(2)
    assert [list(resumed), list(resumed)] == orders[2:]
    assert resumed.epoch == 4
    with pytest.raises(ValueError, match="epoch must be an int >= 0, found -1"):
        resumed.set_epoch(-1)


def test_workers_keep_batch_order_whatever_finishes_first() -> None:
    rng = random.Random(0)
    delays = {i: rng.uniform(0, 0.01) for i in range(40)}

    def jitter(items: list[int]) -> None:
        time.sleep(delays[items[0]])

    batches = list(loader(40, 1, workers=4, batcher=Calling(jitter)))
    assert batches == [[i] for i in range(40)]


def test_workers_make_batches_in_parallel() -> None:
    # Two batches can only both pass the barrier if two threads run them at once.
    barrier = threading.Barrier(2, timeout=10)
    batches = list(loader(4, 2, workers=2, batcher=Calling(lambda items: barrier.wait())))
    assert batches == [[0, 1], [2, 3]]


def test_prefetching_is_bounded() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def record(items: list[int]) -> None:
        with lock:
            started.append(items[0])

    it = iter(loader(100, 1, workers=2, batcher=Calling(record)))
    assert next(it) == [0]
    time.sleep(0.2)
    # After one batch is consumed, workers may run at most 2 per worker ahead of it.
    assert len(started) <= 1 + 2 * 2
    it.close()


@pytest.mark.parametrize("how", ["break", "close", "with", "del"])
def test_abandoning_an_epoch_stops_the_workers(how: str) -> None:
    data = loader(1000, 2, seed=3, workers=3, batcher=Calling(lambda items: time.sleep(0.001)))
    if how == "break":
        for i, _ in enumerate(data):
            if i == 5:
                break
    elif how == "close":
        it = iter(data)
        next(it)
        it.close()
        with pytest.raises(StopIteration):
            next(it)
    elif how == "with":
        with iter(data) as it:
            next(it)
    else:
        it = iter(data)
        next(it)
        del it
    gc.collect()
    assert workers_gone()


@pytest.mark.parametrize("how", ["break", "close"])
def test_leaving_early_does_not_wait_for_batches_in_the_making(how: str) -> None:
    # While batches 0 and 1 are consumed, the two workers take batch 2 (slow)
    # and batch 3 (blocked until released: a batcher that never returns).
    # Leaving the epoch must wait for neither.
    release = threading.Event()

    def hook(items: list[int]) -> None:
        if items[0] == 2:
            time.sleep(2.0)
        elif items[0] == 3:
            release.wait()

    data = loader(10, 1, workers=2, batcher=Calling(hook))
    left_at = 0.0
    if how == "break":
        for batch in data:
            if batch == [1]:
                left_at = time.monotonic()
                break
    else:
        it = iter(data)
        assert [next(it), next(it)] == [[0], [1]]
        left_at = time.monotonic()
        it.close()
    took = time.monotonic() - left_at
    release.set()
    assert took < 1.0, f"leaving the epoch waited {took:.1f} s for batches it throws away"
    assert workers_gone()


def test_finished_epoch_leaves_no_worker() -> None:
    data = loader(20, 3, workers=2)
    assert len(list(data)) == 7
    assert workers_gone()


@pytest.mark.parametrize("workers", [0, 2])
def test_batcher_errors_reach_the_consumer_in_order(workers: int) -> None:
    def fail_on_13(items: list[int]) -> None:
        if 13 in items:
            raise ValueError(f"bad item in {items}")

    it = iter(loader(30, 4, workers=workers, batcher=Calling(fail_on_13)))
    assert [next(it) for _ in range(3)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    with pytest.raises(ValueError, match=r"bad item in \[12, 13, 14, 15\]"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    assert workers_gone()


def test_dataset_returning_none_inside_its_length_is_reported() -> None:
    data = DataLoaderBuilder(AsList()).batch_size(2).num_workers(1).build(Holey(hole=2, length=4))
    with pytest.raises(IndexError, match=r"Holey.get\(2\) returned None although len\(\) is 4"):
        list(data)


def test_progress_counts_items() -> None:
    it: DataLoaderIterator[list[int]] = iter(loader(10, 4))
    assert it.progress() == Progress(0, 10)
    next(it)
    next(it)
    assert it.progress() == Progress(8, 10)
    next(it)
    assert it.progress() == Progress(10, 10)


@pytest.mark.parametrize(
    ("configure", "error", "message"),
    [
        (lambda b: b.batch_size(0), ValueError, "batch_size must be >= 1, found 0"),
        (lambda b: b.batch_size(-3), ValueError, "batch_size must be >= 1, found -3"),
        (lambda b: b.num_workers(-1), ValueError, "num_workers must be >= 0, found -1"),
        (lambda b: b.shuffle(-1), ValueError, "shuffle seed must be >= 0, found -1"),
        (lambda b: b.shuffle(2**64), ValueError, r"shuffle seed must be < 2\*\*64"),
        (lambda b: b.batch_size(2.5), TypeError, "batch_size must be an int, found float 2.5"),
        (lambda b: b.num_workers(True), TypeError, "num_workers must be an int, found bool"),
    ],
)
def test_bad_settings_name_the_setting(
    configure: Callable[[DataLoaderBuilder[int, list[int]]], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        configure(DataLoaderBuilder(AsList()))


def test_builder_rejects_non_batchers_and_non_datasets() -> None:
    with pytest.raises(TypeError, match="batcher must be a Batcher, found function"):
        DataLoaderBuilder(lambda items: items)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="build expects a Dataset, found list"):
        DataLoaderBuilder(AsList()).build([1, 2])  # type: ignore[arg-type]


def test_builder_setters_return_new_builders() -> None:
    base = DataLoaderBuilder(AsList())
    bigger = base.batch_size(5).shuffle(1).num_workers(2)
    assert base.build(InMemDataset(range(3))).batch_size == 1
    built = bigger.build(InMemDataset(range(3)))
    assert (built.batch_size, built.num_workers) == (5, 2)
    assert "batch_size=5" in repr(bigger) and "shuffle_seed=1" in repr(built)


def test_batcher_is_subscriptable_at_run_time() -> None:
    alias = Batcher[int, str]
    assert alias.__origin__ is Batcher  # type: ignore[attr-defined]


@dataclass
class PairBatch:
    inputs: Tensor[NdArray, D2]
    targets: Tensor[NdArray, D1, Int]


class PairBatcher(Batcher[tuple[float, float, int], PairBatch]):
    def batch(self, items: list[tuple[float, float, int]]) -> PairBatch:
        device = NdArray.device()
        inputs = Tensor.from_data([[a, b] for a, b, _ in items], device)
        targets: Tensor[NdArray, D1, Int] = Tensor.from_data([label for _, _, label in items], device)
        return PairBatch(inputs, targets)


def test_tensor_batches_made_on_worker_threads() -> None:
    items = [(float(i), float(-i), i % 3) for i in range(50)]
    data = (
        DataLoaderBuilder(PairBatcher()).batch_size(16).shuffle(5).num_workers(2).build(InMemDataset(items))
    )
    batches = list(data)
    assert [b.inputs.dims() for b in batches] == [(16, 2)] * 3 + [(2, 2)]
    assert [b.targets.dims() for b in batches] == [(16,)] * 3 + [(2,)]
    rows = [row for b in batches for row in b.inputs.to_data().to_list()]
    labels = [label for b in batches for label in b.targets.to_data().to_list()]
    assert sorted(rows) == sorted([a, b] for a, b, _ in items)
    assert all(int(row[0]) % 3 == label for row, label in zip(rows, labels, strict=True))


# --------------------------------------------------------------------------- batch(items, device), Burn 0.20


class OnDevice(Batcher[float, Tensor[Any, D1]]):
    """Burn 0.20's form: the loader passes its device to each call."""

    def batch(self, items: list[float], device: Device[Any]) -> Tensor[Any, D1]:
        return Tensor.from_floats(items, device)


@pytest.mark.parametrize("workers", [0, 2])
def test_device_batchers_get_the_loaders_device(workers: int) -> None:
    assert takes_device(OnDevice()) and not takes_device(AsList())
    dataset = InMemDataset([1.0, 2.0, 3.0])
    plain = DataLoaderBuilder(OnDevice()).batch_size(2).num_workers(workers).build(dataset)
    # Without set_device: Burn's default device (NdArray's).
    assert plain.device == NdArray.device()
    assert all(batch.device() == NdArray.device() for batch in plain)
    ad = Autodiff[NdArray].device()
    built = DataLoaderBuilder(OnDevice()).batch_size(2).set_device(ad).num_workers(workers).build(dataset)
    assert [b.device() for b in built] == [ad, ad]
    moved = plain.to_device(ad)
    assert moved.device == ad and [b.to_data().to_list() for b in moved] == [[1.0, 2.0], [3.0]]
    assert all(b.device() == ad for b in moved)
    # The original loader keeps its device.
    assert all(b.device() == NdArray.device() for b in plain)


def test_slice_keeps_settings_and_epoch() -> None:
    loader = DataLoaderBuilder(AsList()).batch_size(2).shuffle(3).build(InMemDataset(range(10)))
    next(iter(loader))
    part = loader.slice(2, 7)
    assert part.num_items() == 5 and part.batch_size == 2 and part.epoch == loader.epoch == 1
    assert sorted(i for batch in part for i in batch) == [2, 3, 4, 5, 6]
    with pytest.raises(ValueError, match=r"range \[4, 11\) is invalid for a dataset of length 10"):
        loader.slice(4, 11)
    with pytest.raises(TypeError, match="needs a Device"):
        loader.to_device("cpu")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="set_device needs a Device"):
        DataLoaderBuilder(AsList()).set_device(None)  # type: ignore[arg-type]
