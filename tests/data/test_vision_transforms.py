"""``ferrum.data.transform.vision`` against torchvision's outputs, and its randomness, batching and errors.

``tests/fixtures/vision/transforms.npz`` holds inputs and torchvision's
outputs (``scripts/make_vision_transform_fixtures.py`` writes it with torch;
these tests need neither torch nor torchvision).

Tolerances: float32 bilinear resizes within 1e-5 (they differ from
torchvision's only in float32 summation order, about 6e-7 on values in
``[0, 1]``); uint8 bilinear resizes within 1, because ferrum resizes uint8 in
float32 and rounds once while PyTorch's CPU uint8 kernel works in fixed point
(a tenth to a quarter of the pixels come out one apart). Everything else
(nearest, crops, flips, ``normalize``, ``to_float``) is bit for bit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import D3, ArgumentError, DType, KindError, ShapeError, Tensor
from ferrum.backend import NdArray
from ferrum.data.dataset.vision import ImageFolderDataset
from ferrum.data.transform import vision as T
from PIL import Image

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "vision" / "transforms.npz"
DEVICE = NdArray.device()

with np.load(FIXTURE) as _file:
    ARRAYS: dict[str, np.ndarray[Any, Any]] = {name: _file[name] for name in _file.files}
CASES: list[dict[str, Any]] = json.loads(str(ARRAYS["cases"]))


def tensor(array: np.ndarray[Any, Any]) -> Tensor[NdArray, Any, Any]:
    return Tensor.from_numpy(np.ascontiguousarray(array), DEVICE)


def apply(case: dict[str, Any], x: Tensor[NdArray, Any, Any]) -> Tensor[NdArray, Any, Any]:
    op = case["op"]
    if op == "resize":
        return T.resize(x, case["size"], case["mode"], antialias=case["antialias"])
    if op == "center_crop":
        return T.center_crop(x, case["size"])
    if op == "crop":
        return T.crop(x, *case["box"])
    if op == "hflip":
        return T.horizontal_flip(x)
    if op == "normalize":
        return T.normalize(x, case["mean"], case["std"])
    assert op == "to_float", op
    return T.to_float(x)


def case_id(case: dict[str, Any]) -> str:
    args = [str(case[k]) for k in ("size", "mode", "box") if k in case]
    if case.get("antialias"):
        args.append("aa")
    return "-".join([case["op"], case["input"], *args]).replace(" ", "")


# ----------------------------------------------------------------------------------------------- torchvision


def test_the_fixture_covers_every_transform_and_layout() -> None:
    ops = {case["op"] for case in CASES}
    assert ops == {"resize", "center_crop", "crop", "hflip", "normalize", "to_float"}
    resized = [(c["input"], c["mode"], c["antialias"]) for c in CASES if c["op"] == "resize"]
    for layout in ("u8", "f32", "batch_u8", "batch_f32"):
        for mode, aa in (("nearest", False), ("bilinear", False), ("bilinear", True)):
            assert (layout, mode, aa) in resized
    assert FIXTURE.stat().st_size < 300_000


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_torchvision(case: dict[str, Any]) -> None:
    x = ARRAYS[f"in_{case['input']}"]
    expected = ARRAYS[case["out"]]
    got = apply(case, tensor(x)).to_numpy()
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    if case["op"] == "resize" and case["mode"] == "bilinear":
        if expected.dtype == np.uint8:
            diff = np.abs(got.astype(np.int16) - expected.astype(np.int16))
            assert diff.max() <= 1
            # The one-apart pixels are rounding, not a shifted sample: most pixels agree exactly.
            assert (diff == 0).mean() > 0.7
        else:
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, expected)


def test_uint8_bilinear_is_the_rounded_float_resize() -> None:
    x = ARRAYS["in_u8"]
    for antialias in (False, True):
        as_u8 = T.resize(tensor(x), (7, 5), antialias=antialias).to_numpy()
        as_float = T.resize(tensor(x.astype(np.float32)), (7, 5), antialias=antialias).to_numpy()
        np.testing.assert_array_equal(as_u8, np.clip(np.round(as_float), 0, 255).astype(np.uint8))


def test_nearest_uses_torchs_float32_source_index() -> None:
    # 26 -> 22 rows: the exact floor(11 * 26 / 22) is 13, PyTorch's float32 product gives 12.
    (case,) = [
        c for c in CASES if c["input"] == "f32_even" and c["size"] == [22, 9] and c["mode"] == "nearest"
    ]
    x, expected = ARRAYS["in_f32_even"], ARRAYS[case["out"]]
    cols = np.floor(np.arange(9) * 12 / 9).astype(int)
    np.testing.assert_array_equal(expected[:, 11], x[:, 12, cols])
    np.testing.assert_array_equal(T.resize(tensor(x), (22, 9), "nearest").to_numpy()[:, 11], x[:, 12, cols])


def test_antialias_averages_a_downscale() -> None:
    # A checkerboard to a third: without antialias bilinear lands on pixel centres (rows and
    # columns 1, 4, 7, 10) and keeps a full-contrast checkerboard; antialiased, each output
    # averages a 6 x 6 neighbourhood and comes out grey.
    board = (np.indices((12, 12)).sum(axis=0) % 2).astype(np.float32)[None]
    aliased = T.resize(tensor(board), (4, 4), antialias=False).to_numpy()
    np.testing.assert_array_equal(aliased, board[:, 1::3, 1::3])
    smooth = T.resize(tensor(board), (4, 4), antialias=True).to_numpy()
    np.testing.assert_allclose(smooth, 0.5, atol=0.01)


def test_resize_size_rules() -> None:
    x = tensor(np.zeros((3, 10, 25), np.float32))
    assert T.resize(x, 4).dims() == (3, 4, 10)  # the smaller edge, int(4 * 25 / 10)
    assert T.resize(tensor(np.zeros((2, 1, 25, 10), np.float32)), 4).dims() == (2, 1, 10, 4)
    assert T.resize(x, (10, 25)) is x
    assert T.resize(x, [5, 6], "nearest").dims() == (3, 5, 6)


def test_float64_images_stay_float64() -> None:
    x = np.random.default_rng(3).random((1, 2, 7, 6))
    got = T.resize(Tensor.from_numpy(x, DEVICE, dtype=DType.F64), (3, 4))
    assert got.dtype == DType.F64
    expected = T.resize(tensor(x.astype(np.float32)), (3, 4)).to_numpy()
    np.testing.assert_allclose(got.to_numpy(), expected, atol=1e-6)


# ----------------------------------------------------------------------------------------------- NumPy images


def test_image_to_tensor_from_an_image_folder_item(tmp_path: Path) -> None:
    pixels = np.random.default_rng(1).integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    (tmp_path / "cat").mkdir()
    Image.fromarray(pixels).save(tmp_path / "cat" / "a.png")
    item = ImageFolderDataset.new_classification(tmp_path).get(0)
    assert item is not None
    for source in (item, item.image):
        x = T.image_to_tensor(source, DEVICE)
        assert x.dims() == (3, 5, 7) and x.dtype == DType.U8
        np.testing.assert_array_equal(x.to_numpy(), pixels.transpose(2, 0, 1))
    floats = T.to_float(T.image_to_tensor(item, DEVICE)).to_numpy()
    np.testing.assert_array_equal(floats, pixels.transpose(2, 0, 1).astype(np.float32) * np.float32(1 / 255))


def test_image_to_tensor_rejects_other_arrays() -> None:
    with pytest.raises(ShapeError, match=r"\[H, W, C\]"):
        T.image_to_tensor(np.zeros((4, 5), np.uint8), DEVICE)
    with pytest.raises(KindError, match="uint16"):
        T.image_to_tensor(np.zeros((4, 5, 1), np.uint16), DEVICE)
    with pytest.raises(TypeError, match="NumPy array"):
        T.image_to_tensor([[[0]]], DEVICE)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------- randomness


def batch_u8(n: int = 5) -> Tensor[NdArray, Any, Any]:
    return tensor(np.random.default_rng(9).integers(0, 256, size=(n, 3, 12, 10), dtype=np.uint8))


def test_same_seed_same_crops_and_flips() -> None:
    x = batch_u8()
    first = T.random_crop(x, (8, 6), padding=2, rng=11).to_numpy()
    np.testing.assert_array_equal(T.random_crop(x, (8, 6), padding=2, rng=11).to_numpy(), first)
    others = [T.random_crop(x, (8, 6), padding=2, rng=seed).to_numpy() for seed in range(5)]
    assert any(not np.array_equal(first, other) for other in others)
    flipped = T.random_horizontal_flip(x, rng=4).to_numpy()
    np.testing.assert_array_equal(T.random_horizontal_flip(x, rng=4).to_numpy(), flipped)
    gen_a, gen_b = np.random.default_rng(4), np.random.default_rng(4)
    np.testing.assert_array_equal(
        T.random_crop(x, 5, rng=gen_a).to_numpy(), T.random_crop(x, 5, rng=gen_b).to_numpy()
    )


def test_a_batch_is_its_images_one_by_one() -> None:
    x = batch_u8(6)
    images: list[Tensor[NdArray, D3, Any]] = [x.narrow(0, i, 1).reshape((3, 12, 10)) for i in range(6)]
    batched = T.random_crop(x, (9, 7), padding=(1, 2), rng=np.random.default_rng(21)).to_numpy()
    gen = np.random.default_rng(21)
    one_by_one = [T.random_crop(img, (9, 7), padding=(1, 2), rng=gen).to_numpy() for img in images]
    np.testing.assert_array_equal(batched, np.stack(one_by_one))
    # Different images of the batch got different windows (same pixels cropped differently).
    flips = T.random_horizontal_flip(x, rng=np.random.default_rng(8)).to_numpy()
    gen = np.random.default_rng(8)
    flipped = [T.random_horizontal_flip(img, rng=gen).to_numpy() for img in images]
    np.testing.assert_array_equal(flips, np.stack(flipped))
    drawn = np.random.default_rng(8).random(6) < 0.5
    assert drawn.any() and not drawn.all()  # the batch mixes flipped and kept images
    for i, flip in enumerate(drawn):
        original = x.to_numpy()[i]
        np.testing.assert_array_equal(flips[i], original[..., ::-1] if flip else original)
    for mode in ("nearest", "bilinear"):
        resized = T.resize(x, (5, 13), mode).to_numpy()
        per_image = [T.resize(img, (5, 13), mode).to_numpy() for img in images]
        np.testing.assert_array_equal(resized, np.stack(per_image))


def test_random_flip_probabilities() -> None:
    x = batch_u8(8)
    np.testing.assert_array_equal(T.random_horizontal_flip(x, p=0.0, rng=1).to_numpy(), x.to_numpy())
    np.testing.assert_array_equal(
        T.random_horizontal_flip(x, p=1.0, rng=1).to_numpy(), x.to_numpy()[..., ::-1]
    )


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_random_crop_pads_as_numpy(mode: str) -> None:
    x = np.random.default_rng(2).random((2, 5, 6), dtype=np.float32)
    # The crop as large as the padded image: the whole padded image, wherever the draw.
    got = T.random_crop(tensor(x), (5 + 1 + 3, 6 + 2 + 4), padding=(2, 1, 4, 3), padding_mode=mode, rng=0)  # type: ignore[arg-type]
    pad = ((0, 0), (1, 3), (2, 4))
    expected = np.pad(x, pad, mode="constant") if mode == "constant" else np.pad(x, pad, mode=mode)  # type: ignore[call-overload]
    np.testing.assert_array_equal(got.to_numpy(), expected)
    filled = T.random_crop(tensor(x), (7, 8), padding=1, fill=0.5, rng=0).to_numpy()
    np.testing.assert_array_equal(filled, np.pad(x, ((0, 0), (1, 1), (1, 1)), constant_values=0.5))


def test_random_crop_pad_if_needed() -> None:
    x = tensor(np.ones((1, 4, 3), np.float32))
    got = T.random_crop(x, (6, 3), pad_if_needed=True, rng=3)
    assert got.dims() == (1, 6, 3)
    # Padded by the difference on both sides (torchvision's rule): 8 rows, 4 of them ones.
    assert 2 <= got.to_numpy().sum() / 3 <= 4
    with pytest.raises(ShapeError, match="larger than the"):
        T.random_crop(x, (6, 3), rng=3)


# ----------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("shape", [(4, 4), (1, 1, 1, 4, 4)])
def test_every_transform_wants_an_image_or_a_batch(shape: tuple[int, ...]) -> None:
    x: Tensor[NdArray, Any, Any] = tensor(np.zeros(shape, np.float32))
    calls: list[Callable[[], object]] = [
        lambda: T.resize(x, 2),
        lambda: T.center_crop(x, 2),
        lambda: T.crop(x, 0, 0, 1, 1),
        lambda: T.random_crop(x, 2, rng=0),
        lambda: T.horizontal_flip(x),
        lambda: T.random_horizontal_flip(x, rng=0),
        lambda: T.normalize(x, [0.0], [1.0]),
        lambda: T.to_float(x),
    ]
    for call in calls:
        with pytest.raises(ShapeError, match=r"\[C, H, W\] or a batch \[N, C, H, W\]"):
            call()
    with pytest.raises(TypeError, match="ferrum Tensor"):
        T.horizontal_flip(np.zeros((1, 2, 2)))  # type: ignore[arg-type]


def test_wrong_dtypes() -> None:
    u8 = tensor(np.zeros((3, 4, 4), np.uint8))
    with pytest.raises(KindError, match="float image"):
        T.normalize(u8, [0.0] * 3, [1.0] * 3)
    with pytest.raises(KindError, match="uint8 or float"):
        T.to_float(tensor(np.zeros((3, 4, 4), np.int64)))
    with pytest.raises(KindError, match="float dtype"):
        T.to_float(u8, DType.I32)
    flags = Tensor.from_numpy(np.zeros((1, 4, 4), bool), DEVICE)
    with pytest.raises(KindError, match="nearest"):
        T.resize(flags, 2)
    assert T.resize(flags, 2, "nearest").dims() == (1, 2, 2)


def test_crops_larger_than_the_image() -> None:
    x = tensor(np.zeros((3, 5, 6), np.float32))
    with pytest.raises(ShapeError, match="larger than the image 5 x 6"):
        T.center_crop(x, (6, 6))
    with pytest.raises(ShapeError, match="not inside the image 5 x 6"):
        T.crop(x, 1, 0, 5, 6)
    with pytest.raises(ShapeError, match=r"larger than the \(padded\) image 7 x 8"):
        T.random_crop(x, (8, 8), padding=1, rng=0)
    with pytest.raises(ArgumentError, match="positive"):
        T.center_crop(x, 0)


def test_mean_and_std_per_channel() -> None:
    x = tensor(np.ones((2, 3, 4, 4), np.float32))
    with pytest.raises(ShapeError, match=r"one value per channel \(3\), found 2 and 3"):
        T.normalize(x, [0.5, 0.5], [0.2, 0.2, 0.2])
    with pytest.raises(ArgumentError, match="zeros"):
        T.normalize(x, [0.5] * 3, [0.2, 0.0, 0.2])
    np.testing.assert_allclose(
        T.normalize(x, [0.5, 0.0, 1.0], [0.5, 2.0, 1.0]).to_numpy()[0, :, 0, 0], [1.0, 0.5, 0.0]
    )


def test_bad_arguments() -> None:
    x = tensor(np.zeros((3, 5, 6), np.float32))
    with pytest.raises(ArgumentError, match="'nearest', 'bilinear'"):
        T.resize(x, 2, "bicubic")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="'constant', 'edge', 'reflect'"):
        T.random_crop(x, 2, padding=1, padding_mode="symmetric", rng=0)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="padding"):
        T.random_crop(x, 2, padding=(1, 2, 3), rng=0)
    with pytest.raises(ArgumentError, match="probability"):
        T.random_horizontal_flip(x, p=1.5, rng=0)
    with pytest.raises(TypeError, match="Generator"):
        T.random_horizontal_flip(x, rng="seed")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="size"):
        T.resize(x, (2, 3, 4))
