"""Recurrent and attention models written by PyTorch (scripts/make_store_fixtures.py) load into ferrum's.

torch packs an LSTM's four gates (a GRU's three) into ``weight_ih_l0``/``weight_hh_l0`` with two
biases, and a MultiheadAttention's query, key and value into ``in_proj_weight``; the
PyTorchToBurnAdapter splits them into Burn's one-Linear-per-gate layout. Every file format must give
torch's outputs and final states on the fixed input (atol 1e-5, f32), and BurnToPyTorchAdapter must
write torch's own file back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.module import Module
from ferrum.nn import GruConfig, LstmConfig
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
from ferrum.store import (
    BurnToPyTorchAdapter,
    IdentityAdapter,
    ModuleStore,
    PytorchStore,
    PyTorchToBurnAdapter,
    SafetensorsStore,
    StoreError,
)
from safetensors.numpy import load_file

from tests.support.store_models import ENCODER_NORMS, ENCODER_REMAP, STORE_FIXTURES

DEVICE = NdArray.device()
FORMATS = ["zip", "legacy", "checkpoint", "safetensors"]


def _store(name: str, file_format: str) -> ModuleStore:
    if file_format == "safetensors":
        return SafetensorsStore.from_file(STORE_FIXTURES / f"{name}.safetensors").with_from_adapter(
            PyTorchToBurnAdapter()
        )
    if file_format == "checkpoint":
        return PytorchStore.from_file(STORE_FIXTURES / f"{name}_checkpoint.pt").with_top_level_key(
            "model_state_dict"
        )
    suffix = "_legacy" if file_format == "legacy" else ""
    return PytorchStore.from_file(STORE_FIXTURES / f"{name}{suffix}.pt")


def _encoder_store(name: str, file_format: str) -> ModuleStore:
    store = _store(name, file_format)
    for pattern, replacement in ENCODER_REMAP + ENCODER_NORMS[name == "encoder_prenorm"]:
        store = store.with_key_remapping(pattern, replacement)
    return store


def _io(name: str) -> Any:
    return np.load(STORE_FIXTURES / f"{name}_io.npz")


@pytest.mark.parametrize("file_format", FORMATS)
def test_lstm_matches_torch(file_format: str) -> None:
    model, result = LstmConfig(5, 7, True).init(DEVICE).load_from_with_result(_store("lstm", file_format))
    assert len(result.applied) == 16 and result.unused == [] and not result.missing
    io = _io("lstm")
    out, state = model.forward(Tensor.from_numpy(io["x"], DEVICE))
    np.testing.assert_allclose(out.to_numpy(), io["y"], atol=1e-5)
    np.testing.assert_allclose(state.hidden.to_numpy(), io["h"], atol=1e-5)
    np.testing.assert_allclose(state.cell.to_numpy(), io["c"], atol=1e-5)


@pytest.mark.parametrize("file_format", FORMATS)
def test_gru_matches_torch(file_format: str) -> None:
    model, result = GruConfig(5, 6, True).init(DEVICE).load_from_with_result(_store("gru", file_format))
    assert len(result.applied) == 12 and result.unused == [] and not result.missing
    io = _io("gru")
    out = model.forward(Tensor.from_numpy(io["x"], DEVICE))
    np.testing.assert_allclose(out.to_numpy(), io["y"], atol=1e-5)
    np.testing.assert_allclose(out.to_numpy()[:, -1], io["h"], atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
@pytest.mark.parametrize("file_format", FORMATS)
def test_transformer_encoder_matches_torch(file_format: str, norm_first: bool) -> None:
    name = "encoder_prenorm" if norm_first else "encoder"
    store = _encoder_store(name, file_format)
    # torch's layer: exact GELU, LayerNorm eps 1e-5 - Burn's defaults; dropout 0.
    encoder = TransformerEncoderConfig(8, 16, 2, 1, norm_first=norm_first).with_dropout(0.0).init(DEVICE)
    model, result = encoder.load_from_with_result(store)
    assert len(result.applied) == 16 and result.unused == [] and not result.missing
    io = _io(name)
    out = model.forward(TransformerEncoderInput(Tensor.from_numpy(io["x"], DEVICE)))
    np.testing.assert_allclose(out.to_numpy(), io["y"], atol=1e-5)


def test_lstm_gates_land_in_torchs_order() -> None:
    """i, f, g, o rows of torch's packed weights go to the input, forget, cell and output gates."""
    lstm = LstmConfig(5, 7, True).init(DEVICE).load_from(_store("lstm", "zip"))
    packed = {k: v.to_numpy() for k, v in PytorchStore.from_file(STORE_FIXTURES / "lstm.pt")
              .with_from_adapter(IdentityAdapter()).snapshots().items()}  # fmt: skip
    for index, gate in enumerate([lstm.input_gate, lstm.forget_gate, lstm.cell_gate, lstm.output_gate]):
        rows = slice(7 * index, 7 * (index + 1))
        np.testing.assert_array_equal(
            gate.input_transform.weight.val().to_numpy(), packed["weight_ih_l0"][rows].T
        )
        np.testing.assert_array_equal(
            gate.hidden_transform.weight.val().to_numpy(), packed["weight_hh_l0"][rows].T
        )
        bias = gate.hidden_transform.bias
        assert bias is not None
        np.testing.assert_array_equal(bias.val().to_numpy(), packed["bias_hh_l0"][rows])


def test_lstm_of_another_size_names_the_tensor_and_shapes() -> None:
    with pytest.raises(
        StoreError, match=r"input_gate\.input_transform\.weight.*expected shape \[4, 7\], found \[5, 7\]"
    ):
        LstmConfig(4, 7, True).init(DEVICE).load_from(_store("lstm", "zip"))


# ferrum's names back to torch's: the import's renames reversed (a norm_first layer swaps the
# norms, through a temporary name).
TO_TORCH = [(re.escape(burns), torchs.replace("\\", "")) for torchs, burns in ENCODER_REMAP]
TORCH_NORMS = {
    False: [(r"\.norm_(\d)\.", r".norm\1.")],
    True: [(r"\.norm_1\.", ".norm_x."), (r"\.norm_2\.", ".norm1."), (r"\.norm_x\.", ".norm2.")],
}


def _loaded(name: str) -> Module[Any]:
    if name == "lstm":
        return LstmConfig(5, 7, True).init(DEVICE).load_from(_store(name, "zip"))
    if name == "gru":
        return GruConfig(5, 6, True).init(DEVICE).load_from(_store(name, "zip"))
    config = TransformerEncoderConfig(8, 16, 2, 1, norm_first=name == "encoder_prenorm")
    return config.init(DEVICE).load_from(_encoder_store(name, "zip"))


@pytest.mark.parametrize("name", ["lstm", "gru", "encoder", "encoder_prenorm"])
def test_export_for_pytorch_is_torchs_own_file(name: str, tmp_path: Path) -> None:
    """BurnToPyTorchAdapter packs gates and projections back: torch's keys, in torch's order, and values."""
    out = SafetensorsStore.from_file(tmp_path / "out.safetensors").with_to_adapter(BurnToPyTorchAdapter())
    if name.startswith("encoder"):
        for pattern, replacement in TO_TORCH + TORCH_NORMS[name == "encoder_prenorm"]:
            out = out.with_key_remapping(pattern, replacement)
    _loaded(name).save_into(out)
    ours, torchs = load_file(tmp_path / "out.safetensors"), load_file(STORE_FIXTURES / f"{name}.safetensors")
    assert list(ours) == list(torchs)
    for key, value in torchs.items():
        np.testing.assert_array_equal(ours[key], value, err_msg=key)
