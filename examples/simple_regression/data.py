"""dataset.rs: rows of a CSV file as regression items, their scaling, and the batcher.

Burn's example reads the California housing data into a typed record; here
the columns come from the CSV file's header, so that any numeric CSV works:
one column is the target, every other one a feature. The defaults read the
synthetic patients of ``examples/custom_csv_dataset`` and predict their
``response``.

Burn scales the features by fixed minima and maxima; ferrum computes them
from the training rows and keeps them in the run's config, so that inference
scales a new row the same way. The target is standardised too (the
patients' score is in the hundreds) and predictions are scaled back.
"""

from __future__ import annotations

import csv
import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from ferrum import D1, D2, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset import InMemDataset

B = TypeVar("B", bound=Backend)

DEFAULT_CSV = Path(__file__).resolve().parents[1] / "custom_csv_dataset" / "patients.tsv"
DEFAULT_TARGET = "response"


@dataclass(frozen=True)
class RegressionItem:
    """One row: its feature values, in the order of the header, and the value to predict."""

    features: tuple[float, ...]
    target: float


@dataclass(frozen=True)
class CsvTable:
    """The rows of a CSV file as items, and the names of the feature columns."""

    feature_names: list[str]
    dataset: InMemDataset[RegressionItem]


def guess_delimiter(path: str | os.PathLike[str]) -> str:
    """A tab for ``.tsv`` and ``.tab`` files, a comma otherwise."""
    return "\t" if Path(path).suffix.lower() in (".tsv", ".tab") else ","


def read_csv(path: str | os.PathLike[str], target: str, delimiter: str | None = None) -> CsvTable:
    """Every row of ``path`` (a header row, then numbers) as a ``RegressionItem`` predicting ``target``.

    A cell that is not a number raises ``ValueError`` naming the file, line and column.
    """
    file = Path(path)
    with open(file, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter or guess_delimiter(file))
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{file}: empty file, expected a header row naming the columns")
        if target not in header:
            raise ValueError(f"{file}: no column {target!r} to predict; the header has {header}")
        at = header.index(target)
        items = []
        for record in reader:
            if not record:
                continue
            if len(record) != len(header):
                raise ValueError(
                    f"{file} line {reader.line_num}: {len(record)} cells, the header has {len(header)}"
                )
            values = []
            for column, cell in zip(header, record, strict=True):
                try:
                    value = float(cell)
                except ValueError:
                    raise ValueError(
                        f"{file} line {reader.line_num}: column {column!r} holds {cell!r}, not a number"
                    ) from None
                if not math.isfinite(value):
                    raise ValueError(f"{file} line {reader.line_num}: column {column!r} is {cell}")
                values.append(value)
            items.append(RegressionItem(tuple(values[:at] + values[at + 1 :]), values[at]))
    if len(items) < 2:
        raise ValueError(f"{file}: {len(items)} data rows; training needs at least 2")
    return CsvTable(header[:at] + header[at + 1 :], InMemDataset(items))


@config
class Normalizer:
    """Min-max scaling of the features and standardisation of the target, fitted on training rows."""

    features_min: list[float]
    features_max: list[float]
    target_mean: float
    target_std: float

    @staticmethod
    def fit(items: list[RegressionItem]) -> Normalizer:
        columns = list(zip(*(item.features for item in items), strict=True))
        targets = [item.target for item in items]
        return Normalizer(
            features_min=[min(c) for c in columns],
            features_max=[max(c) for c in columns],
            target_mean=statistics.fmean(targets),
            target_std=statistics.pstdev(targets) or 1.0,
        )

    def features(self, items: list[RegressionItem]) -> npt.NDArray[np.float32]:
        """[items, features]: each feature scaled to [0, 1] over the training rows."""
        low, high = np.array(self.features_min), np.array(self.features_max)
        span = np.where(high > low, high - low, 1.0)  # a constant column scales to 0
        raw = np.array([item.features for item in items], dtype=np.float64)
        scaled: npt.NDArray[np.float32] = ((raw - low) / span).astype(np.float32)
        return scaled

    def target(self, values: list[float]) -> npt.NDArray[np.float32]:
        """[items]: the targets standardised."""
        scaled: npt.NDArray[np.float32] = ((np.array(values) - self.target_mean) / self.target_std).astype(
            np.float32
        )
        return scaled

    def original(self, scaled: list[float]) -> list[float]:
        """Scaled targets (what the model predicts) back in the target column's units."""
        return [value * self.target_std + self.target_mean for value in scaled]


@dataclass
class RegressionBatch(Generic[B]):
    inputs: Tensor[B, D2]  # [batch, features], scaled to [0, 1] on the training rows
    targets: Tensor[B, D1]  # [batch], standardised


class RegressionBatcher(Batcher[RegressionItem, RegressionBatch[Any]]):
    """Burn 0.20's form ``batch(items, device)``: the Learner puts training batches on the
    autodiff device and validation batches on its inner backend."""

    def __init__(self, normalizer: Normalizer) -> None:
        self.normalizer = normalizer

    def batch(self, items: list[RegressionItem], device: Device[B]) -> RegressionBatch[B]:
        inputs: Tensor[B, D2] = Tensor.from_numpy(self.normalizer.features(items), device)
        targets: Tensor[B, D1] = Tensor.from_numpy(
            self.normalizer.target([item.target for item in items]), device
        )
        return RegressionBatch(inputs, targets)
