"""Write the seed corpus of the fuzz targets (fuzz/corpus/<target>/), from ferrum's own recorders,
and the hostile files of issue 13 as regression inputs (fuzz/regressions/<target>/issue13-*).

Run from the repository root with ferrum installed: ``python fuzz/make_seeds.py``. The seeds are
small valid inputs of every format and shape the targets parse; the fuzzers mutate them. The
first byte of a record seed picks the format, as ``ferrum_core::record::fuzz`` reads it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
from ferrum import Tensor, _ferrum
from ferrum.backend import NdArray
from ferrum.record import BinBytesRecorder, HalfPrecisionSettings, NamedMpkBytesRecorder, Some

DEVICE = NdArray.device()
CORPUS = Path(__file__).parent / "corpus"
SELF_DESCRIBING = ["named_mpk", "pretty_json", "named_mpk_gz", "json_gz"]


def tensor(*shape: int) -> Tensor[Any, Any, Any]:
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 7 - 1
    return Tensor.from_numpy(values, DEVICE)


def param(id: int, *shape: int) -> dict[str, Any]:
    return {"id": str(id), "param": tensor(*shape)}


def linear(id: int, d_in: int, d_out: int) -> dict[str, Any]:
    return {"weight": param(id, d_in, d_out), "bias": Some(param(id + 1, d_out))}


def model() -> dict[str, Any]:
    # The shape of ferrum_core::record::fuzz::model_schema.
    return {"first": linear(1, 3, 4), "layers": [linear(3, 4, 2), linear(5, 2, 2)], "scale": None}


def odd_record() -> dict[str, Any]:
    ints = Tensor.from_numpy(np.array([[1, -2], [3, 2**40]], dtype=np.int64), DEVICE)
    return {
        "ints": {"id": "9", "param": ints},
        "flags": {"id": "10", "param": Tensor.from_numpy(np.array([True, False]), DEVICE)},
        "nested": [[None, (None, None)], {"deep": {"scalar": 3.5, "neg": -4, "text": "x"}}],
        "empty": tensor(0, 3),
    }


def adam(ranks: list[tuple[int, ...]]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for i, shape in enumerate(ranks):
        state = {"momentum": {"time": 3, "moment_1": tensor(*shape), "moment_2": tensor(*shape)}}
        record[str(100 + i)] = {"V1": {f"Rank{len(shape)}": state}}
    return record


def write(target: str, name: str, data: bytes) -> None:
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def main() -> None:
    for selector, fmt in enumerate(SELF_DESCRIBING):
        for name, tree, precision in [
            ("model", model(), "full"),
            ("model-half", model(), "half"),
            ("odd", odd_record(), "double"),
            ("adam", adam([(3, 4), (4,), ()]), "full"),
        ]:
            data = _ferrum.record_to_bytes(NamedMpkBytesRecorder()._wire(tree), fmt, precision)
            # Bit 2 of the selector also loads against the model's schema.
            write("record_self_describing", f"{fmt}-{name}", bytes([selector | 4]) + data)
    for zipped in (0, 1):
        suffix = "-gz" if zipped else ""
        for settings in (None, HalfPrecisionSettings):
            recorder = BinBytesRecorder(settings) if settings else BinBytesRecorder()
            data = recorder.record(model())
            data = gzip.compress(data, mtime=0) if zipped else data
            write("record_bincode", f"model{suffix}-{recorder.settings.name}", bytes([zipped]) + data)
        data = BinBytesRecorder().record(adam([(3, 4), (4,), (), (1, 2, 1)]))
        data = gzip.compress(data, mtime=0) if zipped else data
        write("record_bincode", f"adam{suffix}", bytes([zipped | 2]) + data)
    for i, text in enumerate(
        ["0400000000000", "5l6mqrjdlk", "30b82c23-788d-4d63-a743-ada258d5f13c", "vvvvvvvvvvvvu"]
    ):
        write("param_id", f"id-{i}", text.encode())
    write("param_id", "gzip", gzip.compress(b"a record" * 10, mtime=0))
    # Configs (tests/fuzz/test_entry_points.py loads them as its FuzzConfig).
    config = {
        "name": "run",
        "sizes": [64, 32],
        "kernel": [3, 3],
        "rate": 0.001,
        "mode": "train",
        "optional": None,
        "extra": {"warmup": 10.5, "decay": 0},
        "inner": {"depth": 2, "flags": [True, False], "nested": {"depth": 1, "flags": [], "nested": None}},
    }
    write("config", "full.json", (json.dumps(config, indent=2) + "\n").encode())
    write("config", "minimal.json", b'{"name": "x", "sizes": []}\n')
    issue13_regressions()


def write_regression(target: str, name: str, data: bytes) -> None:
    folder = CORPUS.parent / "regressions" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"issue13-{name}").write_bytes(data)


def issue13_regressions() -> None:
    """The reproducers of issue 13 that fit in a small file (the large ones are in tests/)."""
    import msgpack  # type: ignore[import-untyped]

    mpk = _ferrum.record_to_bytes(NamedMpkBytesRecorder()._wire(model()), "named_mpk", "full")
    top = msgpack.unpackb(mpk)
    # A shape whose element count wraps to the 4 elements of its bytes.
    weight = top["item"]["first"]["weight"]["param"]
    weight.update(shape=[2**62 + 1, 4], bytes=bytes(16))
    forged = msgpack.packb(top, use_bin_type=True)
    write_regression("record_self_describing", "overflowing-shape-mpk", b"\x04" + forged)
    top = json.loads(_ferrum.record_to_bytes(NamedMpkBytesRecorder()._wire(model()), "pretty_json", "full"))
    top["item"]["first"]["weight"]["param"].update(shape=[2**62 + 1, 4], bytes=list(bytes(16)))
    text = json.dumps(top).encode()
    write_regression("record_self_describing", "overflowing-shape-json", b"\x05" + text)
    # Bytes after the record; a second gzip member; nesting past every limit.
    write_regression("record_self_describing", "trailing-bytes-mpk", b"\x04" + mpk + b"\xc0")
    write_regression(
        "record_self_describing", "second-gzip-member", b"\x06" + gzip.compress(mpk, mtime=0) * 2
    )
    deep = msgpack.packb({"metadata": {}, "item": {"x": "@@"}, "_b": []})
    deep = deep.replace(msgpack.packb("@@"), b"\x91" * 5000 + b"\xc0")
    write_regression("record_self_describing", "deep-mpk", b"\x00" + deep)
    write_regression(
        "record_self_describing", "deep-json", b"\x01" + b'{"item": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    )
    # A bincode optimizer record whose [3, 5] moment claims shape [2**62 + 1, 4].
    raw = BinBytesRecorder().record(adam([(3, 5)]))
    at = raw.index(b"\x02\x03\x05\x01")
    big = b"\xfd" + (2**62 + 1).to_bytes(8, "little")
    raw = raw[: at - 61] + b"\x10" + bytes(16) + b"\x02" + big + b"\x04\x01" + raw[at + 4 :]
    write_regression("record_bincode", "overflowing-shape-optimizer", b"\x02" + raw)
    # A gzip bomb for a model: 16 MiB of zeros.
    write_regression("record_bincode", "gzip-bomb", b"\x01" + gzip.compress(bytes(16 << 20), mtime=0))


if __name__ == "__main__":
    main()
