"""inference.rs: load the trained model from the artifact directory and classify images."""

from __future__ import annotations

import os
from pathlib import Path

from ferrum import Device
from ferrum.activation import softmax
from ferrum.backend import NdArray
from ferrum.data.dataset.vision import ImageDatasetItem
from ferrum.record import CompactRecorder

from .data import ClassificationBatch, ClassificationBatcher, label_of
from .training import TrainingConfig


def infer(artifact_dir: str, device: Device[NdArray], items: list[ImageDatasetItem]) -> list[int]:
    """The predicted class id of each item, printed with its file, class name and probability.

    The images go through the validation transforms (resize, centre crop,
    normalisation with the training images' statistics from ``config.json``).
    """
    cfg = TrainingConfig.load(os.path.join(artifact_dir, "config.json"))
    model = cfg.model.init(device).load_file(os.path.join(artifact_dir, "model"), CompactRecorder(), device)
    batcher: ClassificationBatcher[NdArray] = ClassificationBatcher(
        cfg.model.image_size, cfg.mean, cfg.std, train=False
    )
    batch: ClassificationBatch[NdArray] = batcher.batch(items, device)
    probabilities = softmax(model.forward(batch.images), 1)
    predicted = [int(p) for p in probabilities.argmax(1).flatten(0, 1).to_data().to_list()]
    confidence = probabilities.max_dim(1).flatten(0, 1).to_data().to_list()
    for item, label, p in zip(items, predicted, confidence, strict=True):
        path = Path(item.image_path)
        name = f"{path.parent.name}/{path.name}"
        print(f"{name}: Predicted {cfg.classes[label]} ({p:.2f}) Expected {cfg.classes[label_of(item)]}")
    return predicted
