"""The data loader under faulty datasets: a ``get`` that never returns, or one that raises (issue 60)."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from ferrum.data.dataloader import (
    WORKER_THREAD_PREFIX,
    Batcher,
    DataLoader,
    DataLoaderBuilder,
    DataLoaderTimeout,
)
from ferrum.data.dataloader import loader as loader_module
from ferrum.data.dataset import Dataset

from tests.support.loader_workers import workers_alive, workers_gone

TIMEOUT = 0.3
# Generous: the 2 shared cores may be busy, but a hang would take forever.
SLACK = 3.0

WORKERS_AND_SEEDS = [(0, None), (0, 7), (1, None), (3, None), (3, 7)]


class AsList(Batcher[int, list[int]]):
    def batch(self, items: list[int]) -> list[int]:
        return list(items)


class Faulty(Dataset[int]):
    """``range(size)``, except that ``get(stuck)`` waits for ``release`` and ``get(failing)`` raises."""

    def __init__(
        self,
        size: int,
        *,
        stuck: int | None = None,
        failing: int | None = None,
        stuck_once: bool = False,
    ) -> None:
        self.size = size
        self.stuck = stuck
        self.failing = failing
        self.stuck_once = stuck_once
        self.release = threading.Event()
        self.read: list[int] = []
        self.threads: set[str] = set()

    def get(self, index: int) -> int | None:
        self.read.append(index)
        self.threads.add(threading.current_thread().name)
        if index == self.stuck:
            if self.stuck_once:
                self.stuck = None
            self.release.wait()
        if index == self.failing:
            raise LookupError("corrupt record", index)
        return index if 0 <= index < self.size else None

    def len(self) -> int:
        return self.size


def only_worker_left(name: str, timeout: float = 5.0) -> bool:
    """Whether all workers but ``name`` exit within ``timeout``: a stopped loader does not wait for them."""
    deadline = time.monotonic() + timeout
    while [t.name for t in workers_alive()] != [name]:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


RELEASES: list[threading.Event] = []


@pytest.fixture(autouse=True)
def release_stuck_workers() -> Iterator[None]:
    """Unblock every stuck ``get`` after the test, so that no worker outlives it."""
    assert workers_gone()
    yield
    for release in RELEASES:
        release.set()
    RELEASES.clear()
    assert workers_gone()


def faulty(
    size: int, *, stuck: int | None = None, failing: int | None = None, stuck_once: bool = False
) -> Faulty:
    dataset = Faulty(size, stuck=stuck, failing=failing, stuck_once=stuck_once)
    RELEASES.append(dataset.release)
    return dataset


def build(
    dataset: Dataset[int], *, workers: int, seed: int | None, timeout: float | None = TIMEOUT
) -> DataLoader[list[int]]:
    builder = DataLoaderBuilder(AsList()).batch_size(2).num_workers(workers).timeout(timeout)
    if seed is not None:
        builder = builder.shuffle(seed)
    return builder.build(dataset)


@pytest.mark.parametrize(("workers", "seed"), WORKERS_AND_SEEDS)
def test_a_get_that_never_returns_times_out_naming_the_item_and_worker(
    workers: int, seed: int | None
) -> None:
    dataset = faulty(10, stuck=5)
    loader = build(dataset, workers=workers, seed=seed)
    got: list[list[int]] = []
    start = time.monotonic()
    with pytest.raises(DataLoaderTimeout) as caught:
        for batch in loader:
            got.append(batch)
    elapsed = time.monotonic() - start
    error = caught.value
    assert isinstance(error, TimeoutError)
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + SLACK
    assert error.index == 5 and 5 in error.items and error.timeout == TIMEOUT
    assert error.worker is not None and error.worker.startswith(WORKER_THREAD_PREFIX)
    assert "dataset.get(5)" in str(error) and repr(error.worker) in str(error)
    assert f"batch {error.batch}" in str(error)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.index, copy.batch, copy.worker) == (error.index, error.batch, error.worker)
    assert type(copy) is DataLoaderTimeout and str(copy) == str(error)
    # The batches before the stuck one came out, in order; none after it.
    assert len(got) == error.batch and all(5 not in batch for batch in got)
    # The stuck worker is left behind as a daemon; every other worker stops.
    assert all(t.daemon for t in workers_alive())
    assert only_worker_left(error.worker)


@pytest.mark.parametrize(("workers", "seed"), WORKERS_AND_SEEDS)
def test_the_loader_can_be_iterated_again_after_a_timeout(workers: int, seed: int | None) -> None:
    dataset = faulty(7, stuck=3, stuck_once=True)
    loader = build(dataset, workers=workers, seed=seed)
    with pytest.raises(DataLoaderTimeout):
        list(loader)
    # The first epoch's worker is still stuck in get(3): the next epoch does not wait for it.
    assert sorted(i for batch in loader for i in batch) == list(range(7))
    assert loader.epoch == 2


def test_a_stuck_batcher_times_out_without_an_item() -> None:
    release = threading.Event()
    RELEASES.append(release)

    class Stuck(Batcher[int, list[int]]):
        def batch(self, items: list[int]) -> list[int]:
            release.wait()
            return items

    loader = DataLoaderBuilder(Stuck()).batch_size(2).num_workers(2).timeout(TIMEOUT).build(faulty(4))
    with pytest.raises(DataLoaderTimeout, match=r"still in Batcher\.batch") as caught:
        next(iter(loader))
    assert caught.value.index is None and caught.value.batch == 0 and caught.value.items == [0, 1]


def test_a_timed_out_process_still_exits() -> None:
    """Every thread the loader leaves behind is a daemon: the interpreter exits at once."""
    script = textwrap.dedent(
        """
        import threading
        from ferrum.data.dataloader import Batcher, DataLoaderBuilder, DataLoaderTimeout
        from ferrum.data.dataset import Dataset

        class Never(Dataset[int]):
            def get(self, index):
                if index == 2:
                    threading.Event().wait()
                return index
            def len(self):
                return 6

        class AsList(Batcher[int, list[int]]):
            def batch(self, items):
                return items

        for workers in (0, 2):
            try:
                list(DataLoaderBuilder(AsList()).num_workers(workers).timeout(0.1).build(Never()))
            except DataLoaderTimeout as error:
                print("timed out", error.index)
        others = [t for t in threading.enumerate() if t is not threading.main_thread()]
        assert others and not [t for t in others if not t.daemon], others
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["timed out 2", "timed out 2"]


