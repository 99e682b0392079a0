"""Padding of convolutions and pools: Burn's ``PaddingConfig1d``/``PaddingConfig2d``.

``Same`` pads so the output keeps the input size (at stride 1), ``Valid``
pads nothing, ``Explicit(...)`` gives the padding per side. They are config
values, so the layer configs holding them save and load as JSON, in Burn's
form (``"Same"``, ``{"Explicit": [1, 2]}``).

Example:
    >>> from ferrum.nn import PaddingConfig2d
    >>> PaddingConfig2d.Same.calculate_padding_2d(28, 28, (3, 3), (1, 1))
    (1, 1)
    >>> PaddingConfig2d.Explicit(2, 0)
    PaddingConfig2d.Explicit(2, 0)
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

from ferrum.config import config
from ferrum.config.serde import SerdeEnum, Variant

__all__ = ["PaddingConfig1d", "PaddingConfig2d", "PaddingConfig3d", "PaddingKind", "calculate_conv_padding"]

PaddingKind = Literal["Same", "Valid", "Explicit"]


def calculate_conv_padding(kernel_size: int, stride: int, size_in: int, size_out: int) -> int:
    """The padding per side that makes a convolution map ``size_in`` to ``size_out`` (Burn's rule).

    Example:
        >>> calculate_conv_padding(5, 1, 10, 10)
        2
    """
    padding = ((size_out - 1) * stride + kernel_size - size_in) / 2
    return max(0, math.ceil(padding))


def _check_padding(owner: str, kind: str, padding: int | tuple[int, ...], sides: tuple[str, ...]) -> None:
    """Raise ``ValueError`` naming ``owner`` unless ``kind`` is a variant and ``padding`` its amounts:
    one int >= 0 per name of ``sides`` (a bare int for 1-d), all zero unless ``Explicit``."""
    if kind not in ("Same", "Valid", "Explicit"):
        raise ValueError(f"{owner}.kind: expected Same, Valid or Explicit, found {kind!r}")
    if len(sides) > 1 and (not isinstance(padding, tuple) or len(padding) != len(sides)):
        raise ValueError(f"{owner}.padding: expected ({', '.join(sides)}), found {padding!r}")
    # A 1-d padding is one bare int: a tuple there is a wrong value, not its amounts.
    amounts: tuple[object, ...] = padding if len(sides) > 1 and isinstance(padding, tuple) else (padding,)
    for value in amounts:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{owner}: padding must be ints >= 0, found {value!r}")
    if kind != "Explicit" and any(amounts):
        raise ValueError(f"{owner}.{kind} takes no padding amount, found {padding}")


def _variant_repr(owner: str, kind: str, padding: int | tuple[int, ...]) -> str:
    """``Owner.Same``, ``Owner.Valid`` or ``Owner.Explicit(a, b, ...)``, as the variant is written in code."""
    if kind != "Explicit":
        return f"{owner}.{kind}"
    amounts = padding if isinstance(padding, tuple) else (padding,)
    return f"{owner}.Explicit({', '.join(str(a) for a in amounts)})"


def padding_name(padding: PaddingConfig1d | PaddingConfig2d | PaddingConfig3d) -> str:
    """The variant as a layer's one-line display shows it: ``Same``, ``Valid``, ``Explicit(1, 1)``."""
    return repr(padding).split(".", 1)[1]


@config
class PaddingConfig1d:
    """Padding of 1-d operators: ``PaddingConfig1d.Same``, ``.Valid`` or ``.Explicit(p)``.

    Example:
        >>> from ferrum.nn import PaddingConfig1d
        >>> PaddingConfig1d.Explicit(3).calculate_padding_1d(10, 3, 1)
        3
    """

    kind: PaddingKind
    padding: int = 0

    Same: ClassVar[PaddingConfig1d]
    Valid: ClassVar[PaddingConfig1d]
    __serde_enum__: ClassVar[SerdeEnum] = SerdeEnum(
        "kind", {"Same": Variant.unit(), "Valid": Variant.unit(), "Explicit": Variant.newtype("padding")}
    )

    def __post_init__(self) -> None:
        _check_padding("PaddingConfig1d", self.kind, self.padding, ("padding",))

    @staticmethod
    def Explicit(padding: int) -> PaddingConfig1d:
        """``padding`` elements on each side."""
        return PaddingConfig1d("Explicit", padding)

    def calculate_padding_1d(self, length: int, kernel_size: int, stride: int) -> int:
        """The padding per side for an input of ``length``."""
        if self.kind == "Valid":
            return 0
        if self.kind == "Same":
            return calculate_conv_padding(kernel_size, stride, length, length)
        return self.padding

    def __repr__(self) -> str:
        return _variant_repr("PaddingConfig1d", self.kind, self.padding)


@config
class PaddingConfig2d:
    """Padding of 2-d operators: ``PaddingConfig2d.Same``, ``.Valid`` or ``.Explicit(height, width)``.

    Example:
        >>> from ferrum.nn import PaddingConfig2d
        >>> PaddingConfig2d.Valid.calculate_padding_2d(28, 28, (3, 3), (1, 1))
        (0, 0)
    """

    kind: PaddingKind
    padding: tuple[int, int] = (0, 0)

    Same: ClassVar[PaddingConfig2d]
    Valid: ClassVar[PaddingConfig2d]
    __serde_enum__: ClassVar[SerdeEnum] = SerdeEnum(
        "kind", {"Same": Variant.unit(), "Valid": Variant.unit(), "Explicit": Variant.tuple("padding")}
    )

    def __post_init__(self) -> None:
        _check_padding("PaddingConfig2d", self.kind, self.padding, ("height", "width"))

    @staticmethod
    def Explicit(height: int, width: int) -> PaddingConfig2d:
        """``height`` rows above and below, ``width`` columns left and right."""
        return PaddingConfig2d("Explicit", (height, width))

    def calculate_padding_2d(
        self, height: int, width: int, kernel_size: tuple[int, int], stride: tuple[int, int]
    ) -> tuple[int, int]:
        """The padding per side, ``(height, width)``, for an input of ``height`` x ``width``."""
        if self.kind == "Valid":
            return (0, 0)
        if self.kind == "Same":
            return (
                calculate_conv_padding(kernel_size[0], stride[0], height, height),
                calculate_conv_padding(kernel_size[1], stride[1], width, width),
            )
        return self.padding

    def __repr__(self) -> str:
        return _variant_repr("PaddingConfig2d", self.kind, self.padding)


@config
class PaddingConfig3d:
    """Padding of 3-d operators: ``PaddingConfig3d.Same``, ``.Valid`` or ``.Explicit(depth, height, width)``.

    Example:
        >>> from ferrum.nn import PaddingConfig3d
        >>> PaddingConfig3d.Same.calculate_padding_3d(8, 8, 8, (3, 3, 3), (1, 1, 1))
        (1, 1, 1)
    """

    kind: PaddingKind
    padding: tuple[int, int, int] = (0, 0, 0)

    Same: ClassVar[PaddingConfig3d]
    Valid: ClassVar[PaddingConfig3d]

    def __post_init__(self) -> None:
        _check_padding("PaddingConfig3d", self.kind, self.padding, ("depth", "height", "width"))

    @staticmethod
    def Explicit(depth: int, height: int, width: int) -> PaddingConfig3d:
        """The padding on both sides of each dim."""
        return PaddingConfig3d("Explicit", (depth, height, width))

    def calculate_padding_3d(
        self,
        depth: int,
        height: int,
        width: int,
        kernel_size: tuple[int, int, int],
        stride: tuple[int, int, int],
    ) -> tuple[int, int, int]:
        """The padding per side, ``(depth, height, width)``, for an input of that size."""
        if self.kind == "Valid":
            return (0, 0, 0)
        if self.kind == "Same":
            return (
                calculate_conv_padding(kernel_size[0], stride[0], depth, depth),
                calculate_conv_padding(kernel_size[1], stride[1], height, height),
                calculate_conv_padding(kernel_size[2], stride[2], width, width),
            )
        return self.padding

    def __repr__(self) -> str:
        return _variant_repr("PaddingConfig3d", self.kind, self.padding)


PaddingConfig1d.Same = PaddingConfig1d("Same")
PaddingConfig1d.Valid = PaddingConfig1d("Valid")
PaddingConfig2d.Same = PaddingConfig2d("Same")
PaddingConfig2d.Valid = PaddingConfig2d("Valid")
PaddingConfig3d.Same = PaddingConfig3d("Same")
PaddingConfig3d.Valid = PaddingConfig3d("Valid")
