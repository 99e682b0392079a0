"""Tensors are values: no op changes its inputs, ``clone()`` shares the
buffer, and the engine's in-place buffer reuse is never visible, whatever the
chain of ops, views and NumPy views held on the way."""

import gc
from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import DType, Tensor, activation
from ferrum.backend import Autodiff, NdArray
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import DEVICE, T, arrays, dtypes, layouts, shapes, tensor

# Float ops valid for any shape of rank >= 1 (values stay finite for inputs in [-100, 100]).
FLOAT_OPS: dict[str, Callable[[Any], Any]] = {
    "neg": lambda x: -x,
    "abs": lambda x: x.abs(),
    "add self": lambda x: x + x,
    "mul self": lambda x: x * x.clamp(-2.0, 2.0),
    "sub scalar": lambda x: x - 1.5,
    "rsub scalar": lambda x: 3.0 - x,
    "div scalar": lambda x: x / 4.0,
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "exp of clamp": lambda x: x.clamp(-5.0, 5.0).exp(),
    "sqrt of abs": lambda x: x.abs().sqrt(),
    "relu": lambda x: activation.relu(x),
    "softmax": lambda x: activation.softmax(x, -1),
    "clamp": lambda x: x.clamp(-1.0, 1.0),
    "powi": lambda x: x.clamp(-3.0, 3.0).powi_scalar(3),
    "transpose": lambda x: x.transpose(),
    "flip": lambda x: x.flip([0]),
    "step": lambda x: x[::2],
    "reshape": lambda x: x.reshape((-1,)),
    "unsqueeze": lambda x: x.unsqueeze_dim(0) if x.rank() < 4 else x,
    "squeeze": lambda x: x.squeeze_dims([x.shape().index(1)]) if x.rank() > 1 and 1 in x.shape() else x,
    "expand": lambda x: x.unsqueeze_dim(0).expand((2, *x.shape())) if x.rank() < 4 else x,
    "sum_dim": lambda x: x.sum_dim(0),
    "cumsum": lambda x: x.cumsum(-1),
    "sort": lambda x: x.sort(-1),
    "pad": lambda x: x.pad([1, 1], 0.5),
    "repeat_dim": lambda x: x.repeat_dim(0, 2),
    "roll": lambda x: x.roll_dim(1, 0),
    "cat": lambda x: Tensor.cat([x, x.flip([0])], 0),
    "mask_fill": lambda x: x.mask_fill(x.greater_elem(0.0), 0.0),
    "mask_where": lambda x: x.mask_where(x.lower_elem(0.0), x * 2.0),
    "slice_fill": lambda x: x.slice_fill([(0, 1)], 7.0),
    "slice_assign": lambda x: x.slice_assign([(0, 1)], x[0] * 3.0),
    "select_assign": lambda x: x.select_assign(
        0, Tensor.from_ints([0, 0], DEVICE), Tensor.cat([x[0], x[0]], 0)
    ),
    "scatter": lambda x: x.scatter(0, Tensor.zeros(x.shape(), DEVICE, dtype=DType.I64), x),
    "matmul": lambda x: x @ x.transpose() if x.rank() >= 2 else x.dot(x),
    "cast f64": lambda x: x.cast(DType.F64).cast(DType.F32),
    "clone": lambda x: x.clone(),
    "pos": lambda x: +x,
}


