"""``BatchNorm``: per-channel normalization over the batch, with running statistics.

In training (an autodiff backend) it normalizes with the batch's mean and
(biased) variance and folds them into ``running_mean``/``running_var`` with
``momentum``; after ``model.valid()`` (a plain backend) it uses the running
statistics, as Burn does.
"""

from __future__ import annotations

from ferrum._ferrum import Device, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_epsilon, check_positive_int
from ferrum.module import Module, Param, RunningState
from ferrum.nn.initializer import Initializer
from ferrum.nn.norm.checks import check_channels, feature_shape
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1

__all__ = ["BatchNorm", "BatchNormConfig"]


@config
class BatchNormConfig:
    """Configuration of ``BatchNorm`` (Burn's defaults: epsilon 1e-5, momentum 0.1).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import BatchNormConfig
        >>> BatchNormConfig(16).with_momentum(0.01).init(NdArray.device()).momentum
        0.01
    """

    num_features: int
    epsilon: float = 1e-5
    momentum: float = 0.1

    def __post_init__(self) -> None:
        check_positive_int("BatchNormConfig", "num_features", self.num_features)
        check_epsilon("BatchNormConfig", self.epsilon)
        if isinstance(self.momentum, bool) or not 0.0 <= self.momentum <= 1.0:
            raise ValueError(f"BatchNormConfig.momentum must be in [0, 1], found {self.momentum!r}")

    def init(self, device: Device[B]) -> BatchNorm[B]:
        """A new layer on ``device``: gamma ones, beta zeros, running mean 0 and variance 1."""
        shape = (self.num_features,)
        return BatchNorm(
            gamma=Initializer.Ones.init(shape, device),
            beta=Initializer.Zeros.init(shape, device),
            running_mean=RunningState(Tensor.zeros(shape, device)),
            running_var=RunningState(Tensor.ones(shape, device)),
            momentum=self.momentum,
            epsilon=self.epsilon,
        )


class BatchNorm(Module[B]):
    """Normalizes ``[batch, channels, ...]`` inputs per channel, then scales by gamma and shifts by beta.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.nn import BatchNormConfig
        >>> device = Autodiff[NdArray].device()
        >>> bn = BatchNormConfig(1).init(device)
        >>> x = Tensor.from_floats([[[1.0, 3.0]], [[5.0, 7.0]]], device)
        >>> _ = bn.forward(x)
        >>> bn.running_mean.value().to_data().to_list()
        [0.4000000059604645]
    """

    gamma: Param[Tensor[B, D1]]
    beta: Param[Tensor[B, D1]]
    running_mean: RunningState[Tensor[B, D1]]
    running_var: RunningState[Tensor[B, D1]]
    momentum: float
    epsilon: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[batch, channels, ...]`` in, same shape out."""
        channels = self.gamma.shape()[0]
        check_channels("BatchNorm", x, channels)
        shape = feature_shape(x.rank(), channels)
        if not x.device().is_autodiff:
            # Inference: fold the statistics and the affine part into one scale and shift per
            # channel (as PyTorch's CPU kernel does), two passes over x instead of four.
            scale = self.gamma.val() / (self.running_var.value() + self.epsilon).sqrt()
            shift = self.beta.val() - self.running_mean.value() * scale
            return x * scale.reshape(shape) + shift.reshape(shape)
        reduce = [0, *range(2, x.rank())]
        mean = x.mean_dims(reduce)
        var = (x - mean).square().mean_dims(reduce)
        self._update_running(mean, var, channels)
        normalized = (x - mean) / (var + self.epsilon).sqrt()
        return normalized * self.gamma.val().reshape(shape) + self.beta.val().reshape(shape)

    def _update_running(self, mean: Tensor[B, D, Float], var: Tensor[B, D, Float], channels: int) -> None:
        m = self.momentum
        batch_mean = mean.detach().reshape((channels,))
        batch_var = var.detach().reshape((channels,))
        self.running_mean.update(self.running_mean.value() * (1.0 - m) + batch_mean * m)
        self.running_var.update(self.running_var.value() * (1.0 - m) + batch_var * m)

    def _display_settings(self) -> list[tuple[str, object]]:
        features = self.gamma.shape()[0]
        return [("num_features", features), ("momentum", self.momentum), ("epsilon", self.epsilon)]
