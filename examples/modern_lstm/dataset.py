"""dataset.rs: the synthetic sequences and the batcher.

Each sequence starts with two numbers drawn uniformly from [0, 1); every
next number is the sum of the two before it plus Gaussian noise. The model
reads the first ``seq_length`` numbers and predicts the last one. Burn's
draws come from the thread's generator, unseeded; here a seed fixes them,
so that a run can be repeated (and the validation sequences, drawn from
another seed, are not the training ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from ferrum import D2, D3, Device, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset import InMemDataset

B = TypeVar("B", bound=Backend)

# Burn's dataset parameters.
NUM_SEQUENCES = 1000
SEQ_LENGTH = 10
NOISE_LEVEL = 0.1
RANDOM_SEED = 5


@dataclass(frozen=True)
class SequenceDatasetItem:
    sequence: tuple[float, ...]  # seq_length + 1 numbers: all but the last of the drawn sequence
    target: float  # its last number

    @staticmethod
    def new(seq_length: int, noise_level: float, rng: np.random.Generator) -> SequenceDatasetItem:
        """One sequence: two uniform numbers, then ``seq_length`` sums of the previous two plus noise."""
        seq = [float(rng.random()), float(rng.random())]
        for _ in range(seq_length):
            seq.append(seq[-2] + seq[-1] + float(rng.normal(0.0, noise_level)))
        return SequenceDatasetItem(tuple(seq[:-1]), seq[-1])


class SequenceDataset(InMemDataset[SequenceDatasetItem]):
    """``num_sequences`` sequences drawn from ``seed``.

    Example:
        >>> data = SequenceDataset(3, seq_length=4, noise_level=0.0, seed=0)
        >>> item = data.get(0)
        >>> len(item.sequence), round(item.sequence[2] - item.sequence[0] - item.sequence[1], 9)
        (5, 0.0)
    """

    def __init__(self, num_sequences: int, seq_length: int, noise_level: float, seed: int) -> None:
        if num_sequences < 0 or seq_length < 1 or noise_level < 0:
            raise ValueError(
                "SequenceDataset needs num_sequences >= 0, seq_length >= 1 and noise_level >= 0, "
                f"found {num_sequences}, {seq_length}, {noise_level}"
            )
        rng = np.random.default_rng(seed)
        items = [SequenceDatasetItem.new(seq_length, noise_level, rng) for _ in range(num_sequences)]
        super().__init__(items)


@dataclass
class SequenceBatch(Generic[B]):
    sequences: Tensor[B, D3]  # [batch_size, seq_length, input_size = 1]
    targets: Tensor[B, D2]  # [batch_size, 1]


class SequenceBatcher(Batcher[SequenceDatasetItem, SequenceBatch[Any]]):
    """Burn 0.20's form ``batch(items, device)``; the numbers become one feature per step."""

    def batch(self, items: list[SequenceDatasetItem], device: Device[B]) -> SequenceBatch[B]:
        sequences = np.array([item.sequence for item in items], np.float32)[:, :, None]
        targets = np.array([[item.target] for item in items], np.float32)
        return SequenceBatch(Tensor.from_numpy(sequences, device), Tensor.from_numpy(targets, device))