def test_no_timeout_by_default_waits_for_a_slow_get() -> None:
    dataset = faulty(4, stuck=1)
    loader = build(dataset, workers=2, seed=None, timeout=None)
    assert loader.timeout is None and DataLoaderBuilder(AsList()).build(dataset).timeout is None
    # The clock starts before the timer does: the get is released 2 * TIMEOUT after the timer starts,
    # which a clock read after it would see as slightly less.
    start = time.monotonic()
    threading.Timer(2 * TIMEOUT, dataset.release.set).start()
    assert list(loader) == [[0, 1], [2, 3]]
    assert time.monotonic() - start >= 2 * TIMEOUT


def test_no_timeout_and_no_workers_reads_in_the_iterating_thread() -> None:
    dataset = faulty(4)
    assert list(build(dataset, workers=0, seed=None, timeout=None)) == [[0, 1], [2, 3]]
    assert dataset.threads == {threading.current_thread().name}


def test_a_timeout_with_no_workers_reads_each_batch_only_when_asked() -> None:
    dataset = faulty(6)
    batches = iter(build(dataset, workers=0, seed=None))
    assert next(batches) == [0, 1]
    time.sleep(0.05)
    assert dataset.read == [0, 1]
    assert list(batches) == [[2, 3], [4, 5]]
    assert dataset.threads == {f"{WORKER_THREAD_PREFIX}-0"}


def test_a_slow_get_within_the_timeout_is_fine() -> None:
    dataset = faulty(4, stuck=2)
    threading.Timer(TIMEOUT / 3, dataset.release.set).start()
    assert list(build(dataset, workers=1, seed=None)) == [[0, 1], [2, 3]]


def test_the_builder_sets_and_clears_the_timeout() -> None:
    builder = DataLoaderBuilder(AsList()).timeout(2)
    assert "timeout=2" in repr(builder) and builder.timeout(None).build(faulty(1)).timeout is None
    loader = builder.build(faulty(3))
    assert loader.timeout == 2.0 and "timeout=2" in repr(loader)
    assert loader.slice(0, 2).timeout == 2.0 and loader.shard(0, 2).timeout == 2.0


@pytest.mark.parametrize("bad", [0, -1.5, math.nan, math.inf])
def test_bad_timeouts_name_the_setting(bad: float) -> None:
    with pytest.raises(ValueError, match=r"timeout must be a finite number of seconds > 0.*found"):
        DataLoaderBuilder(AsList()).timeout(bad)


@pytest.mark.parametrize("bad", ["1", True])
def test_timeouts_must_be_numbers(bad: object) -> None:
    with pytest.raises(TypeError, match=r"timeout must be a number of seconds or None, found"):
        DataLoaderBuilder(AsList()).timeout(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [None, TIMEOUT])
@pytest.mark.parametrize(("workers", "seed"), WORKERS_AND_SEEDS)
def test_a_raising_get_keeps_its_type_and_names_the_item(
    workers: int, seed: int | None, timeout: float | None
) -> None:
    loader = build(faulty(9, failing=4), workers=workers, seed=seed, timeout=timeout)
    got: list[list[int]] = []
    with pytest.raises(LookupError) as caught:
        for batch in loader:
            got.append(batch)
    error = caught.value
    assert type(error) is LookupError and error.args == ("corrupt record", 4)
    assert all(4 not in batch for batch in got)
    notes = getattr(error, "__notes__", [])
    assert len(notes) == 1 and "dataset.get(4)" in notes[0]
    if workers == 0 and timeout is None:
        assert f"iterating thread {threading.current_thread().name!r}" in notes[0]
    else:
        assert f"worker thread '{WORKER_THREAD_PREFIX}-" in notes[0]


def test_a_raising_batcher_keeps_its_type_and_names_the_items() -> None:
    class Failing(Batcher[int, list[int]]):
        def batch(self, items: list[int]) -> list[int]:
            raise ArithmeticError("bad batch")

    loader = DataLoaderBuilder(Failing()).batch_size(3).num_workers(2).build(faulty(5))
    with pytest.raises(ArithmeticError, match="bad batch") as caught:
        list(loader)
    assert "Batcher.batch of items [0, 1, 2]" in caught.value.__notes__[0]


def test_on_python_3_10_the_context_is_chained_as_the_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_module, "sys", SimpleNamespace(version_info=(3, 10, 0)))
    with pytest.raises(LookupError) as caught:
        list(build(faulty(3, failing=1), workers=0, seed=None, timeout=None))
    error = caught.value
    assert type(error) is LookupError and "dataset.get(1)" in str(error.__cause__)
    assert error.__notes__ == [str(error.__cause__)]
