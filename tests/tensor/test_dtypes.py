"""The storage dtypes (f16, bf16, i32, u8) next to f32, f64, i64 and bool:
NumPy round trips, casts, arithmetic computed in f32/i64 and narrowed back,
out-of-range values, and the backend's float default for float64 data.
NumPy is the reference; bf16's rounding is computed here with bit
arithmetic (round to nearest, ties to even)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, Float, Int, KindError, Tensor
from ferrum.backend import NdArray
from ferrum.nn import LinearConfig

DEVICE = NdArray.device()


def bf16_round(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """float32 values rounded to bfloat16 (the top 16 bits), nearest-even; NaN stays NaN."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32("nan"), out)


def test_dtype_names_and_kinds() -> None:
    assert [str(d) for d in (DType.F16, DType.BF16, DType.I32, DType.U8)] == ["f16", "bf16", "i32", "u8"]
    assert DType.F16.kind is Float and DType.BF16.kind is Float
    assert DType.I32.kind is Int and DType.U8.kind is Int


STORED = [(np.float16, DType.F16), (np.int32, DType.I32), (np.uint8, DType.U8)]


@pytest.mark.parametrize("np_dtype, dtype", STORED)
def test_numpy_dtypes_ferrum_stores_keep_their_dtype(np_dtype: Any, dtype: DType) -> None:
    a = (np.arange(12).reshape(3, 4) * 3).astype(np_dtype)
    t = Tensor.from_numpy(a, DEVICE)
    assert t.dtype == dtype
    out = t.to_numpy()
    assert out.dtype == np_dtype
    np.testing.assert_array_equal(out, a)
    # Strided views come back as the same values.
    np.testing.assert_array_equal(t[:, 1::2].to_numpy(), a[:, 1::2])


def test_uint8_image_stays_bytes() -> None:
    img = np.random.default_rng(0).integers(0, 256, size=(2, 8, 8, 3), dtype=np.uint8)
    t = Tensor.from_numpy(img, DEVICE)
    assert t.dtype == DType.U8
    np.testing.assert_array_equal(t.swap_dims(1, 3).to_numpy(), img.swapaxes(1, 3))
    np.testing.assert_array_equal(t.float().to_numpy(), img.astype(np.float32))


def test_float64_becomes_backend_float_unless_asked() -> None:
    a = np.random.default_rng(1).standard_normal((3, 4))
    t = Tensor.from_numpy(a, DEVICE)
    assert t.dtype == DType.F32
    np.testing.assert_array_equal(t.to_numpy(), a.astype(np.float32))
    assert Tensor.from_data(a, DEVICE).dtype == DType.F32
    kept = Tensor.from_numpy(a, DEVICE, dtype=DType.F64)
    assert kept.dtype == DType.F64
    np.testing.assert_array_equal(kept.to_numpy(), a)


def test_linear_takes_numpy_default_floats() -> None:
    linear = LinearConfig(4, 2).init(DEVICE)
    x = Tensor.from_numpy(np.random.default_rng(2).standard_normal((3, 4)), DEVICE)
    y = linear.forward(x)
    w, b = linear.weight.val().to_numpy(), linear.bias.val().to_numpy()  # type: ignore[union-attr]
    np.testing.assert_allclose(y.to_numpy(), x.to_numpy() @ w + b, rtol=1e-5, atol=1e-6)


def test_mixed_dtypes_error_suggests_the_cast() -> None:
    a = Tensor.from_numpy(np.ones((2, 2)), DEVICE, dtype=DType.F64)
    b = Tensor.from_numpy(np.ones((2, 2), np.float32), DEVICE)
    with pytest.raises(KindError, match=r"dtypes differ: f64 and f32.*cast\(DType\.F32\)"):
        a.matmul(b)


def test_f16_matches_numpy_float16() -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 5)) * 10).astype(np.float32)
    y = (rng.standard_normal((4, 5)) * 10).astype(np.float32)
    a = Tensor.from_numpy(x, DEVICE).cast(DType.F16)
    b = Tensor.from_numpy(y, DEVICE).cast(DType.F16)
    np.testing.assert_array_equal(a.to_numpy(), x.astype(np.float16))
    x16, y16 = x.astype(np.float16), y.astype(np.float16)
    # Computed in f32 and rounded once to f16: as NumPy's float16 ops do.
    small = Tensor.from_numpy(x / 10, DEVICE, dtype=DType.F16)
    small16 = (x / 10).astype(np.float16)
    ops = [(a + b, x16 + y16), (a * b, x16 * y16), (a - b, x16 - y16), (small.exp(), np.exp(small16))]
    for got, want in ops:
        assert got.dtype == DType.F16
        np.testing.assert_array_equal(got.to_numpy(), want)
    s = a.sum_dim(1)
    assert s.dtype == DType.F16
    want_sum = x16.astype(np.float32).sum(1, keepdims=True).astype(np.float16)
    np.testing.assert_array_equal(s.to_numpy(), want_sum)
    assert a.argmax(1).dtype == DType.I64
    np.testing.assert_array_equal(a.argmax(1).to_numpy()[:, 0], x16.argmax(1))
    np.testing.assert_array_equal(a.greater(b).to_numpy(), x16 > y16)
    # f16 overflows to infinity, as IEEE rounding and NumPy do.
    big = Tensor.from_data([70000.0, -1e6], DEVICE).cast(DType.F16)
    assert np.isinf(big.to_numpy()).all()


