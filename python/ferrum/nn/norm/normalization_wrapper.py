"""``Normalization``: Burn's enum of normalization layers, and ``NormalizationConfig`` that builds one.

Its record is Burn's enum record (``{"Layer": ...}``), so a model that picks
its normalization at run time loads from and saves to Burn's files.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LayerNormConfig, NormalizationConfig
    >>> device = NdArray.device()
    >>> norm = NormalizationConfig.Layer(LayerNormConfig(4)).with_num_features(3).init(device)
    >>> norm.kind, norm.forward(Tensor.ones((2, 3), device)).dims()
    ('Layer', (2, 3))
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from ferrum._ferrum import Device
from ferrum.config import config
from ferrum.nn.norm.batch import BatchNorm, BatchNormConfig
from ferrum.nn.norm.group import GroupNorm, GroupNormConfig
from ferrum.nn.norm.instance import InstanceNorm, InstanceNormConfig
from ferrum.nn.norm.layer import LayerNorm, LayerNormConfig
from ferrum.nn.norm.rms import RmsNorm, RmsNormConfig
from ferrum.nn.type_vars import B
from ferrum.nn.variants import EnumModule, Variant, check_kind, check_settings

__all__ = ["Normalization", "NormalizationConfig", "NormalizationKind"]


NormalizationKind = Literal["Batch", "Group", "Instance", "Layer", "Rms"]

# Burn's variant order (the bincode index), each variant's config and the field holding its width.
_VARIANTS: tuple[tuple[str, type, str], ...] = (
    ("Batch", BatchNormConfig, "num_features"),
    ("Group", GroupNormConfig, "num_channels"),
    ("Instance", InstanceNormConfig, "num_channels"),
    ("Layer", LayerNormConfig, "d_model"),
    ("Rms", RmsNormConfig, "d_model"),
)
_NAMES = tuple(name for name, _, _ in _VARIANTS)
_Settings = BatchNormConfig | GroupNormConfig | InstanceNormConfig | LayerNormConfig | RmsNormConfig
_Layer = BatchNorm[Any] | GroupNorm[Any] | InstanceNorm[Any] | LayerNorm[Any] | RmsNorm[Any]


def _variant(kind: str) -> tuple[str, type, str]:
    return next(v for v in _VARIANTS if v[0] == kind)


@config
class NormalizationConfig:
    """One of Burn's normalizations: ``NormalizationConfig.Batch(config)``, ``.Group``, ``.Instance``,
    ``.Layer`` or ``.Rms``.

    Example:
        >>> from ferrum.nn import NormalizationConfig, RmsNormConfig
        >>> NormalizationConfig.Rms(RmsNormConfig(8)).num_features()
        8
    """

    kind: NormalizationKind
    settings: _Settings

    def __post_init__(self) -> None:
        check_kind("NormalizationConfig", self.kind, _NAMES)
        check_settings("NormalizationConfig", self.kind, self.settings, _variant(self.kind)[1])

    # ``NormalizationConfig.Layer(LayerNormConfig(...))``, one per variant.
    Batch = Variant(BatchNormConfig)
    Group = Variant(GroupNormConfig)
    Instance = Variant(InstanceNormConfig)
    Layer = Variant(LayerNormConfig)
    Rms = Variant(RmsNormConfig)

    def num_features(self) -> int:
        """The width the normalization expects (its config's features, channels or ``d_model``)."""
        value: int = getattr(self.settings, _variant(self.kind)[2])
        return value

    def with_num_features(self, num_features: int) -> NormalizationConfig:
        """A copy for ``num_features`` features."""
        field = _variant(self.kind)[2]
        return NormalizationConfig(self.kind, dataclasses.replace(self.settings, **{field: num_features}))  # type: ignore[arg-type]

    def init(self, device: Device[B]) -> Normalization[B]:
        """The wrapped layer on ``device``."""
        return Normalization(self.settings.init(device))

    def __repr__(self) -> str:
        return f"NormalizationConfig.{self.kind}({self.settings!r})"


class Normalization(EnumModule[B]):
    """One normalization layer, chosen at run time (Burn's ``Normalization`` enum); ``forward(x)``
    applies it to ``x``, in the shape that layer takes (see ``EnumModule``).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Normalization, RmsNormConfig
        >>> Normalization(RmsNormConfig(4).init(NdArray.device())).kind
        'Rms'
    """

    _variants = _NAMES
    _layer_suffix = "Norm"

    layer: _Layer

    @property
    def kind(self) -> NormalizationKind:
        """The variant: ``"Batch"``, ``"Group"``, ``"Instance"``, ``"Layer"`` or ``"Rms"``."""
        return super().kind  # type: ignore[return-value]
