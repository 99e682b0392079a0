"""``Embedding``: a lookup table from token ids to vectors, as in Burn."""

from __future__ import annotations

from ferrum._ferrum import Device, Int, ShapeError, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D2, D3

__all__ = ["Embedding", "EmbeddingConfig"]


@config
class EmbeddingConfig:
    """Configuration of ``Embedding``: ``n_embedding`` vectors of size ``d_model`` (Burn's init: N(0, 1)).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import EmbeddingConfig
        >>> EmbeddingConfig(100, 8).init(NdArray.device()).num_params()
        800
    """

    n_embedding: int
    d_model: int
    initializer: Initializer = Initializer.Normal(0.0, 1.0)

    def __post_init__(self) -> None:
        check_positive_ints("EmbeddingConfig", n_embedding=self.n_embedding, d_model=self.d_model)

    def init(self, device: Device[B]) -> Embedding[B]:
        """A new layer on ``device``."""
        shape = (self.n_embedding, self.d_model)
        return Embedding(weight=self.initializer.init_with(shape, self.n_embedding, self.d_model, device))


class Embedding(Module[B]):
    """Maps ``[batch, seq]`` token ids to ``[batch, seq, d_model]`` rows of ``weight``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.module import Param
        >>> from ferrum.nn import Embedding
        >>> device = NdArray.device()
        >>> table = Embedding(Param(Tensor.from_floats([[0.0, 0.0], [1.0, 2.0]], device)))
        >>> table.forward(Tensor.from_ints([[1, 0]], device)).to_data().to_list()
        [[[1.0, 2.0], [0.0, 0.0]]]
    """

    weight: Param[Tensor[B, D2]]

    def forward(self, indices: Tensor[B, D2, Int]) -> Tensor[B, D3]:
        """Token ids ``[batch, seq]`` to their embeddings ``[batch, seq, d_model]``.

        An id outside ``[0, n_embedding)`` is an ``OutOfBoundsError``; another rank a ``ShapeError``.
        """
        dims = indices.dims()
        if len(dims) != 2:
            expected = "token ids of shape [batch, seq]"
            raise ShapeError(f"Embedding.forward: expected {expected}, found {list(dims)}")
        d_model = self.weight.shape()[1]
        batch, seq = dims
        # The engine's select reports an id outside [0, n_embedding) as OutOfBoundsError.
        flat = indices.reshape((batch * seq,))
        return self.weight.val().select(0, flat).reshape((batch, seq, d_model))

    def _display_settings(self) -> list[tuple[str, object]]:
        n_embedding, d_model = self.weight.shape()
        return [("n_embedding", n_embedding), ("d_model", d_model)]
