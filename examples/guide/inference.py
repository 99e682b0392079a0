"""inference.rs: load the trained model from the artifact directory and classify digits."""

from __future__ import annotations

import os

from ferrum import Device
from ferrum.backend import NdArray
from ferrum.data.dataset.vision import MnistItem
from ferrum.record import CompactRecorder

from .data import MnistBatch, MnistBatcher
from .training import TrainingConfig


def infer(artifact_dir: str, device: Device[NdArray], items: list[MnistItem]) -> list[int]:
    """The predicted digit of each item, printed beside its label."""
    cfg = TrainingConfig.load(os.path.join(artifact_dir, "config.json"))
    model = cfg.model.init(device).load_file(os.path.join(artifact_dir, "model"), CompactRecorder(), device)
    batch: MnistBatch[NdArray] = MnistBatcher(device).batch(items)
    output = model.forward(batch.images)
    predicted = [int(p) for p in output.argmax(1).flatten(0, 1).to_data().to_list()]
    for label, digit in zip(predicted, items, strict=True):
        print(f"Predicted {label} Expected {digit.label}")
    return predicted