@settings(max_examples=60, deadline=None)
@given(st.data(), shapes(1, 3, 1, 4), layouts())
def test_chains_of_ops_never_change_earlier_tensors(
    data: st.DataObject, shape: tuple[int, ...], layout: str
) -> None:
    a: Any = data.draw(arrays("f32", shape))
    keep = a.copy()
    tensors: list[T] = [tensor(a, layout)]
    snapshots = [keep]
    held_views = [tensors[0].to_numpy()]
    for _ in range(data.draw(st.integers(1, 8))):
        src = data.draw(st.integers(0, len(tensors) - 1))
        name = data.draw(st.sampled_from(sorted(FLOAT_OPS)))
        out = FLOAT_OPS[name](tensors[src])
        tensors.append(out)
        snapshots.append(out.to_numpy(copy=True))
        if data.draw(st.booleans()):
            held_views.append(out.to_numpy())
    gc.collect()
    for i, (t, snap) in enumerate(zip(tensors, snapshots, strict=True)):
        np.testing.assert_array_equal(t.to_numpy(), snap, err_msg=f"tensor {i} changed")
    np.testing.assert_array_equal(held_views[0], keep)
    np.testing.assert_array_equal(a, keep)


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(("f32", "f64", "i64")), shapes(1, 3, 1, 4), layouts())
def test_binary_ops_leave_both_operands(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    b: Any = data.draw(arrays(dtype, shape))
    x, y = tensor(a, layout), tensor(b)
    ops: list[Callable[[Any, Any], Any]] = [
        lambda p, q: p + q,
        lambda p, q: p - q,
        lambda p, q: p * q,
        lambda p, q: p.max_pair(q),
        lambda p, q: p.min_pair(q),
        lambda p, q: p.equal(q),
        lambda p, q: p.mask_where(p.greater(q), q),
        lambda p, q: Tensor.cat([p, q], 0),
        lambda p, q: Tensor.stack([p, q], 0),
    ]
    for op in ops:
        op(x, y)
        op(y, x)
        op(x, x)
    np.testing.assert_array_equal(x.to_numpy(), a)
    np.testing.assert_array_equal(y.to_numpy(), b)


def test_clone_shares_the_buffer() -> None:
    t = Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), DEVICE)
    c = t.clone()
    assert np.shares_memory(c.to_numpy(), t.to_numpy())
    assert c.shape() == t.shape() and c.dtype == t.dtype
    d = c + 1.0
    np.testing.assert_array_equal(t.to_numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(c.to_numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(d.to_numpy(), np.arange(1, 7).reshape(2, 3))


def test_same_dtype_cast_and_device_moves_share_the_buffer() -> None:
    t = Tensor.from_floats([1.0, 2.0], DEVICE)
    mem = t.to_numpy()
    assert np.shares_memory(t.cast(DType.F32).to_numpy(), mem)
    assert np.shares_memory(t.to_device(DEVICE).to_numpy(), mem)
    assert np.shares_memory((+t).to_numpy(), mem)


def test_results_whose_tensor_is_gone_keep_their_values() -> None:
    x = Tensor.from_floats([1.0, 2.0, 3.0], DEVICE)
    views = [(x * float(k)).to_numpy() for k in range(5)]
    gc.collect()
    for _ in range(20):  # more ops: freed buffers may be reused, held ones must not be
        x = (x + 1.0) * 1.0
    for k, v in enumerate(views):
        np.testing.assert_array_equal(v, np.array([1.0, 2.0, 3.0], np.float32) * k)


def test_a_large_unique_intermediate_is_not_aliased() -> None:
    # Large enough for the kernels that run in parallel and may reuse buffers.
    base = np.linspace(-3, 3, 1 << 17, dtype=np.float32)
    x = Tensor.from_numpy(base, DEVICE)
    y = x.exp()
    z = (y * 2.0).sqrt() + y
    w = activation.softmax(z.reshape((256, -1)), 1)
    np.testing.assert_array_equal(x.to_numpy(), base)
    np.testing.assert_allclose(y.to_numpy(), np.exp(base), rtol=1e-5)
    np.testing.assert_allclose(w.to_numpy().sum(axis=1), np.ones(256), rtol=1e-4)
    np.testing.assert_allclose(z.to_numpy(), np.sqrt(np.exp(base) * 2) + np.exp(base), rtol=1e-5)


def test_autodiff_tensors_are_values_too() -> None:
    device = Autodiff[NdArray].device()
    a = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    x = Tensor.from_numpy(a, device).require_grad()
    # backward() of a non-scalar seeds every element with 1, as Burn does.
    y = x * x + x.exp()
    grads = y.backward()
    np.testing.assert_array_equal(x.to_numpy(), a)
    g = x.grad(grads)
    assert g is not None
    np.testing.assert_allclose(g.to_numpy(), 2 * a + np.exp(a), rtol=1e-5)
    np.testing.assert_array_equal(x.to_numpy(), a)


def test_numpy_view_is_read_only_so_tensors_cannot_be_written() -> None:
    t = Tensor.from_floats([1.0, 2.0], DEVICE)
    v = t.to_numpy()
    try:
        v[0] = 5.0
    except ValueError:
        pass
    np.testing.assert_array_equal(t.to_numpy(), [1.0, 2.0])
    assert not v.flags.writeable
    # The read-only flag cannot be lifted on a view NumPy does not own.
    try:
        v.flags.writeable = True
    except ValueError:
        pass
    np.testing.assert_array_equal(t.to_numpy(), [1.0, 2.0])
