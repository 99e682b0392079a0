"""The real-model ONNX fixtures (tests/fixtures/onnx_real) run by ferrum.onnx against onnxruntime.

    python benches/onnx_real.py [--rounds 9] [--only SUBSTRING]

For each case (an architecture exported by one of torch's two exporters, on its stored inputs),
the engines take turns round by round: in each round ferrum (plan, then steps) and then
onnxruntime (2 intra-op threads, the machine's cores) each run calls for at least 50 ms, and the
round keeps the mean per call. The table gives each engine's median over the rounds and the median
of the per-round ratios ``ferrum / onnxruntime`` with its lowest-highest (below 1: ferrum is
faster). onnxruntime is never a dependency of ferrum: without it installed here only ferrum's
columns are printed. ferrum runs twice: as the compiled plan ``OnnxModel.forward`` runs by default
(``plan``) and node by node from Python (``steps``, ``load(..., plan=False)``). ``--json PATH``
saves the rows with the machine, ``--compare-with OLD.json`` prints new/old against an earlier
run.

The fixtures are small configurations (hidden size 32, 2 layers; images of 32-64 pixels), so the
times are dominated by the cost of each graph node, not by its arithmetic: this is where running
a graph node by node from Python shows.

Measured on 2026-12-05 on the 2-core development machine (Intel Xeon, AVX-512), onnxruntime 1.32.0,
9 rounds, node-by-node execution from Python (ferrum / onnxruntime, medians):
bert-dynamo 4.5, bert_s128 2.2, gpt2 5.0, llama 6.2-7.0, vit 7.0-8.2, resnet18 2.9-3.2,
resnet18_b8 5.4, mobilenet_v3_small 5.1-5.2, swin-dynamo 4.4, swin-ts (1568 nodes) 22.7.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import load
from harness import SPIN_SETTLE_S, Report, add_report_args, alternate, mean_over, median_range, round_ratios

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.onnx_real_models import FIXTURES, fill_weights

MIN_ROUND_S = 0.05


def _runners(case: str, ort: Any) -> tuple[dict[str, Callable[[], object]], int]:
    """The engines' calls on the case's stored inputs: ferrum's compiled plan, ferrum step by step
    (``plan=False``) and, when installed, onnxruntime."""
    proto = fill_weights(onnx.load(FIXTURES / f"{case}.onnx"))
    data = np.load(FIXTURES / f"{case}.npz")
    weights = {t.name for t in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in weights]
    device = NdArray.device()
    planned, stepped = load(proto, device), load(proto, device, plan=False)
    inputs = [Tensor.from_numpy(data[f"in_{n}"], device) for n in names]
    engines: dict[str, Callable[[], object]] = {
        "plan": lambda: planned.forward(*inputs),
        "steps": lambda: stepped.forward(*inputs),
    }
    if ort is not None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
        feed = {n: data[f"in_{n}"] for n in names}
        engines["ort"] = lambda: session.run(None, feed)
    return engines, len(proto.graph.node)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", default="", help="cases whose name contains this")
    add_report_args(parser)
    args = parser.parse_args(argv)
    report = Report("onnx_real", {"rounds": args.rounds, "only": args.only})
    ort: Any
    try:  # by name: onnxruntime is no dependency (and has no type stubs)
        ort = importlib.import_module("onnxruntime")
    except ImportError:
        ort = None
    cases = sorted(c for c in json.loads((FIXTURES / "manifest.json").read_text())["cases"] if args.only in c)
    print(
        f"{'case':28s} {'nodes':>5s} {'plan ms':>9s} {'steps ms':>9s} {'ort ms':>8s}"
        "  plan/ort (median, low-high)   steps/ort (median, low-high)"
    )
    for case in cases:
        engines, nodes = _runners(case, ort)
        # warm-up: the first calls compile the plan, allocate and fold
        stats = alternate(
            engines, args.rounds, warmup=3, settle_s=SPIN_SETTLE_S, measure=mean_over(MIN_ROUND_S)
        )
        plan, steps = stats["plan"], stats["steps"]
        metrics: dict[str, float] = {"nodes": nodes, "plan ms": plan.median * 1e3}
        metrics["steps ms"] = steps.median * 1e3
        line = f"{case:28s} {nodes:5d} {plan.median * 1e3:9.3f} {steps.median * 1e3:9.3f}"
        if "ort" in stats:
            other = stats["ort"]
            plan_ratios, step_ratios = round_ratios(plan, other), round_ratios(steps, other)
            line += f" {other.median * 1e3:8.3f}  {median_range(plan_ratios):28s} {median_range(step_ratios)}"
            metrics |= {
                "ort ms": other.median * 1e3,
                "plan/ort": statistics.median(plan_ratios),
                "steps/ort": statistics.median(step_ratios),
            }
        print(line, flush=True)
        report.add(case, metrics, plan)
    report.finish(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
