"""int8 dynamic quantization of linear layers, ferrum against PyTorch: ``python benches/quantized_linear.py``.

Rows: the MLP of issue 51, ``1024 -> 4096 -> ReLU -> 1024`` at batch 64, and
its two layers alone, each

- in float32 (ferrum's ``x @ W + b``, torch's ``nn.Linear``);
- with int8 weights (one scale per tensor, symmetric) and the input
  quantized at each call: ferrum's ``Linear`` after
  ``quantize_weights(Quantizer(scheme=QuantScheme().with_value(QuantValue.Q8S)))``
  (inputs per row), torch's ``torch.ao.quantization.quantize_dynamic``
  (inputs per tensor, on fbgemm).

Each candidate is timed as the mean of back-to-back calls over 0.2 s, the
candidates taking turns for ``--rounds`` rounds; the table shows the median
(p50) ms and the spread (fastest to slowest round over the median). torch's
rows need torch in the same environment (e.g. ``PYTHONPATH=python
/path/to/torch-venv/bin/python benches/quantized_linear.py``); without it,
ferrum's rows alone. ``--json PATH`` / ``--compare-with OLD.json`` as the other
benches on ``harness.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.nn import Linear, LinearConfig
from ferrum.quantization import Quantizer, QuantScheme, QuantValue
from harness import SPIN_SETTLE_S, Report, Stats, alternate, bench_parser, cpu_model, mean_over

Thunk = Callable[[], object]


def layers(sizes: list[int], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Weights ``[d_in, d_out]`` and biases, as a trained layer's: N(0, 1/d_in)."""
    rng = np.random.default_rng(seed)
    out = []
    for d_in, d_out in itertools.pairwise(sizes):
        w = (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(np.float32)
        b = (rng.standard_normal(d_out) * 0.1).astype(np.float32)
        out.append((w, b))
    return out


def relu_mlp(model: list[Linear[NdArray]], x: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
    """``x`` through ``model``'s layers with ReLU between them."""
    h = x
    for i, layer in enumerate(model):
        h = layer.forward(h)
        if i + 1 < len(model):
            h = h.clamp_min(0.0)
    return h


def torch_mlp(torch: Any, params: list[tuple[np.ndarray, np.ndarray]]) -> Any:
    """The MLP of ``params`` as a torch ``Sequential`` of Linear layers with ReLU between, in eval mode."""
    mods: list[Any] = []
    for i, (w, b) in enumerate(params):
        lin = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b))
        mods.append(lin)
        if i + 1 < len(params):
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods).eval()


def ferrum_candidates(params: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> dict[str, Thunk]:
    device = NdArray.device()
    xt = Tensor.from_data(x, device)
    layers: list[Linear[NdArray]] = []
    for w, b in params:
        layer: Linear[NdArray] = LinearConfig(w.shape[0], w.shape[1]).init(device)
        layers.append(
            layer.replace(
                weight=layer.weight.with_value(Tensor.from_data(w, device)),
                bias=layer.bias.with_value(Tensor.from_data(b, device)) if layer.bias else None,
            )
        )
    quantizer = Quantizer(scheme=QuantScheme().with_value(QuantValue.Q8S))
    quantized = [layer.quantize_weights(quantizer) for layer in layers]

    def run(model: list[Linear[NdArray]]) -> Thunk:
        def forward() -> object:
            return relu_mlp(model, xt)

        return forward

    return {"ferrum f32": run(layers), "ferrum int8": run(quantized)}


def torch_candidates(params: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> dict[str, Thunk]:
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return {}
    model = torch_mlp(torch, params)
    qmodel = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    xt = torch.from_numpy(x)

    def f32() -> object:
        with torch.inference_mode():
            return model(xt)

    def int8() -> object:
        with torch.inference_mode():
            return qmodel(xt)

    return {"torch f32": f32, "torch int8": int8}


def main() -> None:
    parser = bench_parser(__doc__, rounds=9)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    rounds, batch, width = (2, 8, (64, 256)) if args.tiny else (args.rounds, args.batch, (1024, 4096))
    cases = {
        f"MLP {width[0]}-{width[1]}-{width[0]} b{batch}": [width[0], width[1], width[0]],
        f"linear {width[0]}->{width[1]} b{batch}": [width[0], width[1]],
        f"linear {width[1]}->{width[0]} b{batch}": [width[1], width[0]],
    }
    print(f"{cpu_model()}; medians of {rounds} rounds (mean of calls over 0.2 s each)")
    report = Report("quantized_linear", {"rounds": rounds, "batch": batch})
    for name, sizes in cases.items():
        params = layers(sizes, seed=len(sizes) + sizes[0])
        x = np.random.default_rng(7).standard_normal((batch, sizes[0])).astype(np.float32)
        candidates = ferrum_candidates(params, x) | torch_candidates(params, x)
        stats: dict[str, Stats] = alternate(
            candidates,
            rounds,
            warmup=3,
            settle_s=SPIN_SETTLE_S,
            measure=mean_over(0.05 if args.tiny else 0.2),
        )
        print(f"\n{name}")
        for cand, st in stats.items():
            print(f"  {cand:<12} {st.p50 * 1e3:8.3f} ms  spread {st.spread:5.2f}")
            report.add(f"{name} {cand}", {"p50 ms": st.p50 * 1e3}, st)
        f8, f32 = stats["ferrum int8"].p50, stats["ferrum f32"].p50
        line = f"  ferrum int8 / ferrum f32 {f8 / f32:5.2f}"
        if "torch int8" in stats:
            line += f"; ferrum int8 / torch int8 {f8 / stats['torch int8'].p50:5.2f}"
            line += f"; ferrum f32 / torch f32 {f32 / stats['torch f32'].p50:5.2f}"
        print(line)
    report.finish(args)


if __name__ == "__main__":
    main()
