"""``ferrum.vision`` against OpenCV, scipy and torchvision: ``python benches/vision.py``.

Rows (one image, then a batch where the op takes one):

- ``dilate``/``erode`` of a uint8 ``[h, w, 1]`` image by a 5 x 5 rectangle
  and a 5 x 5 ellipse, and of a float32 ``[h, w, 3]`` image by a 3 x 3
  cross: ferrum, ``cv2.dilate``/``cv2.erode``, ``scipy.ndimage.grey_dilation``
  (rectangle only, scipy's constant border differs so only the timing is
  compared);
- ``connected_components_with_stats`` of a Bool ``[h, w]`` mask of blobs,
  4- and 8-connected: ferrum, ``cv2.connectedComponentsWithStats``,
  ``scipy.ndimage.label`` (labels only);
- ``nms`` of clustered boxes: ferrum, ``torchvision.ops.nms``.

Before timing, every reference that computes the same thing is checked to
agree with ferrum (labels, kept indices, pixels); a disagreement stops the
run. Each candidate is timed as the mean of back-to-back calls over 0.2 s,
the candidates taking turns for ``--rounds`` rounds; the table shows the
median ms and ferrum's time over each other's. References are used when
importable (e.g. ``PYTHONPATH=python /path/to/torch-venv/bin/python
benches/vision.py`` with OpenCV, scipy and torchvision installed there);
``--tiny`` is a seconds-long smoke run. ``--json PATH`` /
``--compare-with OLD.json`` as the other benches on ``harness.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import Float, Tensor
from ferrum.backend import NdArray
from ferrum.vision import (
    Connectivity,
    KernelShape,
    NmsOptions,
    Size,
    connected_components_with_stats,
    create_structuring_element,
    dilate,
    erode,
    nms,
)
from harness import Report, Stats, alternate, bench_parser, cpu_model, mean_over

Thunk = Callable[[], object]
DEVICE = NdArray.device()


def optional(name: str) -> Any:
    """The module ``name``, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def blobs(rng: np.random.Generator, h: int, w: int) -> np.ndarray[Any, Any]:
    """A mask of smooth blobs: coarse noise upsampled (nearest, then a 3 x 3 mean), thresholded."""
    coarse = rng.random((h // 8 + 1, w // 8 + 1))
    fine = np.repeat(np.repeat(coarse, 8, axis=0), 8, axis=1)[:h, :w]
    padded = np.pad(fine, 1, mode="edge")
    smooth = sum(padded[i : i + h, j : j + w] for i in range(3) for j in range(3)) / 9.0
    return np.asarray(smooth > 0.6)


def morph_candidates(
    image: np.ndarray[Any, Any], shape: KernelShape, size: int, op: str, cv2: Any, ndi: Any
) -> dict[str, Thunk]:
    kernel = create_structuring_element(shape, Size(size, size), None, DEVICE)
    x = Tensor.from_numpy(image, DEVICE)
    fn = dilate if op == "dilate" else erode
    out: dict[str, Thunk] = {"ferrum": lambda: fn(x, kernel).to_data()}
    want = np.asarray(fn(x, kernel).to_data().to_numpy())
    if cv2 is not None:
        k = np.asarray(kernel.to_data().to_numpy()).astype(np.uint8)
        cv_fn = cv2.dilate if op == "dilate" else cv2.erode
        src = image[..., 0] if image.shape[-1] == 1 else image
        got = cv_fn(src, k).reshape(image.shape)
        if not np.array_equal(got, want):
            raise AssertionError(f"{op} {shape.name}: OpenCV and ferrum disagree")
        out["opencv"] = lambda: cv_fn(src, k)
    if ndi is not None and shape == KernelShape.Rect:
        nd_fn = ndi.grey_dilation if op == "dilate" else ndi.grey_erosion
        footprint = (size, size, 1)
        out["scipy"] = lambda: nd_fn(image, size=footprint)
    return out


def cc_candidates(mask: np.ndarray[Any, Any], eight: bool, cv2: Any, ndi: Any) -> dict[str, Thunk]:
    conn = Connectivity.Eight if eight else Connectivity.Four
    m = Tensor.from_numpy(mask, DEVICE)

    def ours() -> object:
        labels, stats = connected_components_with_stats(m, conn)
        return labels.to_data(), stats.area.to_data()

    out: dict[str, Thunk] = {"ferrum": ours}
    labels = np.asarray(connected_components_with_stats(m, conn)[0].to_data().to_numpy())
    if ndi is not None:
        structure = np.ones((3, 3), bool) if eight else None
        if not np.array_equal(ndi.label(mask, structure=structure)[0], labels):
            raise AssertionError("connected components: scipy and ferrum disagree")
        out["scipy"] = lambda: ndi.label(mask, structure=structure)
    if cv2 is not None:
        u8 = mask.astype(np.uint8)
        count = cv2.connectedComponentsWithStats(u8, connectivity=8 if eight else 4)[0]
        if count != labels.max() + 1:
            raise AssertionError("connected components: OpenCV and ferrum count differently")
        out["opencv"] = lambda: cv2.connectedComponentsWithStats(u8, connectivity=8 if eight else 4)
    return out


def nms_candidates(
    boxes: np.ndarray[Any, Any], scores: np.ndarray[Any, Any], torch: Any, tv: Any
) -> dict[str, Thunk]:
    b, s = Tensor.from_data(boxes, DEVICE, Float), Tensor.from_data(scores, DEVICE, Float)
    opts = NmsOptions(iou_threshold=0.5)
    out: dict[str, Thunk] = {"ferrum": lambda: nms(b, s, opts).to_data()}
    if torch is not None and tv is not None:
        tb, ts = torch.from_numpy(boxes), torch.from_numpy(scores)
        if tv.ops.nms(tb, ts, 0.5).numpy().tolist() != nms(b, s, opts).to_data().to_list():
            raise AssertionError("nms: torchvision and ferrum disagree")
        out["torchvision"] = lambda: tv.ops.nms(tb, ts, 0.5)
    return out


def main() -> None:
    parser = bench_parser(__doc__, rounds=7)
    parser.add_argument("--size", type=int, default=1024, help="image height and width")
    parser.add_argument("--boxes", type=int, default=4000)
    args = parser.parse_args()
    rounds, side, n_boxes = (2, 48, 64) if args.tiny else (args.rounds, args.size, args.boxes)
    cv2, ndi = optional("cv2"), optional("scipy.ndimage")
    torch, tv = optional("torch"), optional("torchvision")
    rng = np.random.default_rng(56)
    gray = (blobs(rng, side, side) * 200 + rng.integers(0, 50, (side, side))).astype(np.uint8)[..., None]
    color = rng.random((side, side, 3), dtype=np.float32)
    mask = blobs(rng, side, side)
    centres = rng.uniform(0, 1000, (n_boxes // 20 + 1, 2))
    pick = centres[rng.integers(0, len(centres), n_boxes)] + rng.normal(0, 10, (n_boxes, 2))
    half = rng.uniform(5, 40, (n_boxes, 2))
    boxes = np.concatenate([pick - half, pick + half], axis=1).astype(np.float32)
    scores = rng.permutation(np.linspace(0.0, 1.0, n_boxes, dtype=np.float32))
    def morph(
        image: np.ndarray[Any, Any], shape: KernelShape, size: int, op: str
    ) -> Callable[[], dict[str, Thunk]]:
        return lambda: morph_candidates(image, shape, size, op, cv2, ndi)

    cases: dict[str, Callable[[], dict[str, Thunk]]] = {
        f"dilate u8 {side}x{side}x1 rect 5x5": morph(gray, KernelShape.Rect, 5, "dilate"),
        f"dilate u8 {side}x{side}x1 ellipse 5x5": morph(gray, KernelShape.Ellipse, 5, "dilate"),
        f"erode f32 {side}x{side}x3 cross 3x3": morph(color, KernelShape.Cross, 3, "erode"),
        f"connected components 4 {side}x{side}": lambda: cc_candidates(mask, False, cv2, ndi),
        f"connected components 8 {side}x{side}": lambda: cc_candidates(mask, True, cv2, ndi),
        f"nms {n_boxes} boxes": lambda: nms_candidates(boxes, scores, torch, tv),
    }
    print(f"{cpu_model()}; medians of {rounds} rounds (mean of calls over 0.2 s each)")
    report = Report("vision", {"rounds": rounds, "size": side, "boxes": n_boxes})
    for name, make in cases.items():
        candidates = make()
        measure = mean_over(0.02 if args.tiny else 0.2)
        stats: dict[str, Stats] = alternate(candidates, rounds, warmup=2, measure=measure)
        print(f"\n{name}")
        ours = stats["ferrum"].p50
        for cand, st in stats.items():
            ratio = "" if cand == "ferrum" else f"  ferrum / {cand} {ours / st.p50:5.2f}"
            print(f"  {cand:<12} {st.p50 * 1e3:9.3f} ms  spread {st.spread:5.2f}{ratio}")
            report.add(f"{name} {cand}", {"p50 ms": st.p50 * 1e3}, st)
    report.finish(args)


if __name__ == "__main__":
    main()
