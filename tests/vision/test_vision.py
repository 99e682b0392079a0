"""``ferrum.vision`` against OpenCV, scipy, torchvision and Burn's own test values.

``tests/fixtures/vision/ops.npz`` (written by ``scripts/make_vision_fixtures.py``
with OpenCV, scipy and torchvision; these tests need none of them) holds:
OpenCV's structuring elements and erode/dilate outputs (uint8, float32 and
Bool images, batches, every border type, anchors, iterations), Burn's
morphology test images with its expected outputs, ``scipy.ndimage.label``
labels with per-label area and bounds, and ``torchvision.ops.nms`` indices.
Everything is compared exactly except Burn's float images (read as value /
255, within Burn's 1e-6).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import ArgumentError, DType, KindError, Tensor
from ferrum.backend import NdArray
from ferrum.vision import (
    BorderType,
    ConnectedStatsOptions,
    Connectivity,
    KernelShape,
    MorphOptions,
    NmsOptions,
    Point,
    Size,
    connected_components,
    connected_components_with_stats,
    create_structuring_element,
    dilate,
    erode,
    nms,
)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "vision" / "ops.npz"
DEVICE = NdArray.device()

with np.load(FIXTURE) as _file:
    ARRAYS: dict[str, np.ndarray[Any, Any]] = {name: _file[name] for name in _file.files}
CASES: list[dict[str, Any]] = json.loads(str(ARRAYS["cases"]))


def cases(kind: str) -> list[dict[str, Any]]:
    return [c for c in CASES if c["kind"] == kind]


def case_id(case: dict[str, Any]) -> str:
    keys = ("op", "input", "kernel", "shape", "border", "connectivity", "expected")
    parts = [str(case.get(k)) for k in keys]
    return "-".join(p for p in parts if p != "None")


def tensor(array: np.ndarray[Any, Any], dtype: DType | None = None) -> Tensor[NdArray, Any, Any]:
    return Tensor.from_numpy(np.ascontiguousarray(array), DEVICE, dtype=dtype)


def numpy(t: Tensor[NdArray, Any, Any]) -> np.ndarray[Any, Any]:
    return np.asarray(t.to_data().to_numpy())


def anchor(value: list[int] | None) -> Point | None:
    return None if value is None else Point(value[0], value[1])


def test_fixture_covers_every_op() -> None:
    kinds = {c["kind"] for c in CASES}
    assert kinds == {"element", "morph", "burn_morph", "cc", "nms"}
    assert len(cases("burn_morph")) == 18


@pytest.mark.parametrize("case", cases("element"), ids=lambda c: str(c["expected"]))
def test_structuring_elements_match_opencv(case: dict[str, Any]) -> None:
    shape = KernelShape(case["shape"])
    k = create_structuring_element(shape, Size(case["width"], case["height"]), anchor(case["anchor"]), DEVICE)
    assert numpy(k).dtype == np.bool_
    np.testing.assert_array_equal(numpy(k), ARRAYS[case["expected"]])


def morph_options(case: dict[str, Any]) -> MorphOptions:
    return MorphOptions(
        anchor=anchor(case["anchor"]),
        iterations=case.get("iterations", 1),
        border_type=BorderType(case["border"]),
        border_value=case.get("border_value"),
    )


@pytest.mark.parametrize("case", cases("morph"), ids=case_id)
def test_morphology_matches_opencv(case: dict[str, Any]) -> None:
    src, want = ARRAYS[case["input"]], ARRAYS[case["expected"]]
    kernel = tensor(ARRAYS[case["kernel"]])
    fn = erode if case["op"] == "erode" else dilate
    opts = morph_options(case)
    got = fn(tensor(src), kernel, opts)
    assert got.dims() == src.shape
    np.testing.assert_array_equal(numpy(got), want)
    if src.dtype == np.uint8:
        # Other Int and Float dtypes hold these values exactly: the same result, in their own dtype.
        for dtype in (DType.I32, DType.I64, DType.F32, DType.F64, DType.F16):
            other = fn(tensor(src, dtype), kernel, opts)
            assert other.dtype == dtype
            np.testing.assert_array_equal(numpy(other).astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("case", cases("burn_morph"), ids=lambda c: str(c["expected"]))
def test_burn_morphology_images(case: dict[str, Any]) -> None:
    src, want = ARRAYS[case["input"]], ARRAYS[case["expected"]]
    size = Size(case["width"], case["height"])
    shape = KernelShape(case["shape"])
    kernel = create_structuring_element(shape, size, anchor(case["element_anchor"]), DEVICE)
    fn = erode if case["op"] == "erode" else dilate
    opts = morph_options(case)
    # Burn's tests read the images as float in [0, 1]; its expected images are OpenCV's on uint8.
    got = fn(tensor(src.astype(np.float32) / 255.0), kernel, opts)
    np.testing.assert_allclose(numpy(got), want.astype(np.float32) / 255.0, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(numpy(fn(tensor(src), kernel, opts)), want)
    if case["expected"] in ("burn_Dilate_1_5x5_Rect", "burn_Dilate_1_5x5_Cross"):
        # Burn's Bool and Int variants of these two.
        np.testing.assert_array_equal(numpy(fn(tensor(src > 0), kernel, opts)), want > 0)
        np.testing.assert_array_equal(numpy(fn(tensor(src, DType.I64), kernel, opts)), want)


@pytest.mark.parametrize("case", cases("cc"), ids=case_id)
def test_connected_components_match_scipy(case: dict[str, Any]) -> None:
    mask = tensor(ARRAYS[case["input"]])
    conn = Connectivity.Four if case["connectivity"] == "four" else Connectivity.Eight
    labels = connected_components(mask, conn)
    assert labels.dtype == DType.I64
    np.testing.assert_array_equal(numpy(labels), ARRAYS[case["labels"]])
    labels2, stats = connected_components_with_stats(mask, conn, ConnectedStatsOptions.all())
    np.testing.assert_array_equal(numpy(labels2), ARRAYS[case["labels"]])
    for field in ("area", "top", "left", "right", "bottom", "max_label"):
        np.testing.assert_array_equal(numpy(getattr(stats, field)), ARRAYS[case[field]], err_msg=field)


@pytest.mark.parametrize("case", cases("nms"), ids=lambda c: str(c["expected"]))
def test_nms_matches_torchvision(case: dict[str, Any]) -> None:
    boxes, scores = ARRAYS[case["boxes"]], ARRAYS[case["scores"]]
    dtype = DType.F64 if boxes.dtype == np.float64 else DType.F32
    opts = NmsOptions(case["iou_threshold"], case["score_threshold"], case["max_output_boxes"])
    keep = nms(tensor(boxes, dtype), tensor(scores, dtype), opts)
    assert keep.dtype == DType.I64
    np.testing.assert_array_equal(numpy(keep), ARRAYS[case["expected"]])


# Burn's crates/burn-vision tests, with their expected values.
SPACE_INVADER = np.array(
    [
        [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
        [0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
        [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0],
        [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0],
        [1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1],
        [1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1],
        [1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1],
        [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
    ]
)


def test_burn_connected_components_values() -> None:
    mask = tensor(SPACE_INVADER > 0)
    labels, stats = connected_components_with_stats(mask, Connectivity.Eight)
    np.testing.assert_array_equal(numpy(labels), SPACE_INVADER)
    assert numpy(stats.area)[1:].tolist() == [58]
    assert numpy(stats.right)[1:].tolist() == [13] and numpy(stats.bottom)[1:].tolist() == [8]
    assert numpy(stats.max_label).tolist() == [1]
    labels, stats = connected_components_with_stats(mask, Connectivity.Four, ConnectedStatsOptions.none())
    assert numpy(labels)[0].tolist() == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0]
    assert numpy(labels)[5].tolist() == [4, 0, 0, 3, 3, 0, 0, 0, 0, 3, 3, 0, 0, 5]
    assert numpy(stats.area)[1:].tolist() == [1, 1, 46, 5, 5]
    assert numpy(stats.left)[1:].tolist() == [3, 10, 1, 0, 12]
    assert numpy(stats.top)[1:].tolist() == [0, 0, 1, 5, 5]
    assert numpy(stats.right)[1:].tolist() == [3, 10, 12, 1, 13]
    assert numpy(stats.bottom)[1:].tolist() == [0, 0, 8, 7, 7]
    assert numpy(stats.max_label).tolist() == [5]


@pytest.mark.parametrize(
    ("opts", "expected"),
    [
        (NmsOptions(0.5, 0.0, 0), [4, 2, 1]),
        (NmsOptions(0.5, 0.3, 0), [4, 2]),
        (NmsOptions(0.1, 0.0, 0), [4, 1]),
        (NmsOptions(0.5, 0.0, 1), [4]),
        (None, [4, 2, 1]),
    ],
)
def test_burn_nms_values(opts: NmsOptions | None, expected: list[int]) -> None:
    corners = [[0, 0, 100, 100], [0, 1, 100, 100], [0, 101, 200, 200], [0, 100, 200, 200], [0, 170, 300, 300]]
    boxes = tensor(np.array(corners), DType.F32)
    scores = tensor(np.array([0.1, 0.2, 0.4, 0.3, 0.5]), DType.F32)
    assert numpy(nms(boxes, scores, opts)).tolist() == expected


def test_batched_connected_components_pad_stats_per_image() -> None:
    masks = np.zeros((2, 3, 4), bool)
    masks[0, 0, 0] = masks[0, 2, 3] = masks[1, 1, 1] = True
    labels, stats = connected_components_with_stats(tensor(masks), Connectivity.Eight)
    assert labels.dims() == (2, 3, 4)
    assert numpy(stats.area).tolist() == [[0, 1, 1], [0, 1, 0]]
    assert numpy(stats.max_label).tolist() == [2, 1]


def test_border_value_as_a_tensor() -> None:
    x = tensor(np.arange(6, dtype=np.float32).reshape(1, 3, 2))
    k = tensor(np.ones((1, 3), bool))
    opts = MorphOptions(border_value=Tensor.from_floats([-1.0, 10.0], DEVICE))
    assert numpy(erode(x, k, opts)).tolist() == [[[-1.0, 1.0], [0.0, 1.0], [-1.0, 3.0]]]


def test_errors_name_the_problem() -> None:
    img = tensor(np.zeros((4, 4, 1), np.uint8))
    k = create_structuring_element(KernelShape.Rect, Size(3, 3), None, DEVICE)
    with pytest.raises(ArgumentError, match="Wrap border type is not supported"):
        erode(img, k, MorphOptions(border_type=BorderType.Wrap))
    with pytest.raises(ArgumentError, match="iterations must be an int of at least 1"):
        erode(img, k, MorphOptions(iterations=0))
    with pytest.raises(ArgumentError, match=r"anchor \(x 3, y 0\) lies outside"):
        dilate(img, k, MorphOptions(anchor=Point(3, 0)))
    with pytest.raises(ArgumentError, match=r"one value per channel \(1\), found 2"):
        dilate(img, k, MorphOptions(border_value=[1.0, 2.0]))
    with pytest.raises(ArgumentError, match="must be a Bool tensor"):
        dilate(img, tensor(np.ones((3, 3), np.float32)))
    with pytest.raises(ArgumentError, match=r"found shape \[4, 4\]"):
        dilate(tensor(np.zeros((4, 4), np.uint8)), k)
    with pytest.raises(ArgumentError, match="size must be at least 1 x 1"):
        create_structuring_element(KernelShape.Cross, Size(0, 3), None, DEVICE)
    with pytest.raises(KindError, match="expected a Bool tensor, found Float"):
        connected_components(tensor(np.zeros((3, 3), np.float32)), Connectivity.Four)
    with pytest.raises(ArgumentError, match=r"found shape \[3\]"):
        connected_components(tensor(np.zeros(3, bool)), Connectivity.Four)
    with pytest.raises(TypeError, match="connectivity must be a Connectivity"):
        connected_components(tensor(np.zeros((3, 3), bool)), "four")  # type: ignore[call-overload]
    boxes, scores = tensor(np.zeros((3, 4), np.float32)), tensor(np.zeros(3, np.float32))
    with pytest.raises(ArgumentError, match=r"boxes must be \[n, 4\]"):
        nms(tensor(np.zeros((3, 5), np.float32)), scores)
    with pytest.raises(ValueError, match=r"scores must be \[3\]"):
        nms(boxes, tensor(np.zeros(2, np.float32)))
    with pytest.raises(ArgumentError, match="max_output_boxes must be a non-negative int"):
        nms(boxes, scores, NmsOptions(max_output_boxes=-1))
