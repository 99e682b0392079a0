"""Normalization layers: BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RmsNorm, and the Normalization enum.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.norm import LayerNormConfig
    >>> device = NdArray.device()
    >>> LayerNormConfig(3).init(device).forward(Tensor.ones((2, 3), device)).dims()
    (2, 3)
"""

from ferrum.nn.norm.batch import BatchNorm, BatchNormConfig
from ferrum.nn.norm.group import GroupNorm, GroupNormConfig
from ferrum.nn.norm.instance import InstanceNorm, InstanceNormConfig
from ferrum.nn.norm.layer import LayerNorm, LayerNormConfig
from ferrum.nn.norm.normalization_wrapper import Normalization, NormalizationConfig
from ferrum.nn.norm.rms import RmsNorm, RmsNormConfig

__all__ = [
    "BatchNorm",
    "BatchNormConfig",
    "GroupNorm",
    "GroupNormConfig",
    "InstanceNorm",
    "InstanceNormConfig",
    "LayerNorm",
    "LayerNormConfig",
    "Normalization",
    "NormalizationConfig",
    "RmsNorm",
    "RmsNormConfig",
]
