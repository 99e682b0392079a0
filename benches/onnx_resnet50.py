"""ResNet-50 (the onnx wheel's light graph) inference: ferrum.onnx against onnxruntime.

Times one forward pass at batch 1 and batch 16 (the graph's batch dim and its final Reshape are
rewritten to the batch size). The engines take turns round by round (``--rounds``, see
``harness.alternate``): in each round, batch by batch, onnxruntime (in its own process) and then
ferrum run ``--repeats`` timed passes after a warm-up, and the round's ratio ``ferrum / onnxruntime``
is the ratio of the two medians (below 1 means ferrum is faster). The table gives each engine's
median over rounds and the median ratio with its lowest-highest: on a shared machine the load from
other processes moves both engines by tens of percent from minute to minute, so only ratios taken
close together compare. ``--json PATH`` saves the rows with the machine, ``--compare-with OLD.json``
prints new/old against an earlier run.

onnxruntime is never a dependency of ferrum. Install it into a separate virtual environment and
name its Python with ``--ort-python``; this script then runs onnxruntime's passes there::

    python3 -m venv /tmp/ortvenv && /tmp/ortvenv/bin/pip install onnxruntime numpy onnx
    python benches/onnx_resnet50.py --ort-python /tmp/ortvenv/bin/python

Without ``--ort-python`` only ferrum's column is measured (and onnxruntime's, if it imports here).

Measured on 2026-11-28 on the 2-core development machine (Intel Xeon with AVX-512), onnxruntime
1.32.0, 9 rounds of 5 passes, load average 0.9-1.9 with the benchmark running; three runs in a
row:

    batch  ferrum ms  onnxruntime ms  ferrum/ort (median, lowest-highest)
        1       39.9            29.3  1.37 (1.33-1.54)
       16      559.0           428.8  1.28 (1.25-1.37)
        1       41.1            29.3  1.37 (1.05-1.59)
       16      550.8           430.4  1.30 (1.26-1.36)
        1       40.4            29.9  1.34 (0.97-2.25)
       16      569.4           438.1  1.33 (1.24-1.53)

What got it there, the same day: 1.58-1.68 at batch 1 and 1.48-1.51 at batch 16 with every
convolution an implicit GEMM (Conv + BatchNormalization + Add + Relu already fused; 3.44 and
2.45 before, with im2col convolutions and separate BatchNorm, add and relu passes); 1.46-1.62
and 1.35-1.45 once the convolutions wider than 1x1 moved to the AVX-512 kernel with output
positions as the tile's rows (``kernels/sgemm/conv_positions.rs``); then the 3x3 stride-2 max
pool vectorised (1.9 to 0.4 ms in the network), the three 1x1 stride-2 projections back on the
implicit GEMM (1.4-1.7x faster there), and that GEMM's epilogue vectorised with the residual
prefetched.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from harness import Report, add_report_args, alternate, median_of, median_range, reported, round_ratios
from onnx import numpy_helper

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"


def batched(batch: int) -> onnx.ModelProto:
    """The light ResNet-50 with input batch ``batch`` (its Reshape target follows)."""
    model = onnx.load(LIGHT)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = batch
    for node in model.graph.node:
        if node.op_type == "Reshape":
            for init in model.graph.initializer:
                if init.name == node.input[1]:
                    shape = numpy_helper.to_array(init).copy()
                    shape[0] = batch
                    init.CopyFrom(numpy_helper.from_array(shape, init.name))
    del model.graph.output[0].type.tensor_type.shape.dim[:]
    return model


def image(batch: int) -> np.ndarray:
    return np.random.default_rng(0).random((batch, 3, 224, 224), np.float32)


def ort_median(batch: int, repeats: int) -> float:
    """onnxruntime's median seconds of ``repeats`` passes at ``batch``, after one warm-up pass, here."""
    ort = importlib.import_module("onnxruntime")  # optional: only for this column
    session = ort.InferenceSession(batched(batch).SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: image(batch)}
    return median_of(repeats)(lambda: session.run(None, feed))


def ort_round(ort_python: str | None, batch: int, repeats: int) -> float:
    """``ort_median`` for one round: in ``ort_python``'s process, else in this one."""
    if not ort_python:
        return ort_median(batch, repeats)
    args = [ort_python, __file__, "--ort-child", "--repeats", str(repeats), "--batches", str(batch)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout)[str(batch)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ort-python", help="a Python with onnxruntime installed (a separate venv)")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes per engine, batch and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batches", default="1,16")
    parser.add_argument("--ort-child", action="store_true", help=argparse.SUPPRESS)
    add_report_args(parser)
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    if args.ort_child:
        print(json.dumps({b: ort_median(b, args.repeats) for b in batches}))
        return 0
    # imported here: the onnxruntime child process runs in a venv without ferrum
    from ferrum import Tensor
    from ferrum.backend import NdArray
    from ferrum.onnx import OnnxModel, load

    with_ort = bool(args.ort_python) or importlib.util.find_spec("onnxruntime") is not None
    device = NdArray.device()

    def ferrum_round(net: OnnxModel, x: Tensor[NdArray, Any]) -> float:
        return median_of(args.repeats)(lambda: net.forward(x).to_numpy())

    # Batch by batch, onnxruntime then ferrum: a round's two medians are taken close together.
    engines: dict[str, Callable[[], float]] = {}
    for b in batches:
        if with_ort:
            engines[f"ort {b}"] = partial(ort_round, args.ort_python, b, args.repeats)
        x = Tensor.from_numpy(image(b), device)
        engines[f"ferrum {b}"] = partial(ferrum_round, load(batched(b), device), x)
    stats = alternate(engines, args.rounds, measure=reported)

    report = Report("onnx_resnet50", {"rounds": args.rounds, "repeats": args.repeats, "batches": batches})
    print(f"{'batch':>5} {'ferrum ms':>10} {'onnxruntime ms':>15}  ferrum/ort (median, lowest-highest)")
    for b in batches:
        mine = stats[f"ferrum {b}"]
        metrics = {"ferrum ms": mine.median * 1e3}
        ort_ms, ratio = f"{'-':>15}", "-"
        if with_ort:
            theirs = stats[f"ort {b}"]
            ratios = round_ratios(mine, theirs)
            ort_ms, ratio = f"{theirs.median * 1e3:15.1f}", median_range(ratios)
            metrics |= {"onnxruntime ms": theirs.median * 1e3, "ferrum/ort": statistics.median(ratios)}
        print(f"{b:>5} {mine.median * 1e3:10.1f} {ort_ms}  {ratio}")
        report.add(f"batch {b}", metrics, mine)
    report.finish(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
