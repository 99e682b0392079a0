"""``PrintOptions`` and ``set_print_options``: how ``str(tensor)`` shows values, as in Burn.

A tensor of more than ``threshold`` elements shows ``edge_items`` values at
each end of every dim with ``...`` between; ``precision`` fixes the digits
after the point of Float values (``None``: the shortest text that reads back
exactly). ``f"{tensor:.3}"`` sets the precision of one print.

Example:
    >>> from ferrum import PrintOptions, Tensor, set_print_options
    >>> from ferrum.backend import NdArray
    >>> set_print_options(PrintOptions(precision=2))
    >>> print(Tensor.from_floats([0.12345], NdArray.device()))  # doctest: +NORMALIZE_WHITESPACE
    Tensor {
      data:
    [0.12],
      shape:  [1],
      device:  Cpu,
      backend:  "ndarray",
      kind:  "Float",
      dtype:  "f32",
    }
    >>> set_print_options(PrintOptions())
"""

from __future__ import annotations

import dataclasses

import ferrum._ferrum as _ferrum

__all__ = ["PrintOptions", "print_options", "set_print_options"]


@dataclasses.dataclass(frozen=True)
class PrintOptions:
    """Burn's ``PrintOptions``: ``threshold`` (elements before summarising), ``edge_items``, ``precision``.

    Example:
        >>> from ferrum import PrintOptions
        >>> PrintOptions()
        PrintOptions(threshold=1000, edge_items=3, precision=None)
    """

    threshold: int = 1000
    edge_items: int = 3
    precision: int | None = None


def set_print_options(options: PrintOptions) -> None:
    """Use ``options`` for every tensor printed from now on (in every thread).

    Example:
        >>> from ferrum import PrintOptions, print_options, set_print_options
        >>> set_print_options(PrintOptions(threshold=10))
        >>> print_options().threshold
        10
        >>> set_print_options(PrintOptions())
    """
    if not isinstance(options, PrintOptions):
        raise TypeError(f"set_print_options: expected PrintOptions, found {type(options).__name__}")
    _ferrum.set_print_options(options.threshold, options.edge_items, options.precision)


def print_options() -> PrintOptions:
    """The options tensors print with now.

    Example:
        >>> from ferrum import print_options
        >>> print_options().edge_items
        3
    """
    threshold, edge_items, precision = _ferrum.get_print_options()
    return PrintOptions(threshold, edge_items, precision)
