"""ferrum's sequence, 3-d and deformable convolution, sampling and loss layers against PyTorch
(torchvision for deform_conv2d) on the same weights.

The references come from scripts/make_nn_torch_fixtures.py (torch is not needed here): each
``tests/fixtures/nn_torch/<case>.npz`` holds torch's state dict, the inputs, the outputs and the
gradients of ``sum(out * w)`` for fixed weights ``w``. The state dict goes through a safetensors
file and the PyTorchToBurnAdapter (Linear weights transposed, packed LSTM gates and attention
projections split), as a user's torch checkpoint would; the gradients of the parameters are read
back the same way, so each is compared in ferrum's own layout. All in f32, atol 1e-5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import PadMode, Tensor, linalg
from ferrum import functional as F
from ferrum.backend import Autodiff, NdArray
from ferrum.module import Module
from ferrum.nn import (
    BiLstmConfig,
    Glu,
    GruConfig,
    Interpolate1dConfig,
    Interpolate2dConfig,
    InterpolateMode,
    LstmConfig,
    LstmState,
    PaddingConfig2d,
    PaddingConfig3d,
    Unfold4dConfig,
)
from ferrum.nn.attention import (
    CrossAttentionConfig,
    MhaInput,
    MultiHeadAttentionConfig,
    generate_autoregressive_mask,
)
from ferrum.nn.conv import Conv3dConfig, ConvTranspose3dConfig, DeformConv2dConfig
from ferrum.nn.loss import CosineEmbeddingLossConfig, PoissonNllLossConfig
from ferrum.nn.transformer import (
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from ferrum.store import PyTorchToBurnAdapter, SafetensorsStore
from safetensors.numpy import save_file

from tests.support.store_models import ENCODER_NORMS, ENCODER_REMAP

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nn_torch"
AD = Autodiff[NdArray].device()
PLAIN = NdArray.device()
ATOL = 1e-5

M = TypeVar("M", bound=Module[Any])
Arrays = dict[str, npt.NDArray[Any]]


def _case(name: str) -> Arrays:
    with np.load(FIXTURES / f"{name}.npz") as data:
        return {k: data[k] for k in data.files}


def _section(case: Arrays, prefix: str) -> Arrays:
    return {k.removeprefix(prefix): v for k, v in case.items() if k.startswith(prefix)}


def _torch_state(module: M, tensors: Arrays, path: Path, remaps: Sequence[tuple[str, str]] = ()) -> M:
    """``module`` holding torch's ``tensors`` (a state dict), read as a torch safetensors file would be."""
    save_file(tensors, str(path))
    store = SafetensorsStore.from_file(path).with_from_adapter(PyTorchToBurnAdapter())
    for pattern, replacement in remaps:
        store = store.with_key_remapping(pattern, replacement)
    loaded, result = module.load_from_with_result(store)
    assert result.unused == [] and not result.missing, (result.unused, result.missing)
    return loaded


def _leaves(case: Arrays) -> dict[str, Tensor[Any, Any, Any]]:
    """The fixture's inputs on the autodiff device; the float ones (torch's leaves) track gradients."""
    out: dict[str, Tensor[Any, Any, Any]] = {}
    for name, value in _section(case, "in.").items():
        tensor = Tensor.from_numpy(value, AD)
        out[name] = tensor.require_grad() if f"grad_in.{name}" in case else tensor
    return out


def _loss(case: Arrays, outputs: Mapping[str, Tensor[Any, Any, Any]]) -> Tensor[Any, Any, Any]:
    """Check every output against torch's, then ``sum(out * w)`` over the float ones (integer outputs,
    pooling's indices, must be equal)."""
    assert sorted(outputs) == sorted(_section(case, "out.")), "the fixture's outputs and ours differ"
    total: Tensor[Any, Any, Any] | None = None
    for name, value in outputs.items():
        if f"w.{name}" not in case:
            np.testing.assert_array_equal(value.to_numpy(), case[f"out.{name}"], err_msg=name)
            continue
        np.testing.assert_allclose(value.to_numpy(), case[f"out.{name}"], atol=ATOL, err_msg=name)
        term = (value * Tensor.from_numpy(case[f"w.{name}"], AD)).sum()
        total = term if total is None else total + term
    assert total is not None
    return total


def _check_input_grads(case: Arrays, leaves: Mapping[str, Tensor[Any, Any, Any]], grads: Any) -> None:
    for name, expected in _section(case, "grad_in.").items():
        grad = leaves[name].grad(grads)
        assert grad is not None, f"{name} got no gradient"
        np.testing.assert_allclose(grad.to_numpy(), expected, atol=ATOL, err_msg=f"d/d {name}")


