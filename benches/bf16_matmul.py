"""bf16 products, ferrum against its own f32 and PyTorch: ``python benches/bf16_matmul.py``.

Rows: square products ``n x n @ n x n`` (``--sizes``, 512 1024 2048 by
default) and the MLP of issue 51, ``1024 -> 4096 -> ReLU -> 1024`` at batch 64
(inference: ferrum's ``Linear`` with bf16 weights and input, torch's
``nn.Linear`` under ``torch.autocast("cpu", torch.bfloat16)``).

Candidates per row: ferrum bf16, ferrum f32, torch bf16 and torch f32 (torch's
need torch in the same environment). Each is timed as the mean of back-to-back
calls over ``--seconds`` (0.2 s), the candidates taking turns for ``--rounds``
rounds after a settle pause; the table shows median GF/s (ms for the MLP),
the spread (fastest to slowest round over the median) and the per-round
ratios ferrum bf16 / ferrum f32 and ferrum bf16 / torch bf16 as speed-ups
(median and range). On CPUs with AMX-BF16 ferrum's bf16 products run on its
tiles; ``FERRUM_AMX=0`` in the environment times the path without them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial
from operator import matmul
from typing import Any

import numpy as np
from ferrum import DType, Tensor
from ferrum.backend import NdArray
from ferrum.nn import Linear, LinearConfig
from half_ops import Cast
from harness import SPIN_SETTLE_S, Report, Stats, alternate, bench_parser, cpu_model, mean_over, round_ratios
from quantized_linear import relu_mlp, torch_mlp

Thunk = Callable[[], object]
DEV = NdArray.device()


def _torch() -> Any:
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return torch


def square_candidates(n: int, torch: Any) -> dict[str, Thunk]:
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    out: dict[str, Thunk] = {}
    for dtype, name in ((DType.BF16, "ferrum bf16"), (DType.F32, "ferrum f32")):
        fa, fb = (Tensor.from_numpy(x, DEV, dtype=dtype) for x in (a, b))
        out[name] = partial(matmul, fa, fb)
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out["torch bf16"] = partial(torch.matmul, ta.bfloat16(), tb.bfloat16())
        out["torch f32"] = partial(torch.matmul, ta, tb)
    return out


def mlp_candidates(sizes: list[int], batch: int, torch: Any) -> dict[str, Thunk]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    params = [
        (
            (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(np.float32),
            (rng.standard_normal(d_out) * 0.1).astype(np.float32),
        )
        for d_in, d_out in itertools.pairwise(sizes)
    ]
    out: dict[str, Thunk] = {}
    for dtype, name in ((DType.BF16, "ferrum bf16"), (DType.F32, "ferrum f32")):
        layers: list[Linear[NdArray]] = []
        for w, b in params:
            layer: Linear[NdArray] = LinearConfig(w.shape[0], w.shape[1]).init(DEV)
            layer = layer.replace(
                weight=layer.weight.with_value(Tensor.from_data(w, DEV)),
                bias=layer.bias.with_value(Tensor.from_data(b, DEV)) if layer.bias else None,
            )
            layers.append(layer.map(Cast(dtype)))
        xt = Tensor.from_numpy(x, DEV, dtype=dtype)
        out[name] = partial(relu_mlp, layers, xt)

    if torch is not None:
        model = torch_mlp(torch, params)
        xt = torch.from_numpy(x)

        def autocast() -> object:
            with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16):
                return model(xt)

        def f32() -> object:
            with torch.inference_mode():
                return model(xt)

        out["torch bf16"] = autocast
        out["torch f32"] = f32
    return out


def speedups(stats: dict[str, Stats]) -> str:
    """ferrum bf16's per-round speed-up over ferrum f32 and over torch bf16: median (range)."""
    parts = []
    for other in ("ferrum f32", "torch bf16"):
        if other in stats:
            ratios = round_ratios(stats[other], stats["ferrum bf16"])
            ratios.sort()
            parts.append(f"x{ratios[len(ratios) // 2]:.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f}) over {other}")
    return "; ".join(parts)


def main() -> None:
    parser = bench_parser(__doc__, rounds=9)
    parser.add_argument("--sizes", type=int, nargs="*", default=[512, 1024, 2048])
    parser.add_argument("--seconds", type=float, default=0.2, help="timed seconds per candidate and round")
    parser.add_argument("--no-mlp", action="store_true", help="square products only")
    args = parser.parse_args()
    torch = _torch()
    rounds, sizes = (2, [64]) if args.tiny else (args.rounds, args.sizes)
    print(f"{cpu_model()}; medians of {rounds} alternating rounds (mean of calls over {args.seconds} s each)")
    report = Report("bf16_matmul", {"rounds": rounds})
    rows: list[tuple[str, dict[str, Thunk], float]] = [
        (f"matmul {n}", square_candidates(n, torch), 2.0 * n**3) for n in sizes
    ]
    if not args.no_mlp:
        mlp, batch = ([64, 256, 64], 8) if args.tiny else ([1024, 4096, 1024], 64)
        flops = 2.0 * batch * sum(a * b for a, b in itertools.pairwise(mlp))
        rows.append((f"MLP {'-'.join(map(str, mlp))} b{batch}", mlp_candidates(mlp, batch, torch), flops))
    for name, candidates, flops in rows:
        measure = mean_over(args.seconds)
        stats = alternate(candidates, rounds, warmup=2, settle_s=SPIN_SETTLE_S, measure=measure)
        print(f"\n{name}")
        for cand, st in stats.items():
            gfs = flops / st.p50 / 1e9
            print(f"  {cand:<12} {gfs:8.1f} GF/s  {st.p50 * 1e3:8.3f} ms  spread {st.spread:5.2f}")
            report.add(f"{name} {cand}", {"p50 ms": st.p50 * 1e3, "GF/s": gfs}, st)
        print(f"  ferrum bf16: {speedups(stats)}")
    report.finish(args)


if __name__ == "__main__":
    main()
