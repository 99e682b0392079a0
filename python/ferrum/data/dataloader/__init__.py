"""The data loader: Burn's ``Batcher``, ``DataLoaderBuilder`` and ``DataLoader``.

Example:
    >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
    >>> from ferrum.data.dataset import InMemDataset
    >>> class Pairs(Batcher[str, str]):
    ...     def batch(self, items: list[str]) -> str:
    ...         return "".join(items)
    >>> list(DataLoaderBuilder(Pairs()).batch_size(2).build(InMemDataset("abcde")))
    ['ab', 'cd', 'e']
"""

from ferrum.data.dataloader.batcher import Batcher, takes_device
from ferrum.data.dataloader.builder import DataLoaderBuilder
from ferrum.data.dataloader.loader import DataLoader, DataLoaderIterator, DataLoaderTimeout, Progress, Shard
from ferrum.data.dataloader.prefetch import WORKER_THREAD_PREFIX

__all__ = [
    "WORKER_THREAD_PREFIX",
    "Batcher",
    "DataLoader",
    "DataLoaderBuilder",
    "DataLoaderIterator",
    "DataLoaderTimeout",
    "Progress",
    "Shard",
    "takes_device",
]
