"""LayerNorm forward + backward, fused op against the norm composed of ops: ``benches/layer_norm.py``.

The encoder's shape by default (``[32, 64, 256]``, 524k elements), in f32 and
bf16 on ``Autodiff[NdArray]``, with gamma and beta tracked. ``composed`` is what
``nn.LayerNorm`` ran before the fused op: ``var_mean_bias``, sub, add, sqrt, div,
mul and add, whose backward broadcasts the ``[..., 1]`` statistics and the
``[d]`` parameters and sums the gradients back over rows. A round times each
candidate as the median of ``--calls`` calls; candidates take turns for
``--rounds`` rounds, and ``composed / fused`` is given per round (median and
range). Say how loaded the machine was (``uptime``) with the figures.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import DType, Tensor
from ferrum._ferrum import layer_norm
from ferrum.backend import Autodiff, NdArray
from harness import alternate, median_of, median_range, round_ratios

AD = Autodiff[NdArray].device()
T = Tensor[Any, Any, Any]


def composed(x: T, gamma: T, beta: T, eps: float) -> T:
    """LayerNorm spelled out in ops, as ``nn.LayerNorm`` computed it before."""
    last = x.rank() - 1
    var, mean = x.var_mean_bias(last)
    shape = (1,) * last + (gamma.shape()[0],)
    return (x - mean) / (var + eps).sqrt() * gamma.reshape(shape) + beta.reshape(shape)


def step(norm: Callable[[T, T, T, float], T], x: T, gamma: T, beta: T, upstream: T) -> Callable[[], object]:
    """Forward, then backward from a dense upstream gradient (as a following matmul gives)."""
    return lambda: (norm(x, gamma, beta, 1e-5) * upstream).sum().backward()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", default="32,64,256", help="comma-separated input shape")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    shape = tuple(int(s) for s in args.shape.split(","))
    rng = np.random.default_rng(0)
    load = os.getloadavg()[0]
    print(f"LayerNorm fwd+bwd {list(shape)}; load {load:.1f}; {args.rounds} rounds x median of {args.calls}")
    for dtype in (DType.F32, DType.BF16):

        def t(*dims: int, grad: bool = True, dtype: DType = dtype) -> T:
            v = Tensor.from_numpy(rng.standard_normal(dims).astype(np.float32), AD).cast(dtype)
            return v.require_grad() if grad else v

        x, gamma, beta, up = t(*shape), t(shape[-1]), t(shape[-1]), t(*shape, grad=False)
        stats = alternate(
            {"composed": step(composed, x, gamma, beta, up), "fused": step(layer_norm, x, gamma, beta, up)},
            args.rounds,
            warmup=1,
            measure=median_of(args.calls),
            rotate=True,
        )
        c, f = stats["composed"], stats["fused"]
        print(
            f"  {dtype}: composed {c.median * 1e3:7.2f} ms (spread {c.spread:.2f}), "
            f"fused {f.median * 1e3:7.2f} ms (spread {f.spread:.2f}), "
            f"composed/fused {median_range(round_ratios(c, f))}"
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
