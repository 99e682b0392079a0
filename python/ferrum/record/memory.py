"""Bytes recorders, in memory (Burn's ``record/memory.rs``).

A bincode record read without its model waits, as a ``DeferredRecord``, for
``Module.load_record`` to decode it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device
from ferrum.record.burn_format import _as_record, _bincode_layout, _ids_to_burn
from ferrum.record.error import RecordError
from ferrum.record.recorder import _Recorder

__all__ = ["BinBytesRecorder", "BytesRecorder", "DeferredRecord", "NamedMpkBytesRecorder"]


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
