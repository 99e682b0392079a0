"""``Tensor.from_dlpack`` shares the producer's CPU memory: writes by the
producer are seen, ferrum never writes into it (whatever op or optimizer
would reuse a buffer in place), the producer's memory stays alive as long as
a tensor over it, and layouts or dtypes that cannot be shared are copied."""

from __future__ import annotations

import ctypes
import gc
import statistics
import time
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D1, D2, ArgumentError, DType, KindError, Tensor
from ferrum.backend import Backend
from ferrum.module import Module, Param
from ferrum.optim import GradientsParams, SgdConfig

from tests.support.devices import AD, DEVICE

B = TypeVar("B", bound=Backend)

SHARED = {
    np.float32: DType.F32,
    np.float64: DType.F64,
    np.float16: DType.F16,
    np.int64: DType.I64,
    np.int32: DType.I32,
    np.uint8: DType.U8,
    np.bool_: DType.Bool,
}


def values_of(t: Tensor[Any, Any, Any]) -> np.ndarray[Any, Any]:
    """The tensor's values as a fresh NumPy array (a copy, not a view)."""
    return np.array(t.to_data().to_list())


@pytest.mark.parametrize("dtype", list(SHARED))
def test_every_shared_dtype_sees_the_producers_writes(dtype: type) -> None:
    source: np.ndarray[Any, Any] = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    t = Tensor.from_dlpack(source, DEVICE)
    assert t.dtype == SHARED[dtype] and t.dims() == (3, 4)
    np.testing.assert_array_equal(values_of(t), source)
    source[1, 2] = 1 if dtype is not np.bool_ else False
    source[2, 3] = 2 if dtype is not np.bool_ else True
    got = values_of(t)
    assert got[1, 2] == source[1, 2] and got[2, 3] == source[2, 3]
    # And back out: the tensor's NumPy view is the source's memory.
    assert np.shares_memory(t.to_numpy(), source)


def test_the_tensor_outlives_the_source_and_its_capsule() -> None:
    source = np.linspace(-1.0, 1.0, 1000, dtype=np.float32).reshape(10, 100)
    expected = source.copy()
    t = Tensor.from_dlpack(source, DEVICE)
    view = t[2:5].transpose()
    del source
    gc.collect()
    np.testing.assert_array_equal(values_of(t), expected)
    del t
    gc.collect()
    np.testing.assert_array_equal(values_of(view), expected[2:5].T)


def test_ops_never_write_into_the_source() -> None:
    data = np.array([[0.5, -1.0, 2.0], [3.0, -4.5, 0.25]], dtype=np.float32)
    source = data.copy()
    expected = {
        "add": data + 1.0,
        "exp": np.exp(data),
        "neg": -data,
        "reshape": data.reshape(3, 2),
        "relu": np.maximum(data, 0.0),
        "mul": data * data,
        "sum": np.array(data.sum()),
        "matmul": data @ data.T,
    }
    # Temporaries, so that each op's input is the buffer's only user.
    got = {
        "add": Tensor.from_dlpack(source, DEVICE) + 1.0,
        "exp": Tensor.from_dlpack(source, DEVICE).exp(),
        "neg": -Tensor.from_dlpack(source, DEVICE),
        "reshape": Tensor.from_dlpack(source, DEVICE).reshape((3, 2)),
        "relu": Tensor.from_dlpack(source, DEVICE).clamp_min(0.0),
        "mul": Tensor.from_dlpack(source, DEVICE) * Tensor.from_dlpack(source, DEVICE),
        "sum": Tensor.from_dlpack(source, DEVICE).sum(),
        "matmul": Tensor.from_dlpack(source, DEVICE) @ Tensor.from_dlpack(source.T, DEVICE),
    }
    for name, t in got.items():
        want = expected[name]
        np.testing.assert_allclose(values_of(t).reshape(want.shape), want, rtol=1e-6, err_msg=name)
    data_list = Tensor.from_dlpack(source, DEVICE).to_data().to_list()
    assert data_list == data.tolist()
    np.testing.assert_array_equal(source, data)
    # A read-only source is shared all the same.
    frozen = data.copy()
    frozen.flags.writeable = False
    t = Tensor.from_dlpack(frozen, DEVICE)
    assert np.shares_memory(t.to_numpy(), frozen)
    np.testing.assert_array_equal(values_of(t * 2.0), data * 2.0)


class Pair(Module[B]):
    w: Param[Tensor[B, D2]]
    v: Param[Tensor[B, D1]]


def test_an_optimizer_step_leaves_shared_parameters_unchanged() -> None:
    w0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    v0 = np.array([1.0, -1.0], dtype=np.float32)
    w_source, v_source = w0.copy(), v0.copy()
    model = Pair(w=Param(Tensor.from_dlpack(w_source, AD)), v=Param(Tensor.from_dlpack(v_source, AD)))
    gw, gv = np.full((2, 3), 2.0, dtype=np.float32), np.array([4.0, 8.0], dtype=np.float32)
    grads = GradientsParams()
    grads.register(model.w.id, Tensor.from_numpy(gw, DEVICE))
    grads.register(model.v.id, Tensor.from_numpy(gv, DEVICE))
    stepped = SgdConfig().init().step(0.5, model, grads)
    del model
    gc.collect()
    np.testing.assert_allclose(values_of(stepped.w.val()), w0 - 0.5 * gw)
    np.testing.assert_allclose(values_of(stepped.v.val()), v0 - 0.5 * gv)
    np.testing.assert_array_equal(w_source, w0)
    np.testing.assert_array_equal(v_source, v0)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[::-1],
        lambda a: a[:, ::-2],
        lambda a: a.T,
        lambda a: a[1:, 1::2],
        lambda a: np.broadcast_to(a[:1], (4, 6)),
        lambda a: np.asfortranarray(a),
    ],
    ids=["rows-reversed", "columns-backwards-by-two", "transposed", "offset-strided", "broadcast", "fortran"],
)
def test_strided_sources_are_shared_with_their_layout(make: Any) -> None:
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    source = make(base)
    t = Tensor.from_dlpack(source, DEVICE)
    np.testing.assert_array_equal(values_of(t), source)
    assert np.shares_memory(t.to_numpy(), source)
    # Written through the array that owns the memory (the broadcast view is read-only).
    owner = base if np.shares_memory(source, base) else source
    owner[...] = -owner
    np.testing.assert_array_equal(values_of(t), source)
    assert values_of(t).min() < 0


