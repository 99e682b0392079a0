"""``DataLoader``: batches of a dataset, one epoch per iteration, optionally on worker threads."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, TypeVar

import numpy as np

from ferrum._ferrum import Device
from ferrum.data.dataloader.batcher import Batcher, takes_device
from ferrum.data.dataloader.prefetch import OrderedPrefetcher
from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.partial import PartialDataset

__all__ = ["DataLoader", "DataLoaderIterator", "Progress"]

ItemT = TypeVar("ItemT")
BatchT = TypeVar("BatchT")

# Batches computed ahead of the consumer, per worker: enough to hide uneven batch times.
_PREFETCH_PER_WORKER = 2


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
    another device, ``slice`` one over part of the dataset.

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
    ) -> None:
        self._dataset = dataset
        self._batcher = batcher
        self._batch_size = batch_size
        self._shuffle_seed = shuffle_seed
        self._num_workers = num_workers
        self._device = device
        self._shard = shard
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
            _BatchMaker(self._dataset, self._batcher, device), batches, self._num_workers
        )

    def __repr__(self) -> str:
        return (
            f"DataLoader(batches={len(self)}, batch_size={self._batch_size}, "
            f"shuffle_seed={self._shuffle_seed}, num_workers={self._num_workers}"
            + ("" if self._shard is None else f", shard={self._shard.rank}/{self._shard.world_size}")
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


class DataLoaderIterator(Generic[BatchT]):
    """One epoch of a ``DataLoader``.

    Abandoning it (``break``, an exception, ``close()``, leaving a ``with``
    block, or dropping the last reference) stops its worker threads at once,
    without waiting for batches in the making: those finish in the
    background and are thrown away.
    """

    def __init__(
        self, make_batch: Callable[[Sequence[int]], BatchT], batches: list[list[int]], num_workers: int
    ) -> None:
        self._make_batch = make_batch
        self._batches = batches
        self._total = sum(len(b) for b in batches)
        self._processed = 0
        self._next = 0
        self._prefetcher: OrderedPrefetcher[BatchT] | None = None
        if num_workers > 0 and batches:
            # The workers see only the prefetcher, never this iterator, so dropping
            # the iterator frees it at once and the finalizer stops the threads.
            self._prefetcher = OrderedPrefetcher(
                lambda k: make_batch(batches[k]),
                len(batches),
                num_workers,
                num_workers * _PREFETCH_PER_WORKER,
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

    def __enter__(self) -> DataLoaderIterator[BatchT]:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class _BatchMaker(Generic[ItemT, BatchT]):
    """Reads the items at some indices and batches them: the work of one batch."""

    def __init__(
        self, dataset: Dataset[ItemT], batcher: Batcher[ItemT, BatchT], device: Device[Any] | None
    ) -> None:
        self._dataset = dataset
        self._batcher = batcher
        # Burn 0.20's batcher form takes the device per call; ferrum's holds its own.
        self._device = device

    def __call__(self, indices: Sequence[int]) -> BatchT:
        items: list[ItemT] = []
        for index in indices:
            item = self._dataset.get(index)
            if item is None:
                raise IndexError(
                    f"{type(self._dataset).__name__}.get({index}) returned None "
                    f"although len() is {self._dataset.len()}"
                )
            items.append(item)
        if self._device is not None:
            return self._batcher.batch(items, self._device)
        return self._batcher.batch(items)
