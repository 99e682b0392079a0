"""Quantized modules in records, as Burn 0.20 writes them: each quantized
parameter is ``TensorData`` of dtype ``QFloat(scheme)`` whose bytes are the
int8 values then the f32 scales. Round trips through every recorder, the
file size (a quarter of f32), the outputs after reload, Burn's behaviour of
loading ``QFloat`` data into a float module (it stays quantized), and
damaged files, decoded here with the ``msgpack`` package, independently of
ferrum's decoder."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
import pytest
from ferrum import Module, Tensor
from ferrum.backend import NdArray
from ferrum.nn import Conv2d, Conv2dConfig, Linear, LinearConfig, Relu
from ferrum.quantization import Calibration, Quantizer, QuantLevel, QuantScheme, QuantStore, QuantValue
from ferrum.record import (
    BinBytesRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    CompactRecorder,
    FileRecorder,
    FullPrecisionSettings,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    RecordError,
)

from tests.support.recorders import FILE_RECORDERS

DEVICE = NdArray.device()
Q8S = Quantizer(Calibration.MinMax, QuantScheme().with_value(QuantValue.Q8S))
Q4_BLOCKS = Quantizer(
    Calibration.MinMax, QuantScheme().with_value(QuantValue.Q4S).with_level(QuantLevel.block([4]))
)
Q4_BLOCKS_32 = Quantizer(
    Calibration.MinMax, QuantScheme().with_value(QuantValue.Q4S).with_level(QuantLevel.block([32]))
)


class Net(Module[Any]):
    conv: Conv2d[Any]
    relu: Relu
    fc: Linear[Any]

    def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
        return self.fc.forward(self.relu.forward(self.conv.forward(x)).flatten(1, 3))


def _net(seed: int = 3) -> Net:
    NdArray.seed(seed)
    return Net(Conv2dConfig((2, 4), (3, 3)).init(DEVICE), Relu(), LinearConfig(4 * 4 * 4, 8).init(DEVICE))


def _input() -> Tensor[Any, Any]:
    x = np.random.default_rng(0).standard_normal((3, 2, 6, 6)).astype(np.float32)
    return Tensor.from_data(x, DEVICE)


def _quantized_parts(net: Net) -> dict[str, tuple[Any, Any]]:
    out = {}
    for name, layer in (("conv", net.conv), ("fc", net.fc)):
        q = layer.weight.quantized()
        assert q is not None, f"{name}.weight is not quantized"
        out[name] = (q.values().to_numpy(), q.scales().to_numpy())
    return out


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS)
@pytest.mark.parametrize("quantizer", [Q8S, Q4_BLOCKS], ids=["q8s", "q4s-blocks"])
def test_quantized_modules_round_trip(
    tmp_path: Path, recorder_cls: type[FileRecorder], quantizer: Quantizer
) -> None:
    net = _net().quantize_weights(quantizer)
    recorder = recorder_cls()
    net.save_file(tmp_path / "net", recorder)
    want = net.forward(_input()).to_numpy()
    # Into the quantized module (its record is the schema) and into a freshly built float one:
    # Burn loads QFloat data as a quantized tensor either way.
    for target in (_net(9).quantize_weights(quantizer), _net(9)):
        loaded = target.load_file(tmp_path / "net", recorder, DEVICE)
        for name, (values, scales) in _quantized_parts(net).items():
            got_values, got_scales = _quantized_parts(loaded)[name]
            np.testing.assert_array_equal(got_values, values, err_msg=name)
            np.testing.assert_array_equal(got_scales, scales, err_msg=name)
        assert loaded.fc.weight.quantized().scheme().value is quantizer.scheme.value  # type: ignore[union-attr]
        assert [str(p.id) for p in loaded.parameters()] == [str(p.id) for p in net.parameters()]
        np.testing.assert_array_equal(loaded.fc.bias.val().to_numpy(), net.fc.bias.val().to_numpy())  # type: ignore[union-attr]
        np.testing.assert_array_equal(loaded.forward(_input()).to_numpy(), want)
    assert loaded.fc.weight.quantized().has_int8_product() is (quantizer is Q8S)  # type: ignore[union-attr]


def test_the_file_takes_a_quarter_of_f32(tmp_path: Path) -> None:
    NdArray.seed(1)
    layer = LinearConfig(256, 256, bias=False).init(DEVICE)
    layer.save_file(tmp_path / "float", NamedMpkFileRecorder())
    layer.quantize_weights(Q8S).save_file(tmp_path / "int8", NamedMpkFileRecorder())
    layer.quantize_weights(Q4_BLOCKS_32).save_file(tmp_path / "int4", NamedMpkFileRecorder())
    size = {name: (tmp_path / f"{name}.mpk").stat().st_size for name in ("float", "int8", "int4")}
    # 65536 values: 256 KiB as f32; 64 KiB + one scale at 8 bits; 32 KiB + 2048 f32 scales at
    # 4 bits in blocks of 32.
    assert 0.25 < size["int8"] / size["float"] < 0.255, size
    assert 0.156 < size["int4"] / size["float"] < 0.16, size


def _mpk_param(path: Path) -> dict[str, Any]:
    top = msgpack.unpackb(path.read_bytes(), raw=False)
    param: dict[str, Any] = top["item"]["weight"]["param"]
    return param


def test_named_mpk_holds_burns_qfloat_tensor_data(tmp_path: Path) -> None:
    layer = LinearConfig(3, 5, bias=False).init(DEVICE).quantize_weights(Q8S)
    layer.save_file(tmp_path / "q", NamedMpkFileRecorder())
    data = _mpk_param(tmp_path / "q.mpk")
    assert data["dtype"] == {
        "QFloat": {"value": "Q8S", "param": "F32", "store": "Native", "level": "Tensor", "mode": "Symmetric"}
    }
    assert data["shape"] == [3, 5]
    q = layer.weight.quantized()
    assert q is not None
    scale = float(q.scales().to_numpy()[0])
    want = q.values().to_numpy().astype(np.int8).tobytes() + struct.pack("<f", scale)
    assert data["bytes"] == want
    # 4-bit values in blocks: u32 words packed from the low bits, then one scale a block.
    layer4 = LinearConfig(4, 4, bias=False).init(DEVICE).quantize_weights(Q4_BLOCKS)
    layer4.save_file(tmp_path / "q4", NamedMpkFileRecorder())
    data = _mpk_param(tmp_path / "q4.mpk")
    level = {"Block": {"storage": [4, 1, 1, 1, 1], "len": 1}}
    assert data["dtype"]["QFloat"]["store"] == {"PackedU32": 0}
    assert data["dtype"]["QFloat"]["level"] == level
    q4 = layer4.weight.quantized()
    assert q4 is not None
    nibbles = q4.values().to_numpy().reshape(-1).astype(np.int64) & 0xF
    words = [sum(int(v) << (4 * i) for i, v in enumerate(nibbles[w * 8 : w * 8 + 8])) for w in range(2)]
    scales = q4.scales().to_numpy().reshape(-1)
    assert len(scales) == 4
    assert data["bytes"] == struct.pack("<2I", *words) + struct.pack("<4f", *scales)


def test_loaded_scheme_and_memory_recorders() -> None:
    net = _net().quantize_weights(Q8S)
    assert Q8S.scheme.store == QuantStore.PackedU32(0)
    for recorder in (BinBytesRecorder(), NamedMpkBytesRecorder(), CompactRecorder()):
        if isinstance(recorder, CompactRecorder):
            continue
        blob = recorder.record(net.into_record())
        loaded = _net(5).load_record(recorder.load(blob, DEVICE, _net(5).into_record()))
        q = loaded.conv.weight.quantized()
        assert q is not None
        # 8-bit values are written one byte each, as Burn's NdArray backend stores them.
        assert q.scheme().store == QuantStore.Native
        assert q.scheme().value is QuantValue.Q8S


def test_half_precision_keeps_quantized_tensors(tmp_path: Path) -> None:
    # Burn converts float tensors to the settings' precision, never QFloat data.
    net = _net().quantize_weights(Q8S)
    net.save_file(tmp_path / "net", CompactRecorder())
    loaded = _net().load_file(tmp_path / "net", CompactRecorder(), DEVICE)
    assert _quantized_parts(loaded)["fc"][0].tolist() == _quantized_parts(net)["fc"][0].tolist()
    assert loaded.fc.bias is not None and loaded.fc.bias.val().dtype == net.fc.bias.val().dtype  # type: ignore[union-attr]


def test_a_float_record_loads_into_a_quantized_module_as_floats(tmp_path: Path) -> None:
    net = _net()
    net.save_file(tmp_path / "float", BinFileRecorder())
    loaded = _net(4).quantize_weights(Q8S).load_file(tmp_path / "float", BinFileRecorder(), DEVICE)
    assert loaded.fc.weight.quantized() is None
    np.testing.assert_array_equal(loaded.fc.weight.val().to_numpy(), net.fc.weight.val().to_numpy())


def _damaged(tmp_path: Path, change: Any) -> Path:
    """A quantized Linear's record with its weight's TensorData changed by ``change``."""
    layer = LinearConfig(4, 2, bias=False).init(DEVICE).quantize_weights(Q8S)
    layer.save_file(tmp_path / "good", NamedMpkFileRecorder())
    top = msgpack.unpackb((tmp_path / "good.mpk").read_bytes(), raw=False)
    change(top["item"]["weight"]["param"])
    out = tmp_path / "bad.mpk"
    out.write_bytes(msgpack.packb(top, use_bin_type=True))
    return tmp_path / "bad"


def _scheme(data: dict[str, Any]) -> dict[str, Any]:
    scheme: dict[str, Any] = data["dtype"]["QFloat"]
    return scheme


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(bytes=d["bytes"][:-1]), r"tensor: 8 Q8S values .* take 12 bytes, found 11"),
        (lambda d: d.update(bytes=d["bytes"] + b"\0\0\x80\x3f"), r"room for 2 f32 scales; the scheme needs"),
        (lambda d: d.update(bytes=d["bytes"][:-4] + struct.pack("<f", -1.0)), r"scales must be finite"),
        (lambda d: d.update(shape=[4, 3]), r"take 16 bytes, found 12"),
        (lambda d: _scheme(d).update(value="Q16"), r"unknown quantization value \"Q16\""),
        (lambda d: _scheme(d).update(extra="x"), r"unknown field \"extra\""),
        (lambda d: _scheme(d).pop("level"), r"no field \"level\""),
        (lambda d: _scheme(d).update(level={"Block": {"storage": [3, 1, 1, 1, 1], "len": 1}}), "not split"),
        (lambda d: _scheme(d).update(store={"PackedU32": 1}), r"packed along dim 1"),
    ],
)
def test_damaged_quantized_data_is_a_record_error(tmp_path: Path, change: Any, message: str) -> None:
    bad = _damaged(tmp_path, change)
    for target in (LinearConfig(4, 2, bias=False).init(DEVICE), None):
        with pytest.raises(RecordError, match=message) as err:
            if target is None:
                NamedMpkFileRecorder().load(bad, DEVICE)
            else:
                target.load_file(bad, NamedMpkFileRecorder(), DEVICE)
        assert "weight.param" in str(err.value) and "bad.mpk" in str(err.value)


def test_damaged_bincode_scheme_is_a_record_error(tmp_path: Path) -> None:
    layer = LinearConfig(4, 2, bias=False).init(DEVICE).quantize_weights(Q8S)
    layer.save_file(tmp_path / "q", BinGzFileRecorder(FullPrecisionSettings))
    raw = bytearray(gzip.decompress((tmp_path / "q.bin.gz").read_bytes()))
    # The weight ends with its dtype: QFloat (14), then value, param, store, level, mode; then the
    # absent bias (0).
    assert list(raw[-7:]) == [14, 6, 0, 0, 0, 0, 0]
    for at, byte, message in [(-6, 40, "value variant index 40"), (-3, 7, "level variant index 7")]:
        bad = bytearray(raw)
        bad[at] = byte
        (tmp_path / "bad.bin.gz").write_bytes(gzip.compress(bytes(bad)))
        with pytest.raises(RecordError, match=message):
            layer = LinearConfig(4, 2, bias=False).init(DEVICE)
            layer.load_file(tmp_path / "bad", BinGzFileRecorder(), DEVICE)
