"""Writes ``patients.tsv``: a synthetic stand-in for the diabetes data of Burn's example.

Burn's example downloads the diabetes study of Efron et al. (442 patients,
ten baseline measurements and a disease-progression score a year later).
ferrum's examples download nothing, so this script draws 442 made-up
patients with the same columns, similar ranges and a progression score that
depends on body mass index, blood pressure, triglycerides and HDL plus
noise. It uses Python's ``random`` with a fixed seed, so the file is the
same on every machine: ``python -m examples.custom_csv_dataset.generate``
rewrites the shipped file byte for byte.
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "patients.tsv"
NUM_PATIENTS = 442
SEED = 59
COLUMNS = ["age", "sex", "bmi", "bp", "tc", "ldl", "hdl", "tch", "ltg", "glu", "response"]


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def patient_rows(count: int = NUM_PATIENTS, seed: int = SEED) -> list[list[str]]:
    """``count`` patients as text cells, in the order of ``COLUMNS``."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        health = rng.gauss(0.0, 1.0)  # a hidden factor that ties the measurements together
        age = round(_clamp(rng.gauss(48.5, 13.1), 19, 79))
        sex = rng.choice((1, 2))
        bmi = _clamp(rng.gauss(26.4 + 1.6 * health, 4.0), 18.0, 42.2)
        bp = _clamp(rng.gauss(94.6 + 0.25 * (age - 48.5) + 4.0 * health, 12.5), 62.0, 133.0)
        tc = round(_clamp(rng.gauss(189.0 + 0.5 * (age - 48.5), 33.0), 97, 301))
        hdl = _clamp(rng.gauss(49.8 - 3.5 * health + (4.0 if sex == 2 else -4.0), 11.0), 22.0, 99.0)
        ldl = _clamp(tc - hdl - rng.gauss(24.0, 8.0), 41.0, 242.0)
        tch = tc / hdl
        ltg = _clamp(rng.gauss(4.64 + 0.3 * health, 0.45), 3.26, 6.11)
        glu = round(_clamp(rng.gauss(91.3 + 4.0 * health + 0.1 * (age - 48.5), 10.5), 58, 124))
        # The score a model should learn: standardised measurements, one interaction, noise.
        z_bmi, z_bp = (bmi - 26.4) / 4.4, (bp - 94.6) / 13.8
        z_ltg, z_hdl, z_glu = (ltg - 4.64) / 0.52, (hdl - 49.8) / 12.9, (glu - 91.3) / 11.5
        score = 152.0 + 28.0 * z_bmi + 13.0 * z_bp + 24.0 * z_ltg - 8.0 * z_hdl + 4.0 * z_glu
        score += 7.0 * z_bmi * z_ltg + rng.gauss(0.0, 30.0)
        response = round(_clamp(score, 25, 346))
        rows.append(
            [
                str(age),
                str(sex),
                f"{bmi:.1f}",
                f"{bp:.2f}",
                str(tc),
                f"{ldl:.1f}",
                f"{hdl:.1f}",
                f"{tch:.2f}",
                f"{ltg:.4f}",
                str(glu),
                str(response),
            ]
        )
    return rows


def write_patients(path: Path, count: int = NUM_PATIENTS, seed: int = SEED) -> Path:
    """Write the header and ``count`` patients to ``path``, tab-separated; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(patient_rows(count, seed))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m examples.custom_csv_dataset.generate",
        description="Write the synthetic patients file (tab-separated).",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--count", type=int, default=NUM_PATIENTS)
    args = parser.parse_args()
    print(f"wrote {args.count} patients to {write_patients(args.out, args.count)}")


if __name__ == "__main__":
    main()
