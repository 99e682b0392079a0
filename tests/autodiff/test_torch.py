"""Gradients of ferrum's Autodiff[NdArray] against torch.autograd, in f64.

Optional: the module is skipped when PyTorch is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor, activation

from tests.support.gradcheck import AD_DEVICE, distinct, ints, rng_for, smooth

torch: Any = pytest.importorskip("torch")
F: Any = torch.nn.functional

FerrumFn = Callable[..., Tensor[Any, Any, Any]]
TorchFn = Callable[..., Any]


def compare(name: str, ours: FerrumFn, theirs: TorchFn, *inputs: np.ndarray[Any, Any]) -> None:
    """Gradients of ``sum(f(x) * w)`` for each input agree with torch to 1e-10."""
    rng = rng_for(f"torch{name}")
    leaves = [Tensor.from_numpy(a, AD_DEVICE, dtype=DType.F64).require_grad() for a in inputs]
    out = ours(*leaves)
    w = rng.standard_normal(tuple(out.shape()))
    grads = (out * Tensor.from_numpy(w, AD_DEVICE, dtype=DType.F64)).sum().backward()

    t_leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in inputs]
    t_out = theirs(*t_leaves)
    np.testing.assert_allclose(out.to_numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    (t_out * torch.tensor(w)).sum().backward()

    for k, (ours_leaf, their_leaf) in enumerate(zip(leaves, t_leaves, strict=True)):
        g = ours_leaf.grad(grads)
        assert g is not None, f"{name}: input {k} got no gradient"
        np.testing.assert_allclose(
            g.to_numpy(), their_leaf.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"{name}: d/d(input {k})"
        )


Row = tuple[str, FerrumFn, TorchFn, Sequence[np.ndarray[Any, Any]]]

GATHER_IDX = rng_for("torch gather").integers(0, 4, size=(3, 5))


def rows() -> list[Row]:
    x34, y34 = smooth((3, 4), seed="tx"), smooth((3, 4), seed="ty")
    pos = smooth((3, 4), 0.3, 2.0, seed="tpos")
    return [
        (
            "exp_log1p_mix",
            lambda x: (x.exp() + x.log1p()) * x.sin(),
            lambda x: (x.exp() + x.log1p()) * x.sin(),
            [x34 * 0.5],
        ),
        ("broadcast_div", lambda x, y: x / y, lambda x, y: x / y, [x34, pos[:1]]),
        ("powf", lambda x, y: x.powf(y), lambda x, y: x.pow(y), [pos, y34]),
        ("atan2", lambda x, y: x.atan2(y), torch.atan2, [x34 + 2.0, y34]),
        (
            "matmul_broadcast",
            lambda a, b: a @ b,
            lambda a, b: a @ b,
            [smooth((2, 1, 3, 4)), smooth((1, 3, 4, 2))],
        ),
        (
            "max_pair",
            lambda x, y: x.max_pair(y),
            torch.maximum,
            [distinct((3, 4), seed="m1"), distinct((3, 4), seed="m1") + 0.1],
        ),
        ("var_dim1", lambda x: x.var(1), lambda x: x.var(1, keepdim=True), [x34]),
        (
            "prod_with_zero",
            lambda x: x.prod_dim(1),
            lambda x: x.prod(1, keepdim=True),
            [np.array([[1.5, 0.0, -2.0], [0.5, 2.0, 3.0]])],
        ),
        ("cumsum", lambda x: x.cumsum(0), lambda x: x.cumsum(0), [x34]),
        ("cumprod", lambda x: x.cumprod(1), lambda x: x.cumprod(1), [pos]),
        (
            "cumprod_with_zero",
            lambda x: x.cumprod(1),
            lambda x: x.cumprod(1),
            [np.array([[2.0, 0.0, 3.0, 4.0], [0.5, -1.5, 0.0, 0.0]])],
        ),
        (
            "sort_desc",
            lambda x: x.sort_descending(1),
            lambda x: x.sort(1, descending=True).values,
            [distinct((3, 4))],
        ),
        ("topk", lambda x: x.topk(2, 1), lambda x: x.topk(2, 1).values, [distinct((3, 4))]),
        (
            "gather",
            lambda x: x.gather(1, ints(GATHER_IDX, x)),
            lambda x: x.gather(1, torch.tensor(GATHER_IDX)),
            [x34],
        ),
        (
            "pad_repeat",
            lambda x: x.pad([1, 2], 0.5).repeat([2, 1]),
            lambda x: F.pad(x, (1, 2), value=0.5).repeat(2, 1),
            [x34],
        ),
        ("gelu", activation.gelu, F.gelu, [x34 * 3.0]),
        ("mish", activation.mish, F.mish, [x34 * 3.0]),
        (
            "softplus_beta2",
            lambda x: activation.softplus(x, 2.0),
            lambda x: F.softplus(x, beta=2.0),
            [x34 * 3.0],
        ),
        ("log_sigmoid", activation.log_sigmoid, F.logsigmoid, [x34 * 3.0]),
        ("hard_swish", activation.hard_swish, F.hardswish, [distinct((3, 4)) * 2.0]),
        ("silu", activation.silu, F.silu, [x34 * 3.0]),
        ("softmax", lambda x: activation.softmax(x, 1), lambda x: F.softmax(x, 1), [x34]),
        ("log_softmax", lambda x: activation.log_softmax(x, 0), lambda x: F.log_softmax(x, 0), [x34]),
        ("glu", lambda x: activation.glu(x, 1), lambda x: F.glu(x, 1), [x34]),
        ("prelu", activation.prelu, F.prelu, [distinct((3, 4)), np.array([0.1, -0.2, 0.3, 0.25])]),
    ]


@pytest.mark.parametrize("row", rows(), ids=lambda r: r[0])
def test_gradients_match_torch(row: Row) -> None:
    name, ours, theirs, inputs = row
    compare(name, ours, theirs, *inputs)


def test_mlp_with_cross_entropy_matches_torch() -> None:
    rng = np.random.default_rng(3)
    x, w1, b1 = rng.standard_normal((8, 5)), rng.standard_normal((5, 6)), rng.standard_normal((1, 6))
    w2, b2 = rng.standard_normal((6, 3)), rng.standard_normal((1, 3))
    target = rng.integers(0, 3, size=8)
    one_hot = np.eye(3)[target]

    def ours(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        logits = activation.relu(x @ w1 + b1) @ w2 + b2
        picked = activation.log_softmax(logits, 1) * Tensor.from_numpy(one_hot, AD_DEVICE, dtype=DType.F64)
        return -(picked.sum_dim(1).mean())

    def theirs(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        logits = F.relu(x @ w1 + b1) @ w2 + b2
        return F.cross_entropy(logits, torch.tensor(target)).reshape(1)

    compare("mlp", ours, theirs, x, w1, b1, w2, b2)
