"""What the transformer encoder and decoder share: checks, sub-layer configs, residual step, caches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ferrum._ferrum import Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_int, check_probability
from ferrum.module import Module
from ferrum.nn.attention.mha import KAIMING, MultiHeadAttentionConfig, check_heads
from ferrum.nn.cache import TensorCache
from ferrum.nn.dropout import Dropout
from ferrum.nn.initializer import Initializer
from ferrum.nn.transformer.pwff import PositionWiseFeedForwardConfig
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D3

#: The settings a stack config hands to its module, in the order the module prints them.
SETTINGS = ("d_model", "d_ff", "n_heads", "n_layers", "dropout", "norm_first", "quiet_softmax")

Sublayer = Callable[[Tensor[B, D3]], Tensor[B, D3]]
L = TypeVar("L", bound=Module[Any])


def check_layers(owner: str, d_model: int, d_ff: int, n_heads: int, n_layers: int, dropout: float) -> None:
    """Raise ``ValueError`` naming ``owner``'s field unless the stack's sizes and dropout are valid."""
    check_heads(owner, d_model, n_heads)
    check_positive_int(owner, "d_ff", d_ff)
    if not isinstance(n_layers, int) or isinstance(n_layers, bool) or n_layers < 0:
        raise ValueError(f"{owner}.n_layers must be a non-negative int, found {n_layers!r}")
    check_probability(owner, "dropout", dropout)


@config
class StackConfig:
    """The fields (Burn's, with its defaults) and checks of the encoder's and the decoder's configs."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = KAIMING

    def __post_init__(self) -> None:
        owner = type(self).__name__
        check_layers(owner, self.d_model, self.d_ff, self.n_heads, self.n_layers, self.dropout)

    def sublayer_configs(self) -> tuple[MultiHeadAttentionConfig, PositionWiseFeedForwardConfig]:
        """The attention and feed-forward configs every layer of the stack is built from."""
        mha = MultiHeadAttentionConfig(
            self.d_model,
            self.n_heads,
            self.dropout,
            quiet_softmax=self.quiet_softmax,
            initializer=self.initializer,
        )
        return mha, PositionWiseFeedForwardConfig(self.d_model, self.d_ff, self.dropout, self.initializer)


def settings(owner: object) -> dict[str, Any]:
    """``owner``'s stack settings by name: a config's, to build the module; a module's, to print it."""
    return {name: getattr(owner, name) for name in SETTINGS}


class StackModule(Module[B], Generic[B, L]):
    """What the encoder and the decoder hold: their ``layers`` and the stack's settings, which they print."""

    layers: list[L]
    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float
    norm_first: bool
    quiet_softmax: bool

    def _display_settings(self) -> list[tuple[str, object]]:
        return list(settings(self).items())


def add_residual(
    x: Tensor[B, D3], out: Tensor[B, D3], dropout: Dropout, norm: Sublayer[B], norm_first: bool
) -> tuple[Tensor[B, D3], Tensor[B, D3]]:
    """``x`` plus the dropped-out sub-layer output, and the next sub-layer's input.

    With ``norm_first`` the sum stays as it is and the next input is its norm;
    otherwise the sum itself is normalised and is both.
    """
    x = x + dropout.forward(out)
    if norm_first:
        return x, norm(x)
    x = norm(x)
    return x, x


def block(
    x: Tensor[B, D3],
    attend: Sequence[Sublayer[B]],
    norms: Sequence[Sublayer[B]],
    pwff: Sublayer[B],
    dropout: Dropout,
    norm_first: bool,
) -> Tensor[B, D3]:
    """One transformer layer's body: each attention of ``attend`` then ``pwff``, each with dropout,
    a residual connection and its norm.

    ``norms`` holds one norm per attention and then the layer's last one (Burn's
    ``norm_2`` of an encoder layer, ``norm_3`` of a decoder layer): with
    ``norm_first`` that one normalizes the layer's input, otherwise its output.
    """
    residual = norms[-1](x) if norm_first else x
    for attention, norm in zip(attend, norms, strict=False):
        x, residual = add_residual(x, attention(residual), dropout, norm, norm_first)
    x = x + dropout.forward(pwff(residual))
    return x if norm_first else norms[-1](x)


class Step:
    """A sub-layer's cache: computes the newest position and joins it to what it kept."""

    def __init__(self) -> None:
        self.cache = TensorCache()

    def wrap(self, f: Callable[[Tensor[B, D3]], Tensor[B, D3]]) -> Callable[[Tensor[B, D3]], Tensor[B, D3]]:
        """``f`` computing only the newest position, joined to what the cache kept."""
        return lambda x: self.cache.forward_autoregressive(x, 1, f)


def cached(steps: Sequence[Step] | None, sublayers: Sequence[Sublayer[B]]) -> list[Sublayer[B]]:
    """``sublayers`` as they are without a cache, else each wrapped by its ``Step`` of ``steps``."""
    if steps is None:
        return list(sublayers)
    return [step.wrap(f) for step, f in zip(steps, sublayers, strict=True)]
