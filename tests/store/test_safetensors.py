"""``SafetensorsStore``: files read and written through the safetensors package's NumPy API."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pytest
from ferrum import DType, Tensor
from ferrum.backend import NdArray
from ferrum.module import Param
from ferrum.store import PytorchStore, PyTorchToBurnAdapter, SafetensorsStore, StoreError
from ferrum.store.atomic import write_atomically
from safetensors.numpy import load_file, save_file

from tests.support.store_models import STORE_FIXTURES, mlp

DEVICE = NdArray.device()


def test_round_trip_keeps_values_and_metadata(tmp_path: Path) -> None:
    model = mlp(DEVICE).load_from(PytorchStore.from_file(STORE_FIXTURES / "mlp.pt"))
    path = tmp_path / "m.safetensors"
    model.save_into(SafetensorsStore.from_file(path).metadata("epoch", "7"))
    raw = load_file(path)
    # ferrum's own layout: Linear weights [in, out], norms gamma/beta, list indices as they are.
    assert (
        raw["layers.1.weight"].shape == (16, 12)
        and "norm.gamma" in raw
        and raw["head.bias"].dtype == np.float32
    )
    metadata = SafetensorsStore.from_file(path).file_metadata()
    assert (metadata["format"], metadata["producer"], metadata["epoch"]) == ("safetensors", "ferrum", "7")
    assert set(metadata) == {"format", "producer", "version", "epoch"}
    again = mlp(DEVICE).load_from(SafetensorsStore.from_file(path))
    for (name, a), (_, b) in zip(model.named_parameters(), again.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy(), err_msg=name)
    assert SafetensorsStore.from_file(path).clear_metadata().extra_metadata == ()


def test_other_dtypes_are_cast_to_the_module_dtype(tmp_path: Path) -> None:
    tensors = {k: v.astype(np.float16) for k, v in load_file(STORE_FIXTURES / "mlp.safetensors").items()}
    save_file(tensors, tmp_path / "half.safetensors")
    store = SafetensorsStore.from_file(tmp_path / "half.safetensors").with_from_adapter(
        PyTorchToBurnAdapter()
    )
    model = mlp(DEVICE).load_from(store)
    assert model.head.weight.val().dtype == DType.F32
    assert model.head.bias is not None
    np.testing.assert_array_equal(model.head.bias.val().to_numpy(), tensors["head.bias"].astype(np.float32))


def test_f64_modules_save_f64(tmp_path: Path) -> None:
    model = mlp(DEVICE)
    bias = Tensor.from_numpy(np.arange(3, dtype=np.float64), DEVICE, dtype=DType.F64)
    object.__setattr__(model.head, "bias", Param(bias))
    model.save_into(SafetensorsStore.from_file(tmp_path / "d.safetensors"))
    assert load_file(tmp_path / "d.safetensors")["head.bias"].dtype == np.float64


def test_damaged_and_missing_files_are_store_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\xff" * 8 + b"{")
    with pytest.raises(StoreError, match="not a readable safetensors file"):
        SafetensorsStore.from_file(bad).keys()
    with pytest.raises(StoreError, match="does not exist"):
        SafetensorsStore.from_file(tmp_path / "none.safetensors").keys()


def test_bf16_f16_and_int_tensors_written_by_torch() -> None:
    snaps = SafetensorsStore.from_file(STORE_FIXTURES / "dtypes.safetensors").snapshots()
    assert {k: s.dtype for k, s in snaps.items()} == {"bf16": "BF16", "f16": "F16", "i32": "I32"}
    np.testing.assert_array_equal(snaps["bf16"].to_numpy(), [[1.5, -2.5], [0.15625, 300.0]])
    np.testing.assert_array_equal(snaps["f16"].to_numpy(), np.array([1.5, -2.25], np.float16))
    np.testing.assert_array_equal(snaps["i32"].to_numpy(), [7, -8])


def test_without_the_extra_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "safetensors", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'ferrum-dl\[safetensors\]'"):
        mlp(DEVICE).save_into(SafetensorsStore.from_file(tmp_path / "m.safetensors"))
    with pytest.raises(ImportError, match=r"SafetensorsStore needs safetensors"):
        SafetensorsStore.from_file(STORE_FIXTURES / "mlp.safetensors").keys()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and symbolic links")
def test_save_writes_in_a_private_folder_and_replaces_a_planted_link(tmp_path: Path) -> None:
    """The package reopens the temporary file by name: it sits in a folder only this user can
    enter, so nothing planted beside the target redirects the write; a link at the target itself
    is replaced, not written through."""
    seen: list[tuple[Path, int]] = []

    def spy(out: BinaryIO, tmp: str) -> None:
        seen.append((Path(tmp).parent, Path(tmp).parent.stat().st_mode & 0o777))
        out.write(b"data")

    write_atomically(tmp_path / "m.bin", spy)
    ((folder, mode),) = seen
    assert folder.parent == tmp_path and mode == 0o700 and not folder.exists()
    assert (tmp_path / "m.bin").read_bytes() == b"data"

    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    target = tmp_path / "model.safetensors"
    target.symlink_to(victim)
    model = mlp(DEVICE).load_from(PytorchStore.from_file(STORE_FIXTURES / "mlp.pt"))
    model.save_into(SafetensorsStore.from_file(target).overwrite(True))
    assert victim.read_text() == "keep" and not target.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.bin", "model.safetensors", "victim.txt"]
    assert set(load_file(target)) == {name for name, _ in model.named_parameters()}
