"""ferrum.store.packed: torch's packed LSTM/GRU gates and attention projections, split and joined.

The expected parts are NumPy slices of the packed arrays, in torch's documented gate order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from ferrum.backend import NdArray
from ferrum.nn import BiLstm, BiLstmConfig, Lstm, LstmConfig
from ferrum.nn.attention import MultiHeadAttentionConfig
from ferrum.store import PyTorchToBurnAdapter, SafetensorsStore, StoreError, TensorSnapshot
from ferrum.store.packed import pack_pytorch, unpack_pytorch
from safetensors.numpy import save_file

DEVICE = NdArray.device()
LSTM_GATES = ["input_gate", "forget_gate", "cell_gate", "output_gate"]


def _snaps(**arrays: Any) -> dict[str, TensorSnapshot]:
    return {
        k.replace("__", "."): TensorSnapshot.from_numpy(k.replace("__", "."), v) for k, v in arrays.items()
    }


def _lstm_arrays(
    prefix: str, hidden: int, d_input: int, suffix: str = "_l0", seed: int = 0
) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    shapes = {"weight_ih": (4 * hidden, d_input), "weight_hh": (4 * hidden, hidden),
              "bias_ih": (4 * hidden,), "bias_hh": (4 * hidden,)}  # fmt: skip
    return {
        f"{prefix}{name}{suffix}": rng.standard_normal(shape).astype(np.float32)
        for name, shape in shapes.items()
    }


def test_lstm_gates_split_in_torchs_order_and_file_order() -> None:
    arrays = _lstm_arrays("rnn.", 3, 2)
    out = unpack_pytorch(
        {k: TensorSnapshot.from_numpy(k, v) for k, v in arrays.items()} | _snaps(head__weight=np.ones((1, 3)))
    )
    assert list(out)[:4] == [f"rnn.{g}.input_transform.weight" for g in LSTM_GATES]
    assert list(out)[-1] == "head.weight"
    for index, gate in enumerate(LSTM_GATES):
        rows = slice(3 * index, 3 * (index + 1))
        np.testing.assert_array_equal(
            out[f"rnn.{gate}.input_transform.weight"].to_numpy(), arrays["rnn.weight_ih_l0"][rows]
        )
        np.testing.assert_array_equal(
            out[f"rnn.{gate}.hidden_transform.weight"].to_numpy(), arrays["rnn.weight_hh_l0"][rows]
        )
        np.testing.assert_array_equal(
            out[f"rnn.{gate}.input_transform.bias"].to_numpy(), arrays["rnn.bias_ih_l0"][rows]
        )
        np.testing.assert_array_equal(
            out[f"rnn.{gate}.hidden_transform.bias"].to_numpy(), arrays["rnn.bias_hh_l0"][rows]
        )
        assert out[f"rnn.{gate}.hidden_transform.weight"].shape == (3, 3)


def test_split_parts_do_not_share_the_packed_tensors_parameter_id() -> None:
    snap = TensorSnapshot.from_numpy("in_proj_bias", np.zeros(6, np.float32), param_id=42)
    assert {part.param_id for part in unpack_pytorch({snap.path: snap}).values()} == {None}


def test_gru_gates_are_reset_update_new() -> None:
    w = np.arange(3 * 2 * 4, dtype=np.float32).reshape(6, 4)
    out = unpack_pytorch(_snaps(weight_ih_l0=w, weight_hh_l0=np.zeros((6, 2), np.float32)))
    for index, gate in enumerate(["reset_gate", "update_gate", "new_gate"]):
        np.testing.assert_array_equal(
            out[f"{gate}.input_transform.weight"].to_numpy(), w[2 * index : 2 * index + 2]
        )


def test_stacked_layers_go_to_a_list_and_directions_to_bilstm_fields() -> None:
    stacked = _lstm_arrays("", 2, 3) | _lstm_arrays("", 2, 2, "_l1")
    assert "1.forget_gate.input_transform.weight" in unpack_pytorch(_snaps(**stacked))
    bi = _lstm_arrays("enc__", 2, 3) | _lstm_arrays("enc__", 2, 3, "_l0_reverse", seed=1)
    out = unpack_pytorch(_snaps(**bi))
    assert "enc.forward_lstm.cell_gate.hidden_transform.bias" in out
    np.testing.assert_array_equal(
        out["enc.reverse_lstm.input_gate.input_transform.weight"].to_numpy(),
        bi["enc__weight_ih_l0_reverse"][:2],
    )


def test_layers_without_a_burn_equivalent_are_left_alone() -> None:
    rnn = _snaps(weight_ih_l0=np.zeros((4, 3)), weight_hh_l0=np.zeros((4, 4)))  # nn.RNN: one "gate"
    assert list(unpack_pytorch(rnn)) == ["weight_ih_l0", "weight_hh_l0"]
    proj = _snaps(**_lstm_arrays("", 4, 3)) | _snaps(weight_hr_l0=np.zeros((2, 4)))  # LSTM(proj_size=2)
    assert list(unpack_pytorch(proj)) == list(proj)


def test_attention_projections_split_and_out_proj_renamed() -> None:
    w, b = np.arange(48, dtype=np.float32).reshape(12, 4), np.arange(12, dtype=np.float32)
    out = unpack_pytorch(
        _snaps(
            attn__in_proj_weight=w,
            attn__in_proj_bias=b,
            attn__out_proj__weight=np.eye(4),
            other__out_proj__bias=b,
        )
    )
    assert list(out) == [
        "attn.query.weight", "attn.key.weight", "attn.value.weight",
        "attn.query.bias", "attn.key.bias", "attn.value.bias", "attn.output.weight",
        "other.out_proj.bias",  # not beside an in_proj: not torch's MultiheadAttention
    ]  # fmt: skip
    np.testing.assert_array_equal(out["attn.value.weight"].to_numpy(), w[8:])
    np.testing.assert_array_equal(out["attn.key.bias"].to_numpy(), b[4:8])
    separate = unpack_pytorch(_snaps(q_proj_weight=np.zeros((4, 4)), k_proj_weight=np.zeros((4, 6))))
    assert separate["key.weight"].shape == (4, 6) and "query.weight" in separate


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"weight_ih_l0": np.zeros((6, 3)), "weight_hh_l0": np.zeros((6, 3))},
         r"'weight_hh_l0' must stack 4 gates \(LSTM\) or 3 \(GRU\) of 3 units, found \[6, 3\] \(2 gates\)"),
        ({"weight_ih_l0": np.zeros((8, 3)), "weight_hh_l0": np.zeros((7, 2))},
         r"'weight_hh_l0' must be \[gates \* hidden, hidden\].*found \[7, 2\]"),
        ({"weight_ih_l0": np.zeros((6, 3)), "weight_hh_l0": np.zeros((8, 2))},
         r"'weight_ih_l0' must be \[8, 3\] to split into 4 parts of 2, found \[6, 3\]"),
        ({"weight_ih_l0": np.zeros((8, 3)), "weight_hh_l0": np.zeros((8, 2)), "bias_hh_l0": np.zeros(7)},
         r"'bias_hh_l0' must be \[8\].*found \[7\]"),
        ({"in_proj_weight": np.zeros((7, 4))},
         r"'in_proj_weight' must be \[6, 4\] to split into 3 parts of 2, found \[7, 4\]"),
        ({"in_proj_weight": np.zeros(12)},
         r"'in_proj_weight' must be \[3 \* d_model, d_model\], found \[12\]"),
    ],
)  # fmt: skip
def test_packed_tensors_of_the_wrong_shape_are_store_errors(arrays: dict[str, Any], message: str) -> None:
    with pytest.raises(StoreError, match=message):
        unpack_pytorch(_snaps(**arrays))


def test_split_that_collides_with_a_file_key_is_a_store_error() -> None:
    snaps = _snaps(in_proj_weight=np.zeros((6, 2)), query__weight=np.zeros((2, 2)))
    with pytest.raises(
        StoreError, match=r"splitting 'in_proj_weight' makes 'query\.weight', which the file already holds"
    ):
        unpack_pytorch(snaps)


def test_bad_packed_shape_in_a_file_fails_the_load_with_a_store_error(tmp_path: Any) -> None:
    arrays = _lstm_arrays("", 3, 2)
    arrays["bias_ih_l0"] = np.zeros(10, np.float32)
    save_file(arrays, tmp_path / "lstm.safetensors")
    store = SafetensorsStore.from_file(tmp_path / "lstm.safetensors").with_from_adapter(
        PyTorchToBurnAdapter()
    )
    with pytest.raises(
        StoreError, match=r"'bias_ih_l0' must be \[12\] to split into 4 parts of 3, found \[10\]"
    ):
        LstmConfig(2, 3, True).init(DEVICE).load_from(store)


def test_bidirectional_lstm_and_attention_load_through_a_store(tmp_path: Any) -> None:
    arrays = _lstm_arrays("", 3, 2) | _lstm_arrays("", 3, 2, "_l0_reverse", seed=1)
    save_file(arrays, tmp_path / "bi.safetensors")
    store = SafetensorsStore.from_file(tmp_path / "bi.safetensors").with_from_adapter(PyTorchToBurnAdapter())
    model: BiLstm[Any] = BiLstmConfig(2, 3, True).init(DEVICE).load_from(store)
    reverse: Lstm[Any] = model.reverse_lstm
    # Burn's Linear is [in, out]: the adapter transposes each split part.
    np.testing.assert_array_equal(
        reverse.output_gate.hidden_transform.weight.val().to_numpy(), arrays["weight_hh_l0_reverse"][9:].T
    )
    w = np.arange(3 * 16, dtype=np.float32).reshape(12, 4)
    zeros = np.zeros(12, np.float32)
    tensors = {
        "in_proj_weight": w,
        "in_proj_bias": zeros,
        "out_proj.weight": w[:4],
        "out_proj.bias": zeros[:4],
    }
    save_file(tensors, tmp_path / "mha.safetensors")
    store = SafetensorsStore.from_file(tmp_path / "mha.safetensors").with_from_adapter(PyTorchToBurnAdapter())
    mha = MultiHeadAttentionConfig(4, 2).init(DEVICE).load_from(store)
    np.testing.assert_array_equal(mha.key.weight.val().to_numpy(), w[4:8].T)
    np.testing.assert_array_equal(mha.output.weight.val().to_numpy(), w[:4].T)


def _module_snaps(paths: Mapping[str, tuple[int, ...]]) -> list[TensorSnapshot]:
    rng = np.random.default_rng(3)
    return [
        TensorSnapshot.from_numpy(p, rng.standard_normal(shape).astype(np.float32), "Linear")
        for p, shape in paths.items()
    ]


def _gate_paths(
    at: str, gates: list[str], d_input: int, hidden: int, bias: bool
) -> dict[str, tuple[int, ...]]:
    paths: dict[str, tuple[int, ...]] = {}
    for gate in gates:
        paths[f"{at}{gate}.input_transform.weight"] = (hidden, d_input)  # already torch's [out, in]
        if bias:
            paths[f"{at}{gate}.input_transform.bias"] = (hidden,)
        paths[f"{at}{gate}.hidden_transform.weight"] = (hidden, hidden)
        if bias:
            paths[f"{at}{gate}.hidden_transform.bias"] = (hidden,)
    return paths


def test_pack_joins_a_bilstms_directions_in_torchs_names_and_undoes_unpack() -> None:
    paths = _gate_paths("enc.forward_lstm.", LSTM_GATES, 3, 2, True) | _gate_paths(
        "enc.reverse_lstm.", LSTM_GATES, 3, 2, True
    )
    snaps = _module_snaps(paths | {"head.weight": (1, 4)})
    packed = pack_pytorch(snaps)
    assert [s.path for s in packed] == [
        "enc.weight_ih_l0", "enc.bias_ih_l0", "enc.weight_hh_l0", "enc.bias_hh_l0",
        "enc.weight_ih_l0_reverse", "enc.bias_ih_l0_reverse",
        "enc.weight_hh_l0_reverse", "enc.bias_hh_l0_reverse",
        "head.weight",
    ]  # fmt: skip
    by_path = {s.path: s.to_numpy() for s in snaps}
    expected = np.concatenate([by_path[f"enc.reverse_lstm.{g}.hidden_transform.weight"] for g in LSTM_GATES])
    np.testing.assert_array_equal(packed[6].to_numpy(), expected)
    assert packed[6].shape == (8, 2)
    again = unpack_pytorch({s.path: s for s in packed})
    assert sorted(again) == sorted(by_path)
    for path, value in by_path.items():
        np.testing.assert_array_equal(again[path].to_numpy(), value)


def test_pack_gru_without_bias_and_leaves_lone_gates_alone() -> None:
    gru = pack_pytorch(_module_snaps(_gate_paths("", ["reset_gate", "update_gate", "new_gate"], 4, 2, False)))
    assert [(s.path, s.shape) for s in gru] == [("weight_ih_l0", (6, 4)), ("weight_hh_l0", (6, 2))]
    lone = _module_snaps(_gate_paths("cell.", ["input_gate"], 2, 2, True))  # a GateController, not an Lstm
    assert pack_pytorch(lone) == lone


def test_pack_attention_as_multihead_attention() -> None:
    paths = {
        f"att.{p}.{k}": (4, 4) if k == "weight" else (4,)
        for p in ("query", "key", "value", "output")
        for k in ("weight", "bias")
    }
    packed = pack_pytorch(_module_snaps(paths))
    assert [(s.path, s.shape) for s in packed] == [
        ("att.in_proj_weight", (12, 4)), ("att.in_proj_bias", (12,)),
        ("att.out_proj.weight", (4, 4)), ("att.out_proj.bias", (4,)),
    ]  # fmt: skip
    kdim = pack_pytorch(
        _module_snaps(
            {"query.weight": (4, 4), "key.weight": (4, 6), "value.weight": (4, 5), "output.weight": (4, 4)}
        )
    )
    assert [s.path for s in kdim] == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
    no_output = _module_snaps({"query.weight": (4, 4), "key.weight": (4, 4), "value.weight": (4, 4)})
    assert pack_pytorch(no_output) == no_output  # not Burn's MultiHeadAttention: left alone
