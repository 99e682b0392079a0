"""Training steps in f32 and bf16 mixed precision, ferrum against PyTorch: ``benches/mixed_precision.py``.

Two workloads, one training step each (forward, cross-entropy, backward,
Adam step):

- the guide's CNN (``examples/guide``: two 3x3 convolutions, adaptive
  pooling, 1024-512-10 linear layers) on a batch of 64 MNIST digits of the
  shipped sample;
- a transformer encoder (2 layers, d_model 256, 8 heads, d_ff 1024, GELU,
  post-norm, no dropout) on ``[32, 64, 256]`` random inputs, mean-pooled into
  a 10-class linear head.

Candidates: ferrum f32 (``Learner`` with no precision) and ferrum bf16-mixed
(``Learner(..., precision=Precision.BF16_MIXED)``: a bf16 working copy, f32
master weights and Adam state); with torch importable, torch f32 and torch
under ``torch.autocast("cpu", torch.bfloat16)`` (f32 parameters and Adam,
the usual CPU recipe). A round times each candidate as the median of
``--steps`` steps after one untimed step; candidates take turns for
``--rounds`` rounds (``harness.alternate``), and the ratios are per round
(median and range). ``--breakdown`` adds where ferrum's bf16 step spends its
time (working copy, forward, backward, f32 gradients, optimizer).

Run torch's rows from a venv that has torch, naming the site-packages of
ferrum's venv in ``FERRUM_SITE`` (added after the running venv's own, so its
torch and NumPy stay in charge):
``FERRUM_SITE=.venv/lib/python3.11/site-packages /path/to/torch-venv/bin/python benches/mixed_precision.py``.
Without torch, ferrum's rows alone. ``--json PATH`` / ``--compare-with OLD.json``
as the other benches on ``harness.py``.
"""

from __future__ import annotations

