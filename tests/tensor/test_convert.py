"""Getting values in and out: TensorData, scalars, NumPy (zero-copy, read-only
views; copies of any array), dtype casts, and str/repr."""

import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest
from ferrum import ArgumentError, Bool, DType, Float, Int, Tensor, TensorData
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import (
    ALL_DTYPES,
    DEVICE,
    FERRUM_DTYPES,
    LAYOUTS,
    NP_DTYPES,
    arrays,
    assert_equal,
    dtypes,
    layouts,
    shapes,
    tensor,
)

# --------------------------------------------------------------------------- TensorData


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(), shapes(max_rank=4, min_side=1), layouts())
def test_to_data_matches_numpy(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    t = tensor(a, layout)
    d = t.to_data()
    assert d.shape == shape
    assert d.dtype == FERRUM_DTYPES[dtype]
    assert d.num_elements() == a.size
    assert len(d) == shape[0]
    assert d.to_list() == a.tolist()
    assert d.to_vec() == a.reshape(-1).tolist()
    np.testing.assert_array_equal(d.to_numpy(), a)
    assert t.into_data() == d


def test_tensordata_constructor() -> None:
    d = TensorData([1, 2, 3, 4, 5, 6], (2, 3))
    assert d.shape == (2, 3) and d.dtype == DType.I64
    assert d.to_list() == [[1, 2, 3], [4, 5, 6]]
    f = TensorData([[1.5, 2.0]], dtype=DType.F64)
    assert f.shape == (1, 2) and f.dtype == DType.F64
    assert f.to_list() == [[1.5, 2.0]]
    b = TensorData(np.array([True, False]))
    assert b.dtype == DType.Bool and b.to_list() == [True, False]


def test_tensordata_convert_and_equality() -> None:
    d = TensorData([1.7, -1.7, 0.0])
    assert d.convert(DType.I64).to_list() == [1, -1, 0]
    assert d.convert(DType.Bool).to_list() == [True, True, False]
    assert d.convert(DType.F64).dtype == DType.F64
    # Float data of f32 and f64 holding the same numbers are equal; kinds differ -> not equal.
    assert TensorData([1.0, 2.0]) == TensorData([1.0, 2.0], dtype=DType.F64)
    assert TensorData([1, 2]) != TensorData([1.0, 2.0])
    assert TensorData([1, 2]) != TensorData([1, 3])
    assert TensorData([1, 2]) != TensorData([[1, 2]])
    assert TensorData([1]) != "not data"


def test_tensordata_assertions() -> None:
    a = TensorData([1.0, 2.0])
    a.assert_eq(TensorData([1.0, 2.0]))
    with pytest.raises(AssertionError, match="TensorData differ"):
        a.assert_eq(TensorData([1.0, 2.5]))
    with pytest.raises(AssertionError):
        a.assert_eq(TensorData([1.0, 2.0], dtype=DType.F64))  # dtypes differ
    a.assert_approx_eq(TensorData([1.00001, 2.00001]))
    a.assert_approx_eq(TensorData([1.01, 2.0]), tolerance=0.1)
    with pytest.raises(AssertionError, match="flat index 1"):
        a.assert_approx_eq(TensorData([1.0, 2.1]))
    with pytest.raises(AssertionError, match="shapes differ"):
        a.assert_approx_eq(TensorData([[1.0, 2.0]]))


def test_tensordata_repr() -> None:
    r = repr(TensorData([[1, 2], [3, 4]]))
    assert r == "TensorData([[1, 2], [3, 4]], shape=[2, 2], dtype=i64)"
    # Summarised past the print options' threshold (1000 elements), as NumPy does.
    assert "..." not in repr(Tensor.arange(0, 1000, DEVICE).to_data())
    long = repr(Tensor.arange(0, 1001, DEVICE).to_data())
    assert long == "TensorData([0, 1, 2, ..., 998, 999, 1000], shape=[1001], dtype=i64)"


# --------------------------------------------------------------------------- scalars


def test_into_scalar_per_kind() -> None:
    f = Tensor.from_floats([[2.5]], DEVICE).into_scalar()
    i = Tensor.from_ints([-7], DEVICE).into_scalar()
    b = Tensor.from_bool([True], DEVICE).into_scalar()
    assert isinstance(f, float) and f == 2.5
    assert isinstance(i, int) and not isinstance(i, bool) and i == -7
    assert isinstance(b, bool) and b is True
    assert Tensor.from_floats([1.0, 2.0, 3.0], DEVICE).sum().into_scalar() == 6.0


def test_into_scalar_of_a_view() -> None:
    t = Tensor.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4), DEVICE)
    assert t[2, 1].into_scalar() == 9.0
    assert t.transpose()[3, 2].into_scalar() == 11.0
    assert t.flip([0, 1])[0, 0].into_scalar() == 11.0


