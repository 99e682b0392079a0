"""Round trips of every recorder and precision, atomic writes, damaged and mismatched files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D1, D2, Distribution, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module, Param
from ferrum.record import (
    BinBytesRecorder,
    BinFileRecorder,
    CompactRecorder,
    DefaultRecorder,
    FileRecorder,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    PrecisionSettings,
    PrettyJsonFileRecorder,
    RecordError,
)

from tests.support.recorders import BINCODE_RECORDERS, FILE_RECORDERS, PRECISIONS

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
# Half precision rounds each value to 11 significant bits.
PRECISION_TOLERANCES: list[tuple[type[PrecisionSettings], float]] = [
    (PRECISIONS["full"], 0.0),
    (PRECISIONS["half"], 1e-3),
    (PRECISIONS["double"], 0.0),
]


class Layer(Module[B]):
    weight: Param[Tensor[B, D2]]
    bias: Param[Tensor[B, D1]]


class Net(Module[B]):
    first: Layer[B]
    blocks: list[Layer[B]]
    scale: float


def _net(d_hidden: int = 5) -> Net[NdArray]:
    def layer(i: int, o: int) -> Layer[NdArray]:
        return Layer(
            Param(Tensor.random((i, o), Distribution.Normal(0.0, 1.0), DEVICE)),
            Param(Tensor.random((o,), Distribution.Normal(0.0, 1.0), DEVICE)),
        )

    return Net(layer(3, d_hidden), [layer(d_hidden, 2), layer(2, 2)], 0.5)


def _values(net: Net[Any]) -> dict[str, np.ndarray[Any, Any]]:
    return {name: p.val().to_numpy() for name, p in net.named_parameters()}


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS)
@pytest.mark.parametrize(("settings", "tol"), PRECISION_TOLERANCES)
def test_file_round_trip(
    tmp_path: Path, recorder_cls: type[FileRecorder], settings: type[PrecisionSettings], tol: float
) -> None:
    net = _net()
    recorder = recorder_cls(settings)
    net.save_file(tmp_path / "net", recorder)
    assert (tmp_path / f"net.{recorder.extension}").exists()
    loaded = _net().load_file(tmp_path / "net", recorder, DEVICE)
    before, after = _values(net), _values(loaded)
    assert (
        list(before)
        == list(after)
        == [
            "first.weight",
            "first.bias",
            "blocks.0.weight",
            "blocks.0.bias",
            "blocks.1.weight",
            "blocks.1.bias",
        ]
    )
    for name in before:
        np.testing.assert_allclose(after[name], before[name], rtol=tol, atol=tol * 4)
    assert [str(p.id) for p in loaded.parameters()] == [str(p.id) for p in net.parameters()]
    assert loaded.scale == 0.5


def test_bytes_recorders_and_aliases(tmp_path: Path) -> None:
    net = _net()
    blob = BinBytesRecorder(FullPrecisionSettings).record(net.into_record())
    again = _net().load_record(BinBytesRecorder(FullPrecisionSettings).load(blob, DEVICE))
    assert all(
        np.array_equal(a, b) for a, b in zip(_values(net).values(), _values(again).values(), strict=True)
    )
    mpk = NamedMpkBytesRecorder(FullPrecisionSettings).record(net.into_record())
    assert mpk[:1] == b"\x83"
    again = _net().load_record(NamedMpkBytesRecorder(FullPrecisionSettings).load(mpk, DEVICE))
    assert all(
        np.array_equal(a, b) for a, b in zip(_values(net).values(), _values(again).values(), strict=True)
    )
    assert DefaultRecorder is NamedMpkFileRecorder
    assert CompactRecorder().settings is HalfPrecisionSettings
    with pytest.raises(RecordError, match="field names"):
        len(BinBytesRecorder().load(blob, DEVICE))


def test_write_is_atomic(tmp_path: Path) -> None:
    net = _net()
    net.save_file(tmp_path / "net", DefaultRecorder())
    assert os.listdir(tmp_path) == ["net.mpk"]
    good = (tmp_path / "net.mpk").read_bytes()
    with pytest.raises(ValueError, match="missing"):
        net.save_file(tmp_path / "missing" / "net", DefaultRecorder())
    with pytest.raises(TypeError, match="found object"):
        DefaultRecorder().record({"weight": object()}, tmp_path / "net")
    assert (tmp_path / "net.mpk").read_bytes() == good
    assert os.listdir(tmp_path) == ["net.mpk"]


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS)
def test_damaged_files_name_the_file(tmp_path: Path, recorder_cls: type[FileRecorder]) -> None:
    recorder = recorder_cls(FullPrecisionSettings)
    _net().save_file(tmp_path / "net", recorder)
    path = tmp_path / f"net.{recorder.extension}"
    data = path.read_bytes()
    for damaged in (data[: len(data) // 2], b"GIF89a not a record at all", data[:40]):
        path.write_bytes(damaged)
        with pytest.raises(ValueError, match=str(path.name)):
            _net().load_file(tmp_path / "net", recorder, DEVICE)


@pytest.mark.parametrize("recorder_cls", [NamedMpkFileRecorder, BinFileRecorder, PrettyJsonFileRecorder])
def test_other_architecture_names_parameter_and_shapes(
    tmp_path: Path, recorder_cls: type[FileRecorder]
) -> None:
    recorder = recorder_cls(FullPrecisionSettings)
    _net(5).save_file(tmp_path / "net", recorder)
    target = _net(7)
    with pytest.raises(ValueError, match=r"first\.weight") as err:
        target.load_file(tmp_path / "net", recorder, DEVICE)
    assert "[3, 5]" in str(err.value) and "[3, 7]" in str(err.value)


def test_bad_settings_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="settings"):
        NamedMpkFileRecorder(int)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match=r"nothing\.mpk"):
        NamedMpkFileRecorder().load(tmp_path / "nothing", DEVICE)


def _step_twice(optim: Any) -> Any:
    from ferrum.backend import Autodiff
    from ferrum.nn import LinearConfig
    from ferrum.optim import GradientsParams

    device = Autodiff[NdArray].device()
    layer = LinearConfig(3, 2).init(device)
    for _ in range(2):
        loss = layer.forward(Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), device)).sum()
        layer = optim.step(0.1, layer, GradientsParams.from_grads(loss.backward(), layer))
    return optim


def _same_state(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if isinstance(a, Tensor):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for key in a:
            _same_state(a[key], b[key])
    else:
        assert a == b


@pytest.mark.parametrize("recorder_cls", BINCODE_RECORDERS)
@pytest.mark.parametrize(
    "which", ["sgd_momentum", "sgd", "adagrad", "rmsprop_momentum", "rmsprop_centered", "adamw"]
)
def test_bincode_optimizer_records_of_every_optimizer_round_trip(
    tmp_path: Path, recorder_cls: type[FileRecorder], which: str
) -> None:
    from ferrum.optim import AdaGradConfig, AdamWConfig, MomentumConfig, RmsPropConfig, SgdConfig

    configs: dict[str, Any] = {
        "sgd_momentum": SgdConfig(momentum=MomentumConfig()),
        "sgd": SgdConfig(),
        "adagrad": AdaGradConfig(),
        "rmsprop_momentum": RmsPropConfig(momentum=0.9),
        "rmsprop_centered": RmsPropConfig(centered=True),
        "adamw": AdamWConfig(),
    }
    optim = _step_twice(configs[which].init())
    recorder = recorder_cls(FullPrecisionSettings)
    recorder.record(optim.to_record(), tmp_path / "optim")
    loaded = recorder.load(tmp_path / "optim", NdArray.device(), optim.record_schema(NdArray.device()))
    _same_state(configs[which].init().load_record(loaded).to_record(), optim.to_record())


def test_bincode_refuses_a_float_optimizer_state_naming_the_field(tmp_path: Path) -> None:
    record = {"7": {"V1": {"Rank1": {"momentum": {"time": 1, "beta": 0.5}}}}}
    with pytest.raises(RecordError, match=r"'.*\.V1\.Rank1\.momentum\.beta'.*f32 or f64"):
        BinFileRecorder(FullPrecisionSettings).record(record, tmp_path / "optim")
    assert not list(tmp_path.iterdir())


def test_an_optimizer_without_state_is_burns_empty_map_in_bincode(tmp_path: Path) -> None:
    from ferrum.optim import SgdConfig

    optim = SgdConfig().init()
    recorder = BinFileRecorder(FullPrecisionSettings)
    recorder.record(optim.to_record(), tmp_path / "optim")
    # After the metadata strings, Burn's HashMap writes its length, 0; a module without
    # parameters (an empty struct) writes nothing.
    assert (tmp_path / "optim.bin").read_bytes().endswith(b"FullPrecisionSettings\x00")
    assert recorder.load(tmp_path / "optim", DEVICE, optim.record_schema(DEVICE)) == {}
    recorder.record({}, tmp_path / "module")
    assert (tmp_path / "module.bin").read_bytes().endswith(b"FullPrecisionSettings")


def test_centered_rmsprop_grad_avg_is_an_option_in_bincode(tmp_path: Path) -> None:
    # Burn's CenteredState.grad_avg is an Option<Tensor>: bincode writes a 1 before the tensor.
    from ferrum.optim import RmsPropConfig

    optim = _step_twice(RmsPropConfig(centered=True).init())
    BinFileRecorder(FullPrecisionSettings).record(optim.to_record(), tmp_path / "optim")
    raw = (tmp_path / "optim.bin").read_bytes()
    for versioned in optim.to_record().values():
        grad_avg = versioned["V1"]["Rank2" if "Rank2" in versioned["V1"] else "Rank1"]["centered"]["grad_avg"]
        data = grad_avg.to_numpy().astype("<f4").tobytes()
        dims = bytes([len(grad_avg.dims()), *grad_avg.dims()])
        # After square_avg's shape and dtype (F32, variant 1): Some, then grad_avg's byte
        # count, bytes, shape and dtype.
        some = dims + b"\x01" + b"\x01" + bytes([len(data)]) + data + dims + b"\x01"
        assert raw.count(some) == 1


def test_file_system_errors_are_os_errors_with_errno_and_file(tmp_path: Path) -> None:
    """A record the disk would not take is an OSError (errno, filename) and still a RecordError."""
    import errno

    from ferrum.record import RecordFileError

    target = tmp_path / "no" / "such" / "folder" / "model"
    with pytest.raises(OSError, match="cannot create a temporary file") as saved:
        NamedMpkFileRecorder().record({"w": 1.0}, target)
    assert isinstance(saved.value, RecordFileError) and isinstance(saved.value, RecordError)
    assert saved.value.errno == errno.ENOENT and saved.value.filename == f"{target}.mpk"
    (tmp_path / "folder.mpk").mkdir()  # a folder where the file should be
    with pytest.raises(OSError) as loaded:
        NamedMpkFileRecorder().load(tmp_path / "folder", DEVICE)
    assert loaded.value.errno == errno.EISDIR and loaded.value.filename == str(tmp_path / "folder.mpk")


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE and SIGXFSZ are POSIX")
def test_a_full_disk_is_an_os_error_naming_the_file(tmp_path: Path) -> None:
    """A write the file-size limit cuts short (as a full disk would) raises EFBIG naming the file,
    and leaves neither the file nor a temporary beside it."""
    import subprocess
    import sys
    import textwrap

    child = textwrap.dedent(
        f"""
        import errno, resource, signal
        import numpy as np
        from ferrum import Tensor
        from ferrum.backend import NdArray
        from ferrum.record import NamedMpkFileRecorder
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        big = Tensor.from_numpy(np.zeros(100_000, np.float32), NdArray.device())
        try:
            NamedMpkFileRecorder().record({{"w": big}}, {str(tmp_path / "model")!r})
        except OSError as err:
            print(type(err).__name__, err.errno == errno.EFBIG, err.filename)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["RecordFileError", "True", str(tmp_path / "model.mpk")], done.stdout
    assert list(tmp_path.iterdir()) == []
