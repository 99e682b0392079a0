"""Recurrent and attention models written by PyTorch (scripts/make_store_fixtures.py) load into ferrum's.

torch packs an LSTM's four gates (a GRU's three) into ``weight_ih_l0``/``weight_hh_l0`` with two
biases, and a MultiheadAttention's query, key and value into ``in_proj_weight``; the
PyTorchToBurnAdapter splits them into Burn's one-Linear-per-gate layout. Every file format must give
torch's outputs and final states on the fixed input (atol 1e-5, f32).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.nn import GruConfig, LstmConfig
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
from ferrum.store import (
    IdentityAdapter,
    ModuleStore,
    PytorchStore,
    PyTorchToBurnAdapter,
    SafetensorsStore,
    StoreError,
)
from store_models import STORE_FIXTURES

DEVICE = NdArray.device()
FORMATS = ["zip", "legacy", "checkpoint", "safetensors"]
# torch.nn.TransformerEncoderLayer's module names -> Burn's (the adapter already made
# self_attn.in_proj_* into query/key/value and out_proj into output).
ENCODER_REMAP = [
    (r"\.self_attn\.", ".mha."),
    (r"\.linear1\.", ".pwff.linear_inner."),
    (r"\.linear2\.", ".pwff.linear_outer."),
]
# torch's norm1 is the norm of the attention sub-layer; Burn's norm_first layer normalizes the
# attention's input with norm_2 and the feed-forward's with norm_1 (after the sum it is the other way).
NORMS = {
    False: [(r"\.norm(\d)\.", r".norm_\1.")],
    True: [(r"\.norm1\.", ".norm_2."), (r"\.norm2\.", ".norm_1.")],
}


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
    store = _store(name, file_format)
    for pattern, replacement in ENCODER_REMAP + NORMS[norm_first]:
        store = store.with_key_remapping(pattern, replacement)
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
