"""Write ``tests/fixtures/vision/transforms.npz``: torchvision's outputs for ferrum's vision transforms.

Run it with a Python that has torch and torchvision (ferrum's tests never need them)::

    /work/torch-venv/bin/python scripts/make_vision_transform_fixtures.py

Inputs are made from a fixed NumPy seed (uint8 and float32 images, odd sizes,
one batch); each case applies one ``torchvision.transforms.v2.functional`` op.
The file holds the inputs (``in_<name>``), the outputs (``out_<i>``) and
``cases``, a JSON list naming each case's op, input and arguments, which
``tests/data/test_vision_transforms.py`` replays with
``ferrum.data.transform.vision``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torchvision
from torchvision.transforms.v2 import InterpolationMode
from torchvision.transforms.v2 import functional as TF

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "vision" / "transforms.npz"
MODES = {"nearest": InterpolationMode.NEAREST, "bilinear": InterpolationMode.BILINEAR}


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260052)
    return {
        "u8": rng.integers(0, 256, size=(3, 13, 17), dtype=np.uint8),
        "f32": rng.random((3, 11, 9), dtype=np.float32),
        # 26 -> 22 rows: torch's float32 nearest index floor(11 * float32(26/22)) is 12, not 13.
        "f32_even": rng.random((2, 26, 12), dtype=np.float32),
        "batch_u8": rng.integers(0, 256, size=(2, 3, 9, 14), dtype=np.uint8),
        "batch_f32": rng.random((2, 1, 15, 8), dtype=np.float32),
    }


def cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    resize_sizes = {
        "u8": [[7, 5], [20, 23], [6, 30], [13, 17], 8],
        "f32": [[4, 3], [17, 14], [11, 4], 5],
        "f32_even": [[22, 9], [5, 24]],
        "batch_u8": [[4, 6], [12, 20]],
        "batch_f32": [[6, 3], [31, 9]],
    }
    for name, sizes in resize_sizes.items():
        for size in sizes:
            for mode in ("nearest", "bilinear"):
                for antialias in (False, True) if mode == "bilinear" else (False,):
                    out.append(
                        {"op": "resize", "input": name, "size": size, "mode": mode, "antialias": antialias}
                    )
    for name, size in [
        ("u8", [4, 6]),
        ("u8", [5, 5]),
        ("f32", [6, 4]),
        ("batch_u8", [3, 7]),
        ("f32", [11, 9]),
    ]:
        out.append({"op": "center_crop", "input": name, "size": size})
    for name, box in [("u8", [2, 3, 6, 9]), ("f32", [0, 0, 11, 9]), ("batch_f32", [5, 1, 7, 6])]:
        out.append({"op": "crop", "input": name, "box": box})
    for name in ("u8", "f32", "batch_u8"):
        out.append({"op": "hflip", "input": name})
    out.append(
        {"op": "normalize", "input": "f32", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
    )
    out.append({"op": "normalize", "input": "batch_f32", "mean": [0.5], "std": [0.25]})
    for name in ("u8", "batch_u8"):
        out.append({"op": "to_float", "input": name})
    return out


def apply(case: dict[str, Any], x: torch.Tensor) -> torch.Tensor:
    op = case["op"]
    if op == "resize":
        size = case["size"] if isinstance(case["size"], list) else [case["size"]]
        return TF.resize(x, size, interpolation=MODES[case["mode"]], antialias=case["antialias"])
    if op == "center_crop":
        return TF.center_crop(x, case["size"])
    if op == "crop":
        top, left, height, width = case["box"]
        return TF.crop(x, top, left, height, width)
    if op == "hflip":
        return TF.horizontal_flip(x)
    if op == "normalize":
        return TF.normalize(x, case["mean"], case["std"])
    if op == "to_float":
        return TF.to_dtype(x, torch.float32, scale=True)
    raise ValueError(op)


def main() -> None:
    torch.manual_seed(0)
    arrays = {f"in_{name}": value for name, value in inputs().items()}
    listed = cases()
    for i, case in enumerate(listed):
        x = torch.from_numpy(arrays[f"in_{case['input']}"].copy())
        y = apply(case, x).contiguous().numpy()
        case["out"] = f"out_{i}"
        arrays[case["out"]] = y
    meta = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, cases=np.array(json.dumps(listed)), meta=np.array(json.dumps(meta)), **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(listed)} cases): {meta}")


if __name__ == "__main__":
    main()
