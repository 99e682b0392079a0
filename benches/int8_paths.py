"""ferrum's int8 linear on AMX against the same on VNNI (``FERRUM_AMX=0``): ``python benches/int8_paths.py``.

The int8 path is chosen once per process, so each candidate is a child
process (one case, one path) that times the int8 forward as the mean of
back-to-back calls over 0.2 s and reports it; the harness takes the two
paths in turns for ``--rounds`` rounds (``harness.reported``). The table
shows per case the median time of each path and the median of the
per-round ratios AMX / VNNI with its range. On a CPU without AMX-INT8 both
children run the same path (the ratio is then ~1). ``--json PATH`` /
``--compare-with OLD.json`` as the other benches on ``harness.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from harness import (
    Report,
    alternate,
    bench_parser,
    cpu_model,
    mean_over,
    median_range,
    reported,
    round_ratios,
)

CASES: dict[str, tuple[list[int], int]] = {
    "MLP 1024-4096-1024 b64": ([1024, 4096, 1024], 64),
    "linear 1024->4096 b64": ([1024, 4096], 64),
    "linear 4096->1024 b64": ([4096, 1024], 64),
    "linear 1024->4096 b8": ([1024, 4096], 8),
    "linear 1024->4096 b1": ([1024, 4096], 1),
    "linear 1024->1024 b512": ([1024, 1024], 512),
}
TINY_CASES: dict[str, tuple[list[int], int]] = {"linear 64->256 b8": ([64, 256], 8)}
PATHS = {"amx": "1", "vnni": "0"}


def child(sizes: list[int], batch: int, min_s: float) -> None:
    """Prints the seconds per int8 forward of one case on this process's path."""
    import numpy as np
    from quantized_linear import ferrum_candidates, layers

    params = layers(sizes, seed=len(sizes) + sizes[0])
    x = np.random.default_rng(7).standard_normal((batch, sizes[0])).astype(np.float32)
    forward = ferrum_candidates(params, x)["ferrum int8"]
    for _ in range(3):
        forward()
    print(json.dumps(mean_over(min_s)(forward)))


def in_child(path: str, sizes: list[int], batch: int, min_s: float) -> float:
    """Seconds per call that a child process on ``path`` measured."""
    env = dict(os.environ, FERRUM_AMX=PATHS[path])
    spec = json.dumps([sizes, batch, min_s])
    cmd = [sys.executable, os.path.abspath(__file__), "--child", spec]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = bench_parser(__doc__, rounds=9)
    parser.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sizes, batch, min_s = json.loads(args.child)
        child(sizes, batch, min_s)
        return
    cases, rounds, min_s = (TINY_CASES, 1, 0.02) if args.tiny else (CASES, args.rounds, 0.2)
    load = os.getloadavg()[0]
    print(f"{cpu_model()}; medians of {rounds} rounds (mean of calls over {min_s} s); load {load:.2f}")
    report = Report("int8_paths", {"rounds": rounds})
    for name, (sizes, batch) in cases.items():
        candidates = {
            path: (lambda path=path, sizes=sizes, batch=batch: in_child(path, sizes, batch, min_s))
            for path in PATHS
        }
        stats = alternate(candidates, rounds, measure=reported)
        amx, vnni = stats["amx"], stats["vnni"]
        ratios = round_ratios(amx, vnni)
        print(
            f"{name:26s} amx {amx.p50 * 1e3:8.3f} ms  vnni {vnni.p50 * 1e3:8.3f} ms  "
            f"amx/vnni {median_range(ratios)}"
        )
        for path, st in stats.items():
            report.add(f"{name} {path}", {"p50 ms": st.p50 * 1e3}, st)
    report.finish(args)


if __name__ == "__main__":
    main()
