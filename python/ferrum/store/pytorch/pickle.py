"""A pickle reader that runs no code: Python's pickle opcodes, with globals from an allow-list.

``pickle.load`` calls whatever the stream names. This reader knows each
opcode itself; a global (``GLOBAL``/``STACK_GLOBAL``) resolves only through
the caller's allow-list, and ``REDUCE``/``NEWOBJ``/``BUILD`` only apply the
callables that list hands out. Any other global is an error naming it.
Every length is checked against the bytes that remain, integers and
containers are bounded, and the work is linear in the stream's size, so a
hostile stream ends in ``PickleError``, never a crash, a hang or a huge
allocation.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable, Mapping
from typing import Any

from typing_extensions import Buffer

from ferrum.store.result import StoreError

__all__ = ["Allowed", "PickleError", "bounded_repr", "read_pickle"]

_MAX_LONG_BYTES = 1024  # a state dict's integers are small; a 1 KiB integer is already hostile
_MAX_DEPTH_MARKS = 10_000
# Each opcode makes at most one object: this bounds the memory a hostile stream can make us spend
# (about 1 GB); a state dict of 10 000 tensors takes well under a million opcodes.
_MAX_OPCODES = 10_000_000
# Hashing or comparing a tuple walks every path through it, and the memo lets a few bytes build a tuple
# with 2**40 paths: a dict key or set member may expand to at most this many values, nested this deep.
_MAX_KEY_NODES = 10_000
_MAX_KEY_DEPTH = 100


class PickleError(StoreError):
    """A pickle stream that is damaged, truncated or names something not on the allow-list."""


class Allowed:
    """A global on the allow-list: ``call`` runs for REDUCE/NEWOBJ, ``build`` for BUILD (None refuses)."""

    def __init__(
        self,
        name: str,
        call: Callable[..., Any] | None = None,
        build: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        self.name = name
        self.call = call
        self.build = build

    def __repr__(self) -> str:
        return f"<global {self.name}>"


class _Mark:
    pass


_MARK = _Mark()


class _Reader:
    def __init__(
        self,
        data: Buffer,
        start: int,
        allowed: Mapping[tuple[str, str], Allowed],
        persistent_load: Callable[[Any], Any] | None,
        what: str,
    ) -> None:
        self.data = memoryview(data)
        # bytes and mmap search for a newline in place; anything else is copied once.
        self.raw: bytes | mmap.mmap = data if isinstance(data, (bytes, mmap.mmap)) else bytes(self.data)
        self.pos = start
        self.allowed = allowed
        self.persistent_load = persistent_load
        self.what = what
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.marks: list[int] = []
        # The expanded size of each tuple already used as a key, kept with the tuple so its id stays its own.
        self.key_nodes: dict[int, tuple[object, int]] = {}

    # ---- primitives ------------------------------------------------------------------------
    def fail(self, message: str) -> PickleError:
        return PickleError(f"{self.what}: {message} (pickle byte {self.pos})")

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"truncated: needs {n} bytes, {len(self.data) - self.pos} remain")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "little")

    def line_bytes(self, limit: int) -> bytes:
        end = self.raw.find(b"\n", self.pos, self.pos + limit)
        if end < 0:
            raise self.fail("truncated or overlong text argument")
        return bytes(self.take(end + 1 - self.pos)[:-1])

    def line(self) -> str:
        text = self.line_bytes(4096)
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail("text argument is not UTF-8") from None

    def pop(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise self.fail("stack underflow")
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise self.fail("stack underflow")
        return self.stack[-1]

    def pop_mark(self) -> list[Any]:
        if not self.marks:
            raise self.fail("no MARK on the stack")
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    def text(self, raw: memoryview) -> str:
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail("string is not UTF-8") from None

    def glob(self, module: str, name: str) -> Allowed:
        found = self.allowed.get((module, name))
        if found is None:
            raise self.fail(
                f"refusing global {module}.{name}: it is not on the allow-list of tensor-file globals"
                " (tensors, storages, dicts; a whole pickled model needs torch: save its state_dict())"
            )
        return found

    def memo_get(self, key: int) -> Any:
        if key not in self.memo:
            raise self.fail(f"memo key {key} was never stored")
        return self.memo[key]

    def callable_of(self, target: object, op: str) -> Callable[..., Any]:
        if not isinstance(target, Allowed) or target.call is None:
            raise self.fail(f"{op} on {_describe(target)}: only allow-listed constructors may be called")
        return target.call

    # ---- the opcode loop ---------------------------------------------------------------------
    def run(self) -> Any:
        for _ in range(_MAX_OPCODES):
            op = self.uint(1)
            handler = _OPS.get(op)
            if handler is None:
                raise self.fail(f"unknown or unsupported opcode 0x{op:02x}")
            if handler is _stop:
                if len(self.stack) != 1 or self.marks:
                    raise self.fail("STOP with a malformed stack")
                return self.stack[0]
            handler(self)
        raise self.fail(f"more than {_MAX_OPCODES} opcodes: too large for a tensor file's pickle")


def _describe(value: object) -> str:
    return repr(value) if isinstance(value, Allowed) else type(value).__name__


def bounded_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, in work bounded by ``limit``.

    An unpickled value may share one object along 2**40 paths (or hold a megabyte string), and the
    built-in ``repr`` (even as ``f"{value!r:.80}"``, which cuts after rendering) walks all of it.
    Each step emits at least one character, and a container queues at most ``limit`` items.
    """
    out: list[str] = []
    size = 0
    todo: list[object] = [value]
    while todo and size <= limit:
        item = todo.pop()
        if isinstance(item, _Text):
            text = item.text
        elif isinstance(item, (list, tuple, dict, set, frozenset)):
            text = _open_container(item, todo, limit)
        elif isinstance(item, (str, bytes)):
            text = repr(item[: limit + 1])
        elif isinstance(item, int) and not isinstance(item, bool) and item.bit_length() > 128:
            text = f"<int of {item.bit_length()} bits>"
        elif item is None or isinstance(item, (int, float, Allowed)):
            text = repr(item)
        else:
            text = f"<{type(item).__name__}>"
        out.append(text)
        size += len(text)
    text = "".join(out)
    return text if len(text) <= limit and not todo else text[: max(limit - 3, 0)] + "..."


