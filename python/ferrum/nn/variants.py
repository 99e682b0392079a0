"""What Burn's enums of layers share: the checks of their configs (``ActivationConfig``,
``NormalizationConfig``: a known variant, holding the settings that variant takes) and
``EnumModule``, the base of the modules they build (``Activation``, ``Normalization``).

Example:
    >>> from ferrum.nn.variants import check_kind
    >>> check_kind("NormalizationConfig", "Weight", ("Batch", "Layer"))
    Traceback (most recent call last):
    ...
    ValueError: NormalizationConfig.kind: expected one of Batch, Layer, found 'Weight'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ferrum._ferrum import Float, Tensor
from ferrum.module import Module
from ferrum.nn.type_vars import B, D

__all__ = ["EnumModule", "Variant", "check_kind", "check_settings"]

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)
C = TypeVar("C")
C_co = TypeVar("C_co", covariant=True)


def check_kind(owner: str, kind: str, names: Sequence[str]) -> None:
    """Raise ``ValueError`` unless ``kind`` is one of the variant ``names``."""
    if kind not in names:
        raise ValueError(f"{owner}.kind: expected one of {', '.join(names)}, found {kind!r}")


def check_settings(owner: str, kind: str, settings: object, wanted: type) -> None:
    """Raise ``ValueError`` unless variant ``kind``'s ``settings`` are a ``wanted``."""
    if not isinstance(settings, wanted):
        found = type(settings).__name__
        raise ValueError(f"{owner}.{kind} needs a {wanted.__name__}, found {found}")


class VariantBuilder(Protocol[S_contra, C_co]):
    """What ``Config.Name`` is for a ``Variant``: a call from the variant's settings to the config."""

    def __call__(self, settings: S_contra) -> C_co:
        """The config of this variant, holding ``settings``."""
        ...


class Variant(Generic[S]):
    """A variant that takes settings, on an enum config: ``Name = Variant(NameConfig)`` in the config's
    body makes ``Config.Name(settings)`` build ``Config("Name", settings)``, typed to take a
    ``NameConfig`` (Burn's ``Activation::PRelu(PReluConfig)``).

    Example:
        >>> from ferrum.nn import ActivationConfig, SoftplusConfig
        >>> ActivationConfig.Softplus(SoftplusConfig(2.0)).kind
        'Softplus'
    """

    def __init__(self, settings: type[S]) -> None:
        self.settings = settings
        self.kind = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.kind = name

    def __get__(self, instance: object, owner: type[C]) -> VariantBuilder[S, C]:
        kind, build = self.kind, owner

        def variant(settings: S) -> C:
            return build(kind, settings)  # type: ignore[call-arg]

        variant.__qualname__ = f"{owner.__name__}.{kind}"
        variant.__doc__ = f"A ``{kind}`` variant, holding its ``{self.settings.__name__}``."
        return variant


class EnumModule(Module[B]):
    """One layer of a Burn enum, chosen at run time: ``forward`` applies it, and its record is Burn's
    enum record, ``{variant: layer record}`` with the variant's index in ``_variants``.

    A subclass names its ``_variants`` in Burn's order (the index bincode writes), narrows
    ``layer`` to the union of their layers, and gives ``kind`` its ``Literal`` type; a variant's
    layer class is its name plus ``_layer_suffix`` (``"Norm"``: ``Layer`` holds a ``LayerNorm``).

    Example:
        >>> from ferrum.nn import Activation, Relu
        >>> Activation(Relu())._record_variant()
        ('Relu', 2, Relu)
    """

    _variants: ClassVar[tuple[str, ...]]
    _layer_suffix: ClassVar[str] = ""

    layer: Any

    def __post_init__(self) -> None:
        if type(self.layer).__name__ not in [name + self._layer_suffix for name in self._variants]:
            layers = ", ".join(name + self._layer_suffix for name in self._variants)
            raise TypeError(f"{type(self).__name__} holds one of {layers}, found {type(self.layer).__name__}")

    @property
    def kind(self) -> str:
        """The variant's name: the layer's class name without ``_layer_suffix``."""
        return type(self.layer).__name__.removesuffix(self._layer_suffix)

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """The wrapped layer applied to ``x``; its shape is the layer's."""
        out: Tensor[B, D, Float] = self.layer.forward(x)
        return out

    def _record_variant(self) -> tuple[str, int, Module[Any]]:
        return self.kind, self._variants.index(self.kind), self.layer
