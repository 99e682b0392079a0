"""A custom op: matmul + bias + relu fused into one graph node.

Run with `python examples/custom_op.py`. The fused op's gradients match the
same computation built from primitive ops.
"""

from typing import Any

from ferrum import D2, Distribution, Tensor, activation
from ferrum.autodiff import Context, Function
from ferrum.backend import Autodiff, NdArray


class LinearRelu(Function):
    """relu(x @ w + b), with a hand-written backward."""

    @staticmethod
    def forward(ctx: Context, *inputs: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        x, w, b = inputs
        out = activation.relu(x @ w + b)
        ctx.save_for_backward(x, w, out)
        return out

    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        x, w, out = ctx.saved_tensors
        g = grad.mask_fill(out.lower_equal_elem(0.0), 0.0)  # relu' = 1 where out > 0
        return g @ w.transpose(), x.transpose() @ g, g.sum_dim(0)


B = Autodiff[NdArray]


def main() -> None:
    """Checks the fused op's output and gradients against the same computation from primitive ops."""
    device = B.device()
    B.seed(1)
    x: Tensor[B, D2] = Tensor.random((8, 4), Distribution.Normal(0.0, 1.0), device).require_grad()
    w: Tensor[B, D2] = Tensor.random((4, 3), Distribution.Normal(0.0, 1.0), device).require_grad()
    b: Tensor[B, D2] = Tensor.random((1, 3), Distribution.Normal(0.0, 1.0), device).require_grad()

    fused: Tensor[B, D2] = LinearRelu.apply(x, w, b)
    grads = (fused * fused).sum().backward()
    reference = activation.relu(x @ w + b)
    ref_grads = (reference * reference).sum().backward()

    for name, t in (("x", x), ("w", w), ("b", b)):
        got, want = t.grad(grads), t.grad(ref_grads)
        assert got is not None and want is not None
        assert got.all_close(want, rtol=1e-5, atol=1e-6), name
        print(f"d/d{name} matches the primitive ops:", got.dims())
    print("fused output equals primitives:", fused.inner().all_close(reference.inner()))


if __name__ == "__main__":
    main()
