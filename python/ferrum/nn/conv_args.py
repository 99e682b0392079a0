"""Checks of the sizes, strides and channel counts that convolution and pooling configs take.

Each check raises ``ValueError`` naming the config field and the value found,
so a bad config fails where it is built rather than deep inside a kernel.

Example:
    >>> from ferrum.nn.conv_args import check_pair
    >>> check_pair("Conv2dConfig", "stride", (0, 1))
    Traceback (most recent call last):
    ...
    ValueError: Conv2dConfig.stride must be a pair of ints >= 1, found (0, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["check_groups", "check_int", "check_pair", "check_same_kernel", "check_triple"]


def _is_int(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def check_int(owner: str, name: str, value: object, minimum: int = 1) -> None:
    """Fail unless ``value`` is an int of at least ``minimum``."""
    if not _is_int(value, minimum):
        raise ValueError(f"{owner}.{name} must be an int >= {minimum}, found {value!r}")


def _check_ints(owner: str, name: str, value: object, count: int, minimum: int) -> None:
    if not (isinstance(value, tuple) and len(value) == count and all(_is_int(v, minimum) for v in value)):
        what = {2: "pair", 3: "triple"}[count]
        raise ValueError(f"{owner}.{name} must be a {what} of ints >= {minimum}, found {value!r}")


def check_pair(owner: str, name: str, value: object, minimum: int = 1) -> None:
    """Fail unless ``value`` is a tuple of two ints of at least ``minimum``."""
    _check_ints(owner, name, value, 2, minimum)


def check_triple(owner: str, name: str, value: object, minimum: int = 1) -> None:
    """Fail unless ``value`` is a tuple of three ints of at least ``minimum``."""
    _check_ints(owner, name, value, 3, minimum)


def check_groups(owner: str, channels_in: int, channels_out: int, groups: int) -> None:
    """Fail unless ``groups`` divides both channel counts (as Burn checks)."""
    check_int(owner, "groups", groups)
    if channels_in % groups or channels_out % groups:
        raise ValueError(
            f"{owner}.groups ({groups}) must divide both channels_in ({channels_in})"
            f" and channels_out ({channels_out})"
        )


def check_same_kernel(owner: str, kind: str, kernel_size: Sequence[int]) -> None:
    """Burn pads ``Same`` symmetrically, which only keeps the size for odd kernels."""
    if kind == "Same" and any(k % 2 == 0 for k in kernel_size):
        raise ValueError(
            f"{owner}.padding: Same padding with an even kernel size is not supported,"
            f" kernel_size is {tuple(kernel_size)}"
        )
