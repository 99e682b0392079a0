"""Hostile and damaged record files: each is a RecordError naming the file and what is wrong.

Files are untrusted input: a small file must not inflate, nest or multiply into
gigabytes, and damage to an id, a rank tag, a shape or the bytes after a record
is refused, never loaded silently.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]
import numpy as np
import pytest
from ferrum import D1, D2, Tensor, _ferrum
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module, Param, ParamId
from ferrum.optim import AdamConfig, GradientsParams
from ferrum.record import (
    BinBytesRecorder,
    BinFileRecorder,
    FileRecorder,
    NamedMpkFileRecorder,
    PrettyJsonFileRecorder,
    RecordError,
)

from tests.support.recorders import BINCODE_RECORDERS, GZ_RECORDERS

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
META = {"float": "f32", "int": "i32", "format": "x", "version": "0.20.1", "settings": "FullPrecisionSettings"}


class Layer(Module[B]):
    weight: Param[Tensor[B, D2]]
    bias: Param[Tensor[B, D1]]


def _layer() -> Layer[NdArray]:
    return Layer(Param(Tensor.ones((3, 5), DEVICE)), Param(Tensor.zeros((5,), DEVICE)))


def _saved(tmp_path: Path, recorder: FileRecorder) -> Path:
    _layer().save_file(tmp_path / "net", recorder)
    return tmp_path / f"net.{recorder.extension}"


def _zeros_gzip(size: int) -> bytes:
    """A gzip stream of ``size`` zero bytes (about a thousandth of that on disk)."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    chunk = bytes(1 << 22)
    parts = [compressor.compress(chunk) for _ in range(size // len(chunk))]
    return b"".join(parts) + compressor.flush()


def _mpk_record(item_marker_replacement: bytes) -> bytes:
    """A named-mpk record whose ``item.x`` is the raw MessagePack bytes given."""
    top = msgpack.packb({"metadata": META, "item": {"x": "@@"}, "_b": []})
    return top.replace(msgpack.packb("@@"), item_marker_replacement)  # type: ignore[no-any-return]


def _json_record(item: str) -> str:
    return '{"metadata": ' + json.dumps(META) + ', "item": {"x": ' + item + '}, "_b": null}'


def _peak_mib_of_refused_load(recorder: str, stem: Path, message: str) -> float:
    """The peak resident memory (MiB) of a fresh interpreter whose ``recorder`` refuses ``stem``.

    Read from the child's VmHWM: getrusage's ru_maxrss keeps the parent's peak across exec.
    """
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs Linux's /proc to read a process's peak memory")
    script = textwrap.dedent(f"""
        from ferrum.backend import NdArray
        from ferrum.record import RecordError, {recorder}
        try:
            {recorder}().load({str(stem)!r}, NdArray.device())
            raise SystemExit("loaded")
        except RecordError as err:
            assert {message!r} in str(err), err
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                print(line.split()[1])
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return int(out.stdout.split()[-1]) / 1024


# --- gzip: bombs, extra members ---------------------------------------------------------------


@pytest.mark.parametrize("recorder_cls", GZ_RECORDERS)
def test_a_gzip_bomb_stops_at_what_the_model_can_hold(
    tmp_path: Path, recorder_cls: type[FileRecorder]
) -> None:
    recorder = recorder_cls()
    path = tmp_path / f"bomb.{recorder.extension}"
    path.write_bytes(_zeros_gzip(16 << 20))
    with pytest.raises(
        RecordError, match=r"bomb\..*inflates to more than the \d+ bytes a record of this model"
    ):
        _layer().load_file(tmp_path / "bomb", recorder, DEVICE)


def test_a_gzip_bomb_without_a_model_stops_at_the_default_limit_in_bounded_memory(tmp_path: Path) -> None:
    # 768 MiB of zeros in under a megabyte: the default limit is 256 MiB (64 times the
    # compressed size, at least 256 MiB). Before streaming, loading peaked at twice the size.
    path = tmp_path / "bomb.mpk.gz"
    path.write_bytes(_zeros_gzip(768 << 20))
    message = "the limit for a record loaded without a model"
    assert _peak_mib_of_refused_load("NamedMpkGzFileRecorder", tmp_path / "bomb", message) < 450


@pytest.mark.parametrize("recorder_cls", GZ_RECORDERS)
@pytest.mark.parametrize(
    ("tail", "what"), [(gzip.compress(b"more"), "a second gzip member"), (b"junk", "data that is not gzip")]
)
def test_bytes_after_the_gzip_member_are_refused(
    tmp_path: Path, recorder_cls: type[FileRecorder], tail: bytes, what: str
) -> None:
    recorder = recorder_cls()
    path = _saved(tmp_path, recorder)
    size = path.stat().st_size
    path.write_bytes(path.read_bytes() + tail)
    with pytest.raises(
        RecordError, match=rf"net\..*bytes after the gzip stream, which ends at byte {size}: {what}"
    ):
        _layer().load_file(tmp_path / "net", recorder, DEVICE)


# --- MessagePack and JSON: trailing bytes, node counts, depth ------------------------------------


def test_bytes_after_an_mpk_record_are_refused(tmp_path: Path) -> None:
    recorder = NamedMpkFileRecorder()
    path = _saved(tmp_path, recorder)
    path.write_bytes(path.read_bytes() + b"\xc0")
    with pytest.raises(
        RecordError, match=r"net\.mpk: the file holds more bytes after its MessagePack record"
    ):
        recorder.load(tmp_path / "net", DEVICE)
    with pytest.raises(RecordError, match=r"net\.mpk"):
        _layer().load_file(tmp_path / "net", recorder, DEVICE)


def test_bytes_after_a_json_record_are_refused(tmp_path: Path) -> None:
    recorder = PrettyJsonFileRecorder()
    path = _saved(tmp_path, recorder)
    path.write_text(path.read_text() + "\n{}")
    with pytest.raises(RecordError, match=r"net\.json: not valid JSON \(trailing characters"):
        recorder.load(tmp_path / "net", DEVICE)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("nils.mpk", _mpk_record(b"\xdd" + struct.pack(">I", 1_500_000) + b"\xc0" * 1_500_000)),
        ("maps.mpk", _mpk_record(b"\xdd" + struct.pack(">I", 1_500_000) + b"\x80" * 1_500_000)),
        ("zeros.json", _json_record("[" + ",".join(["0"] * 2_200_000) + "]").encode()),
    ],
)
def test_more_values_than_the_bytes_can_describe_are_refused(tmp_path: Path, name: str, data: bytes) -> None:
    stem, ext = name.split(".")
    (tmp_path / name).write_bytes(data)
    recorder = NamedMpkFileRecorder() if ext == "mpk" else PrettyJsonFileRecorder()
    with pytest.raises(
        RecordError, match=rf"{stem}\.{ext}: the record holds more than \d+ values for its \d+ bytes"
    ):
        recorder.load(tmp_path / stem, DEVICE)


def test_a_file_of_nils_loads_in_memory_bounded_by_its_size(tmp_path: Path) -> None:
    # 10 MB of MessagePack nils: before the node budget, loading peaked at 2 GB.
    (tmp_path / "nils.mpk").write_bytes(
        _mpk_record(b"\xdd" + struct.pack(">I", 10_000_000) + b"\xc0" * 10_000_000)
    )
    assert _peak_mib_of_refused_load("NamedMpkFileRecorder", tmp_path / "nils", "values for its") < 400


def test_json_tensor_bytes_cost_a_byte_each(tmp_path: Path) -> None:
    # JSON writes tensor bytes as numbers; they are kept as bytes, not one node per number,
    # so a record larger than the node budget's floor loads.
    values = np.arange(600_000, dtype=np.float32).reshape(600, 1000)
    record = {"w": {"id": "5", "param": Tensor.from_numpy(values, DEVICE)}}
    PrettyJsonFileRecorder().record(record, tmp_path / "big")
    loaded = PrettyJsonFileRecorder().load(tmp_path / "big", DEVICE)
    np.testing.assert_array_equal(loaded["w"]["param"].to_numpy(), values)


def test_a_bytes_list_outside_tensor_data_stays_a_list(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text(_json_record('{"bytes": [1, 2, 300], "other": {"bytes": [4, 5]}}'))
    loaded = PrettyJsonFileRecorder().load(tmp_path / "r", DEVICE)
    assert loaded == {"x": {"bytes": [1, 2, 300], "other": {"bytes": [4, 5]}}}


@pytest.mark.parametrize("depth", [101, 5000])
def test_deep_nesting_names_the_file_and_the_depth(tmp_path: Path, depth: int) -> None:
    (tmp_path / "deep.mpk").write_bytes(_mpk_record(b"\x91" * depth + b"\xc0"))
    with pytest.raises(RecordError, match=r"deep\.mpk: the record nests deeper than 100 levels"):
        NamedMpkFileRecorder().load(tmp_path / "deep", DEVICE)
    (tmp_path / "deep.json").write_text(_json_record("[" * depth + "]" * depth))
    with pytest.raises(RecordError, match=r"deep\.json: the record nests deeper than 100 levels"):
        PrettyJsonFileRecorder().load(tmp_path / "deep", DEVICE)


def test_nesting_up_to_the_limit_loads(tmp_path: Path) -> None:
    # The record root and item.x take two levels.
    (tmp_path / "deep.mpk").write_bytes(_mpk_record(b"\x91" * 98 + b"\xc0"))
    loaded: Any = NamedMpkFileRecorder().load(tmp_path / "deep", DEVICE)["x"]
    for _ in range(98):
        loaded = loaded[0]
    assert loaded is None


# --- damaged metadata: ids, rank tags ---------------------------------------------------------


def _load_both_ways(tmp_path: Path, recorder: FileRecorder) -> list[Callable[[], object]]:
    return [
        lambda: _layer().load_record(recorder.load(tmp_path / "net", DEVICE)),
        lambda: _layer().load_file(tmp_path / "net", recorder, DEVICE),
    ]


@pytest.mark.parametrize("damaged", [None, 12, "0400000000!!!", "zz", ""])
@pytest.mark.parametrize("recorder_cls", [NamedMpkFileRecorder, PrettyJsonFileRecorder])
def test_a_damaged_parameter_id_is_refused_by_every_load(
    tmp_path: Path, recorder_cls: type[FileRecorder], damaged: object
) -> None:
    recorder = recorder_cls()
    path = _saved(tmp_path, recorder)
    if path.suffix == ".mpk":
        top = msgpack.unpackb(path.read_bytes())
        top["item"]["weight"]["id"] = damaged
        path.write_bytes(msgpack.packb(top, use_bin_type=True))
    else:
        top = json.loads(path.read_text())
        top["item"]["weight"]["id"] = damaged
        path.write_text(json.dumps(top))
    for load in _load_both_ways(tmp_path, recorder):
        with pytest.raises(
            RecordError, match=rf"net\.{recorder.extension}: weight\.id: expected a parameter id"
        ):
            load()


def test_a_missing_parameter_id_is_refused(tmp_path: Path) -> None:
    recorder = NamedMpkFileRecorder()
    path = _saved(tmp_path, recorder)
    top = msgpack.unpackb(path.read_bytes())
    del top["item"]["weight"]["id"]
    path.write_bytes(msgpack.packb(top, use_bin_type=True))
    with pytest.raises(RecordError, match=r"net\.mpk: weight\.id: expected a parameter id .*found nothing"):
        _layer().load_record(recorder.load(tmp_path / "net", DEVICE))
    with pytest.raises(RecordError, match=r"net\.mpk: .*weight\.id: missing from the record"):
        _layer().load_file(tmp_path / "net", recorder, DEVICE)


@pytest.mark.parametrize("recorder_cls", BINCODE_RECORDERS)
def test_a_damaged_id_in_bincode_is_refused(tmp_path: Path, recorder_cls: type[FileRecorder]) -> None:
    recorder = recorder_cls()
    layer = _layer()
    layer.save_file(tmp_path / "net", recorder)
    path = tmp_path / f"net.{recorder.extension}"
    text = _ferrum.param_id_encode(layer.weight.id.value).encode()
    zipped = recorder.extension.endswith("gz")
    raw = gzip.decompress(path.read_bytes()) if zipped else path.read_bytes()
    assert raw.count(text) == 1
    raw = raw.replace(text, b"!" * len(text))
    path.write_bytes(gzip.compress(raw) if zipped else raw)
    with pytest.raises(
        RecordError, match=rf"net\.{recorder.extension}: weight\.id: expected a parameter id .*'!!!!"
    ):
        _layer().load_file(tmp_path / "net", recorder, DEVICE)
    # Without a model, bincode waits for one: the deferred record is checked when it resolves.
    with pytest.raises(RecordError, match=r"bincode bytes: weight\.id: expected a parameter id .*'!!!!"):
        _layer().load_record(BinBytesRecorder().load(raw, DEVICE))


def test_ids_burn_wrote_in_older_versions_still_load(tmp_path: Path) -> None:
    # Burn's 6-byte ids (10 characters) and UUIDs, as earlier Burn versions wrote them.
    recorder = NamedMpkFileRecorder()
    path = _saved(tmp_path, recorder)
    top = msgpack.unpackb(path.read_bytes())
    top["item"]["weight"]["id"] = "5l6mqrjdlk"
    top["item"]["bias"]["id"] = "30b82c23-788d-4d63-a743-ada258d5f13c"
    path.write_bytes(msgpack.packb(top, use_bin_type=True))
    loaded = _layer().load_file(tmp_path / "net", recorder, DEVICE)
    assert loaded.weight.id == _layer().load_record(recorder.load(tmp_path / "net", DEVICE)).weight.id


def test_ids_that_are_not_burns_text_are_saved_as_the_ids_they_load_as(tmp_path: Path) -> None:
    # In memory any text names an id (ParamId.from_str); a file holds Burn's text of that id.
    record = {
        "w": {"id": "my-weight", "param": Tensor.ones((2,), DEVICE)},
        "v": {"id": 7, "param": Tensor.ones((1,), DEVICE)},
    }
    NamedMpkFileRecorder().record(record, tmp_path / "r")
    written = msgpack.unpackb((tmp_path / "r.mpk").read_bytes())["item"]
    assert written["w"]["id"] == _ferrum.param_id_encode(ParamId.from_str("my-weight").value)
    assert written["v"]["id"] == _ferrum.param_id_encode(7)
    loaded = NamedMpkFileRecorder().load(tmp_path / "r", DEVICE)
    assert (loaded["w"]["id"], loaded["v"]["id"]) == (str(ParamId.from_str("my-weight")), "7")


def _adam_record() -> tuple[Any, dict[str, Any]]:
    device = Autodiff[NdArray].device()
    layer = Layer(Param(Tensor.ones((3, 5), device)), Param(Tensor.zeros((5,), device)))
    optim = AdamConfig().init()
    loss = (layer.weight.val().sum() + layer.bias.val().sum()) * 2.0
    optim.step(0.1, layer, GradientsParams.from_grads(loss.backward(), layer))
    return optim, optim.to_record()


@pytest.mark.parametrize("recorder_cls", [NamedMpkFileRecorder, PrettyJsonFileRecorder, BinFileRecorder])
def test_an_optimizer_rank_tag_that_disagrees_with_its_tensors_is_refused(
    tmp_path: Path, recorder_cls: type[FileRecorder]
) -> None:
    optim, record = _adam_record()
    key = next(key for key, value in record.items() if "Rank2" in value["V1"])
    record[key]["V1"] = {"Rank5": record[key]["V1"]["Rank2"]}
    recorder = recorder_cls()
    recorder.record(record, tmp_path / "optim")
    schema = optim.record_schema(DEVICE) if recorder.extension == "bin" else None
    with pytest.raises(
        RecordError, match=r"optim\..*V1\.Rank5: the variant says rank 5, but .*moment_1 has rank 2"
    ):
        recorder.load(tmp_path / "optim", DEVICE, schema)
    with pytest.raises(ValueError, match=r"Rank5: the variant says rank 5"):
        optim.load_record(record)


def test_a_damaged_optimizer_key_is_refused(tmp_path: Path) -> None:
    _, record = _adam_record()
    NamedMpkFileRecorder().record(record, tmp_path / "optim")
    top = msgpack.unpackb((tmp_path / "optim.mpk").read_bytes())
    top["item"] = {"garbage!" + key: value for key, value in top["item"].items()}
    (tmp_path / "optim.mpk").write_bytes(msgpack.packb(top, use_bin_type=True))
    with pytest.raises(
        RecordError, match=r"optim\.mpk: optimizer record key 'garbage!.*expected a parameter id"
    ):
        NamedMpkFileRecorder().load(tmp_path / "optim", DEVICE)


# --- shapes whose element count overflows -------------------------------------------------------

OVERFLOWING = [2**62 + 1, 4]  # the product wraps to 4 elements


def test_an_overflowing_shape_in_mpk_is_refused(tmp_path: Path) -> None:
    recorder = NamedMpkFileRecorder()
    path = _saved(tmp_path, recorder)
    top = msgpack.unpackb(path.read_bytes())
    top["item"]["weight"]["param"].update(shape=OVERFLOWING, bytes=bytes(16))
    path.write_bytes(msgpack.packb(top, use_bin_type=True))
    message = r"net\.mpk: weight\.param: a F32 tensor of shape \[4611686018427387905, 4\] has more elements"
    with pytest.raises(RecordError, match=message):
        recorder.load(tmp_path / "net", DEVICE)
    with pytest.raises(RecordError, match=message):
        _layer().load_file(tmp_path / "net", recorder, DEVICE)


def test_an_overflowing_shape_in_json_is_refused(tmp_path: Path) -> None:
    recorder = PrettyJsonFileRecorder()
    path = _saved(tmp_path, recorder)
    top = json.loads(path.read_text())
    top["item"]["bias"]["param"].update(shape=OVERFLOWING, bytes=[0] * 16)
    path.write_text(json.dumps(top))
    with pytest.raises(
        RecordError, match=r"net\.json: bias\.param: a F32 tensor of shape \[4611686018427387905, 4\]"
    ):
        recorder.load(tmp_path / "net", DEVICE)


def test_a_shape_that_does_not_match_its_bytes_names_the_field(tmp_path: Path) -> None:
    recorder = NamedMpkFileRecorder()
    path = _saved(tmp_path, recorder)
    top = msgpack.unpackb(path.read_bytes())
    top["item"]["weight"]["param"]["shape"] = [4, 5]
    path.write_bytes(msgpack.packb(top, use_bin_type=True))
    with pytest.raises(
        RecordError, match=r"net\.mpk: weight\.param: a F32 tensor of shape \[4, 5\] needs 80 bytes, found 60"
    ):
        recorder.load(tmp_path / "net", DEVICE)


def _varint(value: int) -> bytes:
    if value < 251:
        return bytes([value])
    return b"\xfd" + value.to_bytes(8, "little")


def test_an_overflowing_shape_in_a_bincode_optimizer_record_is_refused(tmp_path: Path) -> None:
    optim, record = _adam_record()
    recorder = BinFileRecorder()
    recorder.record(record, tmp_path / "optim")
    raw = (tmp_path / "optim.bin").read_bytes()
    # A [3, 5] F32 moment: 60 bytes, rank 2, dims 3 and 5, dtype index 1.
    tail = b"\x02\x03\x05\x01"
    at = raw.index(tail)
    assert raw[at - 61] == 60
    forged = b"\x10" + bytes(16) + b"\x02" + _varint(OVERFLOWING[0]) + _varint(OVERFLOWING[1]) + b"\x01"
    (tmp_path / "optim.bin").write_bytes(raw[: at - 61] + forged + raw[at + len(tail) :])
    with pytest.raises(
        RecordError, match=r"optim\.bin: .*moment_1: a F32 tensor of shape \[4611686018427387905, 4\]"
    ):
        recorder.load(tmp_path / "optim", DEVICE, optim.record_schema(DEVICE))


# --- interrupted saves ----------------------------------------------------------------------------

_SAVER = """
import sys
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.record import NamedMpkFileRecorder
record = {"w": {"id": "1", "param": Tensor.zeros((int(sys.argv[2]),), NdArray.device())}}
print("ready", flush=True)
for _ in range(int(sys.argv[3])):
    NamedMpkFileRecorder().record(record, sys.argv[1])
"""


def _temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def test_a_save_killed_mid_write_leaves_nothing_after_the_next_save(tmp_path: Path) -> None:
    target = tmp_path / "model"
    for _ in range(20):
        with subprocess.Popen(
            [sys.executable, "-c", _SAVER, str(target), str(16 << 20), "1000"], stdout=subprocess.PIPE
        ) as saver:
            assert saver.stdout is not None and saver.stdout.readline() == b"ready\n"
            deadline = time.monotonic() + 30
            while not _temporaries(tmp_path) and time.monotonic() < deadline:
                time.sleep(0.001)
            saver.send_signal(signal.SIGKILL)
        if _temporaries(tmp_path):
            break
    left = _temporaries(tmp_path)
    assert left, "the kill never landed during a write"
    assert all(name.startswith(".model.mpk.") for name in left)
    NamedMpkFileRecorder().record({"w": {"id": "2", "param": Tensor.ones((3,), DEVICE)}}, target)
    assert os.listdir(tmp_path) == ["model.mpk"]
    assert NamedMpkFileRecorder().load(target, DEVICE)["w"]["id"] == "2"


def test_two_processes_saving_one_path_never_mix(tmp_path: Path) -> None:
    target = tmp_path / "model"
    savers = [
        subprocess.Popen(
            [sys.executable, "-c", _SAVER, str(target), str(size), "40"], stdout=subprocess.DEVNULL
        )
        for size in (1000, 2000)
    ]
    assert [saver.wait(timeout=120) for saver in savers] == [0, 0]
    assert os.listdir(tmp_path) == ["model.mpk"]
    assert NamedMpkFileRecorder().load(target, DEVICE)["w"]["param"].dims() in [(1000,), (2000,)]
