"""data/: the generated sentences, their tokenizer and the batcher.

Burn's example downloads AG News or DBpedia and uses a BERT tokenizer. Here
the data is generated, so nothing is downloaded: sentences of 3 to 12 tokens
over a vocabulary of 20, written as space-separated numbers ("7 3 12"),
labelled 1 when the token 7 occurs more often than the token 3. Sentences of
one batch have different lengths, so the batch is padded with token 0 and the
encoder is told where the padding is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ferrum import D1, D2, Bool, Device, Int, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset import InMemDataset
from ferrum.nn.attention import generate_padding_mask

B = TypeVar("B", bound=Backend)

PAD, VOCAB, MAX_LEN = 0, 20, 12
CLASS_NAMES = ("no more 7s than 3s", "more 7s than 3s")


@dataclass(frozen=True)
class TextClassificationItem:
    text: str  # token ids 1..19 separated by spaces
    label: int  # 1 when "7" occurs more often than "3"


def sentence(rng: random.Random) -> TextClassificationItem:
    """A random sentence of 3 to ``MAX_LEN`` tokens and its label."""
    tokens = [rng.randrange(1, VOCAB) for _ in range(rng.randint(3, MAX_LEN))]
    return TextClassificationItem(" ".join(map(str, tokens)), int(tokens.count(7) > tokens.count(3)))


class CountingDataset:
    """Burn's ``TextClassificationDataset``: the train and test splits, the classes and their names."""

    @staticmethod
    def train(size: int, seed: int = 0) -> InMemDataset[TextClassificationItem]:
        rng = random.Random(seed)
        return InMemDataset([sentence(rng) for _ in range(size)])

    @staticmethod
    def test(size: int = 500) -> InMemDataset[TextClassificationItem]:
        # One generator per sentence, seeded apart from the training stream: the same test set every run.
        return InMemDataset([sentence(random.Random(1000 + i)) for i in range(size)])

    @staticmethod
    def num_classes() -> int:
        return len(CLASS_NAMES)

    @staticmethod
    def class_name(label: int) -> str:
        return CLASS_NAMES[label]


class Tokenizer:
    """Space-separated numbers to token ids; id 0 is the padding.

    Example:
        >>> Tokenizer().encode("7 3 12")
        [7, 3, 12]
    """

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``; ValueError naming a word that is no id in ``1..VOCAB-1``."""
        ids = []
        for word in text.split():
            if not word.isdigit() or not 1 <= int(word) < VOCAB:
                raise ValueError(f"Tokenizer: {word!r} in {text!r} is no token; tokens are 1 to {VOCAB - 1}")
            ids.append(int(word))
        if not ids:
            raise ValueError(f"Tokenizer: {text!r} holds no token")
        return ids

    def vocab_size(self) -> int:
        return VOCAB

    def pad_token(self) -> int:
        return PAD


@dataclass
class TextClassificationTrainingBatch(Generic[B]):
    tokens: Tensor[B, D2, Int]  # [batch, seq], padded with PAD
    labels: Tensor[B, D1, Int]  # [batch]
    mask_pad: Tensor[B, D2, Bool]  # [batch, seq], true at padding


@dataclass
class TextClassificationInferenceBatch(Generic[B]):
    tokens: Tensor[B, D2, Int]  # [batch, seq]
    mask_pad: Tensor[B, D2, Bool]  # [batch, seq]


class TextClassificationBatcher(Batcher[TextClassificationItem, TextClassificationTrainingBatch[Any]]):
    """Items to padded token tensors, their mask and labels, on the device the Learner gives."""

    def __init__(self, tokenizer: Tokenizer, max_seq_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    def inference_batch(self, texts: list[str], device: Device[B]) -> TextClassificationInferenceBatch[B]:
        tokens = [self.tokenizer.encode(text) for text in texts]
        padded = generate_padding_mask(self.tokenizer.pad_token(), tokens, self.max_seq_length, device)
        return TextClassificationInferenceBatch(padded.tensor, padded.mask)

    def batch(
        self, items: list[TextClassificationItem], device: Device[B]
    ) -> TextClassificationTrainingBatch[B]:
        inputs = self.inference_batch([item.text for item in items], device)
        labels: Tensor[B, D1, Int] = Tensor.from_ints([item.label for item in items], device)
        return TextClassificationTrainingBatch(inputs.tokens, labels, inputs.mask_pad)
