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

import dataclasses
import hashlib
import os
import secrets
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device, FerrumError, Tensor

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
    "ModuleRecord",
    "NamedMpkBytesRecorder",
    "NamedMpkFileRecorder",
    "NamedMpkGzFileRecorder",
    "OptimizerRecord",
    "PrecisionSettings",
    "PrettyJsonFileRecorder",
    "RecordError",
    "RecordFileError",
    "Some",
    "SomeConstant",
    "rank_problem",
]


_U64 = 1 << 64


# ParamId is exported by ferrum.module (it names a module's parameters); it is defined here, below the
# module system, because records hold ids and the recorders translate them into Burn's text.
@dataclasses.dataclass(frozen=True)
class ParamId:
    """The id of a parameter: a random 64-bit number, shown as its decimal string (as in Burn).

    Ids do not come from the seeded generator, so seeding never makes two
    parameters share one.

    Example:
        >>> from ferrum.module import ParamId
        >>> pid = ParamId.new()
        >>> ParamId.from_str(str(pid)) == pid
        True
    """

    value: int

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool) or not 0 <= self.value < _U64:
            raise ValueError(f"ParamId value must be an int in [0, 2**64), found {self.value!r}")

    @staticmethod
    def new() -> ParamId:
        """A fresh random id."""
        return ParamId(secrets.randbits(64))

    @staticmethod
    def from_str(text: str) -> ParamId:
        """Parse ``str(id)``; any other string (Burn's legacy ids) maps to a stable hash of it."""
        if not isinstance(text, str) or not text:
            raise ValueError(f"ParamId.from_str needs a non-empty str, found {text!r}")
        if text.isdigit() and int(text) < _U64:
            return ParamId(int(text))
        digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
        return ParamId(int.from_bytes(digest, "little"))

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return f"ParamId({self.value})"


class RecordError(FerrumError, ValueError):
    """A record that cannot be written or read: damaged, foreign or of another architecture.

    A ``FerrumError`` like every error ferrum raises, and a ``ValueError``.
    """


class RecordFileError(OSError, RecordError):
    """A record file the file system would not write or read (a full or read-only disk, a
    missing folder): an ``OSError`` with ``errno`` and ``filename`` set, and a ``RecordError``.

    Example:
        >>> import errno
        >>> from ferrum.record import NamedMpkFileRecorder, RecordFileError
        >>> try:
        ...     NamedMpkFileRecorder().record({"w": 1.0}, "/no/such/folder/model")
        ... except OSError as err:
        ...     print(type(err).__name__, err.errno == errno.ENOENT, err.filename)
        RecordFileError True /no/such/folder/model.mpk
    """


class PrecisionSettings:
    """The element types tensors are stored as (Burn's ``PrecisionSettings``)."""

    name: ClassVar[str] = "full"


class FullPrecisionSettings(PrecisionSettings):
    """Floats as f32, ints as i32 (Burn's default)."""

    name: ClassVar[str] = "full"


class HalfPrecisionSettings(PrecisionSettings):
    """Floats as f16, ints as i16: half the size, about 3 significant digits.

    Example:
        >>> NamedMpkFileRecorder(HalfPrecisionSettings).settings.name  # what CompactRecorder() uses
        'half'
    """

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


def _is_optimizer_record(node: Mapping[str, Any]) -> bool:
    # Burn's optimizer records: {param id: {"V1": {"Rank<N>": state}}}, keyed by the id's text.
    if isinstance(node, OptimizerRecord):
        return True
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


class _SomeTensor(tuple[Any, ...]):
    """Rust's ``Some(tensor)`` of an ``Option<Tensor>``: bincode writes a 1 byte before the tensor."""


def _mark_optional_tensors(node: object, parent: str = "") -> Any:
    """A state with its ``Option<Tensor>`` fields marked for bincode.

    Burn's optimizer states hold one: RMSProp's ``centered.grad_avg`` (None
    unless centered). Other formats write ``Some(x)`` as ``x``, so only bincode
    needs to know; ``None`` is already an option.
    """
    if not isinstance(node, Mapping):
        return node
    marked = {
        name: _SomeTensor((value,))
        if (parent, name) == ("centered", "grad_avg") and isinstance(value, Tensor)
        else _mark_optional_tensors(value, name)
        for name, value in node.items()
    }
    return _same_kind(node, marked)


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
        variants[name] = _Variant(name, int(name[4:]), _mark_optional_tensors(state))
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
    return type(node)(out) if isinstance(node, (Some, OptimizerRecord)) else out


