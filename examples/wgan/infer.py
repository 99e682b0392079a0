"""infer.rs: ``generate``, the trained generator loaded back to draw a 5x5 grid of digits."""

from __future__ import annotations

import os
from pathlib import Path

from ferrum import D2, Device, Distribution, Tensor
from ferrum.backend import NdArray
from ferrum.record import CompactRecorder

from .training import TrainingConfig, save_image, to_unit_range


def generate(artifact_dir: str, device: Device[NdArray], seed: int | None = None) -> Path | None:
    """Draw a batch from the saved generator and write its first 25 images to ``fake_image.png``.

    The generator runs on the inner backend: its batch norms use the running
    statistics of training. The written path, or ``None`` without Pillow.
    """
    cfg = TrainingConfig.load(os.path.join(artifact_dir, "config.json"))
    generator, _ = cfg.model.init(device)
    generator = generator.load_file(os.path.join(artifact_dir, "generator"), CompactRecorder(), device)
    if seed is not None:
        NdArray.seed(seed)
    noise: Tensor[NdArray, D2] = Tensor.random(
        (cfg.batch_size, cfg.model.latent_dim), Distribution.Normal(0.0, 1.0), device
    )
    images = to_unit_range(generator.forward(noise), cfg.model)
    path = Path(artifact_dir) / "fake_image.png"
    return path if save_image(images, 5, path) else None