def test_unshareable_layouts_and_dtypes_are_copied() -> None:
    # Unaligned: float64 values starting one byte into a buffer.
    raw = np.zeros(8 * 3 + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float64)
    assert not unaligned.flags.aligned
    unaligned[:] = [1.5, -2.5, 3.5]
    t = Tensor.from_dlpack(unaligned, DEVICE)
    np.testing.assert_array_equal(values_of(t), [1.5, -2.5, 3.5])
    assert not np.shares_memory(t.to_numpy(), raw)
    # Dtypes ferrum does not store as they are: converted as from_numpy does.
    for dtype, want in [(np.int8, DType.I64), (np.uint16, DType.I64), (np.int16, DType.I64)]:
        t = Tensor.from_dlpack(np.array([1, 2, 3], dtype=dtype), DEVICE)
        assert t.dtype == want and t.to_data().to_list() == [1, 2, 3]
    # Empty arrays.
    empty = Tensor.from_dlpack(np.zeros((0, 3), dtype=np.float32), DEVICE)
    assert empty.dims() == (0, 3)


def test_bool_bytes_other_than_0_and_1_are_true() -> None:
    raw = np.array([0, 2, 1, 255], dtype=np.uint8)
    t = Tensor.from_dlpack(raw.view(np.bool_), DEVICE)
    assert t.dtype == DType.Bool and t.to_data().to_list() == [False, True, True, True]
    assert not np.shares_memory(t.to_numpy(), raw)
    assert (~t).to_data().to_list() == [True, False, False, False]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class RawProducer:
    """A DLPack producer written from the protocol's C structs (as a C
    library would hand out a capsule): 16 bytes of memory described as
    `device_type` memory of DLPack dtype `(code, bits)`; it owns the memory
    itself, so it must outlive the capsule's consumers (no deleter)."""

    def __init__(self, device_type: int, code: int, bits: int) -> None:
        self.memory = np.zeros(16, dtype=np.uint8)
        self.shape = (ctypes.c_int64 * 1)(16 * 8 // bits)
        dtype = DLDataType(code, bits, 1)
        tensor = DLTensor(self.memory.ctypes.data, DLDevice(device_type, 0), 1, dtype, self.shape, None, 0)
        self.managed = DLManagedTensor(tensor, None, None)
        self.device_type = device_type

    def __dlpack__(self, **kwargs: Any) -> Any:
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device_type, 0)


def test_a_raw_cpu_capsule_is_shared() -> None:
    producer = RawProducer(1, 2, 32)  # kDLCPU, kDLFloat 32 bits
    t = Tensor.from_dlpack(producer, DEVICE)
    assert t.dtype == DType.F32 and t.dims() == (4,)
    producer.memory.view(np.float32)[:] = [1.0, 2.0, 3.0, 4.0]
    assert t.to_data().to_list() == [1.0, 2.0, 3.0, 4.0]


def test_errors_name_the_problem() -> None:
    with pytest.raises(ArgumentError, match="expected an object with __dlpack__, found int"):
        Tensor.from_dlpack(3, DEVICE)
    with pytest.raises(ArgumentError, match=r"capsule cannot be read \(a CPU buffer.*Unsupported device"):
        Tensor.from_dlpack(RawProducer(2, 2, 32), DEVICE)  # kDLCUDA
    with pytest.raises(ArgumentError, match=r"capsule cannot be read.*bf16: cast.*Unsupported dtype"):
        Tensor.from_dlpack(RawProducer(1, 4, 16), DEVICE)  # kDLBfloat 16 bits
    # Byte strides that are not whole elements (a float32 field of a record): DLPack has no such layout.
    records = np.zeros(4, dtype=[("a", np.int8), ("b", np.float32)])
    with pytest.raises(ArgumentError, match=r"cannot be read.*strides which are a multiple of itemsize"):
        Tensor.from_dlpack(records["b"], DEVICE)
    with pytest.raises(KindError, match=r"found dtype complex128 \(its imaginary part would be lost"):
        Tensor.from_dlpack(np.array([1 + 2j]), DEVICE)


def test_import_of_64_mib_is_zero_copy_and_faster_than_a_copy() -> None:
    source = np.ones(16 * 1024 * 1024, dtype=np.float32)

    def median_seconds(run: Any) -> float:
        times = []
        for _ in range(9):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    shared = median_seconds(lambda: Tensor.from_dlpack(source, DEVICE))
    copied = median_seconds(lambda: Tensor.from_numpy(source, DEVICE))
    # Sharing costs no more than a few Python calls; copying 64 MiB takes milliseconds.
    assert shared < copied / 10, (shared, copied)
