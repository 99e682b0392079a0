"""``DataLoader``: batches of a dataset, one epoch per iteration, optionally on worker threads."""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from ferrum._ferrum import Device
from ferrum.data.closing import ClosesOnExit
from ferrum.data.dataloader.batcher import Batcher, takes_device
from ferrum.data.dataloader.prefetch import WORKER_THREAD_PREFIX, OrderedPrefetcher
from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.partial import PartialDataset

__all__ = ["DataLoader", "DataLoaderIterator", "DataLoaderTimeout", "Progress"]

ItemT = TypeVar("ItemT")
BatchT = TypeVar("BatchT")

# Batches computed ahead of the consumer, per worker: enough to hide uneven batch times.
_PREFETCH_PER_WORKER = 2


class DataLoaderTimeout(TimeoutError):
    """A batch was not ready within the loader's ``timeout`` (``DataLoaderBuilder.timeout``).

    Usually a dataset ``get`` that never returns (a dead network share, a lock
    never released). ``index`` is the item whose ``get`` had not returned, or
    None if the batch was stuck in ``Batcher.batch`` or never started;
    ``batch`` is the batch's number in its epoch and ``items`` its item
    indices; ``worker`` names the thread making it. That thread cannot be
    interrupted: it is a daemon thread, left to finish on its own (it never
    holds up the interpreter's exit) and its result is dropped. The epoch is
    stopped; the loader can be iterated again.

    Example:
        >>> import threading
        >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder, DataLoaderTimeout
        >>> from ferrum.data.dataset import Dataset
        >>> class Stuck(Dataset[int]):
        ...     never = threading.Event()
        ...     def get(self, index: int) -> int | None:
        ...         if index == 1:
        ...             self.never.wait()
        ...         return index
        ...     def len(self) -> int:
        ...         return 3
        >>> class AsList(Batcher[int, list[int]]):
        ...     def batch(self, items: list[int]) -> list[int]:
        ...         return items
        >>> loader = DataLoaderBuilder(AsList()).timeout(0.05).build(Stuck())
        >>> try:
        ...     list(loader)
        ... except DataLoaderTimeout as error:
        ...     print(error.index, error.batch, error.worker)
        1 1 ferrum-dataloader-worker-0
        >>> Stuck.never.set()
    """

    def __init__(
        self, timeout: float, batch: int, items: Sequence[int], index: int | None, worker: str | None
    ) -> None:
        self.timeout = timeout
        self.batch = batch
        self.items = list(items)
        self.index = index
        self.worker = worker
        if worker is None:
            where = "no worker thread had started it"
        elif index is None:
            where = f"worker thread {worker!r} was still in Batcher.batch"
        else:
            where = f"dataset.get({index}) had not returned on worker thread {worker!r}"
        shown = self.items if len(self.items) <= 8 else [*self.items[:8], "..."]
        super().__init__(
            f"DataLoader timeout: expected batch {batch} (items {shown}) within {timeout:g} s, "
            f"found it not ready after {timeout:g} s: {where}. The worker is abandoned (a daemon thread) "
            "and this epoch stopped; raise DataLoaderBuilder.timeout if the dataset is merely slow"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle as type(*args), and args holds only the message; other processes need the fields.
        return (type(self), (self.timeout, self.batch, self.items, self.index, self.worker))


@dataclass(frozen=True)
class Progress:
    """How far an epoch has gone: Burn's ``Progress``."""

    items_processed: int
    items_total: int


class DataLoader(Generic[BatchT]):
    """Batches of a dataset: Burn's ``DataLoader``. Build one with ``DataLoaderBuilder``.

    Each ``iter(loader)`` is one epoch: every item exactly once, in batches of
    ``batch_size`` (the last one may be smaller). With a shuffle seed, epoch
    ``e`` uses the order drawn from ``(seed, e)``: reproducible across runs,
    different from one epoch to the next. With ``num_workers > 0`` batches are
    made on that many threads, a bounded number ahead, and still come out in
    order. ``len(loader)`` is the number of batches per epoch. A batcher of
    Burn 0.20's form ``batch(items, device)`` gets the loader's ``device``
    (``NdArray.device()`` unless set): ``to_device`` gives the same loader on
    another device, ``slice`` one over part of the dataset. With a ``timeout``
    (off by default), a batch not ready within that many seconds raises
    ``DataLoaderTimeout``; an error raised by the dataset or batcher reaches
    the iterating thread unchanged, with a note naming the item and thread.

    Example:
        >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
        >>> from ferrum.data.dataset import InMemDataset
        >>> class AsList(Batcher[int, list[int]]):
        ...     def batch(self, items: list[int]) -> list[int]:
        ...         return items
        >>> loader = DataLoaderBuilder(AsList()).batch_size(2).build(InMemDataset(range(5)))
        >>> len(loader), list(loader)
        (3, [[0, 1], [2, 3], [4]])
    """

    def __init__(
        self,
        dataset: Dataset[ItemT],
        batcher: Batcher[ItemT, BatchT],
        *,
        batch_size: int,
        shuffle_seed: int | None,
        num_workers: int,
        device: Device[Any] | None = None,
        shard: Shard | None = None,
        timeout: float | None = None,
    ) -> None:
        self._dataset = dataset
        self._batcher = batcher
        self._batch_size = batch_size
        self._shuffle_seed = shuffle_seed
        self._num_workers = num_workers
        self._device = device
        self._shard = shard
        self._timeout = timeout
        self._epoch = 0

    @property
    def device(self) -> Device[Any]:
        """The device a ``batch(items, device)`` batcher makes batches on (Burn's default: ``NdArray``'s)."""
        if self._device is None:
            from ferrum.backend import NdArray

            return NdArray.device()
        return self._device

    @property
    def batcher(self) -> Batcher[Any, BatchT]:
        """The batcher making each batch."""
        return self._batcher

    def to_device(self, device: Device[Any]) -> DataLoader[BatchT]:
        """The same loader (dataset, settings, epoch) making its batches on ``device``: Burn's ``to_device``.

        Example:
            >>> from ferrum import Device, Tensor
            >>> from ferrum.backend import Autodiff, NdArray
            >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
            >>> from ferrum.data.dataset import InMemDataset
            >>> class Floats(Batcher[float, Tensor[Autodiff[NdArray], Any]]):
            ...     def batch(self, items: list[float], device: Device[Any]) -> Tensor[Any, Any]:
            ...         return Tensor.from_floats(items, device)
            >>> loader = DataLoaderBuilder(Floats()).batch_size(2).build(InMemDataset([1.0, 2.0]))
            >>> next(iter(loader.to_device(Autodiff[NdArray].device()))).device().is_autodiff
            True
        """
        if not isinstance(device, Device):
            raise TypeError(f"DataLoader.to_device needs a Device, found {type(device).__name__}")
        return self._copy(self._dataset, device)

    def slice(self, start: int, end: int) -> DataLoader[BatchT]:
        """The same loader over items ``start`` to ``end`` (exclusive) of the dataset: Burn's ``slice``.

        Example:
            >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
            >>> from ferrum.data.dataset import InMemDataset
            >>> class AsList(Batcher[int, list[int]]):
            ...     def batch(self, items: list[int]) -> list[int]:
            ...         return items
            >>> list(DataLoaderBuilder(AsList()).batch_size(2).build(InMemDataset(range(10))).slice(3, 8))
            [[3, 4], [5, 6], [7]]
        """
        for name, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"DataLoader.slice: {name} must be an int, found {type(value).__name__}")
        return self._copy(PartialDataset(self._dataset, start, end), self._device)

    def shard(self, rank: int, world_size: int, *, drop_last: bool = False) -> DataLoader[BatchT]:
        """The part of every epoch that rank ``rank`` of ``world_size`` trains on (data-parallel training).

        Each epoch's order (shuffled as before, the same on every rank) is
        dealt out item by item: rank ``r`` gets positions ``r, r + world_size,
        ...``, as PyTorch's ``DistributedSampler``. So batch ``k`` of every
        rank together is batch ``k`` of one process with ``world_size`` times
        the batch size. Every rank gets the same number of items: the order is
        padded with its first items (or, with ``drop_last``, its tail dropped).

        Example:
            >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
            >>> from ferrum.data.dataset import InMemDataset
            >>> class AsList(Batcher[int, list[int]]):
            ...     def batch(self, items: list[int]) -> list[int]:
            ...         return items
            >>> loader = DataLoaderBuilder(AsList()).batch_size(2).build(InMemDataset(list(range(7))))
            >>> [list(loader.shard(rank, 2)) for rank in (0, 1)]
            [[[0, 2], [4, 6]], [[1, 3], [5, 0]]]
        """
        return self._copy(self._dataset, self._device, Shard.checked(rank, world_size, drop_last))

    def _copy(
        self, dataset: Dataset[Any], device: Device[Any] | None, shard: Shard | bool | None = True
    ) -> DataLoader[BatchT]:
        loader = DataLoader(
            dataset,
            self._batcher,
            batch_size=self._batch_size,
            shuffle_seed=self._shuffle_seed,
            num_workers=self._num_workers,
            device=device,
            shard=self._shard if shard is True else (shard or None),
            timeout=self._timeout,
        )
        loader._epoch = self._epoch
        return loader

    @property
    def batch_size(self) -> int:
        """Items per batch (the last batch of an epoch may hold fewer)."""
        return self._batch_size

    @property
    def num_workers(self) -> int:
        """Worker threads making batches; 0 makes them in the iterating thread."""
        return self._num_workers

    @property
    def timeout(self) -> float | None:
        """Seconds ``next()`` waits for a batch before ``DataLoaderTimeout``; None (the default): forever."""
        return self._timeout

    @property
    def epoch(self) -> int:
        """Number of epochs started so far: the next iteration is epoch ``epoch``."""
        return self._epoch

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration epoch ``epoch`` (its shuffle order); a resumed training run sets it.

        Example:
            >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
            >>> from ferrum.data.dataset import InMemDataset
            >>> class AsList(Batcher[int, list[int]]):
            ...     def batch(self, items: list[int]) -> list[int]:
            ...         return items
            >>> loader = DataLoaderBuilder(AsList()).batch_size(5).shuffle(7).build(InMemDataset(range(5)))
            >>> first, second = list(loader), list(loader)
            >>> loader.set_epoch(1)
            >>> list(loader) == second and loader.epoch == 2
            True
        """
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"DataLoader.set_epoch: epoch must be an int >= 0, found {epoch!r}")
        self._epoch = epoch

    @property
    def sharding(self) -> Shard | None:
        """The rank's part of each epoch (``shard``), or None when this loader reads all of it."""
        return self._shard

    def num_items(self) -> int:
        """Items per epoch (this rank's share when sharded)."""
        size = self._dataset.len()
        return size if self._shard is None else self._shard.items(size)

    def __len__(self) -> int:
        return -(-self.num_items() // self._batch_size)

    def __iter__(self) -> DataLoaderIterator[BatchT]:
        epoch = self._epoch
        self._epoch += 1
        size = self._dataset.len()
        order: list[int] = list(range(size))
        if self._shuffle_seed is not None:
            order = np.random.default_rng([self._shuffle_seed, epoch]).permutation(size).tolist()
        if self._shard is not None:
            order = self._shard.select(order)
        size = len(order)
        batches = [order[start : start + self._batch_size] for start in range(0, size, self._batch_size)]
        device = self.device if takes_device(self._batcher) else None
        return DataLoaderIterator(
            _BatchMaker(self._dataset, self._batcher, device),
            batches,
            self._num_workers,
            timeout=self._timeout,
        )

    def __repr__(self) -> str:
        return (
            f"DataLoader(batches={len(self)}, batch_size={self._batch_size}, "
            f"shuffle_seed={self._shuffle_seed}, num_workers={self._num_workers}"
            + ("" if self._shard is None else f", shard={self._shard.rank}/{self._shard.world_size}")
            + ("" if self._timeout is None else f", timeout={self._timeout:g}")
            + ")"
        )


@dataclass(frozen=True)
class Shard:
    """Rank ``rank`` of ``world_size`` reads every ``world_size``-th item of each epoch's order."""

    rank: int
    world_size: int
    drop_last: bool = False

    @staticmethod
    def checked(rank: int, world_size: int, drop_last: bool) -> Shard:
        """A shard, after checking that ``0 <= rank < world_size``."""
        for name, value in (("rank", rank), ("world_size", world_size)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"DataLoader.shard: {name} must be an int, found {type(value).__name__}")
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(
                f"DataLoader.shard: need 0 <= rank < world_size, found rank {rank} of {world_size}"
            )
        return Shard(rank, world_size, bool(drop_last))

    def items(self, size: int) -> int:
        """This rank's items of an epoch of ``size``."""
        return size // self.world_size if self.drop_last else -(-size // self.world_size)

    def select(self, order: list[int]) -> list[int]:
        """This rank's positions of one epoch's ``order``, padded or cut to an equal share."""
        total = self.items(len(order)) * self.world_size
        if total > len(order) and order:
            order = order + (order * (-(-total // len(order))))[: total - len(order)]
        return order[:total][self.rank :: self.world_size]


class DataLoaderIterator(ClosesOnExit, Generic[BatchT]):
    """One epoch of a ``DataLoader``.

    Abandoning it (``break``, an exception, ``close()``, leaving a ``with``
    block, or dropping the last reference) stops its worker threads at once,
    without waiting for batches in the making: those finish in the
    background and are thrown away. With a ``timeout``, ``next()`` waits at
    most that long for a batch, then raises ``DataLoaderTimeout``; batches
    are then made on worker threads even with ``num_workers`` 0 (one thread,
    making each batch only when asked for), since a thread stuck in the
    dataset cannot be interrupted, only abandoned.
    """

    def __init__(
        self,
        make_batch: Callable[[Sequence[int]], BatchT],
        batches: list[list[int]],
        num_workers: int,
        *,
        timeout: float | None = None,
    ) -> None:
        self._make_batch = make_batch
        self._batches = batches
        self._total = sum(len(b) for b in batches)
        self._processed = 0
        self._next = 0
        self._prefetcher: OrderedPrefetcher[BatchT] | None = None
        if (num_workers > 0 or timeout is not None) and batches:
            # The workers see only the prefetcher, never this iterator, so dropping
            # the iterator frees it at once and the finalizer stops the threads.
            self._prefetcher = OrderedPrefetcher(
                lambda k: make_batch(batches[k]),
                len(batches),
                max(num_workers, 1),
                num_workers * _PREFETCH_PER_WORKER,
                timeout=timeout,
                on_timeout=None if timeout is None else _timeout_error(make_batch, batches, timeout),
            )
            self._finalizer = weakref.finalize(self, self._prefetcher.close)

    def __iter__(self) -> DataLoaderIterator[BatchT]:
        return self

    def __next__(self) -> BatchT:
        if self._next >= len(self._batches):
            self.close()
            raise StopIteration
        indices = self._batches[self._next]
        try:
            batch = self._make_batch(indices) if self._prefetcher is None else self._prefetcher.take()
        except BaseException:
            self._next = len(self._batches)
            self.close()
            raise
        self._next += 1
        self._processed += len(indices)
        return batch

    def progress(self) -> Progress:
        """Items handed out so far in this epoch, and the epoch's total."""
        return Progress(self._processed, self._total)

    def close(self) -> None:
        """Stop the epoch early: worker threads stop without being waited for."""
        self._next = len(self._batches)
        if self._prefetcher is not None:
            self._finalizer()


def _timeout_error(
    make_batch: Callable[[Sequence[int]], Any], batches: list[list[int]], timeout: float
) -> Callable[[int, threading.Thread | None], BaseException]:
    def error(batch: int, worker: threading.Thread | None) -> BaseException:
        index = None
        if worker is not None and isinstance(make_batch, _BatchMaker):
            index = make_batch.reading(worker)
        name = None if worker is None else worker.name
        return DataLoaderTimeout(timeout, batch, batches[batch], index, name)

    return error


class _BatchMaker(Generic[ItemT, BatchT]):
    """Reads the items at some indices and batches them: the work of one batch."""

    def __init__(
        self, dataset: Dataset[ItemT], batcher: Batcher[ItemT, BatchT], device: Device[Any] | None
    ) -> None:
        self._dataset = dataset
        self._batcher = batcher
        # Burn 0.20's batcher form takes the device per call; ferrum's holds its own.
        self._device = device
        # The item each thread is reading (by thread id), so a timeout can say which `get` hangs.
        self._reading: dict[int, int] = {}

    def reading(self, thread: threading.Thread) -> int | None:
        """The item whose ``get`` ``thread`` is in, or None if it is not reading one."""
        return None if thread.ident is None else self._reading.get(thread.ident)

    def __call__(self, indices: Sequence[int]) -> BatchT:
        thread = threading.get_ident()
        items: list[ItemT] = []
        for index in indices:
            self._reading[thread] = index
            try:
                item = self._dataset.get(index)
                if item is None:
                    raise IndexError(
                        f"{type(self._dataset).__name__}.get({index}) returned None "
                        f"although len() is {self._dataset.len()}"
                    )
            except Exception as error:
                _add_note(error, f"raised by dataset.get({index}) {_thread_description()}")
                raise
            finally:
                self._reading.pop(thread, None)
            items.append(item)
        try:
            if self._device is not None:
                return self._batcher.batch(items, self._device)
            return self._batcher.batch(items)
        except Exception as error:
            _add_note(error, f"raised by Batcher.batch of items {list(indices)} {_thread_description()}")
            raise


def _thread_description() -> str:
    thread = threading.current_thread()
    if thread.name.startswith(WORKER_THREAD_PREFIX):
        return f"on data loader worker thread {thread.name!r}"
    return f"on the iterating thread {thread.name!r} (num_workers=0)"


def _add_note(error: BaseException, note: str) -> None:
    """Say where a dataset or batcher error happened, keeping the exception itself (and so its type)."""
    note = f"ferrum DataLoader: {note}"
    if note in getattr(error, "__notes__", ()):  # a dataset may re-raise one cached exception
        return
    if sys.version_info >= (3, 11):
        error.add_note(note)
        return
    # Python 3.10 has no add_note and does not print __notes__: keep them (as 3.11 would, for code
    # that reads them) and chain the note as the cause, which tracebacks do print.
    notes = getattr(error, "__notes__", None)
    # Through vars(): typeshed gives BaseException no __notes__ before 3.11.
    vars(error)["__notes__"] = [*notes, note] if isinstance(notes, list) else [note]
    if error.__cause__ is None:
        error.__cause__ = _DataLoaderContext(note)


class _DataLoaderContext(Exception):
    """Where a dataset error happened, chained as its cause on Python 3.10 (which cannot add notes)."""