class _Text:
    """Literal text queued by ``bounded_repr`` (brackets and separators), told apart from str values."""

    def __init__(self, text: str) -> None:
        self.text = text


def _open_container(item: Any, todo: list[object], limit: int) -> str:
    if isinstance(item, (set, frozenset)) and not item:
        return f"{type(item).__name__}()"
    if isinstance(item, dict):
        opening, closing = "{", "}"
        entries: list[list[object]] = []
        for key, value in item.items():
            if len(entries) > limit:
                break
            entries.append([key, _Text(": "), value])
    else:
        if isinstance(item, list):
            opening, closing = "[", "]"
        elif isinstance(item, tuple):
            opening, closing = "(", ",)" if len(item) == 1 else ")"
        elif isinstance(item, set):
            opening, closing = "{", "}"
        else:
            opening, closing = "frozenset({", "})"
        entries = []
        for member in item:
            if len(entries) > limit:
                break
            entries.append([member])
    queued: list[object] = []
    for i, entry in enumerate(entries):
        if i:
            queued.append(_Text(", "))
        queued.extend(entry)
    queued.append(_Text(closing))
    todo.extend(reversed(queued))
    return opening


def _check_key(r: _Reader, key: object, depth: int = 0) -> int:
    """The values hashing ``key`` walks, refused past ``_MAX_KEY_NODES``; each tuple is counted once."""
    if not isinstance(key, tuple):
        return 1  # a frozenset caches its hash, and its members were checked when it was built
    known = r.key_nodes.get(id(key))
    if known is not None:
        return known[1]
    if depth >= _MAX_KEY_DEPTH:
        raise r.fail(f"a dict key or set member nests tuples deeper than {_MAX_KEY_DEPTH} levels")
    total = 1
    for item in key:
        total += _check_key(r, item, depth + 1)
        if total > _MAX_KEY_NODES:
            raise r.fail(
                f"a dict key or set member expands to more than {_MAX_KEY_NODES} values"
                " (a tuple repeating shared tuples): too large to hash"
            )
    r.key_nodes[id(key)] = (key, total)
    return total


