"""Datasets: Burn's ``Dataset`` interface, in-memory, SQLite and DataFrame storage, lazy transforms,
fake data, and named sources (``vision``, ``nlp``, ``audio``).

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

from ferrum.data.dataset import audio, nlp, vision
from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.composed import ComposedDataset
from ferrum.data.dataset.dataframe import DataframeDataset
from ferrum.data.dataset.fake import FakeDataset
from ferrum.data.dataset.huggingface import (
    HuggingfaceDataset,
    HuggingfaceDatasetError,
    HuggingfaceDatasetLoader,
)
from ferrum.data.dataset.in_memory import InMemDataset
from ferrum.data.dataset.mapper import Mapper, MapperDataset
from ferrum.data.dataset.partial import PartialDataset
from ferrum.data.dataset.sampler import SamplerDataset
from ferrum.data.dataset.selection import SelectionDataset
from ferrum.data.dataset.shuffled import ShuffledDataset
from ferrum.data.dataset.sqlite import SqliteDataset
from ferrum.data.dataset.sqlite_writer import SqliteDatasetWriter
from ferrum.data.dataset.windows import WindowsDataset

__all__ = [
    "ComposedDataset",
    "DataframeDataset",
    "Dataset",
    "FakeDataset",
    "HuggingfaceDataset",
    "HuggingfaceDatasetError",
    "HuggingfaceDatasetLoader",
    "InMemDataset",
    "Mapper",
    "MapperDataset",
    "PartialDataset",
    "SamplerDataset",
    "SelectionDataset",
    "ShuffledDataset",
    "SqliteDataset",
    "SqliteDatasetWriter",
    "WindowsDataset",
    "audio",
    "nlp",
    "vision",
]
