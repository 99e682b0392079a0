"""What the transformer encoder and decoder share: checks, sub-layer configs, residual step, caches."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ferrum._ferrum import Tensor
from ferrum.backend import Backend
from ferrum.nn.attention.mha import MultiHeadAttentionConfig, check_heads
from ferrum.nn.cache import TensorCache
from ferrum.nn.dropout import Dropout
from ferrum.nn.transformer.pwff import PositionWiseFeedForwardConfig
from ferrum.rank import D3

if TYPE_CHECKING:
    from ferrum.nn.transformer.decoder import TransformerDecoderConfig
    from ferrum.nn.transformer.encoder import TransformerEncoderConfig

B = TypeVar("B", bound=Backend)

#: The settings a stack config hands to its module, in the order the module prints them.
SETTINGS = ("d_model", "d_ff", "n_heads", "n_layers", "dropout", "norm_first", "quiet_softmax")

Sublayer = Callable[[Tensor[B, D3]], Tensor[B, D3]]


def check_layers(owner: str, d_model: int, d_ff: int, n_heads: int, n_layers: int, dropout: float) -> None:
    """Raise ``ValueError`` naming ``owner``'s field unless the stack's sizes and dropout are valid."""
    check_heads(owner, d_model, n_heads)
    for name, value in (("d_ff", d_ff), ("n_layers", n_layers)):
        if not isinstance(value, int) or isinstance(value, bool) or value < (name == "d_ff"):
            raise ValueError(
                f"{owner}.{name} must be a {'positive' if name == 'd_ff' else 'non-negative'} int,"
                f" found {value!r}"
            )
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
        raise ValueError(f"{owner}.dropout must be a probability in [0, 1], found {dropout!r}")


def sublayer_configs(
    config: TransformerEncoderConfig | TransformerDecoderConfig,
) -> tuple[MultiHeadAttentionConfig, PositionWiseFeedForwardConfig]:
    """The attention and feed-forward configs every layer of ``config``'s stack is built from."""
    mha = MultiHeadAttentionConfig(
        config.d_model,
        config.n_heads,
        config.dropout,
        quiet_softmax=config.quiet_softmax,
        initializer=config.initializer,
    )
    return mha, PositionWiseFeedForwardConfig(config.d_model, config.d_ff, config.dropout, config.initializer)


def settings(owner: object) -> dict[str, Any]:
    """``owner``'s stack settings by name: a config's, to build the module; a module's, to print it."""
    return {name: getattr(owner, name) for name in SETTINGS}


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


class Step:
    """A sub-layer's cache: computes the newest position and joins it to what it kept."""

    def __init__(self) -> None:
        self.cache = TensorCache()

    def wrap(self, f: Callable[[Tensor[B, D3]], Tensor[B, D3]]) -> Callable[[Tensor[B, D3]], Tensor[B, D3]]:
        """``f`` computing only the newest position, joined to what the cache kept."""
        return lambda x: self.cache.forward_autoregressive(x, 1, f)