def test_python_number_protocols() -> None:
    assert float(Tensor.from_floats([1.25], DEVICE)) == 1.25
    assert int(Tensor.from_ints([[41]], DEVICE)) == 41
    assert int(Tensor.from_floats([2.9], DEVICE)) == 2
    assert bool(Tensor.from_bool([False], DEVICE)) is False
    assert bool(Tensor.from_floats([0.5], DEVICE)) is True


@pytest.mark.parametrize("shape", [(2,), (0,), (1, 2)])
def test_into_scalar_needs_one_element(shape: tuple[int, ...]) -> None:
    t = Tensor.zeros(shape, DEVICE)
    with pytest.raises(ArgumentError, match=r"into_scalar: expected a tensor with exactly one element"):
        t.into_scalar()
    with pytest.raises(ArgumentError, match="ambiguous"):
        bool(t)


def test_len_dims_rank() -> None:
    t = Tensor.zeros((4, 2, 3), DEVICE)
    assert len(t) == 4
    assert t.dims() == t.shape() == (4, 2, 3)
    assert t.rank() == 3 and t.num_elements() == 24


# --------------------------------------------------------------------------- to NumPy


@settings(max_examples=30, deadline=None)
@given(st.data(), dtypes(), shapes(max_rank=4), layouts())
def test_to_numpy_is_a_read_only_view(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    t = tensor(a, layout)
    v = t.to_numpy()
    assert v.dtype == NP_DTYPES[dtype]
    np.testing.assert_array_equal(v, a)
    assert not v.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        v[(0,) * len(shape)] = v[(0,) * len(shape)]
    # Zero-copy: a second view shares the same memory.
    assert np.shares_memory(v, t.to_numpy())


def test_to_numpy_keeps_view_strides() -> None:
    base = Tensor.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4), DEVICE)
    view = base.transpose()
    v = view.to_numpy()
    assert v.strides == (4, 16)
    assert np.shares_memory(v, base.to_numpy())
    flipped = base.flip([1]).to_numpy()
    assert flipped.strides == (16, -4)
    np.testing.assert_array_equal(flipped, np.arange(12).reshape(3, 4)[:, ::-1])


def test_to_numpy_copy_is_writeable_and_independent() -> None:
    t = Tensor.from_floats([1.0, 2.0], DEVICE)
    c = t.to_numpy(copy=True)
    assert c.flags.writeable
    assert not np.shares_memory(c, t.to_numpy())
    c[0] = 100.0
    assert t.to_data().to_list() == [1.0, 2.0]


def test_to_numpy_outlives_the_tensor() -> None:
    v = Tensor.from_numpy(np.arange(6, dtype=np.int64), DEVICE).to_numpy()
    # Only the array holds the tensor now.
    np.testing.assert_array_equal(v, np.arange(6))


def test_array_protocol() -> None:
    t = Tensor.from_ints([[1, 2], [3, 4]], DEVICE)
    a = np.asarray(t)
    np.testing.assert_array_equal(a, [[1, 2], [3, 4]])
    assert a.dtype == np.int64
    f = np.asarray(t, dtype=np.float64)
    assert f.dtype == np.float64
    np.testing.assert_array_equal(f, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.array(t), [[1, 2], [3, 4]])


# --------------------------------------------------------------------------- from NumPy


