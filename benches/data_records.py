"""Benchmarks of data loading and records: ``python benches/data_records.py``.

(a) DataLoader throughput with 0, 1 and 2 worker threads on a dataset whose
    items cost real work to batch: each item is a 3x32x32 uint8 image;
    the batcher stacks a batch into one tensor, normalises it (scale, shift,
    tanh) and runs it through a 3072-512-3072 encoder/decoder (matmuls, tanh):
    engine ops that release the GIL. Run it with RAYON_NUM_THREADS=1 too: by
    default the engine's own ops already use every core. Items/s per
    setting, best of ``--repeat`` epochs.
(b) Save and load time and file size of every file recorder at Full and Half
    precision, for a model of ``--params`` parameters (default ~10M: a stack
    of 1024-wide Linear layers). Best of ``--repeat`` runs each.

Times vary with the machine and its load: compare rows within one run, never
across machines. ``--tiny`` runs a seconds-long smoke version (used by the
tests). Flags: --tiny, --repeat N, --params N, --items N, --only loader|records,
--json PATH (save the rows with the machine), --compare-with OLD.json (new/old
against an earlier run).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from ferrum import D2, Distribution, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.data.dataloader import Batcher, DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig
from ferrum.record import PrecisionSettings
from harness import Report, Stats, alternate, bench_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.support
from tests.support import recorders

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
IMAGE = (3, 32, 32)
PRECISIONS: list[type[PrecisionSettings]] = [recorders.PRECISIONS["full"], recorders.PRECISIONS["half"]]


class ImageBatcher(Batcher[np.ndarray[Any, Any], Tensor[NdArray, D2, Any]]):
    """Stacks uint8 images into one tensor, normalises it and runs it through a small encoder/decoder.

    Almost all the work is in engine ops on the whole batch (which release the
    GIL), so worker threads can overlap batches.
    """

    def __init__(self, features: int) -> None:
        size = int(np.prod(IMAGE))
        normal = Distribution.Normal(0.0, 0.02)
        self.encode = Tensor.random((size, features), normal, DEVICE)
        self.decode = Tensor.random((features, size), normal, DEVICE)

    def batch(self, items: list[np.ndarray[Any, Any]]) -> Tensor[NdArray, D2, Any]:
        pixels = Tensor.from_numpy(np.stack([image.reshape(-1) for image in items]), DEVICE).float()
        x = pixels.div_scalar(255.0).sub_scalar(0.5).mul_scalar(4.0).tanh()
        return x.matmul(self.encode).tanh().matmul(self.decode).tanh()


def bench_loader(items: int, batch_size: int, repeat: int) -> list[tuple[int, float, Stats]]:
    """Items/s per worker count, the best of ``repeat`` epochs after a warm-up epoch
    (threads, allocator); the worker counts take turns, one epoch each per round."""
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, IMAGE, dtype=np.uint8) for _ in range(items)]
    dataset = InMemDataset(images)
    batcher = ImageBatcher(512)
    epochs: dict[int, Callable[[], object]] = {}
    for workers in (0, 1, 2):
        loader = (
            DataLoaderBuilder(batcher).batch_size(batch_size).shuffle(0).num_workers(workers).build(dataset)
        )

        def epoch(loader: Any = loader) -> None:
            seen = sum(batch.dims()[0] for batch in loader)
            assert seen == items, f"saw {seen} items, expected {items}"

        epochs[workers] = epoch
    stats = alternate({str(w): fn for w, fn in epochs.items()}, repeat, warmup=1)
    return [(workers, items / stats[str(workers)].best, stats[str(workers)]) for workers in epochs]


class Mlp(Module[B]):
    layers: list[Linear[B]]


def mlp(params: int) -> Mlp[NdArray]:
    """Linear layers 1024 -> 1024 (about 1.05M parameters each) adding up to about ``params``."""
    width = 1024 if params >= 4 * 1024 * 1024 else 64
    count = max(1, round(params / (width * width + width)))
    return Mlp([LinearConfig(width, width).init(DEVICE) for _ in range(count)])


RecordRow = tuple[str, str, Stats, Stats, int]


def bench_records(params: int, repeat: int) -> tuple[int, list[RecordRow]]:
    """Save and load times (best of ``repeat``, a save then a load each round) and file size."""
    model = mlp(params)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for recorder_cls in recorders.FILE_RECORDERS:
            for settings in PRECISIONS:
                recorder = recorder_cls(settings)
                path = os.path.join(tmp, f"{recorder_cls.__name__}_{settings.name}")
                stats = alternate(
                    {
                        "save": lambda: model.save_file(path, recorder),  # noqa: B023
                        "load": lambda: model.load_file(path, recorder, DEVICE),  # noqa: B023
                    },
                    repeat,
                )
                save, load = stats["save"], stats["load"]
                size = os.path.getsize(recorder.file_path(path))
                rows.append(
                    (
                        recorder_cls.__name__,
                        settings.__name__.replace("PrecisionSettings", ""),
                        save,
                        load,
                        size,
                    )
                )
    return model.num_params(), rows


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, repeat=3)
    parser.add_argument("--params", type=int, default=10_000_000)
    parser.add_argument("--items", type=int, default=4096)
    parser.add_argument("--only", choices=["loader", "records"])
    args = parser.parse_args(argv)
    if args.tiny:
        args.repeat, args.params, args.items = 1, 20_000, 64
    settings = {"repeat": args.repeat, "params": args.params, "items": args.items, "only": args.only}
    report = Report("data_records", settings)

    if args.only in (None, "loader"):
        batch_size = 32 if not args.tiny else 16
        print(f"DataLoader: {args.items} items of {IMAGE} uint8, batch {batch_size}, best of {args.repeat}")
        print(f"{'workers':>8} {'items/s':>12} {'vs 0':>7}")
        rows = bench_loader(args.items, batch_size, args.repeat)
        for workers, rate, epoch_stats in rows:
            print(f"{workers:>8} {rate:>12.0f} {rate / rows[0][1]:>6.2f}x")
            report.add(f"loader {workers} workers", {"items/s": rate, "vs 0": rate / rows[0][1]}, epoch_stats)
        print()

    if args.only in (None, "records"):
        n, record_rows = bench_records(args.params, args.repeat)
        print(f"Records: {n} parameters, best of {args.repeat}")
        print(
            f"{'recorder':<24} {'precision':<9} {'save ms':>9} {'load ms':>9}"
            f" {'size MB':>9} {'MB/s save':>10}"
        )
        for name, precision, save_stats, load_stats, size in record_rows:
            mb = size / 1e6
            save, load = save_stats.best, load_stats.best
            print(
                f"{name:<24} {precision:<9} {save * 1e3:>9.1f} {load * 1e3:>9.1f}"
                f" {mb:>9.3f} {mb / save:>10.1f}"
            )
            metrics = {"save ms": save * 1e3, "load ms": load * 1e3, "size MB": mb, "MB/s save": mb / save}
            report.add(f"{name} {precision}", metrics)
    report.finish(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
