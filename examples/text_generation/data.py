"""data/: the text as passages, the character tokenizer, and the batcher of shifted sequences.

Burn's example reads DBpedia abstracts from the Hugging Face hub and uses the
GPT-2 tokenizer; both are downloads. Here the text ships with the example
(``coriolanus.txt``: the first 100 KB of Karpathy's ``tinyshakespeare``,
Shakespeare's *Coriolanus*, public domain) and the tokenizer is one id per
character of the text, plus Burn's three special tokens.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ferrum import D2, Bool, Device, Int, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset import InMemDataset
from ferrum.nn.attention import generate_padding_mask

B = TypeVar("B", bound=Backend)

DEFAULT_TEXT = Path(__file__).resolve().parent / "coriolanus.txt"
SPECIAL_TOKENS = ("[START]", "[END]", "[PAD]")


@dataclass(frozen=True)
class TextGenerationItem:
    """One passage of the text: a speaker's line and (part of) what they say."""

    text: str


def read_passages(path: str | Path, max_chars: int) -> list[str]:
    """The speeches of a play text (blocks separated by blank lines), cut at line ends into
    passages of at most ``max_chars`` characters; a continued speech repeats its speaker's line.

    A line longer than ``max_chars`` is cut, so every passage fits.
    """
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    passages: list[str] = []
    for block in text.split("\n\n"):
        lines = [line[:max_chars] for line in block.strip("\n").splitlines() if line.strip()]
        if not lines:
            continue
        speaker = lines[0] if lines[0].endswith(":") else ""
        current = lines[0]
        for line in lines[1:]:
            if len(current) + 1 + len(line) <= max_chars:
                current += "\n" + line
            else:
                passages.append(current)
                head = speaker + "\n" + line
                current = head if speaker and len(head) <= max_chars else line
        passages.append(current)
    if len(passages) < 2:
        raise ValueError(f"{file}: {len(passages)} passages (blank-line separated); training needs 2")
    return passages


def split_passages(
    passages: list[str], test_fraction: float
) -> tuple[InMemDataset[TextGenerationItem], InMemDataset[TextGenerationItem]]:
    """The passages in order, the last ``test_fraction`` of them held out (later scenes, unseen)."""
    cut = max(1, min(len(passages) - 1, round(len(passages) * (1.0 - test_fraction))))
    items = [TextGenerationItem(p) for p in passages]
    return InMemDataset(items[:cut]), InMemDataset(items[cut:])


class Tokenizer(ABC):
    """Burn's ``Tokenizer`` trait: text to token ids and back, with the special tokens' ids."""

    @abstractmethod
    def encode(self, value: str, special_tokens: bool) -> list[int]:
        """The ids of ``value``, between ``[START]`` and ``[END]`` when ``special_tokens``."""

    @abstractmethod
    def decode(self, tokens: list[int]) -> str: ...

    @abstractmethod
    def vocab_size(self) -> int: ...

    @abstractmethod
    def pad_token(self) -> int: ...

    @abstractmethod
    def start_token(self) -> int: ...

    @abstractmethod
    def end_token(self) -> int: ...


class CharTokenizer(Tokenizer):
    """One id per character of ``alphabet``, then ``[START]``, ``[END]`` and ``[PAD]``.

    Example:
        >>> tokenizer = CharTokenizer("ab")
        >>> tokenizer.encode("ba", True)
        [2, 1, 0, 3]
        >>> tokenizer.decode([1, 0, 4])
        'ba[PAD]'
    """

    def __init__(self, alphabet: str) -> None:
        if len(set(alphabet)) != len(alphabet) or not alphabet:
            raise ValueError(f"CharTokenizer: the alphabet must be distinct characters, found {alphabet!r}")
        self.alphabet = alphabet
        self.ids = {char: i for i, char in enumerate(alphabet)}

    @staticmethod
    def of_text(path: str | Path) -> CharTokenizer:
        """The tokenizer of every character in the file ``path``, in code point order."""
        return CharTokenizer("".join(sorted(set(Path(path).read_text(encoding="utf-8")))))

    def encode(self, value: str, special_tokens: bool) -> list[int]:
        unknown = sorted(set(value) - self.ids.keys())
        if unknown:
            raise ValueError(
                f"CharTokenizer: {''.join(unknown)!r} not in the alphabet of the training text "
                f"({len(self.alphabet)} characters: {self.alphabet!r})"
            )
        ids = [self.ids[char] for char in value]
        return [self.start_token(), *ids, self.end_token()] if special_tokens else ids

    def decode(self, tokens: list[int]) -> str:
        size = len(self.alphabet)
        return "".join(self.alphabet[t] if t < size else SPECIAL_TOKENS[t - size] for t in tokens)

    def vocab_size(self) -> int:
        return len(self.alphabet) + len(SPECIAL_TOKENS)

    def start_token(self) -> int:
        return len(self.alphabet)

    def end_token(self) -> int:
        return len(self.alphabet) + 1

    def pad_token(self) -> int:
        return len(self.alphabet) + 2


@dataclass
class TrainingTextGenerationBatch(Generic[B]):
    """Each passage's tokens but the last as inputs, all but the first as targets (the next token)."""

    tokens_inputs: Tensor[B, D2, Int]  # [batch, seq]
    targets: Tensor[B, D2, Int]  # [batch, seq]
    mask_pad: Tensor[B, D2, Bool]  # [batch, seq], true at padding


class TextGenerationBatcher(Batcher[TextGenerationItem, TrainingTextGenerationBatch[Any]]):
    """Passages to padded, shifted token tensors on the device the Learner gives."""

    def __init__(self, tokenizer: Tokenizer, max_seq_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    def batch(self, items: list[TextGenerationItem], device: Device[B]) -> TrainingTextGenerationBatch[B]:
        tokens = [self.tokenizer.encode(item.text, True) for item in items]
        padded = generate_padding_mask(self.tokenizer.pad_token(), tokens, self.max_seq_length, device)
        batch_size, seq_length = padded.tensor.dims()
        inputs = padded.tensor.slice([(0, batch_size), (0, seq_length - 1)])
        targets = padded.tensor.slice([(0, batch_size), (1, seq_length)])
        mask_pad = padded.mask.slice([(0, batch_size), (0, seq_length - 1)])
        return TrainingTextGenerationBatch(inputs, targets, mask_pad)
