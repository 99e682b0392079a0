"""dataset.rs: a patient record and the dataset that reads them from a tab-separated file.

Burn derives serde's ``Deserialize`` for the record; in ferrum the record is
a dataclass and ``InMemDataset.from_csv`` matches the header's column names
to its field names, converting each cell to the field's type (columns that
are not fields are ignored, a missing one is an error naming the file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ferrum.data.dataset import Dataset, InMemDataset

from .generate import DEFAULT_PATH


@dataclass(frozen=True)
class DiabetesPatient:
    """One patient: ten baseline measurements and the progression a year later."""

    age: int  # years
    sex: int  # 1 or 2
    bmi: float  # body mass index
    bp: float  # average blood pressure
    tc: int  # S1: total serum cholesterol
    ldl: float  # S2: low-density lipoproteins
    hdl: float  # S3: high-density lipoproteins
    tch: float  # S4: total cholesterol / HDL
    ltg: float  # S5: log of the serum triglycerides level
    glu: int  # S6: blood sugar level
    response: int  # disease progression one year after baseline: the target


class DiabetesDataset(Dataset[DiabetesPatient]):
    """The patients of a tab-separated file (by default the synthetic ``patients.tsv`` shipped here).

    The whole file is small, so it is read into memory (``InMemDataset``);
    this class only names the file and the item type, as Burn's does.
    """

    def __init__(self, dataset: InMemDataset[DiabetesPatient]) -> None:
        self.dataset = dataset

    @staticmethod
    def new(path: str | os.PathLike[str] = DEFAULT_PATH, delimiter: str = "\t") -> DiabetesDataset:
        return DiabetesDataset(InMemDataset.from_csv(path, DiabetesPatient, delimiter=delimiter))

    def get(self, index: int) -> DiabetesPatient | None:
        return self.dataset.get(index)

    def len(self) -> int:
        return self.dataset.len()
