"""AdamW (Burn's ``AdamWConfig``/``AdamW``): Adam with decoupled weight decay.

The weights shrink by ``lr * weight_decay`` of themselves each step, apart
from the adaptive update: ``param = param * (1 - lr * wd) - lr * m_hat / (sqrt(v_hat) + eps)``.
With ``cautious_weight_decay`` (Burn 0.20, arXiv:2510.12402) a weight shrinks
only where its sign agrees with the first moment's, so decay never pushes
against the update.

Example:
    >>> from ferrum.optim import AdamWConfig
    >>> AdamWConfig().weight_decay
    0.0001
"""

from __future__ import annotations

from ferrum.config import config
from ferrum.config.checks import check_number
from ferrum.optim.adam import AdaptiveMomentumOptimizer, check_betas
from ferrum.optim.clipping import GradientClippingConfig

__all__ = ["AdamW", "AdamWConfig"]


@config
class AdamWConfig:
    """Configuration of AdamW (Burn's defaults).

    Example:
        >>> from ferrum.optim import AdamWConfig
        >>> AdamWConfig().with_weight_decay(0.01).init().config.weight_decay
        0.01
    """

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: float = 1e-4
    cautious_weight_decay: bool = False
    grad_clipping: GradientClippingConfig | None = None

    def __post_init__(self) -> None:
        check_betas("AdamWConfig", self.beta_1, self.beta_2, self.epsilon)
        check_number("AdamWConfig", "weight_decay", self.weight_decay)
        if not isinstance(self.cautious_weight_decay, bool):
            found = self.cautious_weight_decay
            raise ValueError(f"AdamWConfig.cautious_weight_decay must be a bool, found {found!r}")

    def init(self) -> AdamW:
        """A fresh optimizer (no state yet)."""
        return AdamW(self)


class AdamW(AdaptiveMomentumOptimizer[AdamWConfig]):
    """AdamW; build it with ``AdamWConfig(...).init()``.

    Example:
        >>> from ferrum.optim import AdamWConfig
        >>> type(AdamWConfig().init()).__name__
        'AdamW'
    """

    def _weight_decay(self) -> tuple[float | None, bool, bool]:
        # Decoupled: the weights shrink by lr * weight_decay apart from the adaptive update.
        return self.config.weight_decay, True, self.config.cautious_weight_decay
