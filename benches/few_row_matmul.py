"""Few-row float32 products (a Linear layer at batch 1) against NumPy's matmul.

    python benches/few_row_matmul.py [--rounds 11]

Rows: ``[1,768]@[768,3072]`` and ``[1,3072]@[3072,768]`` (GPT-2-small's MLP at one
generated token), ``[1,768]@[768,50257]^T`` (its tied LM head, the weight read through a
transposed view), ``[4,768]@[768,768]`` and the small square-ish ``32x128 @ 128x32``
(the ONNX plan's small products). Each round times the mean of repeated calls of each
engine for at least 0.2 s, the engines taking turns; the table gives the median
microseconds per call over the rounds with its lowest-highest, and the median of the
per-round ratios ferrum / NumPy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ferrum import Tensor
from ferrum.backend import NdArray
from harness import SPIN_SETTLE_S, alternate, mean_over, round_ratios

# (name, m, k, n, weight stored transposed)
SHAPES: list[tuple[str, int, int, int, bool]] = [
    ("[1,768]@[768,3072]", 1, 768, 3072, False),
    ("[1,3072]@[3072,768]", 1, 3072, 768, False),
    ("[1,768]@[768,50257]^T", 1, 768, 50257, True),
    ("[4,768]@[768,768]", 4, 768, 768, False),
    ("[32,128]@[128,32]", 32, 128, 32, False),
]


def candidates(m: int, k: int, n: int, transposed: bool) -> dict[str, Callable[[], object]]:
    """The ferrum and NumPy calls of one product, checked against each other once."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((n, k) if transposed else (k, n), dtype=np.float32)
    device = NdArray.device()
    fa, fw = Tensor.from_numpy(a, device), Tensor.from_numpy(w, device)
    fb = fw.transpose() if transposed else fw
    nb = w.T if transposed else w
    got = (fa @ fb).to_numpy()
    want = a.astype(np.float64) @ nb.astype(np.float64)
    if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
        raise AssertionError(f"ferrum's {m}x{k}x{n} product differs from NumPy's")
    return {"ferrum": lambda: fa @ fb, "numpy": lambda: a @ nb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    print(f"{'product':24} {'ferrum us':>22} {'numpy us':>22} {'ferrum/numpy':>12}")
    for name, m, k, n, transposed in SHAPES:
        stats = alternate(
            candidates(m, k, n, transposed),
            args.rounds,
            warmup=3,
            settle_s=SPIN_SETTLE_S,
            measure=mean_over(0.2),
        )
        cells = []
        for engine in ("ferrum", "numpy"):
            ts = [t * 1e6 for t in stats[engine].times_s]
            cells.append(f"{statistics.median(ts):8.1f} ({min(ts):.1f}-{max(ts):.1f})")
        ratio = statistics.median(round_ratios(stats["ferrum"], stats["numpy"]))
        print(f"{name:24} {cells[0]:>22} {cells[1]:>22} {ratio:12.2f}")


if __name__ == "__main__":
    main()
