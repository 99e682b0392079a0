"""Recorders: save and load records in the files Burn 0.20 writes.

A record is the nested dict a module's ``into_record()`` returns. File
recorders add their own extension and write atomically; bytes recorders
work in memory. The encoding lives in the Rust engine.

The modules, as Burn's ``record``: ``file`` and ``memory`` (the recorders),
``settings`` (precision), ``base`` (the record kinds), ``error``,
``burn_format`` (Burn's id text and bincode layout) and ``param_id``.

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

from ferrum.record.base import ModuleRecord, OptimizerRecord, Some, SomeConstant
from ferrum.record.burn_format import rank_problem
from ferrum.record.error import RecordError, RecordFileError
from ferrum.record.file import (
    BinFileRecorder,
    BinGzFileRecorder,
    CompactRecorder,
    DefaultRecorder,
    FileRecorder,
    JsonGzFileRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    PrettyJsonFileRecorder,
)
from ferrum.record.memory import BinBytesRecorder, BytesRecorder, DeferredRecord, NamedMpkBytesRecorder
from ferrum.record.settings import (
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    PrecisionSettings,
)

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