def _check_param_grads(module: Module[Any], expected: Module[Any], grads: Any) -> None:
    """Each parameter's gradient against ``expected``'s value there (torch's gradient, loaded as weights:
    the load has checked that every torch tensor found its parameter and every parameter its tensor)."""
    reference = dict(expected.named_parameters())
    for path, param in module.named_parameters():
        grad = param.val().grad(grads)
        assert grad is not None, f"{path} got no gradient"
        np.testing.assert_allclose(
            grad.to_numpy(), reference[path].val().to_numpy(), atol=ATOL, err_msg=f"d/d {path}"
        )


def _check_layer(
    case: Arrays,
    module: Module[Any],
    fresh: Module[Any],
    grads: Any,
    leaves: Mapping[str, Tensor[Any, Any, Any]],
    path: Path,
    remaps: Sequence[tuple[str, str]] = (),
) -> None:
    """Input gradients, then each parameter's against torch's loaded into ``fresh``."""
    _check_input_grads(case, leaves, grads)
    expected = _torch_state(fresh, _section(case, "grad_param."), path, remaps)
    _check_param_grads(module, expected, grads)


def test_multi_head_attention_with_masks_matches_torch(tmp_path: Path) -> None:
    """Cross attention (query length 4, key length 5) with a padding and an attention mask, both
    true where a key is hidden (Burn's and torch's boolean convention); weights per head."""
    case = _case("mha")
    config = MultiHeadAttentionConfig(8, 2, 0.0)
    mha = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors")
    x = _leaves(case)
    out = mha.forward(
        MhaInput(x["query"], x["key"], x["value"]).mask_pad(x["mask_pad"]).mask_attn(x["mask_attn"])
    )
    grads = _loss(case, {"context": out.context, "weights": out.weights}).backward()
    _check_layer(case, mha, config.init(PLAIN), grads, x, tmp_path / "g.safetensors")


# torch's TransformerDecoderLayer names -> Burn's (the adapter has already split the attentions'
# in_proj into query/key/value and renamed out_proj to output).
DECODER_REMAP = [
    (r"\.multihead_attn\.", ".cross_attn."),
    (r"\.linear1\.", ".pwff.linear_inner."),
    (r"\.linear2\.", ".pwff.linear_outer."),
]
# torch's norm1/2/3 normalize around self-attention, cross-attention and feed-forward in both
# modes; Burn's norm_first layer normalizes their inputs with norm_3, norm_1 and norm_2.
DECODER_NORMS = {
    False: [(r"\.norm(\d)\.", r".norm_\1.")],
    True: [(r"\.norm1\.", ".norm_3."), (r"\.norm2\.", ".norm_1."), (r"\.norm3\.", ".norm_2.")],
}


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_transformer_decoder_layer_matches_torch(norm_first: bool, tmp_path: Path) -> None:
    """One layer (exact GELU, LayerNorm eps 1e-5: Burn's defaults; dropout 0) with a causal target
    mask and a memory padding mask."""
    case = _case("decoder_prenorm" if norm_first else "decoder")
    remaps = DECODER_REMAP + DECODER_NORMS[norm_first]
    config = TransformerDecoderConfig(8, 16, 2, 1, norm_first=norm_first).with_dropout(0.0)
    decoder = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors", remaps)
    x = _leaves(case)
    causal = generate_autoregressive_mask(2, 4, AD)
    input = TransformerDecoderInput(x["target"], x["memory"]).target_mask_attn(causal)
    out = decoder.forward(input.memory_mask_pad(x["memory_mask_pad"]))
    grads = _loss(case, {"y": out}).backward()
    _check_layer(case, decoder, config.init(PLAIN), grads, x, tmp_path / "g.safetensors", remaps)


def test_transformer_encoder_with_padding_mask_matches_torch(tmp_path: Path) -> None:
    """Two pre-norm layers and a key padding mask, with gradients (tests/store/test_sequence.py loads
    one unmasked layer and compares its output)."""
    case = _case("encoder_masked")
    remaps = ENCODER_REMAP + ENCODER_NORMS[True]
    config = TransformerEncoderConfig(8, 16, 2, 2, norm_first=True).with_dropout(0.0)
    encoder = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors", remaps)
    x = _leaves(case)
    out = encoder.forward(TransformerEncoderInput(x["x"]).mask_pad(x["mask_pad"]))
    grads = _loss(case, {"y": out}).backward()
    _check_layer(case, encoder, config.init(PLAIN), grads, x, tmp_path / "g.safetensors", remaps)