@pytest.mark.parametrize(
    ("np_dtype", "dtype"),
    [
        (np.float16, "f16"),
        (np.float32, "f32"),
        (np.float64, "f32"),  # the backend's float, as Burn converts data on creation
        (np.int8, "i64"),
        (np.int16, "i64"),
        (np.int32, "i32"),
        (np.int64, "i64"),
        (np.uint8, "u8"),
        (np.uint16, "i64"),
        (np.uint32, "i64"),
        (np.bool_, "bool"),
    ],
)
def test_from_numpy_every_dtype(np_dtype: Any, dtype: str) -> None:
    src = (np.arange(12).reshape(3, 4) % 5 == 0) if np_dtype is np.bool_ else np.arange(12).reshape(3, 4)
    a = src.astype(np_dtype)
    t = Tensor.from_numpy(a, DEVICE)
    assert_equal(t, a.astype(NP_DTYPES[dtype]), dtype)
    assert t.kind is {"f16": Float, "f32": Float, "i32": Int, "i64": Int, "u8": Int, "bool": Bool}[dtype]


def test_from_numpy_float16_values() -> None:
    a = np.array([0.5, -1.25, 65504.0, 1e-3], dtype=np.float16)
    assert_equal(Tensor.from_numpy(a, DEVICE), a, "f16")
    assert_equal(Tensor.from_numpy(a, DEVICE, dtype=DType.F32), a.astype(np.float32), "f32")


def test_from_numpy_negative_ints_of_small_types() -> None:
    a = np.array([-128, 127, -1], dtype=np.int8)
    assert_equal(Tensor.from_numpy(a, DEVICE), np.array([-128, 127, -1]), "i64")
    u = np.array([255, 0], dtype=np.uint8)
    assert_equal(Tensor.from_numpy(u, DEVICE), np.array([255, 0], np.uint8), "u8")
    assert_equal(Tensor.from_numpy(u, DEVICE, dtype=DType.I64), np.array([255, 0]), "i64")


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(), shapes(min_rank=2, max_rank=4, max_side=5))
def test_from_numpy_strided_arrays(data: st.DataObject, dtype: str, shape: tuple[int, ...]) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    views = [
        a[::2],
        a[::-1],
        a[..., ::-2],
        np.swapaxes(a, 0, -1),
        np.asfortranarray(a),
        a[:, ::3],
    ]
    for v in views:
        t = Tensor.from_numpy(v, DEVICE, dtype=FERRUM_DTYPES[dtype])
        assert_equal(t, v, dtype)


