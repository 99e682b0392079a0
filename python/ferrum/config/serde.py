"""Configs that stand for a Rust enum, written in serde's JSON form as Burn writes them.

Burn derives its config files with serde, which writes an enum value by its
variant: a unit variant as its name (``"Valid"``), a newtype variant as
``{"Explicit": 3}``, a tuple variant as ``{"Explicit": [1, 1]}`` and a
struct variant as ``{"KaimingUniform": {"gain": 0.5, "fan_out_only": false}}``.
A ferrum config class holds such a value as a tag field naming the variant
plus the variant's fields; it declares how they map onto serde's form with a
``SerdeEnum`` in its ``__serde_enum__`` class attribute, and ``@config``'s
JSON reading and writing use it for that class wherever it appears. Reading
also accepts ferrum's older form, the fields as an object with the tag
(``{"kind": "Explicit", "padding": [1, 1]}``).

Example:
    >>> from ferrum.nn import PaddingConfig2d
    >>> spec = PaddingConfig2d.__serde_enum__
    >>> spec.encode(PaddingConfig2d.Explicit(1, 2), lambda value, path: value)
    {'Explicit': [1, 2]}
    >>> spec.fields_of("Valid")
    {'kind': 'Valid'}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal

__all__ = ["SerdeEnum", "SerdeUnion", "Variant", "serde_enum_of", "serde_names", "serde_union_of"]

Form = Literal["unit", "newtype", "tuple", "struct"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """How one variant's fields appear in serde's form.

    ``unit``: no fields. ``newtype``: one field, its value alone. ``tuple``:
    one field holding a tuple, written as a JSON array. ``struct``: the named
    fields, as a JSON object.
    """

    form: Form
    fields: tuple[str, ...] = ()

    @staticmethod
    def unit() -> Variant:
        """A variant without fields, written as its name alone (``"Valid"``)."""
        return Variant("unit")

    @staticmethod
    def newtype(field: str) -> Variant:
        """A variant holding the config's ``field`` alone (``{"Constant": {"value": 0.5}}``)."""
        return Variant("newtype", (field,))

    @staticmethod
    def tuple(field: str) -> Variant:
        """A variant holding the config's tuple ``field`` as a JSON array (``{"Explicit": [1, 1]}``)."""
        return Variant("tuple", (field,))

    @staticmethod
    def struct(*fields: str) -> Variant:
        """A variant holding the named ``fields`` as a JSON object (``{"Uniform": {"min": 0, "max": 1}}``)."""
        return Variant("struct", fields)


@dataclasses.dataclass(frozen=True)
class SerdeEnum:
    """A config's mapping onto a Rust enum: the field naming the variant, and each variant's form."""

    tag: str
    variants: Mapping[str, Variant]

    def encode(self, config: object, encode: Callable[[object, str], Any], path: str = "") -> Any:
        """``config`` in serde's form; ``encode(value, path)`` writes each field's value."""
        name = getattr(config, self.tag)
        variant = self.variants[name]
        here = f"{path}.{name}" if path else name
        if variant.form == "unit":
            return name
        if variant.form == "newtype":
            return {name: encode(getattr(config, variant.fields[0]), here)}
        if variant.form == "tuple":
            return {name: list(encode(getattr(config, variant.fields[0]), here))}
        return {name: {field: encode(getattr(config, field), f"{here}.{field}") for field in variant.fields}}

    def fields_of(self, data: object) -> dict[str, Any] | str | None:
        """The config's fields (with the tag) for serde-form ``data``; ferrum's own form (a mapping
        holding the tag) is returned as is; None when ``data`` has neither form; a message (str) when it
        names a variant but its payload does not fit."""
        if isinstance(data, str):
            variant = self.variants.get(data)
            if variant is None:
                return None
            if variant.form != "unit":
                return f"variant {data!r} carries {self._payload(variant)}; found no value"
            return {self.tag: data}
        if not isinstance(data, Mapping):
            return None
        if self.tag in data:
            return dict(data)
        if len(data) != 1:
            return None
        ((name, payload),) = data.items()
        variant = self.variants.get(name) if isinstance(name, str) else None
        if variant is None:
            return None
        if variant.form == "unit":
            # serde also reads `{"Valid": null}` for a unit variant.
            if payload is not None:
                return f"variant {name!r} carries no value, found {payload!r}"
            return {self.tag: name}
        if variant.form in ("newtype", "tuple"):
            return {self.tag: name, variant.fields[0]: payload}
        if not isinstance(payload, Mapping):
            found = f"{type(payload).__name__} {payload!r}"
            return f"variant {name!r} carries {self._payload(variant)}; found {found}"
        return {self.tag: name, **payload}

    def names(self) -> str:
        """The variant names, quoted and joined for an error message."""
        return ", ".join(repr(name) for name in self.variants)

    def _payload(self, variant: Variant) -> str:
        if variant.form == "struct":
            return "an object with " + ", ".join(repr(f) for f in variant.fields)
        return "one value" if variant.form == "newtype" else "an array"


@dataclasses.dataclass(frozen=True)
class SerdeUnion:
    """A field holding one of several configs, written as a Rust enum of newtype variants.

    Burn's ``enum LrSchedulerConfig { Linear(LinearLrSchedulerConfig), ... }``
    writes ``{"Linear": {...}}``. Mark the field's type ``Annotated[A | B,
    SerdeUnion({"Linear": A, "Cosine": B})]``: values are written under their
    variant's name and read from it (a bare object, ferrum's older form, is
    still read as the union).
    """

    variants: Mapping[str, type]

    def name_of(self, value: object) -> str | None:
        """The variant name of ``value``'s config class, or None when it is none of them."""
        for name, cls in self.variants.items():
            if type(value) is cls:
                return name
        return None


def serde_union_of(hint: object) -> SerdeUnion | None:
    """The ``SerdeUnion`` an ``Annotated`` field type carries, if any."""
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, SerdeUnion):
            return meta
    return None


def serde_names(cls: type) -> dict[str, str]:
    """A config class's field names that Burn's files spell otherwise (``__serde_rename__``).

    ``MaxPool2dConfig`` keeps the ``stride`` field and builder ferrum users know;
    its file holds Burn's ``strides``.
    """
    names = getattr(cls, "__serde_rename__", None)
    return dict(names) if isinstance(names, Mapping) else {}


def serde_enum_of(cls: type) -> SerdeEnum | None:
    """The ``SerdeEnum`` a config class declares, if any."""
    spec = getattr(cls, "__serde_enum__", None)
    return spec if isinstance(spec, SerdeEnum) else None
