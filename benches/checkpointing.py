"""Gradient checkpointing: peak memory and step time of a training step on
``Autodiff[NdArray]`` against ``Autodiff[NdArray, BalancedCheckpointing]``.

Issue 56's target: at least 30% lower peak for at most 25% more step time.
Each (workload, strategy) run is a fresh child process (this file run with
``--child``), so neither's allocator caches count against the other. The
child builds the model and its batch and runs one warm-up step; then, for
each timed step, it reads its resident set (VmRSS), resets the kernel's
high-water mark, runs forward and backward, and reads the high-water mark
(VmHWM) before the optimizer step. "growth" (the median over the steps) is
what forward and backward hold at their worst: the graph's saved
activations, the gradients and backward's transient buffers; Adam's new
parameters and moments, which checkpointing does not change, are left out.
Children of the two strategies alternate, round after round; the table
gives medians over rounds and the per-round ratios balanced / plain.

Workloads: a deep residual MLP (Linear, GELU, Linear, LayerNorm per block) and
a pre-norm transformer encoder with dropout. Run::

    python benches/checkpointing.py [--rounds 3] [--steps 5] [--json out.json]

Linux only (reads /proc/self/status).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import Report, Stats, add_report_args, cpu_model, median_range

STATUS = Path("/proc/self/status")
STRATEGIES = ("plain", "balanced")
CHILD_TIMEOUT_S = 1800


def _status_kib(field: str) -> int:
    for line in STATUS.read_text(encoding="ascii").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])  # "VmHWM:    123456 kB"
    raise RuntimeError(f"{STATUS} has no {field} line")


# --------------------------------------------------------------------------- child


def _workload(name: str, backend: Any) -> tuple[Any, Callable[[Any, list[int]], Any]]:
    """The model on ``backend`` and a step function ``(model, peaks) -> model`` that appends its peak."""
    from ferrum import Distribution, Module, Tensor
    from ferrum.backend import NdArray
    from ferrum.nn import Gelu, LayerNorm, LayerNormConfig, Linear, LinearConfig
    from ferrum.nn.transformer import TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput
    from ferrum.optim import AdamConfig, GradientsParams

    NdArray.seed(0)
    device = backend.device()

    class Block(Module[Any]):
        up: Linear[Any]
        act: Gelu
        down: Linear[Any]
        norm: LayerNorm[Any]

        def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
            return self.norm.forward(x + self.down.forward(self.act.forward(self.up.forward(x))))

    class Mlp(Module[Any]):
        blocks: list[Block]

        def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
            for block in self.blocks:
                x = block.forward(x)
            return x

    class Encoder(Module[Any]):
        encoder: TransformerEncoder[Any]

        def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
            return self.encoder.forward(TransformerEncoderInput(x))

    def block(width: int, hidden: int) -> Block:
        up, down = LinearConfig(width, hidden).init(device), LinearConfig(hidden, width).init(device)
        return Block(up=up, act=Gelu(), down=down, norm=LayerNormConfig(width).init(device))

    model: Any
    if name == "mlp":
        model, shape = Mlp(blocks=[block(256, 1024) for _ in range(8)]), (512, 256)
    elif name == "transformer":
        config = TransformerEncoderConfig(
            d_model=256, d_ff=1024, n_heads=8, n_layers=4, dropout=0.1, norm_first=True
        )
        model, shape = Encoder(encoder=config.init(device)), (8, 128, 256)
    else:
        raise ValueError(f"unknown workload {name!r}")
    x = Tensor.random(shape, Distribution.Normal(0.0, 1.0), device)
    optim = AdamConfig().init()

    def step(m: Any, peaks: list[int]) -> Any:
        # The high-water mark is read between backward and the optimizer
        # step: checkpointing changes what forward and backward hold, not
        # Adam's new parameters and moments, which would otherwise be the peak.
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")  # VmHWM := VmRSS
        before = _status_kib("VmRSS")
        grads = GradientsParams.from_grads((m.forward(x) ** 2).mean().backward(), m)
        peaks.append(_status_kib("VmHWM") - before)
        return optim.step(1e-4, m, grads)

    return model, step


def child(workload: str, strategy: str, steps: int) -> dict[str, float]:
    from ferrum.backend import Autodiff, BalancedCheckpointing, NdArray

    backend = Autodiff[NdArray, BalancedCheckpointing] if strategy == "balanced" else Autodiff[NdArray]
    model, step = _workload(workload, backend)
    peaks: list[int] = []
    model = step(model, peaks)  # warm-up: Adam's moments exist from here on
    peaks.clear()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        model = step(model, peaks)
        times.append(time.perf_counter() - start)
    return {"growth_mib": statistics.median(peaks) / 1024, "step_s": statistics.median(times)}


# --------------------------------------------------------------------------- parent


def run_child(workload: str, strategy: str, steps: int) -> dict[str, float]:
    args = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        workload,
        strategy,
        "--steps",
        str(steps),
    ]
    # ferrum's allocator (mimalloc) keeps freed pages for ten seconds, so a
    # step would reuse the warm-up's pages and the high-water mark would not
    # move; purged at once, resident memory follows what is live. (Page
    # faults then cost both strategies time; the step-time ratio is taken
    # from the same runs.)
    env = {**os.environ, "MIMALLOC_PURGE_DELAY": "0"}
    proc = subprocess.run(args, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{workload}/{strategy} child failed:\n{proc.stderr.strip()}")
    figures: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="children per workload and strategy (alternating)"
    )
    parser.add_argument("--steps", type=int, default=5, help="timed training steps per child")
    parser.add_argument(
        "--workloads", nargs="+", default=["mlp", "transformer"], choices=["mlp", "transformer"]
    )
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "STRATEGY"), help=argparse.SUPPRESS)
    add_report_args(parser)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.steps)))
        return 0
    if not STATUS.exists():
        print(f"this bench reads {STATUS} (Linux only)")
        return 1
    report = Report("checkpointing", {"rounds": args.rounds, "steps": args.steps})
    print(f"{cpu_model()}; {args.rounds} rounds of a child per strategy, {args.steps} timed steps each")
    header = f"{'workload':<12} {'strategy':<9} {'peak growth MiB':>16} {'step ms':>9}"
    for workload in args.workloads:
        runs: dict[str, list[dict[str, float]]] = {s: [] for s in STRATEGIES}
        for r in range(args.rounds):
            for strategy in STRATEGIES if r % 2 == 0 else STRATEGIES[::-1]:
                runs[strategy].append(run_child(workload, strategy, args.steps))
        print(header)
        for strategy in STRATEGIES:
            growth = statistics.median(f["growth_mib"] for f in runs[strategy])
            stats = Stats([f["step_s"] for f in runs[strategy]])
            print(f"{workload:<12} {strategy:<9} {growth:>16.1f} {stats.p50 * 1e3:>9.1f}")
            report.add(
                f"{workload} {strategy}", {"peak growth MiB": growth, "step ms": stats.p50 * 1e3}, stats
            )
        memory = [
            b["growth_mib"] / p["growth_mib"] for p, b in zip(runs["plain"], runs["balanced"], strict=True)
        ]
        speed = [b["step_s"] / p["step_s"] for p, b in zip(runs["plain"], runs["balanced"], strict=True)]
        ratios = f"peak growth {median_range(memory)}, step time {median_range(speed)}"
        print(f"{workload}: balanced/plain {ratios}\n")
        report.add(
            f"{workload} balanced/plain",
            {"peak ratio": statistics.median(memory), "time ratio": statistics.median(speed)},
        )
    report.finish(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