def test_bf16_rounds_to_nearest_even() -> None:
    rng = np.random.default_rng(4)
    ties = np.array([1.00390625, 1.01171875, 3e38, -0.0], np.float32)  # ties both ways; near f32 max
    # Just above a midpoint by a few of the lowest bits: these rounded down before (0xbec48005).
    near_ties = np.array([0xBEC48005, 0x3F808001, 0xBD748002, 0x3F7F8001], np.uint32).view(np.float32)
    x = np.concatenate([rng.standard_normal(20000).astype(np.float32) * 100, ties, near_ties])
    t = Tensor.from_numpy(x, DEVICE).cast(DType.BF16)
    assert t.dtype == DType.BF16
    out = t.to_numpy()
    assert out.dtype == np.float32  # NumPy has no bfloat16: an exact float32 copy
    np.testing.assert_array_equal(out, bf16_round(x))
    direct = Tensor.from_numpy(x, DEVICE, dtype=DType.BF16)
    np.testing.assert_array_equal(direct.to_numpy(), bf16_round(x))
    y = rng.standard_normal(x.shape).astype(np.float32)
    u = Tensor.from_numpy(y, DEVICE, dtype=DType.BF16)
    want = bf16_round(bf16_round(x) * bf16_round(y))
    np.testing.assert_array_equal((direct * u).to_numpy(), want)


def test_views_and_cat_keep_storage_dtypes() -> None:
    for dtype in (DType.F16, DType.BF16, DType.I32, DType.U8):
        t = Tensor.from_data([[1, 2, 3], [4, 5, 6]], DEVICE, dtype=dtype)
        assert t.reshape((3, 2)).dtype == dtype
        assert t.swap_dims(0, 1).dtype == dtype
        assert t[:, 1:].dtype == dtype
        cat = Tensor.cat([t, t], 0)
        assert cat.dtype == dtype
        want = np.tile(np.arange(1, 7).reshape(2, 3), (2, 1))
        np.testing.assert_array_equal(cat.to_numpy().astype(np.int64), want)
        assert t.to_data().to_list() == [[1, 2, 3], [4, 5, 6]]


def test_int_storage_arithmetic_is_checked() -> None:
    a = Tensor.from_numpy(np.array([250, 3, 7], np.uint8), DEVICE)
    assert (a + 5).dtype == DType.U8
    np.testing.assert_array_equal((a + 5).to_numpy(), np.array([255, 8, 12], np.uint8))
    with pytest.raises(ValueError, match=r"does not fit back in u8.*300"):
        a + 50
    with pytest.raises(KindError, match=r"300 does not fit in a u8 tensor"):
        a + 300
    i = Tensor.from_numpy(np.array([[5, -2], [7, 1]], np.int32), DEVICE)
    assert i.sum().dtype == DType.I32 and i.sum().item() == 11
    assert i.argmax(1).dtype == DType.I64
    np.testing.assert_array_equal(i.argmax(1).to_numpy()[:, 0], [0, 0])
    np.testing.assert_array_equal((i * i).to_numpy(), np.array([[25, 4], [49, 1]], np.int32))
    m = Tensor.from_numpy(np.array([0b1100, 0b1010], np.uint8), DEVICE)
    np.testing.assert_array_equal(m.bitwise_and_scalar(0b0110).to_numpy(), np.array([4, 2], np.uint8))
    assert m.bitwise_xor(m).dtype == DType.U8


@pytest.mark.parametrize("dtype", [DType.F16, DType.BF16, DType.I32, DType.U8])
def test_no_method_meets_a_storage_dtype_with_an_internal_error(dtype: DType) -> None:
    # Every method with a few plausible arguments: it may refuse them, but
    # only with an error naming the problem, never an engine bug.
    t = Tensor.from_data([[1, 2, 3], [4, 5, 6]], DEVICE, dtype=dtype)
    other = Tensor.from_data([[1, 0, 2], [3, 1, 1]], DEVICE, dtype=dtype)
    idx = Tensor.from_data([0, 1], DEVICE, dtype=DType.I32)
    argument_lists: list[tuple[Any, ...]] = [(), (0,), (1,), (0, 1), ([0],), (other,), (other, 0)]
    argument_lists += [(0, idx), (idx,)]
    for name in dir(Tensor):
        method = getattr(t, name)
        if name.startswith("_") or not callable(method):
            continue
        for args in argument_lists:
            try:
                method(*args)
            except Exception as e:
                assert "bug in ferrum" not in str(e), f"{name}{args}: {e}"


