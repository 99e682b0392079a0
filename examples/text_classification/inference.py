"""inference.rs: load the trained classifier and classify sentences given as text."""

from __future__ import annotations

import os

from ferrum import Device
from ferrum.backend import NdArray
from ferrum.record import CompactRecorder

from .data import CountingDataset, TextClassificationBatcher, Tokenizer
from .training import ExperimentConfig


def infer(artifact_dir: str, device: Device[NdArray], samples: list[str]) -> list[int]:
    """The predicted class of each sample ("7 3 12 ..."), printed with its probabilities."""
    cfg = ExperimentConfig.load(os.path.join(artifact_dir, "config.json"))
    model = cfg.model.init(device).load_file(os.path.join(artifact_dir, "model"), CompactRecorder(), device)
    batch = TextClassificationBatcher(Tokenizer(), cfg.max_seq_length).inference_batch(samples, device)
    probabilities = model.infer(batch).to_data().to_list()
    predicted = []
    for i, (text, probs) in enumerate(zip(samples, probabilities, strict=True)):
        label = max(range(len(probs)), key=lambda c: probs[c])
        shown = ", ".join(f"{p:.3f}" for p in probs)
        print(f"=== Item {i} === {text!r}: probabilities [{shown}] -> {CountingDataset.class_name(label)}")
        predicted.append(label)
    return predicted
