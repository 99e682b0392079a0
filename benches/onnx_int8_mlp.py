"""An ONNX MLP quantized by onnxruntime's ``quantize_dynamic``, run by ferrum.onnx and by onnxruntime:
``PYTHONPATH=python /path/to/torch-venv/bin/python benches/onnx_int8_mlp.py``.

The model is issue 51's MLP, ``1024 -> 4096 -> ReLU -> 1024`` at batch 64
(MatMul + Add in float32, weights N(0, 1/d_in)), quantized with int8
weights: DynamicQuantizeLinear, MatMulInteger (uint8 x int8), Mul, Add.
ferrum runs MatMulInteger on its int8 tiles (the weight packed at the first
call). Each candidate is timed as the mean of back-to-back calls over 0.2 s,
the candidates taking turns for ``--rounds`` rounds; the table shows the
median (p50) ms and the spread. onnxruntime runs with its default threads
(one per core) and ``ORT_ENABLE_ALL`` graph optimizations. The environment
needs onnxruntime and ferrum (ferrum from ``PYTHONPATH`` or ``site``).
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import load
from harness import SPIN_SETTLE_S, Report, Stats, alternate, bench_parser, cpu_model, mean_over
from onnx import TensorProto, helper, numpy_helper


def float_mlp(sizes: list[int], batch: int) -> onnx.ModelProto:
    rng = np.random.default_rng(51)
    nodes: list[onnx.NodeProto] = []
    inits = []
    h = "x"
    for i, (d_in, d_out) in enumerate(itertools.pairwise(sizes)):
        w = (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(np.float32)
        b = (rng.standard_normal(d_out) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [helper.make_node("MatMul", [h, f"w{i}"], [f"m{i}"])]
        out = "y" if i == len(sizes) - 2 else f"a{i}"
        nodes += [helper.make_node("Add", [f"m{i}", f"b{i}"], [out])]
        if out != "y":
            nodes += [helper.make_node("Relu", [out], [f"r{i}"])]
            out = f"r{i}"
        h = out
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, sizes[-1]])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def compare_with_onnxruntime(
    model_path: Path, x: np.ndarray[Any, Any], name: str, suite: str, args: argparse.Namespace, rounds: int
) -> None:
    """Load the quantized ``model_path`` in ferrum and onnxruntime, print their largest difference on ``x``,
    then time both in alternating rounds and report medians (shared with ``onnx_int8_cnn.py``)."""
    import onnxruntime as ort  # type: ignore[import-not-found, import-untyped, unused-ignore]

    ops = sorted({n.op_type for n in onnx.load(model_path).graph.node})
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    device = NdArray.device()
    model = load(model_path, device)
    xt = Tensor.from_data(x, device)
    want = session.run(None, {"x": x})[0]
    got = model.forward(xt).to_numpy()
    diff = float(np.abs(got - want).max())

    def ferrum_run() -> Any:
        return model.forward(xt)

    def ort_run() -> Any:
        return session.run(None, {"x": x})

    print(f"{cpu_model()}; {name}; ops {ops}; medians of {rounds} rounds (mean of calls over 0.2 s each)")
    print(f"largest |ferrum - onnxruntime| {diff:.3g}")
    stats: dict[str, Stats] = alternate(
        {"ferrum.onnx": ferrum_run, "onnxruntime": ort_run},
        rounds,
        warmup=3,
        settle_s=SPIN_SETTLE_S,
        measure=mean_over(0.05 if args.tiny else 0.2),
    )
    report = Report(suite, {"rounds": rounds, "batch": args.batch})
    for cand, st in stats.items():
        print(f"  {cand:<12} {st.p50 * 1e3:8.3f} ms  spread {st.spread:5.2f}")
        report.add(f"{name} {cand}", {"p50 ms": st.p50 * 1e3}, st)
    print(f"  ferrum / onnxruntime {stats['ferrum.onnx'].p50 / stats['onnxruntime'].p50:5.2f}")
    report.finish(args)


def main() -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-not-found, import-untyped, unused-ignore]

    parser = bench_parser(__doc__, rounds=9)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    rounds, sizes = (2, [64, 256, 64]) if args.tiny else (args.rounds, [1024, 4096, 1024])
    name = f"onnx int8 MLP {'-'.join(map(str, sizes))} b{args.batch}"
    x = np.random.default_rng(7).standard_normal((args.batch, sizes[0])).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "mlp.onnx", Path(tmp) / "mlp_int8.onnx"
        onnx.save(float_mlp(sizes, args.batch), src)
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
        compare_with_onnxruntime(dst, x, name, "onnx_int8_mlp", args, rounds)


if __name__ == "__main__":
    main()
