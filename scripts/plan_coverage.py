"""Per real-model fixture: the ops a compiled plan leaves to Python, and its engine segments.

Run from the repository root: ``python scripts/plan_coverage.py [--json OUT]``. Each fixture of
tests/fixtures/onnx_real is loaded, run twice (the first call compiles its plan) and its plan's
``python_ops`` counted, with its fused instructions (attention, RMSNorm, convolution groups); a
fixture with no plan shows ``no plan``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ferrum import Tensor  # noqa: E402
from ferrum.backend import NdArray  # noqa: E402
from ferrum.onnx import load  # noqa: E402
from ferrum.onnx.plan import plan_cache, signature  # noqa: E402

from tests.support.onnx_real_models import FIXTURES, fill_weights  # noqa: E402

# instructions that replace a node pattern (ferrum.onnx.plan_fusion)
FUSED = ("attention", "rms_norm", "conv2d_fused")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("names", nargs="*", help="fixtures (default: all)")
    args = parser.parse_args()
    device = NdArray.device()
    cases = sorted(json.loads((FIXTURES / "manifest.json").read_text())["cases"])
    table: dict[str, dict[str, object]] = {}
    for name in args.names or cases:
        proto = fill_weights(onnx.load(FIXTURES / f"{name}.onnx"))
        data = np.load(FIXTURES / f"{name}.npz")
        weights = {t.name for t in proto.graph.initializer}
        names = [i.name for i in proto.graph.input if i.name not in weights]
        xs = [Tensor.from_numpy(data[f"in_{n}"], device) for n in names]
        model = load(proto, device)
        model.forward(*xs)
        compiled = plan_cache(model).get(signature(xs))  # type: ignore[arg-type]
        if compiled is None:
            table[name] = {"python": None, "segments": 0}
            print(f"{name:28s} no plan")
            continue
        ops = dict(collections.Counter(compiled.python_ops))
        fused = {k: compiled.instructions.count(k) for k in FUSED if k in compiled.instructions}
        table[name] = {"python": ops, "segments": compiled.engine_segments, "fused": fused}
        shown = ", ".join(f"{k}x{v}" for k, v in sorted(ops.items())) or "-"
        kernels = ", ".join(f"{k}x{v}" for k, v in sorted(fused.items())) or "-"
        segments = compiled.engine_segments
        print(f"{name:28s} engine segments {segments:3d}  python: {shown:40s} fused: {kernels}")
    if args.json:
        args.json.write_text(json.dumps(table, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
