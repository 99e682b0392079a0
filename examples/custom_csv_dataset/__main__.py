"""``python -m examples.custom_csv_dataset``: read a CSV file into a typed dataset and show it.

Options: ``--csv PATH`` (default: the synthetic ``patients.tsv`` beside this
file), ``--delimiter D`` (default: a tab), ``--smoke`` (write a fresh
synthetic file of 20 patients into a temporary folder and read that).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

from ..common.cli import example_parser
from .dataset import DiabetesDataset, DiabetesPatient
from .generate import COLUMNS, DEFAULT_PATH, write_patients


def describe(dataset: DiabetesDataset) -> None:
    """The row count, the first and last patients, and each column's range and mean."""
    print(f"Dataset loaded with {dataset.len()} rows")
    first, last = dataset.get(0), dataset.get(dataset.len() - 1)
    print(f"First item:\n{first}")
    print(f"Last item:\n{last}")
    patients = list(dataset)
    print(f"{'column':>10} {'min':>9} {'mean':>9} {'max':>9}")
    for field in fields(DiabetesPatient):
        values = [float(getattr(patient, field.name)) for patient in patients]
        print(f"{field.name:>10} {min(values):9.2f} {statistics.fmean(values):9.2f} {max(values):9.2f}")


def main() -> None:
    parser = example_parser("custom_csv_dataset", __doc__, smoke=True)
    parser.add_argument("--csv", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--delimiter", default="\t")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="custom_csv_dataset-") as tmp:
        path: Path = args.csv
        if args.smoke:
            path = write_patients(Path(tmp) / "patients.tsv", count=20)
        if not path.is_file():
            columns = ", ".join(COLUMNS)
            sys.exit(f"{path}: no such file; give --csv a tab-separated file with a header row of {columns}")
        try:
            dataset = DiabetesDataset.new(path, args.delimiter)
        except ValueError as err:  # a missing column, a cell of the wrong type, ...
            sys.exit(str(err))
        describe(dataset)


if __name__ == "__main__":
    main()
