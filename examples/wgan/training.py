"""training.rs: the training config, ``save_image`` and ``train``, the WGAN loop written by hand.

Each iteration trains the critic on a real batch and a batch the generator
drew from noise (detached: the generator does not learn from this step),
to score real images high and generated ones low, then clamps the critic's
weights to ``[-clip_value, clip_value]``; every ``num_critic``-th iteration
the generator takes a step to raise the critic's score of its images. Both
use RMSProp, as the original WGAN.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from ferrum import D2, D4, Distribution, Tensor, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import Dataset
from ferrum.data.dataset.vision import MnistItem
from ferrum.optim import GradientsParams, RmsPropConfig
from ferrum.record import CompactRecorder

from ..guide.training import create_artifact_dir
from .dataset import MnistBatch, MnistBatcher
from .model import Clip, Discriminator, Generator, ModelConfig

TrainB = Autodiff[NdArray]


@config
class TrainingConfig:
    model: ModelConfig
    optimizer: RmsPropConfig
    num_epochs: int = 200
    batch_size: int = 512
    num_workers: int = 2
    seed: int = 5
    lr: float = 3.0e-4
    num_critic: int = 5  # critic steps per generator step
    clip_value: float = 0.01  # the critic's weights are clamped to [-clip_value, clip_value]
    sample_interval: int = 10  # a grid of generated digits every this many epochs


def to_unit_range(images: Tensor[Any, D2], cfg: ModelConfig, count: int = 25) -> npt.NDArray[np.float32]:
    """The first ``count`` generated images ``[batch, pixels]`` as ``[count, height, width, channels]``
    scaled to [0, 1] by their joint minimum and maximum, plus half a grey level (so that the 8-bit
    conversion rounds, as torchvision's ``save_image``)."""
    batch = images.dims()[0]
    x = images.reshape((batch, cfg.channels, cfg.image_size, cfg.image_size)).slice([(0, min(count, batch))])
    x = x.swap_dims(2, 1).swap_dims(3, 2)  # [B, C, H, W] to [B, H, W, C]
    low, high = x.min().into_scalar(), x.max().into_scalar()
    x = ((x - low) / max(high - low, 1e-12) + 0.5 / 255.0).clamp(0.0, 1.0)
    return x.to_numpy().astype(np.float32)


def save_image(images: npt.NDArray[np.float32], nrow: int, path: str | os.PathLike[str]) -> bool:
    """Images ``[n, height, width, channels]`` in [0, 1] (1 or 3 channels) as a grid of ``nrow`` per row
    in a PNG file; ``False`` (and one line saying so) when Pillow is not installed."""
    try:
        from PIL import Image
    except ImportError:
        print(f"no image {path}: Pillow is not installed (pip install 'ferrum-dl[vision]')")
        return False
    n, height, width, channels = images.shape
    if channels not in (1, 3):
        raise ValueError(f"save_image: images must have 1 or 3 channels, found shape {images.shape}")
    rows = math.ceil(n / nrow)
    grid = np.zeros((rows * height, nrow * width, 3), np.uint8)
    pixels = (images * 255.0).astype(np.uint8)  # truncation; the half grey level added before rounds
    for i in range(n):
        r, c = divmod(i, nrow)
        grid[r * height : (r + 1) * height, c * width : (c + 1) * width] = pixels[i]  # 1 channel broadcasts
    Image.fromarray(grid, "RGB").save(path)
    return True


@dataclass
class WganHistory:
    """The losses of each generator step (the critic's of the same iteration beside them)."""

    critic_losses: list[float] = field(default_factory=list)
    generator_losses: list[float] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)
    critic_max_abs: float = 0.0  # the largest |weight| of the critic after training: clip_value at most


def train(
    artifact_dir: str, cfg: TrainingConfig, dataset: Dataset[MnistItem], log_every: int = 1
) -> WganHistory:
    """Train the pair on ``dataset``; the artifact directory gets the config, the two models and the
    sample grids ``image-<epoch>.png``. Prints every ``log_every``-th generator step."""
    create_artifact_dir(artifact_dir)
    cfg.save(os.path.join(artifact_dir, "config.json"))
    device = TrainB.device()
    TrainB.seed(cfg.seed)
    clip = Clip(-cfg.clip_value, cfg.clip_value)

    generator: Generator[TrainB]
    discriminator: Discriminator[TrainB]
    generator, discriminator = cfg.model.init(device)
    optimizer_g = cfg.optimizer.init()
    optimizer_d = cfg.optimizer.init()

    dataloader_train = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(cfg.batch_size)
        .shuffle(cfg.seed)
        .num_workers(cfg.num_workers)
        .set_device(device)
        .build(dataset)
    )
    num_batches = len(dataloader_train)
    m = cfg.model
    history = WganHistory()
    for epoch in range(cfg.num_epochs):
        batch: MnistBatch[TrainB]
        for iteration, batch in enumerate(dataloader_train):
            size = batch.images.dims()[0]
            noise: Tensor[TrainB, D2] = Tensor.random(
                (size, m.latent_dim), Distribution.Normal(0.0, 1.0), device
            )
            # Detached: this step trains the critic only.
            fake_flat = generator.forward(noise).detach()
            image_shape = (size, m.channels, m.image_size, m.image_size)
            fake_images: Tensor[TrainB, D4] = fake_flat.reshape(image_shape)
            loss_d = -discriminator.forward(batch.images).mean() + discriminator.forward(fake_images).mean()
            grads = GradientsParams.from_grads(loss_d.backward(), discriminator)
            discriminator = optimizer_d.step(cfg.lr, discriminator, grads)
            discriminator = discriminator.map(clip)

            if iteration % cfg.num_critic == 0:
                critic_fake = generator.forward(noise).reshape(image_shape)
                loss_g = -discriminator.forward(critic_fake).mean()
                grads = GradientsParams.from_grads(loss_g.backward(), generator)
                generator = optimizer_g.step(cfg.lr, generator, grads)
                history.critic_losses.append(loss_d.into_scalar())
                history.generator_losses.append(loss_g.into_scalar())
                if len(history.generator_losses) % log_every == 0:
                    print(
                        f"[Epoch {epoch + 1}/{cfg.num_epochs}] [Batch {iteration}/{num_batches}] "
                        f"[D loss: {history.critic_losses[-1]:.6f}] "
                        f"[G loss: {history.generator_losses[-1]:.6f}]"
                    )
            if (epoch % cfg.sample_interval == 0 or epoch == cfg.num_epochs - 1) and iteration == 0:
                path = Path(artifact_dir) / f"image-{epoch}.png"
                if save_image(to_unit_range(fake_flat, m), 5, path):
                    history.images.append(path)

    history.critic_max_abs = max(p.val().abs().max().into_scalar() for p in discriminator.parameters())
    generator.save_file(os.path.join(artifact_dir, "generator"), CompactRecorder())
    discriminator.save_file(os.path.join(artifact_dir, "discriminator"), CompactRecorder())
    return history
