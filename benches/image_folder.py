"""Decode throughput of ``ImageFolderDataset`` through the DataLoader: ``python benches/image_folder.py``.

Writes ``--items`` MNIST digits of ferrum's shipped sample as 28x28 grey PNGs
into a temporary ``root/<digit>/<index>.png`` folder (``--size 224 --format jpg``:
224x224 RGB JPEGs instead, where decoding, which Pillow does without the GIL,
outweighs the per-file Python work), builds
``ImageFolderDataset.new_classification(root)`` and times epochs of a
DataLoader (batch ``--batch-size``, shuffled) with 0 and 2 worker threads
whose batcher stacks the decoded ``uint8`` images into one ``[batch, H, W]``
(grey) or ``[batch, H, W, 3]`` float tensor scaled to [0, 1] and the labels into an Int tensor. Prints
images/s per worker count: the best, median and worst of ``--repeat`` epochs
after one warm-up epoch, the worker counts taking turns (the files are then in the OS page cache, so this is
decoding, not disk, throughput).

Beside them, when torch and torchvision import (run the script with a Python
that has them, ferrum on its path: ``PYTHONPATH=python /path/to/torch-venv/bin/python
benches/image_folder.py``), the same epochs of ``torchvision.datasets.ImageFolder``
through ``torch.utils.data.DataLoader`` with 0 and 2 workers (worker
processes, kept between epochs): each file decoded by Pillow into a ``uint8``
array as ferrum's does, the batch stacked and scaled to [0, 1] floats with
its labels in the collate function. ``--no-torchvision`` leaves them out.
All candidates take turns, one epoch each per round.

Times vary with the machine and its load: compare rows within one run.
``--tiny`` runs a seconds-long smoke version; ``--json PATH`` saves the rows
with the machine, ``--compare-with OLD.json`` prints new/old against an
earlier run.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ferrum import D1, Device, Int, Tensor
from ferrum.backend import NdArray
from ferrum.data.dataloader import Batcher, DataLoaderBuilder
from ferrum.data.dataset.vision import (
    Annotation,
    ImageDatasetItem,
    ImageFolderDataset,
    MnistDataset,
    PixelDepth,
)
from harness import Report, Stats, alternate, bench_parser
from PIL import Image


@dataclass
class DigitBatch:
    images: Tensor[NdArray, Any]  # [batch, H, W] (grey) or [batch, H, W, 3] (RGB), in [0, 1]
    targets: Tensor[NdArray, D1, Int]  # [batch]


class DigitBatcher(Batcher[ImageDatasetItem, DigitBatch]):
    def batch(self, items: list[ImageDatasetItem], device: Device[NdArray]) -> DigitBatch:
        images_u8 = [item.image_as(PixelDepth.U8) for item in items]  # [H, W, 1] or [H, W, 3]
        pixels = np.stack([image[:, :, 0] if image.shape[2] == 1 else image for image in images_u8])
        labels = [item.annotation.label for item in items if isinstance(item.annotation, Annotation.Label)]
        images: Tensor[NdArray, Any] = Tensor.from_numpy(pixels, device).float().div_scalar(255.0)
        targets: Tensor[NdArray, D1, Int] = Tensor.from_numpy(np.array(labels, np.int64), device)
        return DigitBatch(images, targets)


def make_folder(root: Path, items: int, size: int = 28, extension: str = "png") -> None:
    """``items`` digits of the shipped MNIST sample as ``root/<digit>/<index>.<extension>``.

    At 28 pixels, grey as MNIST; at any other size, resized and made RGB
    (the digit, its negative and their mean as channels).
    """
    sample = MnistDataset.sample("train")
    for index in range(items):
        digit = sample[index % sample.len()]
        folder = root / str(digit.label)
        folder.mkdir(parents=True, exist_ok=True)
        image = Image.fromarray(np.asarray(digit.image))
        if size != 28:
            grey = np.asarray(image.resize((size, size), Image.Resampling.BILINEAR))
            image = Image.fromarray(np.dstack([grey, 255 - grey, grey // 2 + 64]))
        image.save(folder / f"{index:05d}.{extension}")


def ferrum_epochs(
    root: Path, worker_counts: tuple[int, ...], batch_size: int
) -> dict[str, Callable[[], object]]:
    """One epoch of ferrum's DataLoader over the folder per worker count, keyed by the count."""
    dataset = ImageFolderDataset.new_classification(root)
    epochs: dict[str, Callable[[], object]] = {}
    for workers in worker_counts:
        loader = (
            DataLoaderBuilder(DigitBatcher())
            .batch_size(batch_size)
            .shuffle(0)
            .num_workers(workers)
            .set_device(NdArray.device())
            .build(dataset)
        )

        def epoch(loader: Any = loader) -> None:
            seen = sum(batch.images.dims()[0] for batch in loader)
            assert seen == dataset.len(), f"saw {seen} images, expected {dataset.len()}"

        epochs[str(workers)] = epoch
    return epochs


