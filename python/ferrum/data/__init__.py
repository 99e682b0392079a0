"""Data pipelines, as in Burn: datasets (``ferrum.data.dataset``), the data loader
(``ferrum.data.dataloader``) and transforms (``ferrum.data.transform``, images in ``.vision``).

Example:
    >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
    >>> from ferrum.data.dataset import InMemDataset
    >>> class Sum(Batcher[int, int]):
    ...     def batch(self, items: list[int]) -> int:
    ...         return sum(items)
    >>> list(DataLoaderBuilder(Sum()).batch_size(2).build(InMemDataset([1, 2, 3])))
    [3, 3]
"""

from ferrum.data import dataloader, dataset, transform

__all__ = ["dataloader", "dataset", "transform"]
