"""The losses Burn added in 0.20: ``PoissonNllLoss`` and ``CosineEmbeddingLoss``
(re-exported by ``ferrum.nn.loss``).
"""

from __future__ import annotations

import math

from ferrum._ferrum import ArgumentError, Float, Int, ShapeError, Tensor
from ferrum.activation import relu
from ferrum.config import config
from ferrum.linalg import cosine_similarity
from ferrum.nn.reduction import Reduction, check_same_shape
from ferrum.nn.reduction import reduce_loss as _reduce
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1, D2

__all__ = ["CosineEmbeddingLoss", "CosineEmbeddingLossConfig", "PoissonNllLoss", "PoissonNllLossConfig"]


@config
class PoissonNllLossConfig:
    """Configuration of ``PoissonNllLoss`` (Burn's fields and defaults).

    ``log_input``: predictions are log-rates (else rates); ``full``: add the
    Stirling term ``t log t - t + log(2 pi t) / 2`` for targets above 1;
    ``eps``: added to rates before their log.

    Example:
        >>> from ferrum.nn.loss import PoissonNllLossConfig
        >>> PoissonNllLossConfig().with_full(True).init().full
        True
    """

    log_input: bool = True
    full: bool = False
    eps: float = 1e-8

    def __post_init__(self) -> None:
        if isinstance(self.eps, bool) or not isinstance(self.eps, (int, float)) or not self.eps > 0:
            raise ValueError(f"PoissonNllLossConfig.eps must be positive, found {self.eps!r}")

    def init(self) -> PoissonNllLoss:
        """The loss."""
        return PoissonNllLoss(self.log_input, self.full, float(self.eps))


class PoissonNllLoss(Stateless):
    """The negative log-likelihood of targets under Poisson rates (torch's ``PoissonNLLLoss``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import PoissonNllLoss
        >>> device = NdArray.device()
        >>> rates = Tensor.from_floats([1.0, 2.0], device)
        >>> loss = PoissonNllLoss(False, False, 1e-8).forward_no_reduction(rates, rates)
        >>> [round(v, 4) for v in loss.to_data().to_list()]
        [1.0, 0.6137]
    """

    log_input: bool
    full: bool
    eps: float

    def forward(
        self,
        predictions: Tensor[B, D, Float],
        targets: Tensor[B, D, Float],
        reduction: Reduction = Reduction.Mean,
    ) -> Tensor[B, D1, Float]:
        """The loss reduced to one value (``Mean``, ``Auto`` or ``Sum``)."""
        return _reduce(self.forward_no_reduction(predictions, targets), reduction)

    def forward_no_reduction(
        self, predictions: Tensor[B, D, Float], targets: Tensor[B, D, Float]
    ) -> Tensor[B, D, Float]:
        """The loss of each element: ``exp(p) - t p`` (log input) or ``p - t log(p + eps)``."""
        check_same_shape("PoissonNllLoss.forward", predictions, targets, ("predictions", "targets"))
        if not targets.greater_equal_elem(0.0).all().into_scalar():
            raise ArgumentError("PoissonNllLoss: every target must be >= 0 (they are counts)")
        if self.log_input:
            loss = predictions.exp() - targets * predictions
        else:
            if not predictions.greater_equal_elem(0.0).all().into_scalar():
                raise ArgumentError(
                    "PoissonNllLoss: with log_input=False every prediction (a rate) must be >= 0"
                )
            loss = predictions - targets * (predictions + self.eps).log()
        if self.full:
            # The Stirling approximation of log(t!), counted only for t > 1 (as Burn and torch).
            safe = targets.clamp_min(1.0)
            stirling = safe * safe.log() - safe + (safe * (2.0 * math.pi)).log() * 0.5
            loss = loss + stirling.mask_fill(targets.lower_equal_elem(1.0), 0.0)
        return loss


@config
class CosineEmbeddingLossConfig:
    """Configuration of ``CosineEmbeddingLoss`` (Burn's fields and defaults: margin 0, mean).

    Example:
        >>> from ferrum.nn.loss import CosineEmbeddingLossConfig
        >>> CosineEmbeddingLossConfig().with_margin(0.5).init().margin
        0.5
    """

    margin: float = 0.0
    reduction: Reduction = Reduction.Mean

    def __post_init__(self) -> None:
        if self.reduction is Reduction.Auto:
            raise ValueError(
                "CosineEmbeddingLossConfig.reduction must be Mean or Sum (Burn rejects Auto here)"
            )

    def init(self) -> CosineEmbeddingLoss:
        """The loss."""
        return CosineEmbeddingLoss(float(self.margin), self.reduction)


class CosineEmbeddingLoss(Stateless):
    """``1 - cos(x1, x2)`` for pairs labelled 1, ``max(0, cos(x1, x2) - margin)`` for pairs labelled -1.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import CosineEmbeddingLossConfig
        >>> device = NdArray.device()
        >>> a = Tensor.from_floats([[1.0, 0.0], [1.0, 0.0]], device)
        >>> b = Tensor.from_floats([[0.0, 1.0], [1.0, 0.0]], device)
        >>> labels = Tensor.from_ints([1, -1], device)
        >>> CosineEmbeddingLossConfig().init().forward_no_reduction(a, b, labels).to_data().to_list()
        [1.0, 1.0]
    """

    margin: float
    reduction: Reduction

    def forward(
        self, input1: Tensor[B, D2, Float], input2: Tensor[B, D2, Float], target: Tensor[B, D1, Int]
    ) -> Tensor[B, D1, Float]:
        """The mean (or sum) of the pairs' losses."""
        return _reduce(self.forward_no_reduction(input1, input2, target), self.reduction)

    def forward_no_reduction(
        self, input1: Tensor[B, D2, Float], input2: Tensor[B, D2, Float], target: Tensor[B, D1, Int]
    ) -> Tensor[B, D1, Float]:
        """Each pair's loss: ``[batch, d], [batch, d], [batch] -> [batch]``."""
        a, b, t = input1.dims(), input2.dims(), target.dims()
        if len(a) != 2 or a != b or t != (a[0],):
            raise ShapeError(
                f"CosineEmbeddingLoss: expected input1 and input2 [batch, d] and target [batch], found"
                f" {list(a)}, {list(b)} and {list(t)}"
            )
        batch = a[0]
        cos = cosine_similarity(input1, input2, 1).reshape((batch,))
        loss = cos.zeros_like()
        loss = loss.mask_where(target.equal_elem(1), 1.0 - cos)
        return loss.mask_where(target.equal_elem(-1), relu(cos - self.margin))
