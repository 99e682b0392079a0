"""The pickle reader of ``ferrum.store.pytorch``: plain data as ``pickle`` reads it; nothing else runs.

Hostile streams (globals such as ``os.system`` or ``builtins.eval``, REDUCE on
anything but an allow-listed rebuilder, truncation, huge integers) raise
``PickleError`` naming the problem; nothing is called.
"""

from __future__ import annotations

import pickle
import pickletools
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
from ferrum.store.pytorch.pickle import PickleError, read_pickle
from ferrum.store.pytorch.torch_globals import ALLOWED
from hypothesis import given, settings
from hypothesis import strategies as st

_PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10)
    | st.binary(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(value=_PLAIN, protocol=st.integers(1, 5))
def test_plain_data_reads_as_pickle_reads_it(value: Any, protocol: int) -> None:
    data = pickle.dumps(value, protocol=protocol)
    assert read_pickle(data, ALLOWED)[0] == pickle.loads(data)


def test_ordered_dicts_with_attributes_read_as_dicts() -> None:
    state: OrderedDict[str, int] = OrderedDict(a=1, b=2)
    state._metadata = {"": {"version": 1}}  # type: ignore[attr-defined]  # what torch's state_dict carries
    assert read_pickle(pickle.dumps(state, protocol=2), ALLOWED)[0] == {"a": 1, "b": 2}


class _Call:
    def __init__(self, func: Any, *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[Any, ...]:
        return self.func, self.args


@pytest.mark.parametrize("protocol", [0, 2, 4])
@pytest.mark.parametrize(
    ("payload", "named"),
    [
        (_Call(__import__("os").system, "echo pwned"), r"(os|posix)\.system"),
        (_Call(eval, "1+1"), r"(builtins|__builtin__)\.eval"),
        (_Call(__import__("subprocess").call, ["true"]), r"(subprocess|commands)\.call"),
        ({"weights": _Call(exec, "x = 1")}, r"(builtins|__builtin__)\.exec"),
    ],
)
def test_hostile_globals_are_refused_by_name(payload: object, named: str, protocol: int) -> None:
    data = pickle.dumps(payload, protocol=protocol)
    with pytest.raises(PickleError, match=rf"refusing global {named}: it is not on the allow-list"):
        read_pickle(data, ALLOWED, what="evil.pt")


def test_reduce_on_a_non_constructor_is_refused() -> None:
    # REDUCE applied to a dict (no global at all): only allow-listed callables may be called.
    data = b"\x80\x02}q\x00)R."
    with pytest.raises(PickleError, match="REDUCE on dict: only allow-listed constructors"):
        read_pickle(data, ALLOWED)
    marker = b"\x80\x02ctorch\nFloatStorage\n)R."  # a storage type is a marker, not a constructor
    with pytest.raises(PickleError, match=r"REDUCE on <global torch\.FloatStorage>"):
        read_pickle(marker, ALLOWED)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x80\x02X\xff\xff\xff\x7fabc.", "truncated: needs 2147483647 bytes"),
        (b"\x80\x02\x8b\x00\x00\x00\x10" + b"\x01" * 16 + b".", "LONG4 of 268435456 bytes"),
        (b"\x80\x02h\x07.", "memo key 7 was never stored"),
        (b"\x80\x02a.", "stack underflow"),
        (b"\x80\x02u.", "no MARK on the stack"),
        (b"\x80\x02\xff.", "unknown or unsupported opcode 0xff"),
        (b"\x80\x02K\x01K\x02.", "STOP with a malformed stack"),
        (b"\x80\x02}(]K\x01u.", "not hashable"),
        (b"\x80\x09N.", "pickle protocol 9"),
        (b"\x80\x02(" * 20_000, "too many nested MARKs"),
        (b"", "truncated"),
    ],
)
def test_damaged_streams_are_pickle_errors(data: bytes, message: str) -> None:
    with pytest.raises(PickleError, match=message):
        read_pickle(data, ALLOWED)


def test_persistent_ids_need_a_loader() -> None:
    data = pickle.dumps("x", protocol=2)
    pid = b"\x80\x02X\x01\x00\x00\x00kQ."
    assert read_pickle(data, ALLOWED)[0] == "x"
    with pytest.raises(PickleError, match="persistent id in a pickle that allows none"):
        read_pickle(pid, ALLOWED)
    assert read_pickle(pid, ALLOWED, lambda p: ("loaded", p))[0] == ("loaded", "k")


def test_opcodes_of_a_real_state_dict_are_all_known() -> None:
    # pickletools names every opcode; the reader handles all those torch's protocol 2 uses.
    data = pickle.dumps(OrderedDict(w=[1.5, (2, 3)], b=None), protocol=2)
    assert {"GLOBAL", "REDUCE", "SETITEMS", "BINPUT"} <= {op.name for op, _, _ in pickletools.genops(data)}
    assert read_pickle(data, ALLOWED)[0] == {"w": [1.5, (2, 3)], "b": None}


def test_the_number_of_opcodes_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each opcode makes at most one object: the budget bounds memory (lowered here to keep the test fast).
    monkeypatch.setattr("ferrum.store.pytorch.pickle._MAX_OPCODES", 1000)
    assert read_pickle(pickle.dumps(list(range(400)), protocol=2), ALLOWED)[0] == list(range(400))
    with pytest.raises(PickleError, match="more than 1000 opcodes"):
        read_pickle(b"\x80\x02(" + b"]" * 2000 + b"l.", ALLOWED)


def test_checkpoint_values_beside_tensors_read_as_plain_values() -> None:
    # NumPy numbers (a best accuracy), torch devices, sizes and dtypes, as checkpoints hold them.
    values = {"acc": np.float64(0.75), "step": np.int64(-3), "half": np.float16(1.5), "flag": np.bool_(True)}
    assert read_pickle(pickle.dumps(values, protocol=2), ALLOWED)[0] == {
        "acc": 0.75, "step": -3, "half": 1.5, "flag": True
    }  # fmt: skip
    big_endian = pickle.dumps(np.dtype(">i4").type(7), protocol=2)
    assert read_pickle(big_endian, ALLOWED)[0] == 7
    device = b"\x80\x02ctorch\ndevice\nX\x04\x00\x00\x00cudaK\x01\x86R."
    size = b"\x80\x02ctorch\nSize\nK\x02K\x03\x86\x85R."
    dtype = b"\x80\x02ctorch\nbfloat16\n."
    assert read_pickle(device, ALLOWED)[0] == "cuda:1"
    assert read_pickle(size, ALLOWED)[0] == (2, 3)
    assert repr(read_pickle(dtype, ALLOWED)[0]) == "<global torch.bfloat16>"


def test_numpy_objects_beyond_plain_numbers_are_refused() -> None:
    with pytest.raises(PickleError, match=r"numpy\.dtype\('O'\) is not a plain number type"):
        read_pickle(b"\x80\x02cnumpy\ndtype\nX\x01\x00\x00\x00O\x85R.", ALLOWED)
    with pytest.raises(PickleError, match=r"refusing global numpy\.core\.multiarray\._reconstruct"):
        read_pickle(pickle.dumps(np.zeros(2), protocol=2).replace(b"numpy._core", b"numpy.core"), ALLOWED)
    raw = np.float64(1.0).tobytes()
    scalar = pickle.dumps(np.float64(1.0), protocol=3).replace(b"C\x08" + raw, b"C\x07" + raw[:7])
    with pytest.raises(PickleError, match="has 7 bytes, expected 8"):
        read_pickle(scalar, ALLOWED)