def test_cross_attention_matches_torch(tmp_path: Path) -> None:
    """Four query heads sharing two key/value heads (torch: scaled_dot_product_attention with
    enable_gqa), a context of another width, and a padding mask (true = hidden, Burn's convention)."""
    case = _case("cross_attention")
    config = CrossAttentionConfig(8, 6, 4, 2, 3).with_dropout(0.0)
    layer = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors")
    x = _leaves(case)
    grads = _loss(case, {"y": layer.forward(x["query"], x["context"], x["mask"])}).backward()
    _check_layer(case, layer, config.init(PLAIN), grads, x, tmp_path / "g.safetensors")


def test_bidirectional_lstm_matches_torch(tmp_path: Path) -> None:
    """nn.LSTM(bidirectional=True): outputs of both directions side by side, final states forward first."""
    case = _case("bilstm")
    config = BiLstmConfig(3, 4, True)
    lstm = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors")
    x = _leaves(case)
    out, state = lstm.forward(x["x"])
    grads = _loss(case, {"y": out, "h": state.hidden, "c": state.cell}).backward()
    _check_layer(case, lstm, config.init(PLAIN), grads, x, tmp_path / "g.safetensors")


def test_lstm_and_gru_from_initial_states_match_torch(tmp_path: Path) -> None:
    """nn.LSTM and nn.GRU (reset_after, torch's form) from given states: outputs, final states and the
    gradients of the input, the initial states and every gate's weights."""
    case = _case("lstm_state")
    config = LstmConfig(3, 4, True)
    lstm = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors")
    x = _leaves(case)
    out, state = lstm.forward(x["x"], LstmState(x["c0"], x["h0"]))
    grads = _loss(case, {"y": out, "h": state.hidden, "c": state.cell}).backward()
    _check_layer(case, lstm, config.init(PLAIN), grads, x, tmp_path / "g.safetensors")

    case = _case("gru_state")
    gru_config = GruConfig(3, 4, True)
    gru = _torch_state(gru_config.init(AD), _section(case, "param."), tmp_path / "w2.safetensors")
    x = _leaves(case)
    grads = _loss(case, {"y": gru.forward(x["x"], x["h0"])}).backward()
    _check_layer(case, gru, gru_config.init(PLAIN), grads, x, tmp_path / "g2.safetensors")


@pytest.mark.parametrize("transposed", [False, True], ids=["conv3d", "conv_transpose3d"])
def test_conv3d_matches_torch(transposed: bool, tmp_path: Path) -> None:
    """Uneven kernel, stride, padding and dilation per axis, two groups (output padding when transposed)."""
    case = _case("conv_transpose3d" if transposed else "conv3d")
    config: Conv3dConfig | ConvTranspose3dConfig = (
        ConvTranspose3dConfig((4, 6), (2, 3, 2), stride=(2, 1, 2), dilation=(1, 2, 1), groups=2,
                              padding=(1, 0, 0), padding_out=(1, 0, 0))
        if transposed
        else Conv3dConfig((4, 6), (2, 3, 2), stride=(1, 2, 1), dilation=(1, 1, 2), groups=2,
                          padding=PaddingConfig3d.Explicit(1, 0, 1))
    )  # fmt: skip
    conv = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors")
    x = _leaves(case)
    grads = _loss(case, {"y": conv.forward(x["x"])}).backward()
    _check_layer(case, conv, config.init(PLAIN), grads, x, tmp_path / "g.safetensors")


def test_deform_conv2d_matches_torchvision(tmp_path: Path) -> None:
    """torchvision.ops.deform_conv2d: two weight and two offset groups, a modulation mask, offsets that
    reach outside the image, and without a mask (v1); gradients for the input, offsets, mask, weight and
    bias."""
    case = _case("deform_conv2d")
    config = DeformConv2dConfig(
        (4, 6), (3, 2), stride=(1, 2), dilation=(2, 1), weight_groups=2, offset_groups=2,
        padding=PaddingConfig2d.Explicit(1, 0),
    )  # fmt: skip
    conv = _torch_state(config.init(AD), _section(case, "param."), tmp_path / "w.safetensors")
    x = _leaves(case)
    outputs = {
        "y": conv.forward(x["x"], x["offset"], x["mask"]),
        "y_no_mask": conv.forward(x["x"], x["offset"]),
    }
    grads = _loss(case, outputs).backward()
    _check_layer(case, conv, config.init(PLAIN), grads, x, tmp_path / "g.safetensors")


