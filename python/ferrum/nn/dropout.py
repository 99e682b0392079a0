"""``Dropout``: zeroes elements at random while training, as in Burn.

Active only on an autodiff backend (training); on a plain backend (after
``model.valid()``) it returns its input. Kept elements are scaled by
``1 / (1 - prob)`` so the expected value is unchanged.
"""

from __future__ import annotations

from ferrum._ferrum import Distribution, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_probability
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B, D

__all__ = ["Dropout", "DropoutConfig"]


@config
class DropoutConfig:
    """Configuration of ``Dropout``: the probability ``prob`` of zeroing each element.

    Example:
        >>> from ferrum.nn import DropoutConfig
        >>> DropoutConfig(0.1).init().prob
        0.1
    """

    prob: float

    def __post_init__(self) -> None:
        check_probability("DropoutConfig", "prob", self.prob)

    def init(self) -> Dropout:
        """The layer (it has no parameters, so no device)."""
        return Dropout(self.prob)


class Dropout(Stateless):
    """Zeroes each element with probability ``prob`` during training; identity otherwise.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.nn import Dropout
        >>> out = Dropout(1.0).forward(Tensor.ones((3,), Autodiff[NdArray].device()))
        >>> out.to_data().to_list()
        [0.0, 0.0, 0.0]
    """

    prob: float

    def __post_init__(self) -> None:
        check_probability("Dropout", "prob", self.prob)

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """Each element zeroed with probability ``prob``, the others scaled by ``1 / (1 - prob)``.

        Any shape, kept.

        Only on an autodiff backend (training); on a plain backend (``model.valid()``, inference) ``x``
        passes unchanged, as in Burn.
        """
        if not x.device().is_autodiff or self.prob == 0.0:
            return x
        if self.prob == 1.0:
            return x * 0.0
        keep = 1.0 - self.prob
        # The mask is scaled before it meets x, so only one op is recorded for backward.
        mask = x.random_like(Distribution.Bernoulli(keep)) * (1.0 / keep)
        return x * mask
