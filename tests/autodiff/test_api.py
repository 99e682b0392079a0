"""The autodiff API: marking leaves, detach/inner/from_inner, reading,
removing and replacing gradients, accumulation, errors for misuse, and
custom ops (``ferrum.autodiff.Function``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import (
    D1,
    D2,
    ArgumentError,
    BackendError,
    DType,
    FerrumError,
    Float,
    Gradients,
    Int,
    Tensor,
    activation,
)
from ferrum.autodiff import Context, Function
from ferrum.backend import NdArray

from examples import custom_op
from examples.custom_op import LinearRelu
from tests.support.devices import AD, TrainB
from tests.support.gradcheck import LAYOUTS, tracked_input

PLAIN = NdArray.device()


def leaf(values: list[float]) -> Tensor[TrainB, D1]:
    return Tensor.from_floats(values, AD, dtype=DType.F64).require_grad()


def values(t: Tensor[Any, Any, Any] | None) -> Any:
    assert t is not None
    return t.to_data().to_list()


# --------------------------------------------------------------------------- marking leaves


def test_tensors_do_not_require_grad_until_marked() -> None:
    x = Tensor.from_floats([1.0, 2.0], AD)
    assert not x.is_require_grad()
    y = x.require_grad()
    assert y.is_require_grad()
    # Values, not ownership: marking returns a new tensor and leaves x alone.
    assert not x.is_require_grad()


def test_set_require_grad_turns_tracking_on_and_off() -> None:
    x = Tensor.from_floats([1.0, 2.0], AD)
    on = x.set_require_grad(True)
    off = on.set_require_grad(False)
    assert on.is_require_grad() and not off.is_require_grad() and on.is_require_grad()
    grads = (on * off).sum().backward()
    assert values(on.grad(grads)) == [1.0, 2.0]
    assert off.grad(grads) is None


def test_results_of_tracked_inputs_are_tracked() -> None:
    x = leaf([1.0, 2.0])
    c = Tensor.from_floats([3.0, 4.0], AD, dtype=DType.F64)
    assert (x * c).is_require_grad()
    assert (x.sum() + 1.0).is_require_grad()
    assert not (c * 2.0).is_require_grad()
    # Int and Bool results carry no gradient.
    assert not x.argmax(0).is_require_grad()
    assert not x.greater_elem(1.5).is_require_grad()


def test_require_grad_is_a_no_op_on_the_plain_backend() -> None:
    x = Tensor.from_floats([1.0, 2.0], PLAIN).require_grad()
    assert not x.is_require_grad()
    assert values(x * 2.0) == [2.0, 4.0]


# --------------------------------------------------------------------------- detach, inner, from_inner


def test_detach_cuts_the_graph() -> None:
    x = leaf([1.0, 2.0, 3.0])
    d = x.detach()
    assert not d.is_require_grad()
    assert values(d) == [1.0, 2.0, 3.0]
    # d(x * stop(x))/dx = stop(x): the detached factor is a constant.
    grads = (x * d).sum().backward()
    assert values(x.grad(grads)) == [1.0, 2.0, 3.0]


def test_detached_branch_alone_has_nothing_to_differentiate() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(ArgumentError, match="does not require grad"):
        (x.detach() * 2.0).sum().backward()


def test_inner_gives_the_same_values_on_the_plain_backend_without_copying() -> None:
    x = leaf([1.0, 2.0, 3.0]) * 2.0
    plain: Tensor[NdArray, D1] = x.inner()
    assert plain.device() == PLAIN
    assert not plain.is_require_grad()
    assert values(plain) == [2.0, 4.0, 6.0]
    assert np.shares_memory(plain.to_numpy(), x.to_numpy())


def test_from_inner_lifts_a_plain_tensor_without_tracking() -> None:
    p = Tensor.from_floats([1.0, 2.0], PLAIN)
    t: Tensor[TrainB, D1] = Tensor.from_inner(p)
    assert t.device() == AD
    assert not t.is_require_grad()
    assert values(t) == [1.0, 2.0]
    x = t.require_grad()
    assert values(x.grad((x * x).sum().backward())) == [2.0, 4.0]


def test_inner_and_from_inner_reject_the_wrong_backend() -> None:
    p = Tensor.from_floats([1.0], PLAIN)
    with pytest.raises(BackendError, match="inner"):
        p.inner()  # type: ignore[misc]
    with pytest.raises(BackendError, match="from_inner"):
        Tensor.from_inner(leaf([1.0]))


# --------------------------------------------------------------------------- reading gradients


def test_gradients_live_on_the_inner_backend_and_are_untracked() -> None:
    x = leaf([1.0, 2.0])
    g = x.grad((x * x).sum().backward())
    assert g is not None
    inner: Tensor[NdArray, D1] = g
    assert inner.device() == PLAIN
    assert inner.dtype == DType.F64
    assert not inner.is_require_grad()


def test_untracked_and_unused_tensors_get_no_gradient() -> None:
    x = leaf([1.0, 2.0])
    unused = leaf([5.0, 6.0])
    c = Tensor.from_floats([3.0, 4.0], AD, dtype=DType.F64)
    grads = (x * c).sum().backward()
    assert c.grad(grads) is None
    assert unused.grad(grads) is None
    assert values(x.grad(grads)) == [3.0, 4.0]


def test_backward_of_a_non_scalar_seeds_with_ones() -> None:
    x = leaf([1.0, 2.0, 3.0])
    assert values(x.grad((x * 2.0).backward())) == [2.0, 2.0, 2.0]


def test_grad_remove_pops_the_gradient() -> None:
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    grads = (x * y).sum().backward()
    assert len(grads) == 2
    assert values(x.grad_remove(grads)) == [3.0, 4.0]
    assert x.grad(grads) is None
    assert x.grad_remove(grads) is None
    assert len(grads) == 1
    assert values(y.grad(grads)) == [1.0, 2.0]


def test_grad_replace_sets_the_gradient() -> None:
    x = leaf([1.0, 2.0])
    grads: Gradients = (x * 3.0).sum().backward()
    new = Tensor.from_floats([7.0, 8.0], PLAIN, dtype=DType.F64)
    x.grad_replace(grads, new)
    assert values(x.grad(grads)) == [7.0, 8.0]
    # Also after a removal: replace inserts.
    x.grad_remove(grads)
    x.grad_replace(grads, new * 2.0)
    assert values(x.grad(grads)) == [14.0, 16.0]


def test_grad_replace_rejects_a_gradient_of_another_shape() -> None:
    x = leaf([1.0, 2.0])
    grads = (x * 3.0).sum().backward()
    with pytest.raises(FerrumError, match=r"grad_replace.*\[2\].*\[3\]"):
        x.grad_replace(grads, Tensor.from_floats([1.0, 2.0, 3.0], PLAIN, dtype=DType.F64))
    assert values(x.grad(grads)) == [3.0, 3.0]


def test_grad_replace_rejects_an_int_gradient() -> None:
    x = leaf([1.0, 2.0])
    grads = (x * 3.0).sum().backward()
    bad: Tensor[NdArray, D1, Int] = Tensor.from_ints([1, 2], PLAIN)
    with pytest.raises(FerrumError, match="grad_replace"):
        x.grad_replace(grads, bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- accumulation


def test_gradients_accumulate_when_a_leaf_is_used_twice() -> None:
    x = leaf([1.0, -2.0])
    grads = (x * 2.0 + x * 3.0).sum().backward()
    assert values(x.grad(grads)) == [5.0, 5.0]


def test_gradients_accumulate_through_shared_intermediates() -> None:
    x = leaf([1.0, 2.0, 3.0])
    h = x * x  # used by two branches
    loss = (h * 2.0 + h.exp()).sum()
    expected = [4.0 * v + 2.0 * v * float(np.exp(v * v)) for v in (1.0, 2.0, 3.0)]
    np.testing.assert_allclose(values(x.grad(loss.backward())), expected, rtol=1e-12)


def test_matmul_of_a_leaf_with_itself() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    x: Tensor[TrainB, D2] = Tensor.from_numpy(a, AD).require_grad()
    g = x.grad((x @ x).sum().backward())
    # d sum(X X) / dX = 1 X^T + X^T 1, with 1 the all-ones matrix.
    ones = np.ones((2, 2))
    np.testing.assert_allclose(values(g), ones @ a.T + a.T @ ones)


def test_separate_backward_passes_are_independent() -> None:
    x = leaf([1.0, 2.0])
    g1 = (x * 2.0).sum().backward()
    g2 = (x * x).sum().backward()
    assert values(x.grad(g1)) == [2.0, 2.0]
    assert values(x.grad(g2)) == [2.0, 4.0]


# --------------------------------------------------------------------------- misuse


def test_backward_on_the_plain_backend_raises_backend_error() -> None:
    y = Tensor.from_floats([1.0, 2.0], PLAIN).sum()
    with pytest.raises(BackendError, match="autodiff"):
        y.backward()  # type: ignore[misc]


def test_backward_twice_through_a_freed_graph_raises_argument_error() -> None:
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(ArgumentError, match="already freed"):
        loss.backward()
    # Running the forward again builds a fresh graph.
    assert values(x.grad((x * x).sum().backward())) == [2.0, 4.0]


def test_a_later_op_on_a_freed_graph_fails_at_its_backward() -> None:
    x = leaf([1.0, 2.0])
    h = x * x
    (h.sum()).backward()
    with pytest.raises(ArgumentError, match="already freed"):
        (h * 2.0).sum().backward()


def test_unfold_gradient_sums_over_overlapping_windows() -> None:
    # Every op has a backward now (unfold was the last without one): each element's gradient
    # sums the upstream gradients of the windows that hold it.
    x: Tensor[TrainB, D1] = Tensor.from_floats([1.0, 2.0, 3.0, 4.0, 5.0], AD).require_grad()
    y = x.unfold(0, 2, 1)  # windows [0,1], [1,2], [2,3], [3,4]
    w4 = np.arange(1.0, 9.0, dtype=np.float32).reshape(4, 2)
    grads = (y * Tensor.from_numpy(w4, AD)).sum().backward()
    g = x.grad(grads)
    assert g is not None
    expected = np.zeros(5, np.float32)
    for k in range(4):
        expected[k : k + 2] += w4[k]
    np.testing.assert_allclose(g.to_numpy(), expected)


def test_mixing_backends_raises_backend_error() -> None:
    x = leaf([1.0, 2.0])
    p = Tensor.from_floats([1.0, 2.0], PLAIN, dtype=DType.F64)
    with pytest.raises(BackendError, match="different backends"):
        x + p  # type: ignore[operator]


def test_gradcheck_layouts_are_strided() -> None:
    # The gradient checks claim to cover non-contiguous inputs; pin it.
    for layout in LAYOUTS:
        t = tracked_input(np.ones((3, 4)), layout)
        assert t.value.is_require_grad()
        assert t.value.is_contiguous() == (layout == "contiguous"), layout


# --------------------------------------------------------------------------- custom ops


def mlp_inputs() -> tuple[Tensor[TrainB, D2], Tensor[TrainB, D2], Tensor[TrainB, D2]]:
    rng = np.random.default_rng(7)
    x = Tensor.from_numpy(rng.standard_normal((6, 4)), AD).require_grad()
    w = Tensor.from_numpy(rng.standard_normal((4, 3)), AD).require_grad()
    b = Tensor.from_numpy(rng.standard_normal((1, 3)), AD).require_grad()
    return x, w, b


def test_custom_op_matches_the_primitive_composition() -> None:
    x, w, b = mlp_inputs()
    fused: Tensor[TrainB, D2, Float] = LinearRelu.apply(x, w, b)
    reference = activation.relu(x @ w + b)
    np.testing.assert_allclose(fused.to_numpy(), reference.to_numpy(), rtol=1e-12)
    assert fused.is_require_grad()
    got = (fused * fused).sum().backward()
    want = (reference * reference).sum().backward()
    for t in (x, w, b):
        g, e = t.grad(got), t.grad(want)
        assert g is not None and e is not None
        np.testing.assert_allclose(g.to_numpy(), e.to_numpy(), rtol=1e-10, atol=1e-12)


def test_custom_op_inside_a_larger_graph() -> None:
    x, w, b = mlp_inputs()
    y = LinearRelu.apply(x * 2.0, w, b).exp().mean()
    z = activation.relu((x * 2.0) @ w + b).exp().mean()
    got, want = y.backward(), z.backward()
    for t in (x, w, b):
        np.testing.assert_allclose(values(t.grad(got)), values(t.grad(want)), rtol=1e-10)


class Scale(Function):
    """x * k for a constant k, with None for the constant's gradient."""

    @staticmethod
    def forward(ctx: Context, *inputs: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        x, k = inputs
        ctx.save_for_backward(k)
        return x * k

    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        (k,) = ctx.saved_tensors
        assert k.device() == PLAIN, "saved tensors come back on the inner backend"
        assert grad.device() == PLAIN
        return grad * k, None


def test_custom_op_gradient_none_means_no_gradient() -> None:
    x, k = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    grads = Scale.apply(x, k).sum().backward()
    assert values(x.grad(grads)) == [3.0, 4.0]
    assert k.grad(grads) is None


def test_custom_op_on_untracked_or_plain_inputs_just_runs_the_forward() -> None:
    k = Tensor.from_floats([2.0, 2.0], PLAIN)
    p = Scale.apply(Tensor.from_floats([1.0, 2.0], PLAIN), k)
    assert p.device() == PLAIN and values(p) == [2.0, 4.0]
    a = Scale.apply(Tensor.from_floats([1.0, 2.0], AD), Tensor.from_inner(k))
    assert not a.is_require_grad() and values(a) == [2.0, 4.0]


class Copy(Function):
    """The forward of the custom ops below, whose backwards are wrong each in its own way."""

    @staticmethod
    def forward(ctx: Context, *inputs: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return inputs[0] * 1.0

    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        return (grad,)


class TooMany(Copy):
    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        return grad, grad


class WrongShape(Copy):
    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        return (grad.sum(),)


class NotATensor(Copy):
    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        return (3.0,)  # type: ignore[return-value]


class Raising(Copy):
    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        raise RuntimeError("boom in backward")


def test_custom_op_wrong_gradient_count_is_an_error() -> None:
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(ArgumentError, match=r"TooMany.*2 gradients for 1 input"):
        TooMany.apply(x).sum().backward()


def test_custom_op_wrong_gradient_shape_is_an_error() -> None:
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(FerrumError, match=r"WrongShape.*\[1\].*\[3\]"):
        WrongShape.apply(x).sum().backward()


def test_custom_op_backward_failures_name_the_op() -> None:
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(FerrumError, match="NotATensor"):
        NotATensor.apply(x).sum().backward()
    with pytest.raises(FerrumError, match=r"Raising.*boom in backward"):
        Raising.apply(x).sum().backward()


def test_custom_op_needs_an_input() -> None:
    with pytest.raises(ValueError, match="at least one input"):
        TooMany.apply()


def test_custom_op_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    custom_op.main()
    out = capsys.readouterr().out
    assert out.count("matches the primitive ops") == 3 and "fused output equals primitives: True" in out, out
