"""Per-call time of small ops in bf16 against f32: ``benches/half_ops.py``.

The shapes of a small text model and of the guide's CNN, where fixed per-call
costs (allocation, whole-tensor conversion, thread start-up, packing) weigh
most. Each round times every op in f32 then bf16 (the median of ``--calls``
calls after a warm-up); rounds alternate, and the table shows per-op medians
over rounds and the median of the per-round bf16/f32 ratios (with range).
``--only NAME`` (substring) times a subset; ``--loop NAME`` runs one op in bf16
forever, for ``perf record``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import DType, Tensor
from ferrum import activation as A
from ferrum import functional as F
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import LayerNormConfig, LinearConfig
from ferrum.nn.loss import CrossEntropyLossConfig

Thunk = Callable[[], object]
DEV = NdArray.device()
ADEV = Autodiff[NdArray].device()


def _t(x: np.ndarray, dtype: DType, grad: bool = False) -> Tensor[Any, Any, Any]:
    device: Any = ADEV if grad else DEV
    t: Tensor[Any, Any, Any] = Tensor.from_numpy(x.astype(np.float32), device, dtype=dtype)
    return t.require_grad() if grad else t


def cases(dtype: DType) -> dict[str, Thunk]:
    rng = np.random.default_rng(0)
    out: dict[str, Thunk] = {}

    def linear(name: str, shape: tuple[int, ...], d_in: int, d_out: int) -> None:
        layer = LinearConfig(d_in, d_out).init(DEV).map(Cast(dtype))
        x = _t(rng.standard_normal(shape), dtype)
        out[f"linear fwd {name}"] = lambda: layer.forward(x)
        layer_g = LinearConfig(d_in, d_out).init(ADEV).map(Cast(dtype))
        xg = _t(rng.standard_normal(shape), dtype, True)
        out[f"linear fwd+bwd {name}"] = lambda: layer_g.forward(xg).sum().backward()

    linear("[32,12,32]x[32,32]", (32, 12, 32), 32, 32)
    linear("[64,256]x[256,256]", (64, 256), 256, 256)
    a, bm = _t(rng.standard_normal((32, 4, 12, 8)), dtype), _t(rng.standard_normal((32, 4, 8, 12)), dtype)
    out["bmm [32,4,12,8]@[32,4,8,12]"] = lambda: a.matmul(bm)
    ag = _t(rng.standard_normal((32, 4, 12, 8)), dtype, True)
    bg2 = _t(rng.standard_normal((32, 4, 8, 12)), dtype, True)
    out["bmm fwd+bwd"] = lambda: ag.matmul(bg2).sum().backward()
    h = _t(rng.standard_normal((32, 12, 32)), dtype)
    out["sum_dim(1) [32,12,32]"] = lambda: h.sum_dim(1)
    out["sum_dim(2) [32,12,32]"] = lambda: h.sum_dim(2)
    out["mean_dim(1) [32,12,32]"] = lambda: h.mean_dim(1)
    big = _t(rng.standard_normal((32, 64, 256)), dtype)
    out["mean_dim(1) [32,64,256]"] = lambda: big.mean_dim(1)
    out["sum_dim(2) [32,64,256]"] = lambda: big.sum_dim(2)
    s = _t(rng.standard_normal((32, 4, 12, 12)), dtype)
    out["softmax [32,4,12,12]"] = lambda: A.softmax(s, 3)
    out["softmax [32,64,256]"] = lambda: A.softmax(big, 2)
    ln = LayerNormConfig(32).init(DEV).map(Cast(dtype))
    out["layer_norm [32,12,32]"] = lambda: ln.forward(h)
    ln2 = LayerNormConfig(256).init(DEV).map(Cast(dtype))
    out["layer_norm [32,64,256]"] = lambda: ln2.forward(big)
    h2 = _t(rng.standard_normal((32, 12, 32)), dtype)
    out["add [32,12,32]"] = lambda: h + h2
    out["mul [32,12,32]"] = lambda: h * h2
    out["exp [32,12,32]"] = lambda: h.exp()
    big2 = _t(rng.standard_normal((32, 64, 256)), dtype)
    out["add [32,64,256]"] = lambda: big + big2
    out["exp [32,64,256]"] = lambda: big.exp()
    img = _t(rng.standard_normal((64, 1, 28, 28)), dtype)
    wc, bc = _t(rng.standard_normal((8, 1, 3, 3)) * 0.3, dtype), _t(rng.standard_normal(8) * 0.1, dtype)
    out["conv2d [64,1,28,28] 8x3x3"] = lambda: F.conv2d(img, wc, bc)
    imgg = _t(rng.standard_normal((64, 1, 28, 28)), dtype, True)
    wcg = _t(rng.standard_normal((8, 1, 3, 3)) * 0.3, dtype, True)
    bcg = _t(rng.standard_normal(8) * 0.1, dtype, True)
    out["conv2d fwd+bwd"] = lambda: F.conv2d(imgg, wcg, bcg).sum().backward()
    logits = _t(rng.standard_normal((64, 10)), dtype)
    targets = Tensor.from_numpy(rng.integers(0, 10, 64).astype(np.int64), DEV)
    ce = CrossEntropyLossConfig().init(DEV)
    out["cross_entropy [64,10]"] = lambda: ce.forward(logits, targets)
    logitsg = _t(rng.standard_normal((64, 10)), dtype, True)
    targetsg = Tensor.from_numpy(rng.integers(0, 10, 64).astype(np.int64), ADEV)
    ceg = CrossEntropyLossConfig().init(ADEV)
    out["cross_entropy fwd+bwd"] = lambda: ceg.forward(logitsg, targetsg).backward()
    return out


class Cast:
    """A module mapper casting every float tensor to ``dtype``."""

    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def map_float(self, id: object, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return tensor.cast(self.dtype)


def p50(fn: Thunk, calls: int) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--only", default="")
    parser.add_argument("--loop", default="")
    args = parser.parse_args()
    if args.loop:
        fn = next(f for k, f in cases(DType.BF16).items() if args.loop in k)
        while True:
            fn()
    f32, b16 = cases(DType.F32), cases(DType.BF16)
    names = [k for k in f32 if args.only in k]
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in names}
    for _ in range(args.rounds):
        for k in names:
            times[k][0].append(p50(f32[k], args.calls))
            times[k][1].append(p50(b16[k], args.calls))
    print(f"{'op':<32} {'f32 us':>9} {'bf16 us':>9} {'bf16/f32':>9}  range")
    for k in names:
        a, b = times[k]
        ratios = [y / x for x, y in zip(a, b, strict=True)]
        print(
            f"{k:<32} {statistics.median(a) * 1e6:9.1f} {statistics.median(b) * 1e6:9.1f} "
            f"{statistics.median(ratios):9.2f}  {min(ratios):.2f}-{max(ratios):.2f}"
        )


if __name__ == "__main__":
    main()
