"""The CBOR subset Burnpack metadata uses (RFC 8949): integers, strings, arrays, maps, simple values.

Burn writes the metadata with ``ciborium`` (serde): definite lengths, text
keys, unsigned integers in their shortest form. The decoder checks every
length against the bytes that remain and bounds the nesting, so damaged
metadata is a ``CborError``, never a huge allocation or a deep recursion.
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["CborError", "decode", "encode"]

_MAX_DEPTH = 128
_MAX_ITEMS = 5_000_000  # Burnpack metadata holds a few items per tensor, and at most 100 000 tensors


class CborError(ValueError):
    """Metadata that is not the CBOR Burnpack writes."""


def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([major << 5 | value])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if value < 1 << (8 * size):
            return bytes([major << 5 | extra]) + value.to_bytes(size, "big")
    raise CborError(f"integer {value} does not fit in 64 bits")


def encode(value: Any) -> bytes:
    """CBOR bytes of ints, str, bytes, bool, None, lists/tuples and dicts (keys kept in their order).

    Example:
        >>> from ferrum.store.burnpack.cbor import decode, encode
        >>> encode({"a": [1, 500]}).hex()
        'a1616182011901f4'
        >>> decode(encode({"a": [1, 500]}))
        {'a': [1, 500]}
    """
    out = bytearray()
    _encode(value, out)
    return bytes(out)


def _encode(value: Any, out: bytearray) -> None:
    if value is True or value is False:
        out.append(0xF5 if value else 0xF4)
    elif value is None:
        out.append(0xF6)
    elif isinstance(value, int):
        out += _head(0, value) if value >= 0 else _head(1, -1 - value)
    elif isinstance(value, float):
        out += b"\xfb" + struct.pack(">d", value)
    elif isinstance(value, str):
        raw = value.encode("utf-8")
        out += _head(3, len(raw)) + raw
    elif isinstance(value, bytes):
        out += _head(2, len(value)) + value
    elif isinstance(value, (list, tuple)):
        out += _head(4, len(value))
        for item in value:
            _encode(item, out)
    elif isinstance(value, dict):
        out += _head(5, len(value))
        for key, item in value.items():
            _encode(key, out)
            _encode(item, out)
    else:
        raise CborError(f"cannot encode {type(value).__name__} as CBOR")


def decode(data: bytes | memoryview) -> Any:
    """The single CBOR item that makes up ``data``; ``CborError`` on anything else."""
    view = memoryview(data)
    budget = [_MAX_ITEMS]
    value, end = _decode(view, 0, 0, budget)
    if end != len(view):
        raise CborError(f"{len(view) - end} bytes after the CBOR item")
    return value


def _need(data: memoryview, pos: int, n: int) -> None:
    if n < 0 or pos + n > len(data):
        raise CborError(f"truncated at byte {pos}: needs {n} bytes, {len(data) - pos} remain")


def _decode(data: memoryview, pos: int, depth: int, budget: list[int]) -> tuple[Any, int]:
    if depth > _MAX_DEPTH:
        raise CborError(f"nested deeper than {_MAX_DEPTH} levels")
    budget[0] -= 1
    if budget[0] < 0:
        raise CborError(f"more than {_MAX_ITEMS} items")
    _need(data, pos, 1)
    initial = data[pos]
    major, extra = initial >> 5, initial & 0x1F
    pos += 1
    if major == 7:
        return _simple(data, pos, extra)
    if extra < 24:
        arg = extra
    elif extra <= 27:
        size = 1 << (extra - 24)
        _need(data, pos, size)
        arg = int.from_bytes(data[pos : pos + size], "big")
        pos += size
    else:
        raise CborError(
            f"unsupported CBOR item 0x{initial:02x} at byte {pos - 1} (indefinite lengths are not used)"
        )
    if major == 0:
        return arg, pos
    if major == 1:
        return -1 - arg, pos
    if major in (2, 3):
        _need(data, pos, arg)
        raw = bytes(data[pos : pos + arg])
        if major == 2:
            return raw, pos + arg
        try:
            return raw.decode("utf-8"), pos + arg
        except UnicodeDecodeError:
            raise CborError(f"text at byte {pos} is not UTF-8") from None
    if major == 4:
        _need(data, pos, arg)  # every item takes at least one byte
        items = []
        for _ in range(arg):
            item, pos = _decode(data, pos, depth + 1, budget)
            items.append(item)
        return items, pos
    if major == 5:
        _need(data, pos, 2 * arg)
        result: dict[Any, Any] = {}
        for _ in range(arg):
            key, pos = _decode(data, pos, depth + 1, budget)
            if not isinstance(key, (str, int, bytes)):
                raise CborError(f"map key of type {type(key).__name__} at byte {pos}")
            result[key], pos = _decode(data, pos, depth + 1, budget)
        return result, pos
    # major 6: a tag; its content is the value
    return _decode(data, pos, depth + 1, budget)


def _simple(data: memoryview, pos: int, extra: int) -> tuple[Any, int]:
    if extra == 20:
        return False, pos
    if extra == 21:
        return True, pos
    if extra in (22, 23):
        return None, pos
    formats = {25: (">e", 2), 26: (">f", 4), 27: (">d", 8)}
    if extra in formats:
        fmt, size = formats[extra]
        _need(data, pos, size)
        return struct.unpack(fmt, data[pos : pos + size])[0], pos + size
    raise CborError(f"unsupported CBOR simple value {extra} at byte {pos - 1}")
