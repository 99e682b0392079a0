"""ferrum's int8 linear on AMX against the same on VNNI (``FERRUM_AMX=0``).

The path is chosen once per process, so each round runs one child process
per path, taking turns; a child times every case (mean of calls over
0.2 s) and prints the times. The table shows, per case, the median time of
each path and the median of the per-round ratios AMX / VNNI with its
spread (fastest to slowest round's ratio).

    python int8_paths.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES: dict[str, tuple[list[int], int]] = {
    "MLP 1024-4096-1024 b64": ([1024, 4096, 1024], 64),
    "linear 1024->4096 b64": ([1024, 4096], 64),
    "linear 4096->1024 b64": ([4096, 1024], 64),
    "linear 1024->4096 b8": ([1024, 4096], 8),
    "linear 1024->4096 b1": ([1024, 4096], 1),
    "linear 1024->1024 b512": ([1024, 1024], 512),
}


def child() -> None:
    """Times the int8 forward of every case on this process's path."""
    import numpy as np
    from quantized_linear import ferrum_candidates, layers

    times: dict[str, float] = {}
    for name, (sizes, batch) in CASES.items():
        params = layers(sizes, seed=len(sizes) + sizes[0])
        x = np.random.default_rng(7).standard_normal((batch, sizes[0])).astype(np.float32)
        forward = ferrum_candidates(params, x)["ferrum int8"]
        for _ in range(3):
            forward()
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < 0.2:
            forward()
            calls += 1
        times[name] = (time.perf_counter() - start) / calls
    print(json.dumps(times))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child()
        return
    runs: dict[str, list[dict[str, float]]] = {"amx": [], "vnni": []}
    for _ in range(args.rounds):
        for path, flag in (("amx", "1"), ("vnni", "0")):
            env = dict(os.environ, FERRUM_AMX=flag)
            cmd = [sys.executable, os.path.abspath(__file__), "--child"]
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            runs[path].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"medians of {args.rounds} rounds; load {os.getloadavg()[0]:.2f}")
    for name in CASES:
        amx = [r[name] for r in runs["amx"]]
        vnni = [r[name] for r in runs["vnni"]]
        ratios = [a / v for a, v in zip(amx, vnni, strict=True)]
        print(
            f"{name:26s} amx {statistics.median(amx) * 1e3:8.3f} ms  "
            f"vnni {statistics.median(vnni) * 1e3:8.3f} ms  "
            f"amx/vnni {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        )


if __name__ == "__main__":
    main()