def test_from_numpy_zero_size_and_many_dims() -> None:
    assert_equal(Tensor.from_numpy(np.zeros((0, 3), np.float32), DEVICE), np.zeros((0, 3), np.float32), "f32")
    a = np.arange(64, dtype=np.float64).reshape(2, 2, 2, 2, 2, 2)
    t = Tensor.from_numpy(a, DEVICE, dtype=DType.F64)
    assert t.rank() == 6
    assert_equal(t, a, "f64")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_from_numpy_with_dtype(dtype: str) -> None:
    a = np.array([[0.0, 1.5], [-2.5, 3.0]])
    t = Tensor.from_numpy(a, DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert_equal(t, a.astype(NP_DTYPES[dtype]), dtype)


def test_from_numpy_copies() -> None:
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    t = Tensor.from_numpy(a, DEVICE)
    a[0] = 100.0
    assert t.to_data().to_list() == [1.0, 2.0, 3.0]
    assert not np.shares_memory(a, t.to_numpy())


def test_from_numpy_misaligned_and_foreign_byte_order() -> None:
    raw = np.arange(10, dtype=np.float32).tobytes()
    misaligned = np.frombuffer(b"\0" + raw, np.float32, offset=1)
    assert not misaligned.flags.aligned
    assert_equal(Tensor.from_numpy(misaligned, DEVICE), np.arange(10, dtype=np.float32), "f32")
    big_endian = np.arange(6, dtype=">i4").reshape(2, 3)
    assert_equal(Tensor.from_numpy(big_endian, DEVICE), big_endian.astype(np.int32), "i32")


def test_from_numpy_unsigned_and_float_to_int() -> None:
    # uint64 values within i64 convert exactly; floats to Int truncate toward zero, as astype.
    u = np.array([0, 2**63 - 1], np.uint64)
    assert Tensor.from_numpy(u, DEVICE).to_data().to_list() == [0, 2**63 - 1]
    f = np.array([-2.7, 2.7, 2.0**62])
    assert Tensor.from_numpy(f, DEVICE, dtype=DType.I64).to_data().to_list() == [-2, 2, 2**62]


def test_big_python_ints_become_floats_when_a_float_is_asked_for() -> None:
    assert Tensor.from_floats([2**100], DEVICE, dtype=DType.F64).to_data().to_list() == [float(2**100)]
    assert Tensor.from_data([2**100], DEVICE, Float).to_data().to_list() == [np.float32(2**100)]
    shifted = Tensor.from_floats([1.0], DEVICE, dtype=DType.F64) + 2**100
    assert shifted.to_data().to_list() == [float(2**100) + 1.0]
    big: Any = [np.uint64(2**64 - 1)]
    assert Tensor.from_data(big, DEVICE, Float).to_data().to_list() == [np.float32(2**64)]


def test_from_numpy_copies_a_broadcast_view_once() -> None:
    # A stride-0 view of 256 MiB: the tensor is the only full-size copy made.
    code = textwrap.dedent(
        """
        import resource
        import numpy as np
        from ferrum import Tensor
        from ferrum.backend import NdArray
        view = np.broadcast_to(np.float32(3.0), (2**26,))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = Tensor.from_numpy(view, NdArray.device())
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert t[-1:].to_data().to_list() == [3.0]
        print((after - before) * 1024 / 2**28)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    peak_over_size = float(proc.stdout)
    # One copy: about 1x; copying through a contiguous temporary first made it 2x.
    assert peak_over_size < 1.5, f"peak memory grew by {peak_over_size:.2f}x the array's size"


def test_from_data_accepts_numpy() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::-1]
    assert_equal(Tensor.from_data(a, DEVICE), a, "i32")
    assert_equal(Tensor.from_floats(a, DEVICE), a.astype(np.float32), "f32")
    assert_equal(Tensor.from_ints(a.astype(np.float64), DEVICE), a.astype(np.int64), "i64")
    assert_equal(Tensor.from_bool(a, DEVICE), a.astype(bool), "bool")


# --------------------------------------------------------------------------- casts


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(), dtypes(), shapes(max_rank=3), layouts())
def test_cast_matches_numpy_astype(
    data: st.DataObject, src: str, dst: str, shape: tuple[int, ...], layout: str
) -> None:
    a: Any = data.draw(arrays(src, shape))
    t = tensor(a, layout)
    out = t.cast(FERRUM_DTYPES[dst])
    # NumPy's float -> int cast truncates toward zero, as ferrum's does.
    assert_equal(out, a.astype(NP_DTYPES[dst]), dst)
    np.testing.assert_array_equal(t.to_numpy(), a)


def test_kind_conversions() -> None:
    f = Tensor.from_floats([-1.7, -0.5, 0.0, 0.5, 1.7], DEVICE)
    assert_equal(f.int(), np.array([-1, 0, 0, 0, 1]), "i64")
    assert_equal(f.bool(), np.array([True, True, False, True, True]), "bool")
    i = Tensor.from_ints([-2, 0, 3], DEVICE)
    assert_equal(i.float(), np.array([-2.0, 0.0, 3.0], np.float32), "f32")
    assert_equal(i.bool(), np.array([True, False, True]), "bool")
    b = Tensor.from_bool([True, False], DEVICE)
    assert_equal(b.int(), np.array([1, 0]), "i64")
    assert_equal(b.float(), np.array([1.0, 0.0], np.float32), "f32")
    f64 = Tensor.from_floats([1.5], DEVICE, dtype=DType.F64)
    assert f64.int().dtype == DType.I64
    assert f64.cast(DType.F32).dtype == DType.F32


def test_dtype_kind_property() -> None:
    assert DType.F32.kind is Float and DType.F64.kind is Float
    assert DType.I64.kind is Int and DType.Bool.kind is Bool
    assert str(DType.F64) == "f64" and str(DType.Bool) == "bool"


# --------------------------------------------------------------------------- str and repr


def test_repr_names_backend_rank_kind_shape_dtype() -> None:
    t = Tensor.from_floats([[1.0, 2.5], [3.0, 4.0]], DEVICE)
    assert repr(t) == "Tensor[NdArray, D2, Float]([[1.0, 2.5], [3.0, 4.0]], shape=[2, 2], dtype=f32)"
    i = Tensor.from_ints([1, -2], DEVICE)
    assert repr(i) == "Tensor[NdArray, D1, Int]([1, -2], shape=[2], dtype=i64)"
    b = Tensor.from_bool([[True, False]], DEVICE)
    assert repr(b) == "Tensor[NdArray, D2, Bool]([[true, false]], shape=[1, 2], dtype=bool)"


def test_str_is_burn_display() -> None:
    s = str(Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE, dtype=DType.F64))
    assert s == (
        'Tensor {\n  data:\n[[1.0, 2.0],\n [3.0, 4.0]],\n  shape:  [2, 2],\n  device:  Cpu,\n'
        '  backend:  "ndarray",\n  kind:  "Float",\n  dtype:  "f64",\n}'
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_repr_elides_long_dims_of_any_layout(layout: str) -> None:
    # 4000 elements, past the print options' threshold: 3 rows at each end.
    t = tensor(np.arange(4000, dtype=np.int64).reshape(2000, 2), layout)
    r = repr(t)
    assert r.startswith(
        "Tensor[NdArray, D2, Int]([[0, 1], [2, 3], [4, 5], ..., [3994, 3995], [3996, 3997], [3998, 3999]]"
    )
    assert r.endswith("shape=[2000, 2], dtype=i64)")


def test_repr_of_special_floats() -> None:
    r = repr(Tensor.from_floats([float("nan"), float("inf"), -0.5, 1e20], DEVICE, dtype=DType.F64))
    assert "NaN" in r and "inf" in r and "-0.5" in r


def test_item_and_T_are_pytorchs_and_numpys_names() -> None:
    # PyTorch habits: t.item() reads a one-element tensor, t.T reverses the dims, len(t) is dim 0.
    assert Tensor.from_data([2.5], DEVICE).item() == 2.5
    assert Tensor.from_data([[7]], DEVICE).item() == 7
    assert Tensor.from_data([True], DEVICE).item() is True
    one = r"^item: expected a tensor with exactly one element, found shape \[2, 3\]"
    with pytest.raises(ArgumentError, match=one):
        Tensor.ones((2, 3), DEVICE).item()
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = Tensor.from_numpy(a, DEVICE)
    np.testing.assert_array_equal(t.T.to_numpy(), a.T)
    np.testing.assert_array_equal(t.narrow(0, 0, 1).reshape((3, 4)).T.to_numpy(), a[0].T)
    assert len(t) == 2 and len(t.T) == 4


@pytest.mark.parametrize("dtype", [None, DType.F32, DType.I64])
def test_from_numpy_reads_any_nonzero_bool_byte_as_true(dtype: DType | None) -> None:
    # A uint8 buffer viewed as bool holds bytes other than 0 and 1: NumPy's
    # truth for them is "not zero", and the tensor must hold true bools.
    raw = np.array([[0, 1, 2], [255, 0, 128]], dtype=np.uint8)
    strided = raw.view(np.bool_)[:, ::2]
    t = Tensor.from_numpy(strided, DEVICE, dtype=dtype)
    expected = raw[:, ::2] != 0
    if dtype is None:
        assert t.to_numpy().view(np.uint8).tolist() == expected.astype(np.uint8).tolist()
        assert t.bool_not().to_numpy().tolist() == (~expected).tolist()
    else:
        assert t.to_numpy().tolist() == expected.astype(np.int64).tolist()  # 1.0 == 1 for F32
