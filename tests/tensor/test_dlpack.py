"""DLPack: ``np.from_dlpack(tensor)`` shares the tensor's buffer (read-only),
``Tensor.from_dlpack`` takes NumPy's arrays (any layout, every dtype ferrum
stores), and bad capsules and bf16 get clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from ferrum import ArgumentError, DType, KindError, Tensor
from ferrum.backend import Autodiff, NdArray

DEVICE = NdArray.device()


DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_reads_the_tensor_without_a_copy(dtype: type) -> None:
    values: np.ndarray = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    # from_data makes float64 the backend's f32, as Burn does; from_dlpack keeps it.
    t = Tensor.from_dlpack(values, DEVICE)
    out = np.from_dlpack(t)
    assert out.dtype == values.dtype and out.shape == (3, 4)
    np.testing.assert_array_equal(out, values)
    # Shared, not copied: the same memory as the tensor's own NumPy view, and read-only.
    assert np.shares_memory(out, t.to_numpy())
    assert not out.flags.writeable
    assert t.__dlpack_device__() == (1, 0)


def test_views_keep_their_layout_and_outlive_the_tensor() -> None:
    base = Tensor.from_data(np.arange(24, dtype=np.float32).reshape(4, 6), DEVICE)
    view = base.transpose()[1:3]
    out = np.from_dlpack(view)
    np.testing.assert_array_equal(out, np.arange(24, dtype=np.float32).reshape(4, 6).T[1:3])
    del base, view
    # The capsule's owner keeps the buffer alive after the tensors are gone.
    assert float(out.sum()) == float(np.arange(24).reshape(4, 6).T[1:3].sum())


def test_from_dlpack_takes_numpy_arrays() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)[:, ::2]
    t = Tensor.from_dlpack(a, DEVICE)
    assert t.dtype == DType.F64 and t.dims() == (2, 2)
    np.testing.assert_array_equal(t.to_numpy(), a)
    ints = Tensor.from_dlpack(np.array([1, 2, 3], dtype=np.int32), Autodiff[NdArray].device())
    assert ints.dtype == DType.I32 and ints.device() == Autodiff[NdArray].device()
    # A round trip through the protocol both ways.
    back = Tensor.from_dlpack(Tensor.from_data(np.eye(3, dtype=np.float32), DEVICE), DEVICE)
    np.testing.assert_array_equal(back.to_numpy(), np.eye(3))


def test_errors_name_the_problem() -> None:
    with pytest.raises(ArgumentError, match="expected an object with __dlpack__, found list"):
        Tensor.from_dlpack([1.0, 2.0], DEVICE)
    bf16 = Tensor.from_data(np.ones(2, np.float32), DEVICE).cast(DType.BF16)
    with pytest.raises(KindError, match=r"bf16.*cast it to DType\.F32"):
        np.from_dlpack(bf16)
    # The pre-1.0 protocol cannot mark the buffer read-only: refused, as NumPy refuses its read-only arrays.
    with pytest.raises(BufferError):
        Tensor.from_data(np.ones(2, np.float32), DEVICE).__dlpack__()