def _burn_id(value: object) -> object:
    """Burn's text of a parameter id: ferrum's decimal text, an int or a ParamId become base32hex.

    Text that is already Burn's (base32hex or a legacy UUID) stays; any other
    text is written as the id ``ParamId.from_str`` maps it to, so that the
    file loads back to the same id in ferrum and in Burn.
    """
    if isinstance(value, ParamId):
        return _ferrum.param_id_encode(value.value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64:
        return _ferrum.param_id_encode(value)
    if not isinstance(value, str) or not value:
        return value
    if not value.isdigit():
        try:
            _ferrum.param_id_decode(value)
            return value
        except ValueError:
            pass
    return _ferrum.param_id_encode(ParamId.from_str(value).value)


def _ids_to_burn(node: Any, root: bool = True) -> Any:
    # ferrum shows a ParamId as its decimal value; Burn's files hold base32hex text.
    if isinstance(node, Mapping):
        if _is_param(node):
            return _same_kind(node, {"id": _burn_id(node["id"]), "param": node["param"]})
        # An optimizer record is a whole file's record, keyed by parameter id.
        optimizer = root and _is_optimizer_record(node)
        out: dict[Any, Any] = {}
        for key, value in node.items():
            out[_burn_id(key) if optimizer else key] = _ids_to_burn(value, False)
        return _same_kind(node, out)
    if isinstance(node, SomeConstant):
        return node
    if isinstance(node, tuple):
        return tuple(_ids_to_burn(item, False) for item in node)
    if isinstance(node, list):
        return [_ids_to_burn(item, False) for item in node]
    return node


def _join(path: str, name: object) -> str:
    return f"{path}.{name}" if path else str(name)


def _decoded_id(text: object, source: str, where: str) -> str:
    """ferrum's text of the id a file holds; a damaged id is a RecordError, never a fresh id."""
    expected = "a parameter id (13 base32hex characters, or a UUID in older files)"
    if not isinstance(text, str):
        found = "nothing" if text is None else f"{type(text).__name__} {text!r}"
        raise RecordError(f"{source}: {where}: expected {expected}, found {found}")
    try:
        return str(_ferrum.param_id_decode(text))
    except ValueError:
        raise RecordError(f"{source}: {where}: expected {expected}, found {text[:40]!r}") from None


def _tensor_paths(node: object, path: str) -> Iterator[tuple[str, Tensor[Any, Any, Any]]]:
    if isinstance(node, Tensor):
        yield path, node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _tensor_paths(value, _join(path, key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _tensor_paths(value, _join(path, i))


def rank_problem(path: str, versioned: object) -> str | None:
    """What is wrong with Burn's ``{"Rank<N>": state}`` at ``path``, or None when it fits.

    The variant names the rank of the parameter, and every tensor of its state
    (moments, velocities, sums) has that rank: a tag that disagrees would load
    the state onto a parameter of another shape.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.record import rank_problem
        >>> state = {"momentum": {"velocity": Tensor.zeros((2, 3), NdArray.device())}}
        >>> rank_problem("7.V1", {"Rank2": state}) is None
        True
        >>> print(rank_problem("7.V1", {"Rank3": state}))
        7.V1.Rank3: the variant says rank 3, but 7.V1.Rank3.momentum.velocity has rank 2 (shape (2, 3))
    """
    if not isinstance(versioned, Mapping) or len(versioned) != 1:
        return f"{path}: expected {{'Rank<N>': state}}, found {versioned!r:.80}"
    variant, state = next(iter(versioned.items()))
    if not (isinstance(variant, str) and variant.startswith("Rank") and variant[4:].isdigit()):
        return f"{path}: expected a 'Rank<N>' variant, found {variant!r:.40}"
    rank, where = int(variant[4:]), f"{path}.{variant}"
    for at, tensor in _tensor_paths(state, where):
        if len(tensor.dims()) != rank:
            found = f"{at} has rank {len(tensor.dims())} (shape {tensor.dims()})"
            return f"{where}: the variant says rank {rank}, but {found}"
    return None


def _ids_from_burn(node: Any, source: str, path: str) -> Any:
    """The loaded tree with ferrum's ids, checking every id and optimizer rank tag against ``source``."""
    if isinstance(node, dict):
        if isinstance(node.get("param"), Tensor):
            node["id"] = _decoded_id(node.get("id"), source, _join(path, "id"))
            return node
        if not path and _is_optimizer_record(node):
            loaded = OptimizerRecord()
            for key, value in node.items():
                where = _join(path, key)
                problem = rank_problem(f"{where}.V1", value["V1"])
                if problem is not None:
                    raise RecordError(f"{source}: optimizer record {problem}")
                loaded[_decoded_id(key, source, f"optimizer record key {where!r}")] = _ids_from_burn(
                    value, source, where
                )
            return loaded
        for key, value in node.items():
            if isinstance(value, _CONTAINERS):
                node[key] = _ids_from_burn(value, source, _join(path, key))
    elif isinstance(node, list):
        # Only containers can hold ids: a list of millions of numbers costs one pass.
        for i, item in enumerate(node):
            if isinstance(item, _CONTAINERS):
                node[i] = _ids_from_burn(item, source, _join(path, i))
    elif isinstance(node, tuple):
        return tuple(_ids_from_burn(item, source, _join(path, i)) for i, item in enumerate(node))
    return node


_CONTAINERS = (dict, list, tuple)


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
    """A recorder that writes files; ``record``/``load`` take the path without extension.

    Example:
        >>> import os, tempfile
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> device = NdArray.device()
        >>> model = LinearConfig(2, 3).init(device)
        >>> for recorder in [NamedMpkFileRecorder(), BinGzFileRecorder(), PrettyJsonFileRecorder()]:
        ...     with tempfile.TemporaryDirectory() as tmp:
        ...         model.save_file(os.path.join(tmp, "model"), recorder)
        ...         loaded = model.load_file(os.path.join(tmp, "model"), recorder, device)
        ...         files = os.listdir(tmp)
        ...     print(files, loaded.weight.val().all_close(model.weight.val()))
        ['model.mpk'] True
        ['model.bin.gz'] True
        ['model.json'] True
    """

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
        except OSError as err:
            raise RecordFileError(err.errno, err.strerror, err.filename) from err
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
        except OSError as err:
            raise RecordFileError(err.errno, err.strerror, err.filename) from err
        except ValueError as err:
            raise RecordError(str(err)) from err
        return _as_record(loaded, target)


def _as_record(loaded: object, source: str) -> dict[str, Any]:
    if not isinstance(loaded, dict):
        raise RecordError(
            f"{source}: expected a module record (a map of fields), found {type(loaded).__name__}"
        )
    return _ids_from_burn(loaded, source, "")  # type: ignore[no-any-return]


class NamedMpkFileRecorder(FileRecorder):
    """Named MessagePack (``.mpk``), Burn's default file format; ``DefaultRecorder`` at full precision.

    Example:
        >>> NamedMpkFileRecorder().file_path("model")
        'model.mpk'
    """

    format: ClassVar[str] = "named_mpk"
    extension: ClassVar[str] = "mpk"


class NamedMpkGzFileRecorder(FileRecorder):
    """Named MessagePack, gzipped (``.mpk.gz``)."""

    format: ClassVar[str] = "named_mpk_gz"
    extension: ClassVar[str] = "mpk.gz"


class BinFileRecorder(FileRecorder):
    """bincode (``.bin``): compact, without field names; loading needs the model.

    Example:
        >>> BinFileRecorder().file_path("model")
        'model.bin'
    """

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
    """Indented JSON (``.json``), for reading by eye.

    Example:
        >>> PrettyJsonFileRecorder().file_path("model")
        'model.json'
    """

    format: ClassVar[str] = "pretty_json"
    extension: ClassVar[str] = "json"


class CompactRecorder(NamedMpkFileRecorder):
    """Named MessagePack in half precision (Burn's ``CompactRecorder``): half the size, f16 values.

    Example:
        >>> CompactRecorder().settings is HalfPrecisionSettings, CompactRecorder().file_path("model")
        (True, 'model.mpk')
    """

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
    """A recorder to and from ``bytes`` in memory.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> device = NdArray.device()
        >>> model = LinearConfig(2, 3).init(device)
        >>> for recorder in [NamedMpkBytesRecorder(), BinBytesRecorder()]:
        ...     restored = model.load_record(recorder.load(recorder.record(model.into_record()), device))
        ...     print(restored.weight.val().all_close(model.weight.val()))
        True
        True
    """

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
    """Named MessagePack bytes.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> record = {"scale": {"id": "1", "param": Tensor.ones((2,), NdArray.device())}}
        >>> recorder = NamedMpkBytesRecorder()
        >>> recorder.load(recorder.record(record), NdArray.device())["scale"]["id"]
        '1'
    """

    format: ClassVar[str] = "named_mpk_bytes"


class BinBytesRecorder(BytesRecorder):
    """bincode bytes; without a schema, ``load`` returns a ``DeferredRecord`` for ``Module.load_record``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> record = {"scale": {"id": "1", "param": Tensor.ones((2,), NdArray.device())}}
        >>> type(BinBytesRecorder().load(BinBytesRecorder().record(record), NdArray.device())).__name__
        'DeferredRecord'
    """

    format: ClassVar[str] = "bin_bytes"

    def load(
        self, data: bytes, device: Device[Any], schema: Mapping[str, Any] | None = None
    ) -> Mapping[str, Any]:
        """Decode ``data``; without ``schema`` decoding waits for ``Module.load_record``."""
        if schema is None:
            return DeferredRecord(bytes(data), self.format, device)
        return super().load(data, device, schema)
