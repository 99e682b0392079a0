"""Write ``tests/fixtures/vision/ops.npz``: references for ``ferrum.vision`` from OpenCV, scipy and torchvision.

Run it with a Python that has torch, torchvision, scipy and OpenCV (ferrum's tests never need them)::

    /work/torch-venv/bin/pip install scipy opencv-python-headless
    /work/torch-venv/bin/python scripts/make_vision_fixtures.py

What it records (inputs from a fixed NumPy seed):

* structuring elements: ``cv2.getStructuringElement`` for each shape and size;
* morphology: ``cv2.erode`` / ``cv2.dilate`` on uint8, float32 and 0/1 (Bool)
  images, single and batched, over element shapes, anchors, border types and
  values. Iterations are applied as repeated single passes, Burn's semantics
  (OpenCV grows a rectangular element instead, which differs at the border);
* Burn's own morphology test images (``crates/burn-vision/tests/images``, read
  from a Burn checkout given by ``--burn-repo``) with its expected outputs;
* connected components: ``scipy.ndimage.label`` (4- and 8-connectivity; its
  labels follow the row-major order of each component's first pixel, which
  the script checks) and per-label area and bounds, cross-checked against
  ``cv2.connectedComponentsWithStats``;
* non-maximum suppression: ``torchvision.ops.nms`` after Burn's score
  threshold, truncated to Burn's ``max_output_boxes``.

The file holds the arrays by name and ``cases``, a JSON list describing each
case, which ``tests/vision/test_vision.py`` replays. ``--dump-json PATH`` also
writes every case with its arrays inline, for checking an engine build
without Python.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import scipy.ndimage as ndi
import torch
import torchvision

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "vision" / "ops.npz"
BURN_TAG = "v0.20.1"
BURN_IMAGES = "crates/burn-vision/tests/images/morphology"
SHAPES = {"rect": cv2.MORPH_RECT, "cross": cv2.MORPH_CROSS, "ellipse": cv2.MORPH_ELLIPSE}
BORDERS = {
    "constant": cv2.BORDER_CONSTANT,
    "replicate": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT,
    "reflect101": cv2.BORDER_REFLECT_101,
}


class Fixtures:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.cases: list[dict[str, Any]] = []

    def add(self, name: str, array: np.ndarray) -> str:
        if name in self.arrays:
            raise ValueError(f"duplicate array {name}")
        self.arrays[name] = np.ascontiguousarray(array)
        return name


def element(shape: str, width: int, height: int, anchor: tuple[int, int] | None) -> np.ndarray:
    a = (-1, -1) if anchor is None else anchor
    return cv2.getStructuringElement(SHAPES[shape], (width, height), anchor=a).astype(bool)


def cv_morph(
    image: np.ndarray,
    kernel: np.ndarray,
    op: str,
    anchor: tuple[int, int] | None,
    iterations: int,
    border: str,
    border_value: list[float] | None,
) -> np.ndarray:
    """``image`` [h, w, c] through OpenCV, one single pass per iteration."""
    fn = cv2.erode if op == "erode" else cv2.dilate
    # Without borderValue OpenCV uses its default, the value that changes nothing.
    extra: dict[str, Any] = {} if border_value is None else {"borderValue": tuple(border_value)}
    out = image
    for _ in range(iterations):
        squeezed = out[..., 0] if out.shape[-1] == 1 else out
        res = fn(
            squeezed,
            kernel.astype(np.uint8),
            anchor=(-1, -1) if anchor is None else anchor,
            iterations=1,
            borderType=BORDERS[border],
            **extra,
        )
        out = res.reshape(image.shape)
    return out


def morph_cases(fx: Fixtures, rng: np.random.Generator) -> None:
    # Blocky images (so erode and dilate change something) in three dtypes.
    u8 = cv2.resize(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8), (31, 23), interpolation=cv2.INTER_NEAREST)
    u8 = np.clip(u8.astype(np.int16) + rng.integers(-20, 21, u8.shape), 0, 255).astype(np.uint8)
    f32 = rng.standard_normal((19, 17, 1)).astype(np.float32)
    mask = (cv2.resize(rng.random((5, 6)), (29, 21), interpolation=cv2.INTER_LINEAR) > 0.55).astype(np.uint8)[..., None]
    batch = rng.integers(0, 256, (3, 12, 15, 2), dtype=np.uint8)
    inputs = {
        "u8": fx.add("morph_in_u8", u8),
        "f32": fx.add("morph_in_f32", f32),
        "bool": fx.add("morph_in_bool", mask.astype(bool)),
        "batch": fx.add("morph_in_batch_u8", batch),
    }
    kernels: list[tuple[str, np.ndarray]] = [
        ("rect3x3", element("rect", 3, 3, None)),
        ("rect5x3", element("rect", 5, 3, None)),
        ("cross5x5", element("cross", 5, 5, None)),
        ("ellipse7x5", element("ellipse", 7, 5, None)),
        ("custom", np.array([[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=bool)),
    ]
    for kname, k in kernels:
        fx.add(f"kernel_{kname}", k)
    settings: list[tuple[str, str, tuple[int, int] | None, int, str, list[float] | None]] = [
        # (kernel, input, anchor, iterations, border, border_value); anchors sit on a set element,
        # so no output pixel sees only the constant border.
        ("rect3x3", "u8", None, 1, "constant", None),
        ("rect5x3", "u8", (0, 0), 1, "replicate", None),
        ("rect5x3", "u8", (4, 2), 2, "reflect", None),
        ("cross5x5", "u8", None, 2, "reflect101", None),
        ("cross5x5", "u8", None, 1, "constant", [7.0, 100.0, 250.0]),
        ("ellipse7x5", "u8", None, 1, "reflect", None),
        ("ellipse7x5", "u8", (3, 4), 3, "replicate", None),
        ("custom", "u8", (0, 0), 2, "reflect101", None),
        ("custom", "u8", (2, 1), 1, "constant", [0.0, 128.0, 255.0]),
        ("rect3x3", "f32", None, 2, "constant", None),
        ("cross5x5", "f32", None, 1, "reflect", None),
        ("ellipse7x5", "f32", (3, 0), 1, "reflect101", None),
        ("custom", "f32", (3, 0), 2, "constant", [-0.5]),
        ("rect5x3", "bool", None, 1, "constant", None),
        ("cross5x5", "bool", None, 2, "replicate", None),
        ("custom", "bool", (1, 1), 1, "reflect101", None),
        ("rect3x3", "batch", None, 1, "replicate", None),
        ("ellipse7x5", "batch", None, 2, "constant", None),
    ]
    kdict = dict(kernels)
    for i, (kname, iname, anchor, iterations, border, value) in enumerate(settings):
        src = fx.arrays[inputs[iname]]
        for op in ("erode", "dilate"):
            as_u8 = src.astype(np.uint8) if src.dtype == bool else src
            images = as_u8 if as_u8.ndim == 4 else as_u8[None]
            out = np.stack([cv_morph(im, kdict[kname], op, anchor, iterations, border, value) for im in images])
            out = out if src.ndim == 4 else out[0]
            out = out.astype(bool) if src.dtype == bool else out
            if src.dtype == np.float32 and not np.isfinite(out).all():
                raise AssertionError(f"case {i}: the constant border leaked into the output")
            fx.cases.append(
                {
                    "kind": "morph",
                    "op": op,
                    "input": inputs[iname],
                    "kernel": f"kernel_{kname}",
                    "anchor": anchor,
                    "iterations": iterations,
                    "border": border,
                    "border_value": value,
                    "expected": fx.add(f"morph_out_{i}_{op}", out),
                }
            )


def burn_png(repo: Path, name: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{BURN_TAG}:{BURN_IMAGES}/{name}.png"], check=True, capture_output=True
    ).stdout


def burn_case(
    name: str,
) -> tuple[str, str, str, str, int, int, tuple[int, int] | None, tuple[int, int] | None, str]:
    """(expected, base, op, shape, width, height, element anchor, morph anchor, border) of the
    Burn morphology case whose expected image is ``name``."""
    op, base, size, shape, *rest = name.split("_")
    width, height = (int(n) for n in size.split("x"))
    anchored = rest[:1] == ["ANCHOR"]
    border = rest[-1].lower() if rest[-2:-1] == ["BORDER"] else "constant"
    elem_anchor, anchor = ((1, 2), (2, 1)) if anchored else (None, None)
    return name, f"Base_{base}", op.lower(), shape.lower(), width, height, elem_anchor, anchor, border


def burn_cases(fx: Fixtures, repo: Path) -> None:
    """Burn's tests/morphology.rs: each case's element, options and expected image."""

    def image(name: str, luma: bool) -> str:
        key = f"burn_{name}"
        if key not in fx.arrays:
            data = cv2.imdecode(np.frombuffer(burn_png(repo, name), np.uint8), cv2.IMREAD_UNCHANGED)
            data = data[..., None] if data.ndim == 2 else cv2.cvtColor(data, cv2.COLOR_BGR2RGB)
            if luma and data.shape[-1] == 3:
                # Burn's test reads these as luma; their three channels are equal.
                if not (np.array_equal(data[..., 0], data[..., 1]) and np.array_equal(data[..., 0], data[..., 2])):
                    raise AssertionError(f"{name} is not grey")
                data = data[..., :1]
            fx.add(key, data)
        return key

    # Burn's image names spell each case: Op_base_WxH_Shape, then _ANCHOR (element anchor (1, 2),
    # morph anchor (2, 1)) and _BORDER_<mode> (default constant).
    names = [
        "Dilate_1_5x5_Rect", "Dilate_1_5x5_Cross", "Dilate_1_5x5_Ellipse", "Dilate_1_3x5_Rect",
        "Dilate_1_3x5_Cross", "Dilate_2_3x5_Rect", "Dilate_2_3x5_Cross",
        "Dilate_2_7x7_Rect_BORDER_REFLECT", "Dilate_2_7x7_Cross_BORDER_REFLECT",
        "Dilate_2_7x7_Rect_BORDER_REFLECT101", "Dilate_2_7x7_Cross_BORDER_REFLECT101",
        "Dilate_2_7x7_Rect_BORDER_REPLICATE", "Dilate_2_7x7_Cross_BORDER_REPLICATE",
        "Dilate_2_5x7_Rect_ANCHOR", "Dilate_2_5x7_Cross_ANCHOR_BORDER_REPLICATE",
        "Erode_1_5x5_Rect", "Erode_1_5x5_Cross", "Erode_1_5x5_Ellipse",
    ]
    table = [burn_case(name) for name in names]
    for expected, base, op, shape, width, height, elem_anchor, anchor, border in table:
        fx.cases.append(
            {
                "kind": "burn_morph",
                "op": op,
                "input": image(base, base == "Base_1"),
                "shape": shape,
                "width": width,
                "height": height,
                "element_anchor": elem_anchor,
                "anchor": anchor,
                "border": border,
                "expected": image(expected, base == "Base_1"),
            }
        )


def element_cases(fx: Fixtures) -> None:
    sizes = [(1, 1), (3, 3), (5, 5), (3, 5), (5, 3), (7, 5), (5, 7), (1, 4), (4, 6), (9, 9), (11, 3), (2, 8)]
    for shape in SHAPES:
        for width, height in sizes:
            anchors: list[tuple[int, int] | None] = [None]
            if shape == "cross" and width > 1 and height > 1:
                anchors.append((width - 1, 1))
            for anchor in anchors:
                name = f"element_{shape}_{width}x{height}" + ("" if anchor is None else f"_at{anchor[0]}_{anchor[1]}")
                fx.cases.append(
                    {
                        "kind": "element",
                        "shape": shape,
                        "width": width,
                        "height": height,
                        "anchor": anchor,
                        "expected": fx.add(name, element(shape, width, height, anchor)),
                    }
                )


def cc_stats(labels: np.ndarray) -> dict[str, np.ndarray]:
    count = int(labels.max())
    area = np.bincount(labels.ravel(), minlength=count + 1).astype(np.int64)
    area[0] = 0
    top, left, right, bottom = (np.zeros(count + 1, np.int64) for _ in range(4))
    for i, sl in enumerate(ndi.find_objects(labels), start=1):
        assert sl is not None
        top[i], bottom[i] = sl[0].start, sl[0].stop - 1
        left[i], right[i] = sl[1].start, sl[1].stop - 1
    return {"area": area, "top": top, "left": left, "right": right, "bottom": bottom}


def check_against_opencv(mask: np.ndarray, labels: np.ndarray, stats: dict[str, np.ndarray], eight: bool) -> None:
    n, _, cv_stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8 if eight else 4)
    assert n == labels.max() + 1, (n, labels.max())
    ours = sorted(
        (int(stats["area"][i]), int(stats["left"][i]), int(stats["top"][i]), int(stats["right"][i]), int(stats["bottom"][i]))
        for i in range(1, n)
    )
    theirs = sorted((int(s[4]), int(s[0]), int(s[1]), int(s[0] + s[2] - 1), int(s[1] + s[3] - 1)) for s in cv_stats[1:])
    assert ours == theirs


def raster_ordered(labels: np.ndarray) -> bool:
    firsts = [labels.ravel()[labels.ravel() > 0]]
    seen: list[int] = []
    for v in firsts[0]:
        if not seen or (v not in seen):
            seen.append(int(v))
    return seen == list(range(1, len(seen) + 1))


def cc_cases(fx: Fixtures, rng: np.random.Generator) -> None:
    def blobs(h: int, w: int, level: float) -> np.ndarray:
        return cv2.resize(rng.random((max(h // 4, 1), max(w // 4, 1))), (w, h), interpolation=cv2.INTER_LINEAR) > level

    masks = {
        "blobs": blobs(37, 53, 0.6),
        "noise": rng.random((24, 31)) > 0.55,
        "row": rng.random((1, 40)) > 0.5,
        "column": rng.random((33, 1)) > 0.4,
        "batch": np.stack([blobs(20, 26, level) for level in (0.5, 0.65, 0.8)]),
    }
    for name, mask in masks.items():
        key = fx.add(f"cc_in_{name}", mask)
        for eight in (False, True):
            structure = np.ones((3, 3), bool) if eight else ndi.generate_binary_structure(2, 1)
            images = mask if mask.ndim == 3 else mask[None]
            labels = np.stack([ndi.label(im, structure=structure)[0] for im in images]).astype(np.int64)
            assert all(raster_ordered(lb) for lb in labels)
            stats = [cc_stats(lb) for lb in labels]
            for im, lb, st in zip(images, labels, stats):
                check_against_opencv(im, lb, st, eight)
            width = max(len(s["area"]) for s in stats)
            conn = "eight" if eight else "four"
            case: dict[str, Any] = {"kind": "cc", "input": key, "connectivity": conn, "batched": mask.ndim == 3}
            case["labels"] = fx.add(f"cc_{name}_{conn}_labels", labels if mask.ndim == 3 else labels[0])
            for field in ("area", "top", "left", "right", "bottom"):
                padded = np.zeros((len(stats), width), np.int64)
                for b, s in enumerate(stats):
                    padded[b, : len(s[field])] = s[field]
                case[field] = fx.add(f"cc_{name}_{conn}_{field}", padded if mask.ndim == 3 else padded[0])
            case["max_label"] = fx.add(f"cc_{name}_{conn}_max_label", np.array([int(lb.max()) for lb in labels], np.int64))
            fx.cases.append(case)


def nms_cases(fx: Fixtures, rng: np.random.Generator) -> None:
    n = 80
    centres = rng.uniform(0, 100, (6, 2))
    pick = centres[rng.integers(0, 6, n)] + rng.normal(0, 6, (n, 2))
    size = rng.uniform(8, 30, (n, 2))
    boxes = np.concatenate([pick - size / 2, pick + size / 2], axis=1).astype(np.float32)
    scores = rng.permutation(np.linspace(0.01, 0.99, n)).astype(np.float32)
    for dtype in (np.float32, np.float64):
        tag = np.dtype(dtype).name
        bkey = fx.add(f"nms_boxes_{tag}", boxes.astype(dtype))
        skey = fx.add(f"nms_scores_{tag}", scores.astype(dtype))
        settings = [(0.5, 0.0, 0), (0.3, 0.0, 0), (0.7, 0.25, 0), (0.5, 0.4, 5)] if dtype == np.float32 else [(0.45, 0.1, 0)]
        for i, (iou, score, max_boxes) in enumerate(settings):
            kept_idx = np.nonzero(scores.astype(dtype) >= dtype(score))[0]
            keep = torchvision.ops.nms(
                torch.from_numpy(boxes.astype(dtype)[kept_idx]), torch.from_numpy(scores.astype(dtype)[kept_idx]), iou
            ).numpy()
            keep = kept_idx[keep].astype(np.int64)
            if max_boxes:
                keep = keep[:max_boxes]
            fx.cases.append(
                {
                    "kind": "nms",
                    "boxes": bkey,
                    "scores": skey,
                    "iou_threshold": iou,
                    "score_threshold": score,
                    "max_output_boxes": max_boxes,
                    "expected": fx.add(f"nms_keep_{tag}_{i}", keep),
                }
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burn-repo", type=Path, default=Path("/work/.mirror/tracel-ai+burn/repo"))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--dump-json", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(20260056)
    fx = Fixtures()
    element_cases(fx)
    morph_cases(fx, rng)
    burn_cases(fx, args.burn_repo)
    cc_cases(fx, rng)
    nms_cases(fx, rng)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez_compressed(buf, cases=np.array(json.dumps(fx.cases)), **fx.arrays)
    args.out.write_bytes(buf.getvalue())
    print(f"wrote {args.out} ({len(fx.cases)} cases, {len(buf.getvalue()) // 1024} KiB)")
    if args.dump_json is not None:
        arrays = {k: {"shape": list(v.shape), "dtype": v.dtype.name, "data": v.astype(np.float64).ravel().tolist()} for k, v in fx.arrays.items()}
        args.dump_json.write_text(json.dumps({"cases": fx.cases, "arrays": arrays}))


if __name__ == "__main__":
    main()
