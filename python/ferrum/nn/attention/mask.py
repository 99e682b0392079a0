"""Attention masks, as in Burn's ``burn::nn::attention``: true where attention is *not* allowed.

Example:
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.attention import generate_autoregressive_mask, generate_padding_mask
    >>> device = NdArray.device()
    >>> generate_autoregressive_mask(1, 3, device).to_data().to_list()
    [[[False, True, True], [False, False, True], [False, False, False]]]
    >>> padded = generate_padding_mask(0, [[4, 5], [6]], None, device)
    >>> padded.tensor.to_data().to_list(), padded.mask.to_data().to_list()
    ([[4, 5], [6, 0]], [[False, False], [False, True]])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar, Generic, Literal

import numpy as np

from ferrum._ferrum import Bool, Device, Int, Tensor
from ferrum.config import config
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D2, D3

__all__ = ["GeneratePaddingMask", "SeqLengthOption", "generate_autoregressive_mask", "generate_padding_mask"]


def _count(name: str, value: object, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, found {value!r}")
    return value


def generate_autoregressive_mask(batch_size: int, seq_length: int, device: Device[B]) -> Tensor[B, D3, Bool]:
    """``[batch_size, seq_length, seq_length]``, true above the diagonal: step ``i`` sees steps ``0..=i``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import generate_autoregressive_mask
        >>> generate_autoregressive_mask(2, 4, NdArray.device()).dims()
        (2, 4, 4)
    """
    _count("generate_autoregressive_mask: batch_size", batch_size, 0)
    _count("generate_autoregressive_mask: seq_length", seq_length, 0)
    mask: Tensor[B, D2, Bool] = Tensor.tril_mask((seq_length, seq_length), 0, device)
    return mask.reshape((1, seq_length, seq_length)).expand((batch_size, seq_length, seq_length))


@config
class SeqLengthOption:
    """How long padded sequences are: ``NoMax`` (the longest), ``Max(n)`` (the longest, at most
    ``n``) or ``Fixed(n)`` (exactly ``n``, padding or cutting).

    Example:
        >>> from ferrum.nn.attention import SeqLengthOption
        >>> SeqLengthOption.Fixed(8)
        SeqLengthOption.Fixed(8)
    """

    kind: Literal["NoMax", "Max", "Fixed"]
    length: int | None = None

    NoMax: ClassVar[SeqLengthOption]

    def __post_init__(self) -> None:
        if self.kind not in ("NoMax", "Max", "Fixed"):
            raise ValueError(f"SeqLengthOption.kind: expected NoMax, Max or Fixed, found {self.kind!r}")
        if self.kind == "NoMax" and self.length is not None:
            raise ValueError(f"SeqLengthOption.NoMax takes no length, found {self.length!r}")
        if self.kind != "NoMax":
            _count(f"SeqLengthOption.{self.kind}: length", self.length, 0)

    @staticmethod
    def Max(length: int) -> SeqLengthOption:
        """The longest sequence's length, at most ``length``."""
        return SeqLengthOption("Max", length)

    @staticmethod
    def Fixed(length: int) -> SeqLengthOption:
        """Exactly ``length``."""
        return SeqLengthOption("Fixed", length)

    def __repr__(self) -> str:
        return (
            "SeqLengthOption.NoMax" if self.length is None else f"SeqLengthOption.{self.kind}({self.length})"
        )


SeqLengthOption.NoMax = SeqLengthOption("NoMax")


@dataclasses.dataclass(frozen=True)
class GeneratePaddingMask(Generic[B]):
    """Padded token ids ``[batch, seq]`` (Int) and the mask of the padding ``[batch, seq]`` (Bool)."""

    tensor: Tensor[B, D2, Int]
    mask: Tensor[B, D2, Bool]


def generate_padding_mask(
    pad_token: int,
    tokens_list: Sequence[Sequence[int]],
    seq_length: SeqLengthOption | int | None,
    device: Device[B],
) -> GeneratePaddingMask[B]:
    """Pad ``tokens_list`` with ``pad_token`` into one ``[batch, seq]`` tensor, with its mask.

    ``seq_length``: None (``NoMax``), an int (``Max(n)``, as Burn's ``Some(n)``) or a
    ``SeqLengthOption``. Longer sequences are cut. The mask is true wherever the
    tensor holds ``pad_token``, as in Burn.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import SeqLengthOption, generate_padding_mask
        >>> out = generate_padding_mask(0, [[1, 2, 3]], SeqLengthOption.Fixed(5), NdArray.device())
        >>> out.tensor.to_data().to_list()
        [[1, 2, 3, 0, 0]]
    """
    _count("generate_padding_mask: pad_token", pad_token, 0)
    if isinstance(seq_length, bool) or not (
        seq_length is None or isinstance(seq_length, (int, SeqLengthOption))
    ):
        raise TypeError(
            "generate_padding_mask: seq_length must be None, an int or a SeqLengthOption,"
            f" found {seq_length!r}"
        )
    option = (
        SeqLengthOption.NoMax
        if seq_length is None
        else SeqLengthOption.Max(seq_length)
        if isinstance(seq_length, int)
        else seq_length
    )
    rows = [list(tokens) for tokens in tokens_list]
    for i, row in enumerate(rows):
        for token in row:
            if not isinstance(token, (int, np.integer)) or isinstance(token, bool) or token < 0:
                raise ValueError(
                    f"generate_padding_mask: tokens_list[{i}] holds {token!r}; token ids are ints >= 0"
                )
    longest = max((len(row) for row in rows), default=1)
    size = longest if option.kind == "NoMax" else option.length
    assert size is not None
    if option.kind not in ("NoMax", "Fixed"):
        size = min(longest, size)
    data = np.full((len(rows), size), pad_token, dtype=np.int64)
    for i, row in enumerate(rows):
        cut = row[:size]
        data[i, : len(cut)] = cut
    tensor: Tensor[B, D2, Int] = Tensor.from_numpy(data, device)
    return GeneratePaddingMask(tensor, tensor.equal_elem(pad_token))