def torchvision_epochs(
    root: Path, worker_counts: tuple[int, ...], batch_size: int
) -> dict[str, Callable[[], object]]:
    """One epoch of ``torchvision.datasets.ImageFolder`` through torch's DataLoader per worker count;
    none when torch or torchvision does not import."""
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
        import torchvision  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return {}
    # Pillow's arrays are read-only, as ferrum's; the tensors made from them are only read here.
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")

    def load(path: str) -> Any:
        # As ferrum's decoding: the file's own mode (grey stays one channel), uint8 [H, W] or [H, W, 3].
        with Image.open(path) as image:
            return torch.from_numpy(np.asarray(image))

    def collate(items: list[tuple[Any, int]]) -> tuple[Any, Any]:
        images = torch.stack([image for image, _ in items]).float().div_(255.0)
        return images, torch.tensor([label for _, label in items], dtype=torch.int64)

    dataset = torchvision.datasets.ImageFolder(str(root), loader=load)
    epochs: dict[str, Callable[[], object]] = {}
    for workers in worker_counts:
        loader = torch.utils.data.DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=True,
            generator=torch.Generator().manual_seed(0),
            num_workers=workers,
            collate_fn=collate,
            persistent_workers=workers > 0,
        )

        def epoch(loader: Any = loader) -> None:
            seen = sum(images.shape[0] for images, _ in loader)
            assert seen == len(dataset), f"saw {seen} images, expected {len(dataset)}"

        epochs[str(workers)] = epoch
    return epochs


def bench(
    root: Path, worker_counts: tuple[int, ...], batch_size: int, repeat: int, torchvision: bool = True
) -> dict[tuple[str, int], Stats]:
    """Seconds of each of ``repeat`` epochs per loader (``"ferrum"``, ``"torchvision"``) and worker count,
    after a warm-up epoch each; all of them take turns, one epoch each per round."""
    loaders = {"ferrum": ferrum_epochs(root, worker_counts, batch_size)}
    if torchvision:
        loaders["torchvision"] = torchvision_epochs(root, worker_counts, batch_size)
    epochs = {f"{name} {workers}": fn for name, fns in loaders.items() for workers, fn in fns.items()}
    stats = alternate(epochs, repeat, warmup=1)
    return {
        (name, int(workers)): stats[f"{name} {workers}"] for name, fns in loaders.items() for workers in fns
    }


def main() -> None:
    parser = bench_parser(__doc__, repeat=5)
    parser.add_argument("--items", type=int, default=2000, help="PNG files to decode per epoch")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--size", type=int, default=28, help="image side; other than 28: RGB")
    parser.add_argument("--format", choices=["png", "jpg"], default="png")
    parser.add_argument("--no-torchvision", action="store_true", help="time ferrum's loader only")
    args = parser.parse_args()
    items, repeat = (100, 2) if args.tiny else (args.items, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        make_folder(root, items, args.size, args.format)
        kind = "grey" if args.size == 28 else "RGB"
        elapsed = time.perf_counter() - start
        print(f"wrote {items} {args.size}x{args.size} {kind} {args.format.upper()}s in {elapsed:.2f} s")
        header = f"{'workers':>7}  {'best':>9}  {'median':>9}  {'worst':>9}  {'spread':>6}  loader"
        print(f"{header}   images/s, {repeat} epochs")
        settings = {"items": items, "batch_size": args.batch_size, "repeat": repeat}
        report = Report("image_folder", settings | {"size": args.size, "format": args.format})
        results = bench(root, (0, 2), args.batch_size, repeat, not args.no_torchvision)
        for (loader, workers), stats in results.items():
            rates = [items / seconds for seconds in stats.times_s]
            best, median, worst = max(rates), statistics.median(rates), min(rates)
            rates_text = f"{best:>9.0f}  {median:>9.0f}  {worst:>9.0f}  {stats.spread:>6.0%}"
            print(f"{workers:>7}  {rates_text}  {loader}")
            # ferrum's rows keep their names of earlier runs, for --compare-with.
            row = f"{workers} workers" if loader == "ferrum" else f"{loader} {workers} workers"
            report.add(
                row,
                {"best images/s": best, "median images/s": median, "worst images/s": worst},
                stats,
            )
        if not args.no_torchvision and not any(loader == "torchvision" for loader, _ in results):
            print("no torchvision rows: torch or torchvision does not import in this Python")
    report.finish(args)


if __name__ == "__main__":
    main()
