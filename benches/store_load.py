"""Load speed of ferrum's stores: ``python benches/store_load.py [--torch-python PATH]``.

Writes a file of ``--mb`` megabytes (default 500) of float32 weights: 25 Linear
layers of equal size, as a PyTorch state dict would hold them, in four formats
(.safetensors; .pt in torch's zip format, made by torch when ``--torch-python``
names a Python that has it; .bpk written by ferrum), then times, median of
``--repeat`` runs each (the loads taking turns, one run each per round), on a
warm page cache:

- ``read bytes``: reading the file once into memory (the floor for a load);
- ``safetensors.numpy.load_file`` and (with torch) ``torch.load`` (weights_only, mmap off);
- ferrum's store read into NumPy arrays (every tensor copied out of the file's map);
- ferrum's ``module.load_from`` into a model of the same Linear layers
  (for the PyTorch layouts this transposes every weight into Burn's [in, out]).

MB/s is file size over time. torch runs in its own process (``--torch-python``)
so that ferrum's environment never needs torch. ``--tiny`` runs a seconds-long
smoke version (used by the tests); ``--json PATH`` saves the rows with the
machine, ``--compare-with OLD.json`` prints new/old against an earlier run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from ferrum.backend import Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig
from ferrum.store import BurnpackStore, ModuleStore, PytorchStore, PyTorchToBurnAdapter, SafetensorsStore
from harness import Report, Stats, alternate, bench_parser
from safetensors.numpy import load_file, save_file

B = TypeVar("B", bound=Backend)
LAYERS = 25

# Run by --torch-python: writes the .pt from the safetensors file, then times torch.load.
TORCH_CHILD = """
import statistics, sys, time, torch
from safetensors.torch import load_file
src, dst, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.save(load_file(src), dst)
times = []
for _ in range(repeat):
    start = time.perf_counter()
    torch.load(dst, weights_only=True, mmap=False)
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


class Stack(Module[B]):
    """``layers.{i}.weight`` / ``layers.{i}.bias``: the keys of the files."""

    layers: list[Linear[B]]


def _stack(width: int) -> Stack[NdArray]:
    device = NdArray.device()
    return Stack([LinearConfig(width, width).init(device) for _ in range(LAYERS)])


def _arrays(store: ModuleStore) -> None:
    # A copy touches every byte: a memory-mapped view alone reads nothing.
    for snap in store.snapshots().values():
        np.array(snap.to_numpy(), copy=True)


def main() -> None:
    parser = bench_parser(__doc__, repeat=5)
    parser.add_argument("--mb", type=float, default=500.0)
    parser.add_argument("--torch-python", default=os.environ.get("FERRUM_TORCH_PYTHON"))
    args = parser.parse_args()
    if args.tiny:
        args.mb, args.repeat = 2.0, 1
    width = max(8, int((args.mb * 1e6 / 4 / LAYERS) ** 0.5))
    rng = np.random.default_rng(0)
    state = {}
    for i in range(LAYERS):
        state[f"layers.{i}.weight"] = rng.standard_normal((width, width), dtype=np.float32)
        state[f"layers.{i}.bias"] = rng.standard_normal(width, dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        st_path, pt_path, bpk_path = Path(tmp, "m.safetensors"), Path(tmp, "m.pt"), Path(tmp, "m.bpk")
        save_file(state, st_path)
        del state
        model = _stack(width)
        model.save_into(BurnpackStore.from_file(bpk_path))
        torch_time = None
        if args.torch_python:
            out = subprocess.run(
                [args.torch_python, "-c", TORCH_CHILD, str(st_path), str(pt_path), str(args.repeat)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            torch_time = float(out.stdout.split()[-1])
        size_mb = st_path.stat().st_size / 1e6
        st_store = SafetensorsStore.from_file(st_path).with_from_adapter(PyTorchToBurnAdapter())

        # Every load takes its turn in each of --repeat rounds (see harness.alternate).
        candidates: dict[str, tuple[Path, Callable[[], Any]]] = {
            "read bytes (.safetensors)": (st_path, st_path.read_bytes),
            "safetensors.numpy.load_file": (st_path, lambda: load_file(st_path)),
            "ferrum SafetensorsStore -> arrays": (st_path, lambda: _arrays(st_store)),
            "ferrum SafetensorsStore load_from": (st_path, lambda: model.load_from(st_store)),
        }
        if pt_path.exists():
            pt_store = PytorchStore.from_file(pt_path)
            candidates |= {
                "read bytes (.pt)": (pt_path, pt_path.read_bytes),
                "ferrum PytorchStore -> arrays": (pt_path, lambda: _arrays(pt_store)),
                "ferrum PytorchStore load_from": (pt_path, lambda: model.load_from(pt_store)),
            }
        bpk_store = BurnpackStore.from_file(bpk_path)
        candidates |= {
            "read bytes (.bpk)": (bpk_path, bpk_path.read_bytes),
            "ferrum BurnpackStore -> arrays": (bpk_path, lambda: _arrays(bpk_store)),
            "ferrum BurnpackStore load_from": (bpk_path, lambda: model.load_from(bpk_store)),
        }
        stats = alternate({name: fn for name, (_, fn) in candidates.items()}, args.repeat)
        rows: list[tuple[str, Path, Stats | float | None]] = [
            (name, path, stats[name]) for name, (path, _) in candidates.items()
        ]
        if pt_path.exists():
            # torch.load, timed in torch's process, goes after the .pt file's read.
            at = [name for name, _, _ in rows].index("read bytes (.pt)") + 1
            rows.insert(at, ("torch.load", pt_path, torch_time))
        report = Report("store_load", {"mb": args.mb, "repeat": args.repeat, "width": width})
        layers = f"{LAYERS} Linear layers of {width}x{width}"
        print(f"{layers}, {size_mb:.0f} MB of f32; median of {args.repeat} runs")
        print(f"{'load':<36} {'file MB':>8} {'ms':>9} {'MB/s':>8}")
        for name, path, timing in rows:
            mb = path.stat().st_size / 1e6
            seconds = timing.median if isinstance(timing, Stats) else timing
            if seconds is None:
                print(f"{name:<36} {mb:>8.1f} {'-':>9} {'-':>8}")
                continue
            print(f"{name:<36} {mb:>8.1f} {seconds * 1e3:>9.1f} {mb / seconds:>8.0f}")
            report.add(
                name,
                {"file MB": mb, "ms": seconds * 1e3, "MB/s": mb / seconds},
                timing if isinstance(timing, Stats) else None,
            )
        if not args.torch_python:
            print("(no --torch-python: the .pt rows need torch to write the file)", file=sys.stderr)
    report.finish(args)


if __name__ == "__main__":
    main()
