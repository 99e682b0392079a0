"""Greedy generation: each new token is the argmax of the logits after the tokens so far."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
from ferrum import D2, D3, Device, Int, Tensor
from ferrum.backend import Backend

from .kv_cache import KvCache

B = TypeVar("B", bound=Backend)
Ids = npt.NDArray[np.int64]
Prompt = Sequence[Sequence[int]] | npt.NDArray[Any]


class CausalLm(Protocol[B]):
    """What ``generate`` needs of a model (``Gpt2`` and ``Llama`` have it)."""

    @property
    def max_positions(self) -> int: ...

    @property
    def vocab_size(self) -> int: ...

    def devices(self) -> list[Device[B]]: ...

    def new_cache(self, batch: int, max_len: int) -> KvCache[B]: ...

    def forward(
        self, ids: Tensor[B, D2, Int], cache: KvCache[B] | None = None, last_only: bool = False
    ) -> Tensor[B, D3]: ...


def prompt_array(model: CausalLm[B], prompt_ids: Prompt, max_new_tokens: int) -> Ids:
    """``prompt_ids`` as ``[batch, prompt_len]`` int64, checked against the model (``ValueError``
    says what is wrong)."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"generate: max_new_tokens must be a positive int, found {max_new_tokens!r}")
    try:
        ids = np.asarray(prompt_ids)
    except ValueError as err:
        raise ValueError(
            f"generate: prompt_ids must be [batch, prompt_len] token ids of equal lengths ({err})"
        ) from None
    if ids.ndim != 2 or ids.shape[0] == 0 or ids.shape[1] == 0:
        raise ValueError(
            f"generate: prompt_ids must be [batch, prompt_len] with both non-zero, found shape {ids.shape}"
        )
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"generate: prompt_ids must be integer token ids, found dtype {ids.dtype}")
    vocab = model.vocab_size
    bad = (ids < 0) | (ids >= vocab)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"generate: token id {int(ids[row, col])} at [{row}, {col}] is outside the vocabulary"
            f" 0..{vocab - 1}"
        )
    # The last new token is produced, never fed back: it needs no position.
    needed = ids.shape[1] + max_new_tokens - 1
    if needed > model.max_positions:
        raise ValueError(
            f"generate: a prompt of {ids.shape[1]} tokens and {max_new_tokens} new tokens need {needed}"
            f" positions, more than the model's max length {model.max_positions}"
        )
    return ids.astype(np.int64)


def generate(
    model: CausalLm[B],
    prompt_ids: Prompt,
    max_new_tokens: int,
    device: Device[B] | None = None,
    use_cache: bool = True,
) -> Ids:
    """The greedy continuation ``[batch, max_new_tokens]`` of ``prompt_ids`` ``[batch, prompt_len]``.

    With ``use_cache`` the prompt runs once and each step feeds one token, attending over the
    keys and values a ``KvCache`` keeps; without, every step reruns the whole sequence (the
    reference the cache must reproduce). ``device`` is the model's unless given. The tokens stay
    on the device until the end: a step's argmax is the next step's input.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from examples.llm_generation.gpt2 import Gpt2Config
        >>> device = NdArray.device()
        >>> model = Gpt2Config(256, 32, 16, 1, 2).init(device)
        >>> generate(model, [[1, 2, 3]], 4).shape
        (1, 4)
    """
    ids = prompt_array(model, prompt_ids, max_new_tokens)
    if device is None:
        device = model.devices()[0]
    batch, prompt_len = ids.shape
    vocab = model.vocab_size
    tokens: Tensor[B, D2, Int] = Tensor.from_numpy(ids, device)
    new: list[Tensor[B, D2, Int]] = []
    if use_cache:
        cache = model.new_cache(batch, prompt_len + max_new_tokens - 1)
        logits = model.forward(tokens, cache, last_only=True)
        for step in range(max_new_tokens):
            token: Tensor[B, D2, Int] = logits.reshape((batch, vocab)).argmax(1)
            new.append(token)
            if step + 1 < max_new_tokens:
                logits = model.forward(token, cache, last_only=True)
    else:
        for step in range(max_new_tokens):
            logits = model.forward(tokens, None, last_only=True)
            token = logits.reshape((batch, vocab)).argmax(1)
            new.append(token)
            if step + 1 < max_new_tokens:
                tokens = Tensor.cat([tokens, token], 1)
    return np.asarray(Tensor.cat(new, 1).to_numpy(), dtype=np.int64)
