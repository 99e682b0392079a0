#!/usr/bin/env python3
"""Write the PyTorch references that tests/tensor/test_affine_grid.py compares ``ferrum.grid.affine_grid_2d``
and ``Tensor.grid_sample_2d`` to (needs torch).

    /path/to/torch-venv/bin/python scripts/make_affine_grid_fixtures.py   # writes tests/fixtures/tensor

Not run by the tests (they never need torch); the output is committed. ``affine_grid.npz`` holds, per
case, float32 arrays named ``<case>.theta`` ``[N, 2, 3]``, ``<case>.image`` ``[N, C, H, W]``,
``<case>.grid`` (``affine_grid(theta, image.shape, align_corners=True)``, the convention Burn's
``affine_grid_2d`` follows) and ``<case>.<padding>`` (``grid_sample`` of the image at that grid,
bilinear, ``align_corners=True``, for the padding modes ``zeros``, ``border`` and ``reflection``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "tensor"
PADDINGS = ("zeros", "border", "reflection")


def rotation(degrees: float, tx: float = 0.0, ty: float = 0.0, scale: float = 1.0) -> list[list[float]]:
    c, s = math.cos(math.radians(degrees)) * scale, math.sin(math.radians(degrees)) * scale
    return [[c, -s, tx], [s, c, ty]]


CASES: dict[str, tuple[list[list[list[float]]], tuple[int, int, int, int]]] = {
    # Two images, each with its own transform: a rotation, and a rotation with a shift.
    "rotate_translate": ([rotation(30.0), rotation(-45.0, 0.2, -0.1)], (2, 3, 6, 8)),
    # Scale and shear, with points that land outside the image (padding matters).
    "scale_shear": ([[[1.3, 0.4, 0.1], [-0.2, 0.8, 0.25]]], (1, 2, 5, 7)),
    # A pure shift by a fraction of a pixel.
    "translate": ([[[1.0, 0.0, 0.15], [0.0, 1.0, -0.3]]], (1, 1, 4, 4)),
    # A single row: its one y coordinate is 0.
    "one_row": ([rotation(10.0, 0.05, 0.0, 0.9)], (1, 1, 1, 6)),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(20260)
    arrays: dict[str, np.ndarray] = {}
    for name, (theta_list, size) in CASES.items():
        theta = torch.tensor(theta_list, dtype=torch.float32)
        image = torch.rand(size, generator=gen, dtype=torch.float32)
        grid = F.affine_grid(theta, list(size), align_corners=True)
        arrays[f"{name}.theta"] = theta.numpy()
        arrays[f"{name}.image"] = image.numpy()
        arrays[f"{name}.grid"] = grid.numpy()
        for padding in PADDINGS:
            sampled = F.grid_sample(image, grid, mode="bilinear", padding_mode=padding, align_corners=True)
            arrays[f"{name}.{padding}"] = sampled.numpy()
    np.savez_compressed(OUT / "affine_grid.npz", **arrays)
    print(f"wrote {OUT / 'affine_grid.npz'} ({len(arrays)} arrays)")


if __name__ == "__main__":
    main()
