"""Recorders: save and load records in the files Burn 0.20 writes.

A record is the nested dict a module's ``into_record()`` returns. File
recorders add their own extension and write atomically; bytes recorders
work in memory. The encoding lives in the Rust engine.

Example:
    >>> import os, tempfile
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.record import FullPrecisionSettings, NamedMpkFileRecorder
    >>> device = NdArray.device()
    >>> record = {"weight": {"id": "7", "param": Tensor.ones((2, 3), device)}}
    >>> recorder = NamedMpkFileRecorder(FullPrecisionSettings)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     recorder.record(record, os.path.join(tmp, "model"))
    ...     loaded = recorder.load(os.path.join(tmp, "model"), device)
    >>> loaded["weight"]["param"].dims(), loaded["weight"]["id"]
    ((2, 3), '7')
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ferrum import _ferrum
from ferrum._ferrum import Device, Tensor

__all__ = [
    "BinBytesRecorder",
    "BinFileRecorder",
    "BinGzFileRecorder",
    "BytesRecorder",
    "CompactRecorder",
    "DefaultRecorder",
    "DeferredRecord",
    "DoublePrecisionSettings",
    "FileRecorder",
    "FullPrecisionSettings",
    "HalfPrecisionSettings",
    "JsonGzFileRecorder",
    "NamedMpkBytesRecorder",
    "NamedMpkFileRecorder",
    "NamedMpkGzFileRecorder",
    "PrecisionSettings",
    "PrettyJsonFileRecorder",
    "RecordError",
    "Some",
    "SomeConstant",
]


class RecordError(ValueError):
    """A record that cannot be written or read: damaged, foreign or of another architecture."""


class PrecisionSettings:
    """The element types tensors are stored as (Burn's ``PrecisionSettings``)."""

    name: ClassVar[str] = "full"


class FullPrecisionSettings(PrecisionSettings):
    """Floats as f32, ints as i32 (Burn's default)."""

    name: ClassVar[str] = "full"


class HalfPrecisionSettings(PrecisionSettings):
    """Floats as f16, ints as i16: half the size, about 3 significant digits."""

    name: ClassVar[str] = "half"


class DoublePrecisionSettings(PrecisionSettings):
    """Floats as f64, ints as i64."""

    name: ClassVar[str] = "double"


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


def _is_param(node: Mapping[str, Any]) -> bool:
    return set(node) == {"id", "param"} and isinstance(node["param"], Tensor)


def _is_optimizer_record(node: Mapping[str, Any]) -> bool:
    # Burn's optimizer records: {param id: {"V1": {"Rank<N>": state}}}, keyed by the id's text.
    return bool(node) and all(
        isinstance(key, str) and isinstance(value, Mapping) and list(value) == ["V1"]
        for key, value in node.items()
    )


class _Map(dict[str, Any]):
    """Burn's ``HashMap`` (an optimizer record): bincode writes its length before the entries."""


class _Variant(dict[str, Any]):
    """One variant of a Rust enum, ``{name: value}``: bincode writes ``index`` before the value."""

    def __init__(self, name: str, index: int, value: Any) -> None:
        super().__init__({name: value})
        self.index = index


class _OneOf(dict[str, Any]):
    """A schema's alternative ``_Variant``s: reading picks the one whose index the file holds."""


def _rank_variants(key: str, inner: object) -> Any:
    if not isinstance(inner, Mapping) or not inner:
        raise RecordError(f"optimizer record '{key}.V1': expected {{'Rank<N>': state}}, found {inner!r}")
    variants: dict[str, _Variant] = {}
    for name, state in inner.items():
        if not (isinstance(name, str) and name.startswith("Rank") and name[4:].isdigit()):
            raise RecordError(
                f"optimizer record '{key}.V1': bincode writes Burn's 'Rank<N>' variants, found {name!r}"
            )
        _check_bincode_state(f"{key}.V1.{name}", state)
        variants[name] = _Variant(name, int(name[4:]), state)
    return next(iter(variants.values())) if len(variants) == 1 else _OneOf(variants)


def _check_bincode_state(path: str, node: object) -> None:
    # bincode holds no types: a Python float could be Rust's f32 or f64, so Burn could misread it.
    if isinstance(node, float):
        raise RecordError(
            f"optimizer record '{path}': bincode cannot write a float state field ({node!r}),"
            " its Rust type (f32 or f64) is unknown; save with NamedMpkFileRecorder or a JSON recorder"
        )
    if isinstance(node, (list, tuple, bytes, str)):
        raise RecordError(
            f"optimizer record '{path}': bincode writes optimizer states of tensors, ints, bools,"
            f" None and dicts, found {type(node).__name__}"
        )
    if isinstance(node, Mapping):
        for name, value in node.items():
            _check_bincode_state(f"{path}.{name}", value)


def _bincode_layout(node: Any) -> Any:
    """An optimizer record in Burn's bincode shape: ``HashMap<ParamId, AdaptorRecord>``.

    The map and its enums (``V1``, ``Rank<N>``) are marked for the bincode writer,
    which writes the map's length and each variant's index; other records pass through.
    """
    if not (isinstance(node, Mapping) and _is_optimizer_record(node)):
        return node
    return _Map({key: _Variant("V1", 0, _rank_variants(key, value["V1"])) for key, value in node.items()})


def _same_kind(node: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node, _Variant):
        ((name, value),) = out.items()
        return _Variant(name, node.index, value)
    return Some(out) if isinstance(node, Some) else out


def _ids_to_burn(node: Any) -> Any:
    # ferrum shows a ParamId as its decimal value; Burn's files hold base32hex text.
    if isinstance(node, Mapping):
        if _is_param(node) and isinstance(node["id"], str) and node["id"].isdigit():
            return _same_kind(node, {"id": _ferrum.param_id_encode(int(node["id"])), "param": node["param"]})
        keys = _ferrum.param_id_encode if _is_optimizer_record(node) else None
        return _same_kind(
            node,
            {
                (keys(int(key)) if keys is not None and key.isdigit() else key): _ids_to_burn(value)
                for key, value in node.items()
            },
        )
    if isinstance(node, SomeConstant):
        return node
    if isinstance(node, tuple):
        return tuple(_ids_to_burn(item) for item in node)
    if isinstance(node, list):
        return [_ids_to_burn(item) for item in node]
    return node


def _decoded_id(text: str) -> str:
    try:
        return str(_ferrum.param_id_decode(text))
    except ValueError:
        return text  # not Burn's encoding: the module maps any other text to a stable id


def _ids_from_burn(node: Any) -> Any:
    if isinstance(node, dict):
        if _is_param(node) and isinstance(node["id"], str):
            node["id"] = _decoded_id(node["id"])
            return node
        if _is_optimizer_record(node):
            return {_decoded_id(key): _ids_from_burn(value) for key, value in node.items()}
        for key, value in node.items():
            node[key] = _ids_from_burn(value)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            node[i] = _ids_from_burn(item)
    elif isinstance(node, tuple):
        return tuple(_ids_from_burn(item) for item in node)
    return node


class _Recorder:
    format: ClassVar[str] = "named_mpk"

    def __init__(self, settings: type[PrecisionSettings] = FullPrecisionSettings) -> None:
        if not (isinstance(settings, type) and issubclass(settings, PrecisionSettings)):
            raise TypeError(
                "settings must be FullPrecisionSettings, HalfPrecisionSettings or DoublePrecisionSettings,"
                f" found {settings!r}"
            )
        self.settings = settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings.__name__})"

    def _wire(self, record: Mapping[str, Any] | None) -> Any:
        """The tree the engine encodes: Burn's id text, and bincode's marks for maps and enums."""
        tree = _ids_to_burn(record)
        return _bincode_layout(tree) if self.format.startswith("bin") else tree