def _append_many(r: _Reader, target: object, items: list[Any]) -> None:
    if not isinstance(target, list):
        raise r.fail(f"APPENDS onto {_describe(target)}, expected a list")
    target.extend(items)


def _set_items(r: _Reader, target: object, items: list[Any]) -> None:
    if not isinstance(target, dict):
        raise r.fail(f"SETITEMS onto {_describe(target)}, expected a dict")
    if len(items) % 2:
        raise r.fail("SETITEMS with an odd number of items")
    for key, value in zip(items[::2], items[1::2], strict=True):
        _check_key(r, key)
        try:
            target[key] = value
        except TypeError:
            raise r.fail(f"dict key of type {type(key).__name__} is not hashable") from None


def _long(r: _Reader, raw: memoryview) -> int:
    return int.from_bytes(raw, "little", signed=True)


def _float_text(r: _Reader) -> float:
    try:
        return float(r.line())
    except ValueError:
        raise r.fail("FLOAT argument is not a number") from None


def _int_text(r: _Reader) -> Any:
    text = r.line().rstrip("L")
    if text == "00":
        return False
    if text == "01":
        return True
    if len(text) > 2 * _MAX_LONG_BYTES or not text.lstrip("-").isdigit():
        raise r.fail("INT/LONG argument is not a bounded integer")
    return int(text)


def _unicode_text(r: _Reader) -> str:
    raw = r.line_bytes(1 << 20)
    try:
        return raw.decode("raw-unicode-escape")
    except UnicodeDecodeError:
        raise r.fail("UNICODE argument is not raw-unicode-escape text") from None


