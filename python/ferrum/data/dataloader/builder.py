"""``DataLoaderBuilder``: the settings of a data loader, validated as they are given."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Generic, TypeVar

from ferrum._ferrum import Device
from ferrum.data.dataloader.batcher import Batcher
from ferrum.data.dataloader.loader import DataLoader, Shard
from ferrum.data.dataset.base import Dataset

__all__ = ["DataLoaderBuilder"]

ItemT = TypeVar("ItemT")
BatchT = TypeVar("BatchT")

_MAX_SEED = 2**64


@dataclasses.dataclass(frozen=True)
class _Settings:
    batch_size: int = 1
    shuffle_seed: int | None = None
    num_workers: int = 0
    device: Device[Any] | None = None
    shard: Shard | None = None
    timeout: float | None = None


class DataLoaderBuilder(Generic[ItemT, BatchT]):
    """Configures and builds a ``DataLoader``: Burn's ``DataLoaderBuilder``.

    Defaults: batch size 1, no shuffling, batches made in the iterating thread,
    no timeout.
    Each setter returns a new builder, so a builder can be shared and reused.
    Bad settings raise ``ValueError`` (or ``TypeError``) naming the setting.

    Example:
        >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
        >>> from ferrum.data.dataset import InMemDataset
        >>> class Total(Batcher[int, int]):
        ...     def batch(self, items: list[int]) -> int:
        ...         return sum(items)
        >>> builder = DataLoaderBuilder(Total()).batch_size(4).shuffle(42).num_workers(2)
        >>> loader = builder.build(InMemDataset(range(10)))
        >>> len(loader), sum(loader)
        (3, 45)
    """

    def __init__(self, batcher: Batcher[ItemT, BatchT]) -> None:
        if not isinstance(batcher, Batcher):
            raise TypeError(f"DataLoaderBuilder batcher must be a Batcher, found {type(batcher).__name__}")
        self._batcher = batcher
        self._settings = _Settings()

    def batch_size(self, batch_size: int) -> DataLoaderBuilder[ItemT, BatchT]:
        """Items per batch, at least 1."""
        _check_int("batch_size", batch_size, minimum=1)
        return self._with(batch_size=batch_size)

    def shuffle(self, seed: int) -> DataLoaderBuilder[ItemT, BatchT]:
        """Shuffle each epoch, from ``seed`` (0 to 2**64 - 1) and the epoch number."""
        _check_int("shuffle seed", seed, minimum=0)
        if seed >= _MAX_SEED:
            raise ValueError(f"shuffle seed must be < 2**64, found {seed}")
        return self._with(shuffle_seed=seed)

    def num_workers(self, num_workers: int) -> DataLoaderBuilder[ItemT, BatchT]:
        """Threads making batches in parallel; 0 (the default) makes them in the iterating thread."""
        _check_int("num_workers", num_workers, minimum=0)
        return self._with(num_workers=num_workers)

    def set_device(self, device: Device[Any]) -> DataLoaderBuilder[ItemT, BatchT]:
        """The device a ``batch(items, device)`` batcher makes its batches on (Burn's ``set_device``)."""
        if not isinstance(device, Device):
            raise TypeError(f"set_device needs a Device, found {type(device).__name__}")
        return self._with(device=device)

    def shard(
        self, rank: int, world_size: int, *, drop_last: bool = False
    ) -> DataLoaderBuilder[ItemT, BatchT]:
        """Give rank ``rank`` of ``world_size`` its share of every epoch (see ``DataLoader.shard``)."""
        return self._with(shard=Shard.checked(rank, world_size, drop_last))

    def timeout(self, seconds: float | None) -> DataLoaderBuilder[ItemT, BatchT]:
        """Fail a batch that is not ready within ``seconds``, instead of waiting forever; None turns it off.

        Off by default, as PyTorch's ``DataLoader(timeout=0)``: no single limit
        suits both a memory-backed dataset and one reading a slow network
        share, and a spurious failure hours into training costs more than a
        hang that someone notices. Set it when a dataset ``get`` can block
        (network, locks, subprocesses). It bounds how long ``next()`` waits
        for one batch; when it expires, ``next()`` raises ``DataLoaderTimeout``
        naming the batch, the item whose ``get`` had not returned and the
        worker thread. That thread cannot be interrupted: it is a daemon,
        abandoned to finish on its own, and the loader can be iterated again.
        With a timeout, ``num_workers(0)`` makes each batch on one worker
        thread when it is asked for (the iterating thread cannot be freed from
        a ``get`` that never returns). Not Burn's: its builder has no timeout.

        Example:
            >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
            >>> from ferrum.data.dataset import InMemDataset
            >>> class AsList(Batcher[int, list[int]]):
            ...     def batch(self, items: list[int]) -> list[int]:
            ...         return items
            >>> loader = DataLoaderBuilder(AsList()).batch_size(2).timeout(30).build(InMemDataset(range(3)))
            >>> loader.timeout, list(loader)
            (30.0, [[0, 1], [2]])
        """
        if seconds is None:
            return self._with(timeout=None)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"timeout must be a number of seconds or None, found {type(seconds).__name__}")
        if not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"timeout must be a finite number of seconds > 0 (or None), found {seconds}")
        return self._with(timeout=float(seconds))

    def build(self, dataset: Dataset[ItemT]) -> DataLoader[BatchT]:
        """The data loader over ``dataset``."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"DataLoaderBuilder.build expects a Dataset, found {type(dataset).__name__}")
        settings = self._settings
        return DataLoader(
            dataset,
            self._batcher,
            batch_size=settings.batch_size,
            shuffle_seed=settings.shuffle_seed,
            num_workers=settings.num_workers,
            device=settings.device,
            shard=settings.shard,
            timeout=settings.timeout,
        )

    def _with(self, **changes: Any) -> DataLoaderBuilder[ItemT, BatchT]:
        builder: DataLoaderBuilder[ItemT, BatchT] = DataLoaderBuilder(self._batcher)
        builder._settings = dataclasses.replace(self._settings, **changes)
        return builder

    def __repr__(self) -> str:
        s = self._settings
        return (
            f"DataLoaderBuilder({type(self._batcher).__name__}, batch_size={s.batch_size}, "
            f"shuffle_seed={s.shuffle_seed}, num_workers={s.num_workers}"
            + ("" if s.timeout is None else f", timeout={s.timeout:g}")
            + ")"
        )


def _check_int(setting: str, value: int, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{setting} must be an int, found {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{setting} must be >= {minimum}, found {value}")
