"""Datasets: Burn's ``Dataset`` interface, in-memory and SQLite storage, and lazy transforms.

Transforms wrap a dataset and read it on demand, so they compose freely.

Example:
    >>> from ferrum.data.dataset import InMemDataset, MapperDataset, PartialDataset, ShuffledDataset
    >>> data = InMemDataset(range(10))
    >>> train, test = PartialDataset.split_at(ShuffledDataset(data, seed=1), 8)
    >>> len(train), len(test), sorted([*train, *test]) == list(range(10))
    (8, 2, True)
    >>> list(MapperDataset(PartialDataset(data, 0, 3), lambda x: -x))
    [0, -1, -2]
"""

from ferrum.data.dataset import vision
from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.composed import ComposedDataset
from ferrum.data.dataset.in_memory import InMemDataset
from ferrum.data.dataset.mapper import Mapper, MapperDataset
from ferrum.data.dataset.partial import PartialDataset
from ferrum.data.dataset.sampler import SamplerDataset
from ferrum.data.dataset.shuffled import ShuffledDataset
from ferrum.data.dataset.sqlite import SqliteDataset
from ferrum.data.dataset.sqlite_writer import SqliteDatasetWriter
from ferrum.data.dataset.windows import WindowsDataset

__all__ = [
    "ComposedDataset",
    "Dataset",
    "InMemDataset",
    "Mapper",
    "MapperDataset",
    "PartialDataset",
    "SamplerDataset",
    "ShuffledDataset",
    "SqliteDataset",
    "SqliteDatasetWriter",
    "WindowsDataset",
    "vision",
]