import os
import site
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/ (the guide's CNN)
for _site in filter(None, os.environ.get("FERRUM_SITE", "").split(os.pathsep)):
    site.addsitedir(_site)  # ferrum's editable install (its .pth file) seen from another venv

from ferrum import D1, D2, D3, Int, Tensor  # noqa: E402
from ferrum.backend import Autodiff, NdArray  # noqa: E402
from ferrum.data.dataset.vision import MnistDataset  # noqa: E402
from ferrum.module import Module  # noqa: E402
from ferrum.nn import Linear, LinearConfig  # noqa: E402
from ferrum.nn.loss import CrossEntropyLossConfig  # noqa: E402
from ferrum.nn.transformer import (  # noqa: E402
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from ferrum.optim import AdamConfig  # noqa: E402
from ferrum.train import ClassificationOutput, Learner, MixedPrecision, Precision, TrainOutput  # noqa: E402
from harness import Report, Stats, alternate, bench_parser, cpu_model, median_of, median_range  # noqa: E402

from examples.guide.data import MnistBatch  # noqa: E402
from examples.guide.model import ModelConfig  # noqa: E402

Thunk = Callable[[], object]
TrainB = Autodiff[NdArray]


class EncoderClassifier(Module[Any]):
    """``[batch, seq, d_model]`` -> transformer encoder -> mean over seq -> linear -> logits."""

    encoder: TransformerEncoder[Any]
    head: Linear[Any]

    def forward(self, x: Tensor[Any, D3]) -> Tensor[Any, D2]:
        hidden = self.encoder.forward(TransformerEncoderInput(x))
        return self.head.forward(hidden.mean_dim(1).squeeze_dim(1))

    def train_step(self, batch: tuple[Tensor[Any, D3], Tensor[Any, D1, Int]]) -> TrainOutput[Any]:
        x, targets = batch
        logits = self.forward(x)
        loss = CrossEntropyLossConfig().init(logits.device()).forward(logits, targets)
        return TrainOutput(self, loss.backward(), ClassificationOutput(loss, logits, targets))


def encoder_shape(tiny: bool) -> dict[str, int]:
    if tiny:
        return {"batch": 4, "seq": 8, "d_model": 32, "heads": 4, "d_ff": 64, "layers": 1}
    return {"batch": 32, "seq": 64, "d_model": 256, "heads": 8, "d_ff": 1024, "layers": 2}


def ferrum_step(learner: Learner[Any], batch: Any) -> Thunk:
    def step() -> object:
        learner.lr_step()
        output = learner.train_step(batch)
        learner.optimizer_step(output.grads)
        return output.item.loss.into_scalar()

    return step


def workload_model(workload: str, shape: dict[str, int]) -> Module[TrainB]:
    """The guide's CNN (``cnn``) or a transformer encoder of ``shape`` with a linear head (seed first)."""
    device = TrainB.device()
    if workload == "cnn":
        return ModelConfig(10, 512).init(device)
    return EncoderClassifier(
        TransformerEncoderConfig(shape["d_model"], shape["d_ff"], shape["heads"], shape["layers"])
        .with_dropout(0.0)
        .init(device),
        LinearConfig(shape["d_model"], 10).init(device),
    )


def ferrum_candidates(
    workload: str, shape: dict[str, int], images: np.ndarray, labels: np.ndarray
) -> dict[str, Thunk]:
    device = TrainB.device()
    out: dict[str, Thunk] = {}
    for name, precision in (("ferrum f32", None), ("ferrum bf16-mixed", Precision.BF16_MIXED)):
        TrainB.seed(1)
        model = workload_model(workload, shape)
        x, y = Tensor.from_data(images, device), Tensor.from_data(labels, device)
        batch: Any = MnistBatch(x, y) if workload == "cnn" else (x, y)
        learner = Learner(model, AdamConfig().init(), 1e-4, precision=precision)
        out[name] = ferrum_step(learner, batch)
    return out


def _mnist() -> MnistDataset:
    return MnistDataset.sample("train")


def torch_candidates(
    workload: str, shape: dict[str, int], images: np.ndarray, labels: np.ndarray
) -> dict[str, Thunk]:
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return {}
    nn = torch.nn
    out: dict[str, Thunk] = {}
    for name, autocast in (("torch f32", False), ("torch bf16 autocast", True)):
        torch.manual_seed(1)
        model: Any
        if workload == "cnn":

            class Cnn(nn.Module):  # type: ignore[misc, name-defined, unused-ignore]
                """The guide's CNN, op for op."""

                def __init__(self) -> None:
                    super().__init__()
                    self.conv1, self.conv2 = nn.Conv2d(1, 8, 3), nn.Conv2d(8, 16, 3)
                    self.pool, self.dropout = nn.AdaptiveAvgPool2d((8, 8)), nn.Dropout(0.5)
                    self.linear1, self.linear2 = nn.Linear(16 * 8 * 8, 512), nn.Linear(512, 10)

                def forward(self, x: Any) -> Any:
                    x = self.dropout(self.conv1(x.unsqueeze(1)))
                    x = torch.relu(self.dropout(self.conv2(x)))
                    x = self.pool(x).flatten(1)
                    return self.linear2(torch.relu(self.dropout(self.linear1(x))))

            model = Cnn()
        else:
            layer = nn.TransformerEncoderLayer(
                shape["d_model"],
                shape["heads"],
                shape["d_ff"],
                dropout=0.0,
                activation="gelu",
                batch_first=True,
            )
            encoder = nn.TransformerEncoder(layer, shape["layers"], enable_nested_tensor=False)
            head = nn.Linear(shape["d_model"], 10)

            class Classifier(nn.Module):  # type: ignore[misc, name-defined, unused-ignore]
                def __init__(self, encoder: Any, head: Any) -> None:
                    super().__init__()
                    self.encoder, self.head = encoder, head

                def forward(self, x: Any) -> Any:
                    return self.head(self.encoder(x).mean(1))

            model = Classifier(encoder, head)
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        x, y = torch.from_numpy(images), torch.from_numpy(labels)
        loss_fn = nn.CrossEntropyLoss()

        def step(
            model: Any = model,
            optimizer: Any = optimizer,
            autocast: bool = autocast,
            data: tuple[Any, Any] = (x, y),
            loss_fn: Any = loss_fn,
        ) -> object:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cpu", torch.bfloat16, enabled=autocast):
                loss = loss_fn(model(data[0]), data[1])
            loss.backward()
            optimizer.step()
            return float(loss.detach())

        out[name] = step
    return out


def breakdown(
    workload: str, shape: dict[str, int], images: np.ndarray, labels: np.ndarray, steps: int
) -> None:
    """Median ms of each part of ferrum's steps, f32 and bf16-mixed, by hand."""
    device = TrainB.device()
    for precision in (Precision.FULL, Precision.BF16_MIXED):
        TrainB.seed(1)
        mixed = MixedPrecision(precision)
        model: Any = workload_model(workload, shape)
        x, y = Tensor.from_data(images, device), Tensor.from_data(labels, device)
        optimizer = AdamConfig().init()
        names = ("copy+cast", "forward", "backward", "f32 grads", "adam")
        parts: dict[str, list[float]] = {k: [] for k in names}
        for i in range(steps + 1):
            t0 = time.perf_counter()
            working = mixed.working_copy(model)
            xw = mixed.cast_batch(x)
            t1 = time.perf_counter()
            logits = working.forward(xw)
            loss = CrossEntropyLossConfig().init(device).forward(logits, y)
            loss.into_scalar()
            t2 = time.perf_counter()
            grads = loss.backward()
            t3 = time.perf_counter()
            master = mixed.master_grads(grads, working)
            t4 = time.perf_counter()
            model = mixed.step(optimizer, 1e-4, model, master)
            t5 = time.perf_counter()
            if i:  # the first step warms up
                marks = (t0, t1, t2, t3, t4, t5)
                for key, start, end in zip(parts, marks, marks[1:], strict=False):
                    parts[key].append((end - start) * 1e3)
        cells = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in parts.items())
        print(f"  {precision.value:<10} ms: {cells}")


def main() -> None:
    parser = bench_parser(__doc__, rounds=9)
    parser.add_argument("--steps", type=int, default=3, help="timed steps per candidate and round")
    parser.add_argument("--only", choices=["cnn", "encoder"], help="one workload")
    parser.add_argument("--breakdown", action="store_true", help="where ferrum's step spends its time")
    args = parser.parse_args()
    rounds, steps = (2, 1) if args.tiny else (args.rounds, args.steps)
    shape = encoder_shape(args.tiny)
    print(f"{cpu_model()}; medians of {rounds} alternating rounds, each the median of {steps} steps")
    report = Report("mixed_precision", {"rounds": rounds, "steps": steps, **shape})
    rng = np.random.default_rng(0)
    workloads = [args.only] if args.only else ["cnn", "encoder"]
    for workload in workloads:
        if workload == "cnn":
            n = 8 if args.tiny else 64
            digits = [item for item in map(_mnist().get, range(n)) if item is not None]
            pixels = np.stack([item.image for item in digits]).astype(np.float32)
            images = ((pixels / 255.0 - 0.1307) / 0.3081).astype(np.float32)  # the guide's normalisation
            labels = np.array([item.label for item in digits], dtype=np.int64)
            title = f"guide CNN training step, batch {n}"
        else:
            images = rng.standard_normal((shape["batch"], shape["seq"], shape["d_model"])).astype(np.float32)
            labels = rng.integers(0, 10, shape["batch"]).astype(np.int64)
            title = (
                f"transformer encoder training step, [{shape['batch']}, {shape['seq']}, {shape['d_model']}], "
                f"{shape['layers']} layers, {shape['heads']} heads, d_ff {shape['d_ff']}"
            )
        candidates = ferrum_candidates(workload, shape, images, labels) | torch_candidates(
            workload, shape, images, labels
        )
        stats: dict[str, Stats] = alternate(candidates, rounds, warmup=1, measure=median_of(steps, warmup=1))
        print(f"\n{title}")
        for name, st in stats.items():
            print(f"  {name:<20} {st.p50 * 1e3:8.1f} ms  spread {st.spread:5.2f}")
            report.add(f"{workload} {name}", {"p50 ms": st.p50 * 1e3}, st)
        pairs = [("ferrum bf16-mixed", "ferrum f32")]
        if "torch f32" in stats:
            pairs += [
                ("torch bf16 autocast", "torch f32"),
                ("ferrum f32", "torch f32"),
                ("ferrum bf16-mixed", "torch bf16 autocast"),
            ]
        for num, den in pairs:
            ratios = [a / b for a, b in zip(stats[num].times_s, stats[den].times_s, strict=True)]
            print(f"  {num} / {den}: {median_range(ratios)}")
            report.rows[f"{workload} {num} / {den}"] = {"ratio": statistics.median(ratios)}
        if args.breakdown:
            print("  where ferrum's step goes (median of the steps):")
            breakdown(workload, shape, images, labels, max(steps, 3))
    report.finish(args)


if __name__ == "__main__":
    main()
