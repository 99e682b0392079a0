"""inference.rs: ``infer``, the saved model loaded back to predict sequences it has not seen."""

from __future__ import annotations

import math
import os

from ferrum import Device
from ferrum.backend import NdArray
from ferrum.record import CompactRecorder

from .dataset import NOISE_LEVEL, SequenceBatch, SequenceBatcher, SequenceDataset
from .training import TrainingConfig


def infer(artifact_dir: str, device: Device[NdArray], rows: int = 10) -> float:
    """Predict a fifth as many new sequences as were trained on, in one batch; print the first
    ``rows`` predictions beside the targets and return the root mean squared error."""
    cfg = TrainingConfig.load(os.path.join(artifact_dir, "config.json"))
    model = cfg.model.init(device).load_file(os.path.join(artifact_dir, "model"), CompactRecorder(), device)
    # A seed neither training nor validation used.
    dataset = SequenceDataset(cfg.num_sequences // 5, cfg.seq_length, NOISE_LEVEL, seed=cfg.seed + 2)
    batch: SequenceBatch[NdArray] = SequenceBatcher().batch(list(dataset), device)
    predicted = model.forward(batch.sequences).to_numpy()[:, 0]
    expected = batch.targets.to_numpy()[:, 0]
    print(f"{'predicted':>10} {'expected':>10}")
    for p, e in zip(predicted[:rows], expected[:rows], strict=True):
        print(f"{p:10.4f} {e:10.4f}")
    rmse = math.sqrt(float(((predicted - expected) ** 2).mean()))
    spread = float(expected.std())
    print(f"{len(expected)} new sequences: RMSE {rmse:.4f} (targets' standard deviation {spread:.4f})")
    return rmse