def test_storage_int_indices_work() -> None:
    x = Tensor.from_data([10.0, 20.0, 30.0], DEVICE)
    idx = Tensor.from_numpy(np.array([2, 0], np.uint8), DEVICE)
    np.testing.assert_array_equal(x.select(0, idx).to_numpy(), [30.0, 10.0])
    np.testing.assert_array_equal(x.gather(0, idx.cast(DType.I32)).to_numpy(), [30.0, 10.0])


@pytest.mark.parametrize(
    "values, source, target, shown",
    [
        ([300], DType.I64, DType.U8, "300"),
        ([-1], DType.I64, DType.U8, "-1"),
        ([2**40], DType.I64, DType.I32, str(2**40)),
        ([float("nan")], DType.F32, DType.I32, "NaN"),
        ([float("inf")], DType.F32, DType.I64, "inf"),
        ([256.5], DType.F64, DType.U8, "256.5"),
    ],
)
def test_out_of_range_casts_raise(values: list[Any], source: DType, target: DType, shown: str) -> None:
    t = Tensor.from_data(values, DEVICE, dtype=source)
    with pytest.raises(ValueError, match=rf"cast: the {source} value {shown} does not fit in {target}"):
        t.cast(target)


def test_in_range_casts_truncate_like_numpy() -> None:
    x = np.array([-3.7, -0.5, 0.0, 2.9, 255.9], np.float32)
    t = Tensor.from_numpy(x, DEVICE)
    np.testing.assert_array_equal(t.cast(DType.I32).to_numpy(), x.astype(np.int32))
    np.testing.assert_array_equal(t.abs().cast(DType.U8).to_numpy(), np.abs(x).astype(np.uint8))
    b = Tensor.from_data([True, False], DEVICE)
    np.testing.assert_array_equal(b.cast(DType.U8).to_numpy(), np.array([1, 0], np.uint8))


def test_from_data_and_numpy_values_that_do_not_fit() -> None:
    with pytest.raises(ValueError, match=r"from_data: the i64 value 300 does not fit in u8"):
        Tensor.from_data([1, 300], DEVICE, dtype=DType.U8)
    with pytest.raises(ValueError, match=r"from_numpy: the i64 value -5 does not fit in u8"):
        Tensor.from_numpy(np.array([-5, 1]), DEVICE, dtype=DType.U8)
    with pytest.raises(KindError, match=r"full: 256 does not fit in a u8 tensor"):
        Tensor.full((2,), 256, DEVICE, dtype=DType.U8)


def test_uint64_beyond_i64_raises() -> None:
    a = np.array([1, 2**63], np.uint64)
    with pytest.raises(KindError, match=r"the value 9223372036854775808 of the uint64 array does not fit"):
        Tensor.from_numpy(a, DEVICE)
    ok = Tensor.from_numpy(np.array([1, 2**63 - 1], np.uint64), DEVICE)
    assert ok.dtype == DType.I64 and ok.to_numpy()[1] == 2**63 - 1


def test_autodiff_through_f16() -> None:
    from ferrum.backend import Autodiff

    dev = Autodiff[NdArray].device()
    x = Tensor.from_data([1.0, 2.0, 3.0], dev, dtype=DType.F16).require_grad()
    loss = (x * x).sum()
    grads = loss.backward()
    g = x.grad(grads)
    assert g is not None and g.dtype == DType.F16
    np.testing.assert_array_equal(g.to_numpy(), np.array([2.0, 4.0, 6.0], np.float16))


class _ToDType:
    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def map_float(self, id: Any, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return tensor.cast(self.dtype)


@pytest.mark.parametrize("dtype", [DType.F16, DType.BF16])
def test_half_modules_save_and_load(tmp_path: Any, dtype: DType) -> None:
    from ferrum.record import FullPrecisionSettings, HalfPrecisionSettings, NamedMpkFileRecorder

    net = LinearConfig(3, 2).init(DEVICE).map(_ToDType(dtype))
    values = net.weight.val().to_numpy()
    for settings in (FullPrecisionSettings, HalfPrecisionSettings):
        recorder = NamedMpkFileRecorder(settings)
        net.save_file(tmp_path / "net", recorder)
        fresh = LinearConfig(3, 2).init(DEVICE).map(_ToDType(dtype))
        again = fresh.load_file(tmp_path / "net", recorder, DEVICE)
        assert again.weight.val().dtype == dtype
        if dtype == DType.F16 or settings is FullPrecisionSettings:
            np.testing.assert_array_equal(again.weight.val().to_numpy(), values)
        wide = LinearConfig(3, 2).init(DEVICE).load_file(tmp_path / "net", recorder, DEVICE)
        assert wide.weight.val().dtype == DType.F32