def test_interpolate_matches_torch() -> None:
    """Nearest is torch's ``nearest``; Linear and Cubic are ``bilinear``/``bicubic`` (``linear`` in 1-d;
    1-d cubic is torch's bicubic on a height of one) with ``align_corners=True``, as Burn's CPU backend
    resamples. Up and down in each axis."""
    case = _case("interpolate")
    x = _leaves(case)
    outputs: dict[str, Tensor[Any, Any, Any]] = {}
    for size in ((7, 3), (2, 9)):
        for name, mode in (("nearest", InterpolateMode.Nearest), ("linear", InterpolateMode.Linear),
                           ("cubic", InterpolateMode.Cubic)):  # fmt: skip
            layer = Interpolate2dConfig().with_output_size(size).with_mode(mode).init()
            outputs[f"{name}_{size[0]}x{size[1]}"] = layer.forward(x["x2"])
    for name, mode in (("nearest1d", InterpolateMode.Nearest), ("linear1d", InterpolateMode.Linear),
                       ("cubic1d", InterpolateMode.Cubic)):  # fmt: skip
        outputs[name] = Interpolate1dConfig().with_output_size(9).with_mode(mode).init().forward(x["x1"])
    _check_input_grads(case, x, _loss(case, outputs).backward())


def test_glu_unfold_losses_and_linalg_match_torch() -> None:
    """F.glu, F.unfold (Unfold4d), PoissonNLLLoss (log input with Stirling's term; rates), CosineEmbeddingLoss
    (margin 0.2), torch.linalg.cross, F.cosine_similarity and torch.linalg.vector_norm (keepdim)."""
    case = _case("elementwise")
    x = _leaves(case)
    unfold = Unfold4dConfig((2, 3), stride=(2, 1), dilation=(1, 2), padding=(1, 0)).init()
    poisson_full = PoissonNllLossConfig(log_input=True, full=True).init()
    poisson_rate = PoissonNllLossConfig(log_input=False, full=False).init()
    cosine = CosineEmbeddingLossConfig(margin=0.2).init()
    outputs: dict[str, Tensor[Any, Any, Any]] = {
        "glu": Glu(1).forward(x["glu"]),
        "unfold": unfold.forward(x["unfold"]),
        "cross": x["a"].cross(x["b"], 1),
        "cosine_similarity": linalg.cosine_similarity(x["cos1"], x["cos2"], 1, 1e-8),
        "poisson_log_full": poisson_full.forward(x["poisson_log"], x["poisson_target"]),
        "poisson_rate": poisson_rate.forward(x["poisson_rate"], x["poisson_target"]),
        "cosine_embedding": cosine.forward(x["cos1"], x["cos2"], x["cos_target"]),
    }
    for name, norm in (("l1", 1.0), ("l2", 2.0), ("l3", 3.0), ("linf", float("inf"))):
        outputs[f"norm_{name}"] = linalg.vector_norm(x["norm"], norm, 1)
    _check_input_grads(case, x, _loss(case, outputs).backward())


def test_functional_ops_match_torch() -> None:
    """max_pool1d/2d with indices (padding, dilation, ceil mode), attention with a mask, Reflect and Edge
    padding (torch's "reflect"/"replicate"), vector_normalize (F.normalize), the L0 and -inf norms, and
    interpolation by a scale factor (torch's recompute_scale_factor=True: the factor gives the size)."""
    case = _case("functional")
    x = _leaves(case)
    p1, i1 = F.max_pool1d_with_indices(x["pool1"], 3, 2, padding=1, dilation=2, ceil_mode=True)
    p2, i2 = F.max_pool2d_with_indices(x["pool2"], (3, 2), (2, 1), padding=(1, 1), dilation=(1, 2))
    norm = x["norm"]

    def resize(mode: InterpolateMode) -> Tensor[Any, Any, Any]:
        return Interpolate2dConfig().with_scale_factor((1.7, 0.6)).with_mode(mode).init().forward(x["resize"])

    outputs: dict[str, Tensor[Any, Any, Any]] = {
        "max_pool1d": p1,
        "max_pool1d_indices": i1,
        "max_pool2d": p2,
        "max_pool2d_indices": i2,
        "attention": F.attention(x["q"], x["k"], x["v"], x["attn_mask"]),
        "pad_reflect": x["pad"].pad([2, 1, 1, 2], PadMode.Reflect),
        "pad_edge": x["pad"].pad([3, 0, 0, 1], PadMode.Edge),
        "normalize_l2": linalg.vector_normalize(norm, 2.0, 1, 1e-12),
        "normalize_l1": linalg.vector_normalize(norm, 1.0, 1, 1e-12),
        "norm_l0": linalg.vector_norm(norm, linalg.Norm.L0, 1),
        "norm_lneginf": linalg.vector_norm(norm, linalg.Norm.LNegInf, 1),
        "scale_nearest": resize(InterpolateMode.Nearest),
        "scale_linear": resize(InterpolateMode.Linear),
    }
    _check_input_grads(case, x, _loss(case, outputs).backward())