class FileRecorder(_Recorder):
    """A recorder that writes files; ``record``/``load`` take the path without extension."""

    extension: ClassVar[str] = "mpk"

    def file_path(self, path: str | os.PathLike[str]) -> str:
        """``path`` with this recorder's extension (added unless already there)."""
        text = os.fspath(path)
        return text if text.endswith("." + self.extension) else f"{text}.{self.extension}"

    def record(self, record: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
        """Write ``record`` atomically to ``path`` plus the extension."""
        target = self.file_path(path)
        try:
            _ferrum.record_save(self._wire(record), target, self.format, self.settings.name)
        except ValueError as err:
            raise RecordError(str(err)) from err

    def load(
        self, path: str | os.PathLike[str], device: Device[Any], schema: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Read the whole file into a record on ``device``.

        ``schema`` (a freshly built model's ``into_record()``) checks structure
        and shapes and gives the dtypes; bincode files need it (for an
        optimizer record, pass ``optimizer.record_schema(device)``).
        """
        target = self.file_path(path)
        if not os.path.exists(target):
            raise FileNotFoundError(f"no record file at {target}")
        try:
            loaded = _ferrum.record_load(target, self.format, self._wire(schema), device)
        except ValueError as err:
            raise RecordError(str(err)) from err
        return _as_record(loaded, target)


def _as_record(loaded: object, source: str) -> dict[str, Any]:
    if not isinstance(loaded, dict):
        raise RecordError(
            f"{source}: expected a module record (a map of fields), found {type(loaded).__name__}"
        )
    return _ids_from_burn(loaded)  # type: ignore[no-any-return]


class NamedMpkFileRecorder(FileRecorder):
    """Named MessagePack (``.mpk``), Burn's default file format."""

    format: ClassVar[str] = "named_mpk"
    extension: ClassVar[str] = "mpk"


class NamedMpkGzFileRecorder(FileRecorder):
    """Named MessagePack, gzipped (``.mpk.gz``)."""

    format: ClassVar[str] = "named_mpk_gz"
    extension: ClassVar[str] = "mpk.gz"


class BinFileRecorder(FileRecorder):
    """bincode (``.bin``): compact, without field names; loading needs the model."""

    format: ClassVar[str] = "bin"
    extension: ClassVar[str] = "bin"


class BinGzFileRecorder(FileRecorder):
    """bincode, gzipped (``.bin.gz``)."""

    format: ClassVar[str] = "bin_gz"
    extension: ClassVar[str] = "bin.gz"


class JsonGzFileRecorder(FileRecorder):
    """Compact JSON, gzipped (``.json.gz``)."""

    format: ClassVar[str] = "json_gz"
    extension: ClassVar[str] = "json.gz"


class PrettyJsonFileRecorder(FileRecorder):
    """Indented JSON (``.json``), for reading by eye."""

    format: ClassVar[str] = "pretty_json"
    extension: ClassVar[str] = "json"


class CompactRecorder(NamedMpkFileRecorder):
    """Named MessagePack in half precision (Burn's ``CompactRecorder``)."""

    def __init__(self, settings: type[PrecisionSettings] = HalfPrecisionSettings) -> None:
        super().__init__(settings)


DefaultRecorder = NamedMpkFileRecorder
"""Burn's ``DefaultRecorder``: named MessagePack, full precision."""


class DeferredRecord(Mapping[str, Any]):
    """A bincode record read without a model: it is decoded by ``Module.load_record``.

    bincode stores no field names, so only the model it loads into can tell
    its structure. Reading its entries directly raises ``RecordError``.
    """

    def __init__(self, data: bytes, format: str, device: Device[Any]) -> None:
        self._data = data
        self._format = format
        self._device = device

    def resolve(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The record decoded against ``schema`` (a model's ``into_record()``)."""
        try:
            tree = _ids_to_burn(schema)
            if self._format.startswith("bin"):
                tree = _bincode_layout(tree)
            loaded = _ferrum.record_from_bytes(self._data, self._format, tree, self._device)
        except ValueError as err:
            raise RecordError(f"bincode bytes: {err}") from err
        return _as_record(loaded, "bincode bytes")

    def _refuse(self) -> RecordError:
        return RecordError(
            "a bincode record has no field names: pass it to Module.load_record, or load it with a schema"
        )

    def __getitem__(self, key: str) -> Any:
        raise self._refuse()

    def __iter__(self) -> Iterator[str]:
        raise self._refuse()

    def __len__(self) -> int:
        raise self._refuse()


class BytesRecorder(_Recorder):
    """A recorder to and from ``bytes`` in memory."""

    def record(self, record: Mapping[str, Any]) -> bytes:
        """The encoded record."""
        try:
            return _ferrum.record_to_bytes(self._wire(record), self.format, self.settings.name)
        except ValueError as err:
            raise RecordError(str(err)) from err

    def load(
        self, data: bytes, device: Device[Any], schema: Mapping[str, Any] | None = None
    ) -> Mapping[str, Any]:
        """Decode ``data`` into a record on ``device``."""
        try:
            loaded = _ferrum.record_from_bytes(data, self.format, self._wire(schema), device)
        except ValueError as err:
            raise RecordError(f"record bytes: {err}") from err
        return _as_record(loaded, "record bytes")


class NamedMpkBytesRecorder(BytesRecorder):
    """Named MessagePack bytes."""

    format: ClassVar[str] = "named_mpk_bytes"


class BinBytesRecorder(BytesRecorder):
    """bincode bytes; without a schema, ``load`` returns a ``DeferredRecord`` for ``Module.load_record``."""

    format: ClassVar[str] = "bin_bytes"

    def load(
        self, data: bytes, device: Device[Any], schema: Mapping[str, Any] | None = None
    ) -> Mapping[str, Any]:
        """Decode ``data``; without ``schema`` decoding waits for ``Module.load_record``."""
        if schema is None:
            return DeferredRecord(bytes(data), self.format, device)
        return super().load(data, device, schema)
