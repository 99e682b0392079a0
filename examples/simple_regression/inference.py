"""inference.rs: load the trained model, predict rows, compare with their targets, and plot them."""

from __future__ import annotations

import math
import os
import statistics
from pathlib import Path

from ferrum import Device
from ferrum.backend import NdArray
from ferrum.record import CompactRecorder

from .data import RegressionBatcher, RegressionItem
from .training import ExpConfig


def infer(
    artifact_dir: str, device: Device[NdArray], items: list[RegressionItem], show: int = 10
) -> list[float]:
    """The prediction of each item in the target's units; prints ``show`` of them and the error overall."""
    cfg = ExpConfig.load(os.path.join(artifact_dir, "config.json"))
    model = cfg.model.init(device).load_file(os.path.join(artifact_dir, "model"), CompactRecorder(), device)
    batch = RegressionBatcher(cfg.normalizer).batch(items, device)
    scaled = [float(v) for v in model.forward(batch.inputs).flatten(0, 1).to_data().to_list()]
    predicted = cfg.normalizer.original(scaled)
    expected = [item.target for item in items]

    print(f"Predicted vs. Expected {cfg.target}")
    for p, e in list(zip(predicted, expected, strict=True))[:show]:
        print(f"Predicted {p:.1f} Expected {e:.1f}")
    errors = [p - e for p, e in zip(predicted, expected, strict=True)]
    rmse = math.sqrt(statistics.fmean(err * err for err in errors))
    spread = statistics.pvariance(expected) or 1.0
    r2 = 1.0 - statistics.fmean(err * err for err in errors) / spread
    print(f"{len(items)} rows: RMSE {rmse:.2f}, R^2 {r2:.3f} (target std {math.sqrt(spread):.2f})")
    plot(Path(artifact_dir) / "predictions.png", predicted, expected, cfg.target)
    return predicted


def plot(path: Path, predicted: list[float], expected: list[float], target: str) -> None:
    """Predicted against expected as a PNG, when matplotlib is installed (``ferrum-dl[plot]``)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("no plot: matplotlib is not installed (pip install 'ferrum-dl[plot]')")
        return
    figure = Figure(figsize=(5, 5), layout="constrained")
    axes = figure.subplots()
    axes.scatter(expected, predicted, s=10, color="tab:red")
    low, high = min(expected + predicted), max(expected + predicted)
    axes.plot([low, high], [low, high], color="gray", linewidth=1)  # perfect predictions
    axes.set_xlabel(f"expected {target}")
    axes.set_ylabel(f"predicted {target}")
    figure.savefig(path)
    print(f"plot of predicted against expected values: {path}")
