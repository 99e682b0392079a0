"""Data pipelines, as in Burn: datasets (``ferrum.data.dataset``) and the data loader
(``ferrum.data.dataloader``).

Example:
    >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
    >>> from ferrum.data.dataset import InMemDataset
    >>> class Sum(Batcher[int, int]):
    ...     def batch(self, items: list[int]) -> int:
    ...         return sum(items)
    >>> list(DataLoaderBuilder(Sum()).batch_size(2).build(InMemDataset([1, 2, 3])))
    [3, 3]
"""

from ferrum.data import dataloader, dataset

__all__ = ["dataloader", "dataset"]