def _call(r: _Reader, target: object, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return func(*args)
    except PickleError as err:
        raise r.fail(str(err)) from None
    except (TypeError, ValueError) as err:  # a stand-in given the wrong arguments
        raise r.fail(f"{target!r} with arguments it does not take: {err}") from None


def _calling(op: str) -> Callable[[_Reader], None]:
    """REDUCE and NEWOBJ: an allow-listed stand-in applied to a tuple of arguments."""

    def handler(r: _Reader) -> None:
        args = r.pop()
        target = r.pop()
        func = r.callable_of(target, op)
        if not isinstance(args, tuple):
            raise r.fail(f"{op} arguments must be a tuple, found {type(args).__name__}")
        r.stack.append(_call(r, target, func, args))

    return handler


def _build(r: _Reader) -> None:
    state = r.pop()
    target = r.top()
    if isinstance(target, dict):
        return  # an OrderedDict's attributes (a state dict's `_metadata`): nothing a tensor needs
    builder = getattr(target, "build_state", None)
    if builder is None:
        raise r.fail(f"BUILD on {_describe(target)} is not allowed")
    try:
        builder(state)
    except PickleError as err:
        raise r.fail(str(err)) from None


def _persid(r: _Reader, pid: Any) -> None:
    if r.persistent_load is None:
        raise r.fail("persistent id in a pickle that allows none")
    try:
        r.stack.append(r.persistent_load(pid))
    except PickleError as err:
        raise r.fail(str(err)) from None


def _stack_global(r: _Reader) -> None:
    name = r.pop()
    module = r.pop()
    if not isinstance(module, str) or not isinstance(name, str):
        raise r.fail("STACK_GLOBAL needs two strings")
    r.stack.append(r.glob(module, name))


def _mark(r: _Reader) -> None:
    if len(r.marks) >= _MAX_DEPTH_MARKS:
        raise r.fail("too many nested MARKs")
    r.marks.append(len(r.stack))


def _put(r: _Reader, key: int) -> None:
    r.memo[key] = r.top()


def _frozen(r: _Reader, items: list[Any]) -> frozenset[Any]:
    for item in items:
        _check_key(r, item)
    try:
        return frozenset(items)
    except TypeError:
        raise r.fail("FROZENSET of unhashable items") from None


def _add_items(r: _Reader, target: object, items: list[Any]) -> None:
    if not isinstance(target, set):
        raise r.fail(f"ADDITEMS onto {_describe(target)}, expected a set")
    for item in items:
        _check_key(r, item)
    try:
        target.update(items)
    except TypeError:
        raise r.fail("ADDITEMS of unhashable items") from None


def _long4(r: _Reader) -> int:
    n = r.uint(4)
    if n > _MAX_LONG_BYTES:
        raise r.fail(f"LONG4 of {n} bytes is beyond the {_MAX_LONG_BYTES}-byte limit")
    return _long(r, r.take(n))


def _frame(r: _Reader) -> None:
    size = r.uint(8)
    if size > len(r.data) - r.pos:
        raise r.fail(f"FRAME of {size} bytes runs past the end")


def _stop(r: _Reader) -> None:
    """Marks the end; ``run`` checks the stack."""


def _proto(r: _Reader) -> None:
    version = r.uint(1)
    if version > 5:
        raise r.fail(f"pickle protocol {version} is newer than 5")


def _marked_target(r: _Reader) -> tuple[object, list[Any]]:
    items = r.pop_mark()
    if not r.stack or (r.marks and len(r.stack) <= r.marks[-1]):
        raise r.fail("no container below the MARK")
    return r.stack[-1], items


def _appends(r: _Reader) -> None:
    _append_many(r, *_marked_target(r))


def _setitems(r: _Reader) -> None:
    _set_items(r, *_marked_target(r))


def _additems(r: _Reader) -> None:
    _add_items(r, *_marked_target(r))


def _push(value: Callable[[_Reader], Any]) -> Callable[[_Reader], None]:
    def op(r: _Reader) -> None:
        r.stack.append(value(r))

    return op


def _tuple_of(n: int) -> Callable[[_Reader], None]:
    def op(r: _Reader) -> None:
        items = [r.pop() for _ in range(n)][::-1]
        r.stack.append(tuple(items))

    return op


def _dict_from(r: _Reader) -> dict[Any, Any]:
    target: dict[Any, Any] = {}
    _set_items(r, target, r.pop_mark())
    return target


def _setitem(r: _Reader) -> None:
    value = r.pop()
    key = r.pop()
    _set_items(r, r.top(), [key, value])


def _append(r: _Reader) -> None:
    value = r.pop()
    _append_many(r, r.top(), [value])


_OPS: dict[int, Callable[[_Reader], Any]] = {
    0x80: _proto,  # PROTO
    0x95: _frame,  # FRAME
    ord("."): _stop,
    ord("("): _mark,
    ord("0"): lambda r: r.pop(),  # POP
    ord("1"): lambda r: r.pop_mark(),  # POP_MARK
    ord("2"): lambda r: r.stack.append(r.top()),  # DUP
    ord("N"): _push(lambda r: None),
    0x88: _push(lambda r: True),  # NEWTRUE
    0x89: _push(lambda r: False),  # NEWFALSE
    ord("J"): _push(lambda r: _long(r, r.take(4))),  # BININT
    ord("K"): _push(lambda r: r.uint(1)),  # BININT1
    ord("M"): _push(lambda r: r.uint(2)),  # BININT2
    0x8A: _push(lambda r: _long(r, r.take(r.uint(1)))),  # LONG1
    0x8B: _push(_long4),  # LONG4
    ord("I"): _push(_int_text),  # INT
    ord("L"): _push(_int_text),  # LONG
    ord("G"): _push(lambda r: struct.unpack(">d", r.take(8))[0]),  # BINFLOAT
    ord("F"): _push(_float_text),  # FLOAT
    ord("X"): _push(lambda r: r.text(r.take(r.uint(4)))),  # BINUNICODE
    0x8C: _push(lambda r: r.text(r.take(r.uint(1)))),  # SHORT_BINUNICODE
    0x8D: _push(lambda r: r.text(r.take(r.uint(8)))),  # BINUNICODE8
    ord("V"): _push(_unicode_text),  # UNICODE (protocol 0)
    ord("T"): _push(lambda r: bytes(r.take(r.uint(4))).decode("latin-1")),  # BINSTRING
    ord("U"): _push(lambda r: bytes(r.take(r.uint(1))).decode("latin-1")),  # SHORT_BINSTRING
    ord("B"): _push(lambda r: bytes(r.take(r.uint(4)))),  # BINBYTES
    ord("C"): _push(lambda r: bytes(r.take(r.uint(1)))),  # SHORT_BINBYTES
    0x8E: _push(lambda r: bytes(r.take(r.uint(8)))),  # BINBYTES8
    ord("}"): _push(lambda r: {}),  # EMPTY_DICT
    ord("]"): _push(lambda r: []),  # EMPTY_LIST
    ord(")"): _push(lambda r: ()),  # EMPTY_TUPLE
    0x8F: _push(lambda r: set()),  # EMPTY_SET
    ord("t"): _push(lambda r: tuple(r.pop_mark())),  # TUPLE
    0x85: _tuple_of(1),
    0x86: _tuple_of(2),
    0x87: _tuple_of(3),
    ord("l"): _push(lambda r: r.pop_mark()),  # LIST
    ord("d"): _push(_dict_from),  # DICT
    0x91: _push(lambda r: _frozen(r, r.pop_mark())),  # FROZENSET
    ord("a"): _append,
    ord("e"): _appends,
    ord("s"): _setitem,
    ord("u"): _setitems,
    0x90: _additems,
    ord("q"): lambda r: _put(r, r.uint(1)),  # BINPUT
    ord("r"): lambda r: _put(r, r.uint(4)),  # LONG_BINPUT
    ord("p"): lambda r: _put(r, _int_text(r)),  # PUT
    0x94: lambda r: _put(r, len(r.memo)),  # MEMOIZE
    ord("h"): _push(lambda r: r.memo_get(r.uint(1))),  # BINGET
    ord("j"): _push(lambda r: r.memo_get(r.uint(4))),  # LONG_BINGET
    ord("g"): _push(lambda r: r.memo_get(_int_text(r))),  # GET
    ord("c"): _push(lambda r: r.glob(r.line(), r.line())),  # GLOBAL
    0x93: _stack_global,  # STACK_GLOBAL
    ord("R"): _calling("REDUCE"),
    0x81: _calling("NEWOBJ"),
    ord("b"): _build,
    ord("Q"): lambda r: _persid(r, r.pop()),  # BINPERSID
    ord("P"): lambda r: _persid(r, r.line()),  # PERSID
}


def read_pickle(
    data: Buffer,
    allowed: Mapping[tuple[str, str], Allowed],
    persistent_load: Callable[[Any], Any] | None = None,
    *,
    start: int = 0,
    what: str = "pickle",
) -> tuple[Any, int]:
    """The object pickled at ``data[start:]`` and the offset just past its STOP.

    ``allowed`` maps ``(module, name)`` to the stand-ins that globals resolve
    to; ``persistent_load`` turns persistent ids into objects. ``what``
    (a file name) starts every error message.

    Example:
        >>> import pickle
        >>> from ferrum.store.pytorch.pickle import read_pickle
        >>> read_pickle(pickle.dumps({"a": [1, 2.5, None]}, protocol=2), {})[0]
        {'a': [1, 2.5, None]}
    """
    reader = _Reader(data, start, allowed, persistent_load, what)
    try:
        value = reader.run()
    except RecursionError:
        raise reader.fail("nesting too deep") from None
    return value, reader.pos
