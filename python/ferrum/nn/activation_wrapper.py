"""``Activation``: Burn's enum of activation layers, and ``ActivationConfig`` that builds one.

Layers that let their user choose an activation (``Lstm``'s gates, for one)
hold an ``Activation``. Its record is Burn's enum record, ``{"Sigmoid": ...}``,
so a model holding one loads from and saves to Burn's files.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import ActivationConfig, LeakyReluConfig
    >>> device = NdArray.device()
    >>> x = Tensor.from_floats([-2.0, 3.0], device)
    >>> ActivationConfig.Relu.init(device).forward(x).to_data().to_list()
    [0.0, 3.0]
    >>> ActivationConfig.LeakyRelu(LeakyReluConfig(0.5)).init(device).forward(x).to_data().to_list()
    [-1.0, 3.0]
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from ferrum._ferrum import Device
from ferrum.config import config, is_config
from ferrum.nn.activation import (
    Gelu,
    HardSigmoid,
    HardSigmoidConfig,
    HardSwish,
    LeakyRelu,
    LeakyReluConfig,
    PRelu,
    PReluConfig,
    Relu,
    Sigmoid,
    Softplus,
    SoftplusConfig,
    SwiGlu,
    SwiGluConfig,
    Tanh,
)
from ferrum.nn.type_vars import B
from ferrum.nn.variants import EnumModule, Variant, check_kind, check_settings

__all__ = ["Activation", "ActivationConfig", "ActivationKind"]


ActivationKind = Literal[
    "Gelu", "PRelu", "Relu", "LeakyRelu", "SwiGlu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Softplus"
]

# Burn's variant order: the index bincode writes for each.
_VARIANTS: tuple[str, ...] = (
    "Gelu",
    "PRelu",
    "Relu",
    "LeakyRelu",
    "SwiGlu",
    "Sigmoid",
    "Tanh",
    "HardSigmoid",
    "HardSwish",
    "Softplus",
)
_SETTINGS: dict[str, type] = {
    "PRelu": PReluConfig,
    "LeakyRelu": LeakyReluConfig,
    "SwiGlu": SwiGluConfig,
    "HardSigmoid": HardSigmoidConfig,
    "Softplus": SoftplusConfig,
}
# The variants without settings, and their layers.
_PLAIN: dict[ActivationKind, type[Gelu | Relu | Sigmoid | Tanh | HardSwish]] = {
    "Gelu": Gelu,
    "Relu": Relu,
    "Sigmoid": Sigmoid,
    "Tanh": Tanh,
    "HardSwish": HardSwish,
}
# Softplus before HardSigmoid: JSON of either has `beta`, only HardSigmoid's has `alpha`.
_Settings = PReluConfig | LeakyReluConfig | SwiGluConfig | SoftplusConfig | HardSigmoidConfig
_Layer = (
    Gelu | PRelu[Any] | Relu | LeakyRelu | SwiGlu[Any] | Sigmoid | Tanh | HardSigmoid | HardSwish | Softplus
)


@config
class ActivationConfig:
    """One of Burn's activations: ``ActivationConfig.Relu``, ``.Gelu``, ``.Sigmoid``, ``.Tanh``,
    ``.HardSwish``, or ``.PRelu(config)``, ``.LeakyRelu(config)``, ``.SwiGlu(config)``,
    ``.HardSigmoid(config)``, ``.Softplus(config)`` for those with settings.

    Example:
        >>> from ferrum.nn import ActivationConfig, SoftplusConfig
        >>> ActivationConfig.Softplus(SoftplusConfig(2.0)).kind
        'Softplus'
    """

    kind: ActivationKind
    settings: _Settings | None = None

    Gelu: ClassVar[ActivationConfig]
    Relu: ClassVar[ActivationConfig]
    Sigmoid: ClassVar[ActivationConfig]
    Tanh: ClassVar[ActivationConfig]
    HardSwish: ClassVar[ActivationConfig]

    def __post_init__(self) -> None:
        check_kind("ActivationConfig", self.kind, _VARIANTS)
        wanted = _SETTINGS.get(self.kind)
        if wanted is not None and is_config(self.settings) and not isinstance(self.settings, wanted):
            # JSON holds no type: settings read as another variant's config are this variant's.
            object.__setattr__(self, "settings", wanted.from_dict(self.settings.to_dict()))  # type: ignore[attr-defined,union-attr]
        if wanted is None and self.settings is not None:
            raise ValueError(f"ActivationConfig.{self.kind} takes no settings, found {self.settings!r}")
        if wanted is not None:
            check_settings("ActivationConfig", self.kind, self.settings, wanted)

    # The variants with settings: ``ActivationConfig.PRelu(PReluConfig(...))``.
    PRelu = Variant(PReluConfig)
    LeakyRelu = Variant(LeakyReluConfig)
    SwiGlu = Variant(SwiGluConfig)
    HardSigmoid = Variant(HardSigmoidConfig)
    Softplus = Variant(SoftplusConfig)

    def init(self, device: Device[B]) -> Activation[B]:
        """The wrapped layer on ``device`` (only PRelu and SwiGlu have parameters)."""
        s = self.settings
        layer: _Layer
        if isinstance(s, (PReluConfig, SwiGluConfig)):
            layer = s.init(device)
        elif isinstance(s, (LeakyReluConfig, HardSigmoidConfig, SoftplusConfig)):
            layer = s.init()
        else:
            layer = _PLAIN[self.kind]()
        return Activation(layer)

    def __repr__(self) -> str:
        if self.settings is None:
            return f"ActivationConfig.{self.kind}"
        return f"ActivationConfig.{self.kind}({self.settings!r})"


for _kind in _PLAIN:
    # The variants without settings are constants, as Burn's unit variants.
    setattr(ActivationConfig, _kind, ActivationConfig(_kind))


class Activation(EnumModule[B]):
    """One activation layer, chosen at run time (Burn's ``Activation`` enum); ``forward(x)``
    applies it to ``x`` of any shape (see ``EnumModule``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Activation, Tanh
        >>> Activation(Tanh()).forward(Tensor.from_floats([0.0], NdArray.device())).to_data().to_list()
        [0.0]
    """

    _variants = _VARIANTS

    layer: _Layer

    @property
    def kind(self) -> ActivationKind:
        """The variant's name (``"Relu"``, ...)."""
        return super().kind  # type: ignore[return-value]
