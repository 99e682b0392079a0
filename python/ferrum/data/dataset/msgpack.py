"""A small MessagePack codec for dataset rows (Burn's ``SqliteDataset`` stores each item as one blob).

Only what serde's MessagePack (rmp-serde) writes: nil, booleans, integers,
floats, strings, binaries, arrays and maps; extension types are refused. The
decoder treats its input as untrusted: every length is checked against the
bytes that remain (so a forged length cannot allocate more than the blob
holds), nesting is bounded, and any defect is a ``ValueError`` saying where.
"""

from __future__ import annotations

import math
import struct
from typing import Any

__all__ = ["MAX_DEPTH", "decode", "encode"]

MAX_DEPTH = 128
"""Deepest nesting of arrays and maps ``decode`` accepts."""


def encode(value: Any) -> bytes:
    """``value`` (None, bool, int, float, str, bytes, list/tuple, dict) as MessagePack bytes.

    Integers take the smallest form, floats are float64, as rmp-serde writes them.

    Example:
        >>> encode([1, "a", None]).hex()
        '9301a161c0'
    """
    out = bytearray()
    _encode(value, out, 0)
    return bytes(out)


def _encode(value: Any, out: bytearray, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"MessagePack: value nested deeper than {MAX_DEPTH} levels")
    if value is None:
        out.append(0xC0)
    elif value is True or value is False:
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        _encode_int(value, out)
    elif isinstance(value, float):
        out.append(0xCB)
        out += struct.pack(">d", value)
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _header(len(data), out, fix=(0xA0, 32), forms=((0xD9, "B"), (0xDA, "H"), (0xDB, "I")))
        out += data
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        _header(len(data), out, fix=None, forms=((0xC4, "B"), (0xC5, "H"), (0xC6, "I")))
        out += data
    elif isinstance(value, (list, tuple)):
        _header(len(value), out, fix=(0x90, 16), forms=((0xDC, "H"), (0xDD, "I")))
        for item in value:
            _encode(item, out, depth + 1)
    elif isinstance(value, dict):
        _header(len(value), out, fix=(0x80, 16), forms=((0xDE, "H"), (0xDF, "I")))
        for key, item in value.items():
            _encode(key, out, depth + 1)
            _encode(item, out, depth + 1)
    else:
        raise TypeError(f"MessagePack: cannot encode a {type(value).__name__} ({value!r})")


def _encode_int(value: int, out: bytearray) -> None:
    if 0 <= value < 0x80 or -32 <= value < 0:
        out += struct.pack(">b" if value < 0 else ">B", value)
        return
    forms = (
        ((0xCC, ">B"), (0xCD, ">H"), (0xCE, ">I"), (0xCF, ">Q"))
        if value >= 0
        else ((0xD0, ">b"), (0xD1, ">h"), (0xD2, ">i"), (0xD3, ">q"))
    )
    for marker, fmt in forms:
        try:
            packed = struct.pack(fmt, value)
        except struct.error:
            continue
        out.append(marker)
        out += packed
        return
    raise ValueError(f"MessagePack: integer {value} does not fit in 64 bits")


def _header(
    length: int, out: bytearray, fix: tuple[int, int] | None, forms: tuple[tuple[int, str], ...]
) -> None:
    if fix is not None and length < fix[1]:
        out.append(fix[0] | length)
        return
    for marker, fmt in forms:
        if length < 1 << (8 * struct.calcsize(fmt)):
            out.append(marker)
            out += struct.pack(">" + fmt, length)
            return
    raise ValueError(f"MessagePack: {length} elements or bytes exceed the format's 2^32 - 1")


def decode(data: bytes) -> Any:
    """The single value MessagePack ``data`` holds: arrays as lists, maps as dicts, binaries as bytes.

    Raises ``ValueError`` for truncated or trailing bytes, extension types,
    invalid UTF-8, unhashable map keys or nesting deeper than ``MAX_DEPTH``.

    Example:
        >>> decode(bytes.fromhex("9301a161c0"))
        [1, 'a', None]
    """
    reader = _Reader(bytes(data))
    value = reader.value(0)
    if reader.pos != len(reader.data):
        raise ValueError(
            f"MessagePack: {len(reader.data) - reader.pos} bytes left over after the value "
            f"(expected the blob to hold exactly one value of {reader.pos} bytes)"
        )
    return value


_FIXED = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
_FLOATS = {0xCA: ">f", 0xCB: ">d"}
_LENGTHS = {
    0xD9: ("str", ">B"), 0xDA: ("str", ">H"), 0xDB: ("str", ">I"),
    0xC4: ("bin", ">B"), 0xC5: ("bin", ">H"), 0xC6: ("bin", ">I"),
    0xDC: ("array", ">H"), 0xDD: ("array", ">I"),
    0xDE: ("map", ">H"), 0xDF: ("map", ">I"),
}  # fmt: skip


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise ValueError(
                f"MessagePack: truncated at byte {self.pos}: expected {n} more bytes, "
                f"found {len(self.data) - self.pos}"
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ValueError(f"MessagePack: nested deeper than {MAX_DEPTH} levels at byte {self.pos}")
        start = self.pos
        marker = self.take(1)[0]
        if marker <= 0x7F:
            return marker
        if marker >= 0xE0:
            return marker - 0x100
        if marker == 0xC0:
            return None
        if marker in (0xC2, 0xC3):
            return marker == 0xC3
        if marker in _FIXED:
            return self.unpack(_FIXED[marker])
        if marker in _FLOATS:
            return float(self.unpack(_FLOATS[marker]))
        if 0xA0 <= marker <= 0xBF:
            return self.text(marker & 0x1F, start)
        if 0x90 <= marker <= 0x9F:
            return self.array(marker & 0x0F, depth)
        if 0x80 <= marker <= 0x8F:
            return self.map(marker & 0x0F, depth, start)
        if marker in _LENGTHS:
            kind, fmt = _LENGTHS[marker]
            length = self.unpack(fmt)
            if kind == "str":
                return self.text(length, start)
            if kind == "bin":
                return self.take(length)
            if kind == "array":
                return self.array(length, depth)
            return self.map(length, depth, start)
        raise ValueError(
            f"MessagePack: unsupported marker 0x{marker:02x} at byte {start} "
            "(extension types and the reserved 0xc1 are not item values)"
        )

    def text(self, length: int, start: int) -> str:
        try:
            return self.take(length).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"MessagePack: string at byte {start} is not valid UTF-8") from None

    def array(self, length: int, depth: int) -> list[Any]:
        # Each element takes at least one byte: a forged length fails here, before any allocation.
        self.check_count(length, 1)
        return [self.value(depth + 1) for _ in range(length)]

    def map(self, length: int, depth: int, start: int) -> dict[Any, Any]:
        self.check_count(length, 2)
        out: dict[Any, Any] = {}
        for _ in range(length):
            key = self.value(depth + 1)
            if isinstance(key, (list, dict)) or (isinstance(key, float) and math.isnan(key)):
                raise ValueError(f"MessagePack: map at byte {start} has a key that is not a scalar: {key!r}")
            out[key] = self.value(depth + 1)
        return out

    def check_count(self, count: int, min_bytes: int) -> None:
        if count * min_bytes > len(self.data) - self.pos:
            raise ValueError(
                f"MessagePack: truncated at byte {self.pos}: a container of {count} entries needs at least "
                f"{count * min_bytes} more bytes, found {len(self.data) - self.pos}"
            )
