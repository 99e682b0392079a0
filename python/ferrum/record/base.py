"""The kinds of record: a module's, an optimizer's, and the marks of Rust's ``Some``.

At run time each is the plain dict or tuple it marks; the marks tell the
type checker whose record it is, and the bincode writer what Burn's layout
holds (an option's tag, a map's length).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

__all__ = ["ModuleRecord", "OptimizerRecord", "Some", "SomeConstant"]


class Some(dict[str, Any]):
    """The record of an optional field that holds a value (Rust's ``Some``).

    It is the plain dict of the value; the mark matters to bincode only, which
    writes a 1 byte before an optional value (and a 0 byte for ``None``), as
    Burn does for ``Option`` fields such as ``Linear.bias``.

    Example:
        >>> from ferrum.record import Some
        >>> Some({"id": "1"}) == {"id": "1"}
        True
    """

    def __repr__(self) -> str:
        return f"Some({dict.__repr__(self)})"


class SomeConstant(tuple[Any, ...]):
    """The record of an optional constant that holds a value (Rust's ``Some`` of a constant,
    such as ``Lstm.clip``): nil in named formats, ``1`` then the constant's own nil byte in bincode.

    Example:
        >>> from ferrum.record import SomeConstant
        >>> SomeConstant(None).value is None
        True
    """

    def __new__(cls, value: Any) -> SomeConstant:
        return super().__new__(cls, (value,))

    @property
    def value(self) -> Any:
        """The constant's own record (``None``, or a tuple of ``None`` for an array)."""
        return self[0]

    def __repr__(self) -> str:
        return f"SomeConstant({self[0]!r})"


class OptimizerRecord(dict[str, Any]):
    """An optimizer's record, Burn's ``HashMap<ParamId, AdaptorRecord>``.

    Its entries are ``{param id: {"V1": {"Rank<N>": state}}}``. It is the plain
    dict of the entries; the mark matters to bincode only, which writes a map's
    length and so tells an optimizer without state (length 0) from a module
    without parameters (nothing). ``Optimizer.to_record`` returns one.

    Example:
        >>> from ferrum.optim import SgdConfig
        >>> record = SgdConfig().init().to_record()
        >>> isinstance(record, OptimizerRecord), record == {}
        (True, True)
    """


ModuleT_co = TypeVar("ModuleT_co", covariant=True)


class ModuleRecord(dict[str, Any], Generic[ModuleT_co]):
    """A module's record, typed by the module that made it (Burn's ``Module::Record``).

    ``Linear[B].into_record()`` is a ``ModuleRecord[Linear[B]]``: the nested
    dict of the module's fields, ``{"id", "param"}`` per parameter. At run time
    it is that dict; the type parameter lets mypy with ``ferrum.mypy`` reject
    the record of another module type in ``load_record``, and a module's
    record in an optimizer's ``load_record``, as Burn's compiler does. Records
    read from files (a recorder's ``load``) are plain dicts, which any
    ``load_record`` takes: their structure is checked when they are loaded.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> record = LinearConfig(2, 1).init(NdArray.device()).into_record()
        >>> isinstance(record, ModuleRecord), sorted(record)
        (True, ['bias', 'weight'])
    """
