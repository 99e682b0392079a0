"""Every layer and loss of ``ferrum.nn`` with bf16 and f16 parameters and inputs, on Autodiff[NdArray].

For each layer and each half dtype: the layer's float tensors (parameters and running state, first
moved off their initial values so none is a trivial 0 or 1) and the float inputs are cast to the
dtype; forward, then ``sum(out * w)`` backward. The outputs and the gradients of every input and
parameter must be in the half dtype, and match the same computation in f32 on the same rounded
values (the parameters and inputs cast to the half dtype and back to f32 first): the only
difference left is the rounding of results and intermediates to the half dtype. Each is compared
normwise, ``max|half - f32| <= eps * k * max|f32|``, with ``eps`` the dtype's spacing at 1
(2^-7 for bf16, 2^-10 for f16) and ``k`` the case's allowance for the roundings its ops chain
(one per op whose result is stored in the half dtype, more where a sum's terms cancel).

A last test enumerates the exports of ``ferrum.nn`` and its submodules, so a new layer without a
case here fails.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, Tensor
from ferrum import nn as fnn
from ferrum.backend import Autodiff, NdArray
from ferrum.module import Module, ParamId
from ferrum.nn import (
    ActivationConfig,
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    BatchNormConfig,
    BiLstmConfig,
    Conv1dConfig,
    Conv2dConfig,
    Conv3dConfig,
    ConvTranspose1dConfig,
    ConvTranspose2dConfig,
    ConvTranspose3dConfig,
    DeformConv2dConfig,
    DropoutConfig,
    EmbeddingConfig,
    GaussianNoiseConfig,
    Gelu,
    Glu,
    GroupNormConfig,
    GruConfig,
    HardSigmoidConfig,
    HardSwish,
    InstanceNormConfig,
    Interpolate1dConfig,
    Interpolate2dConfig,
    InterpolateMode,
    LayerNormConfig,
    LeakyReluConfig,
    LinearConfig,
    LstmConfig,
    MaxPool1dConfig,
    MaxPool2dConfig,
    NormalizationConfig,
    PositionalEncodingConfig,
    PReluConfig,
    Relu,
    RmsNormConfig,
    RotaryEncodingConfig,
    Sigmoid,
    SoftplusConfig,
    SwiGluConfig,
    Tanh,
    Unfold4dConfig,
)
from ferrum.nn.attention import CrossAttentionConfig, MhaInput, MultiHeadAttentionConfig
from ferrum.nn.loss import (
    BinaryCrossEntropyLossConfig,
    CosineEmbeddingLossConfig,
    CrossEntropyLossConfig,
    HuberLossConfig,
    MseLoss,
    PoissonNllLossConfig,
    cross_entropy_with_logits,
)
from ferrum.nn.transformer import (
    PositionWiseFeedForwardConfig,
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)

AD = Autodiff[NdArray].device()
HALF = [DType.BF16, DType.F16]
# The spacing of the dtype's numbers at 1: twice the unit roundoff.
EPS = {DType.BF16: 2.0**-7, DType.F16: 2.0**-10}

Arrays = list[npt.NDArray[Any]]
Tensors = list[Tensor[Any, Any, Any]]


class _Cast:
    """A ``ModuleMapper`` casting every float tensor of a module."""

    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return tensor.cast(self.dtype)


class _Perturb:
    """Moves every float tensor by up to 0.2, so that no gamma is exactly 1 nor beta 0."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        noise = self.rng.uniform(-0.2, 0.2, tensor.dims()).astype(np.float32)
        return tensor + Tensor.from_numpy(noise, tensor.device())


@dataclass(frozen=True)
class Case:
    """One layer: ``build`` makes it (None for the functions), ``inputs`` its input arrays (float
    ones become tracked half leaves; int and bool ones pass as they are), ``run`` its float outputs."""

    name: str
    covers: tuple[str, ...]
    build: Callable[[], Module[Any] | None]
    inputs: Callable[[np.random.Generator], Arrays]
    run: Callable[[Any, Tensors], Tensors]
    k: float = 2.0
    # Inputs that get no gradient (a loss's float targets are leaves too; an index is never one).
    frozen: tuple[int, ...] = ()
    # Parameters whose gradient is zero in exact arithmetic, so that both runs give rounding noise:
    # the key projection's bias adds the same q.b to every score of a softmax row, which the softmax
    # ignores. Each is held to the scale of the sum it comes from, the matching weight's gradient.
    vanishing: tuple[str, ...] = ()


def _normal(*shape: int) -> Callable[[np.random.Generator], Arrays]:
    return lambda rng: [rng.standard_normal(shape).astype(np.float32)]


def _fwd(module: Any, x: Tensors) -> Tensors:
    return [module.forward(*x)]


def _none() -> None:
    return None


def _layer(
    name: str,
    layer: str,
    build: Callable[[], Module[Any]],
    inputs: tuple[int, ...] | Callable[[np.random.Generator], Arrays],
    **settings: Any,
) -> Case:
    """The common case: a layer made by ``{layer}Config`` (both covered), run by its ``forward`` on
    ``inputs`` (a shape stands for one standard normal input of that shape)."""
    make = _normal(*inputs) if isinstance(inputs, tuple) else inputs
    return Case(name, (layer, f"{layer}Config"), build, make, _fwd, **settings)


CASES: list[Case] = [
    _layer("linear", "Linear", lambda: LinearConfig(16, 8).init(AD), (4, 16)),
    _layer("conv1d", "Conv1d", lambda: Conv1dConfig(3, 4, 3).init(AD), (2, 3, 10)),
    _layer(
        "conv2d",
        "Conv2d",
        lambda: Conv2dConfig((3, 4), (3, 3)).with_stride((2, 1)).init(AD),
        (2, 3, 7, 6),
    ),
    _layer("conv3d", "Conv3d", lambda: Conv3dConfig((2, 3), (2, 2, 2)).init(AD), (1, 2, 4, 4, 3)),
    _layer(
        "conv_transpose1d",
        "ConvTranspose1d",
        lambda: ConvTranspose1dConfig((3, 2), 3).with_stride(2).init(AD),
        (2, 3, 5),
    ),
    _layer(
        "conv_transpose2d",
        "ConvTranspose2d",
        lambda: ConvTranspose2dConfig((3, 2), (3, 3)).with_stride((2, 2)).init(AD),
        (2, 3, 4, 3),
    ),
    _layer(
        "conv_transpose3d",
        "ConvTranspose3d",
        lambda: ConvTranspose3dConfig((2, 2), (2, 2, 2)).init(AD),
        (1, 2, 3, 3, 2),
    ),
    Case(
        "deform_conv2d",
        ("DeformConv2d", "DeformConv2dConfig"),
        lambda: DeformConv2dConfig((2, 3), (3, 3)).init(AD),
        # x, then offsets (2 per kernel tap) and a mask (1 per tap) for the 3x3 output of a 5x5 input.
        lambda rng: [
            rng.standard_normal((1, 2, 5, 5)).astype(np.float32),
            rng.uniform(-1.5, 1.5, (1, 18, 3, 3)).astype(np.float32),
            rng.uniform(0.2, 1.0, (1, 9, 3, 3)).astype(np.float32),
        ],
        _fwd,
    ),
    _layer("max_pool1d", "MaxPool1d", lambda: MaxPool1dConfig(3).with_stride(2).init(), (2, 3, 9)),
    _layer(
        "max_pool2d",
        "MaxPool2d",
        lambda: MaxPool2dConfig((2, 2)).with_stride((2, 2)).init(),
        (2, 3, 6, 4),
    ),
    _layer("avg_pool1d", "AvgPool1d", lambda: AvgPool1dConfig(3).init(), (2, 3, 9)),
    _layer("avg_pool2d", "AvgPool2d", lambda: AvgPool2dConfig((2, 3)).init(), (2, 3, 6, 6)),
    _layer("adaptive_avg_pool1d", "AdaptiveAvgPool1d", lambda: AdaptiveAvgPool1dConfig(4).init(), (2, 3, 10)),
    _layer(
        "adaptive_avg_pool2d",
        "AdaptiveAvgPool2d",
        lambda: AdaptiveAvgPool2dConfig((2, 3)).init(),
        (2, 3, 5, 7),
    ),
    # Normalizations divide by a standard deviation computed from the rounded input: cancellation
    # in x - mean and in the gradient's mean-subtracted terms costs a few more roundings.
    _layer("batch_norm", "BatchNorm", lambda: BatchNormConfig(3).init(AD), (4, 3, 5), k=4.0),
    _layer("layer_norm", "LayerNorm", lambda: LayerNormConfig(8).init(AD), (3, 4, 8), k=4.0),
    _layer("group_norm", "GroupNorm", lambda: GroupNormConfig(2, 4).init(AD), (3, 4, 5), k=4.0),
    _layer("instance_norm", "InstanceNorm", lambda: InstanceNormConfig(3).init(AD), (2, 3, 6), k=4.0),
    _layer("rms_norm", "RmsNorm", lambda: RmsNormConfig(8).init(AD), (3, 4, 8), k=4.0),
    _layer(
        "normalization",
        "Normalization",
        lambda: NormalizationConfig.Layer(LayerNormConfig(4)).with_num_features(6).init(AD),
        (3, 6),
        k=4.0,
    ),
    _layer(
        "embedding",
        "Embedding",
        lambda: EmbeddingConfig(10, 6).init(AD),
        lambda rng: [rng.integers(0, 10, (3, 5))],
    ),
    _layer("dropout", "Dropout", lambda: DropoutConfig(0.4).init(), (4, 16)),
    _layer("gaussian_noise", "GaussianNoise", lambda: GaussianNoiseConfig(0.5).init(), (4, 16)),
    Case(
        "multi_head_attention",
        ("MultiHeadAttention", "MultiHeadAttentionConfig", "MhaInput", "MhaOutput"),
        lambda: MultiHeadAttentionConfig(8, 2).with_dropout(0.0).init(AD),
        lambda rng: [rng.standard_normal((2, s, 8)).astype(np.float32) for s in (4, 5, 5)],
        lambda m, x: [(out := m.forward(MhaInput(*x))).context, out.weights],
        k=4.0,
        vanishing=("key.bias",),
    ),
    _layer(
        "cross_attention",
        "CrossAttention",
        lambda: CrossAttentionConfig(8, 6, 2, 1, 4).with_dropout(0.0).init(AD),
        lambda rng: [rng.standard_normal(shape).astype(np.float32) for shape in ((2, 3, 8), (2, 5, 6))],
        k=4.0,
        vanishing=("key.bias",),
    ),
    _layer(
        "position_wise_feed_forward",
        "PositionWiseFeedForward",
        lambda: PositionWiseFeedForwardConfig(8, 16).with_dropout(0.0).init(AD),
        (2, 3, 8),
        k=3.0,
    ),
    Case(
        "transformer_encoder",
        # The stack runs its layers: TransformerEncoderLayer is covered with it.
        tuple(f"TransformerEncoder{part}" for part in ("", "Config", "Input", "Layer")),
        lambda: TransformerEncoderConfig(8, 16, 2, 2).with_dropout(0.0).init(AD),
        _normal(2, 4, 8),
        lambda m, x: [m.forward(TransformerEncoderInput(x[0]))],
        k=8.0,
        vanishing=("key.bias",),
    ),
    Case(
        "transformer_decoder",
        # The stack runs its layers: TransformerDecoderLayer is covered with it.
        tuple(f"TransformerDecoder{part}" for part in ("", "Config", "Input", "Layer")),
        lambda: TransformerDecoderConfig(8, 16, 2, 1, norm_first=True).with_dropout(0.0).init(AD),
        lambda rng: [rng.standard_normal((2, s, 8)).astype(np.float32) for s in (3, 4)],
        lambda m, x: [m.forward(TransformerDecoderInput(x[0], x[1]))],
        k=8.0,
        vanishing=("key.bias",),
    ),
    Case(
        "lstm",
        ("Lstm", "LstmConfig", "LstmState", "GateController"),
        lambda: LstmConfig(3, 4, True).init(AD),
        _normal(2, 5, 3),
        lambda m, x: [(r := m.forward(x[0]))[0], r[1].cell, r[1].hidden],
        k=4.0,
    ),
    Case(
        "bilstm",
        ("BiLstm", "BiLstmConfig"),
        lambda: BiLstmConfig(3, 4, True).init(AD),
        _normal(2, 5, 3),
        lambda m, x: [(r := m.forward(x[0]))[0], r[1].cell, r[1].hidden],
        k=4.0,
    ),
    _layer("gru", "Gru", lambda: GruConfig(3, 4, True).init(AD), (2, 5, 3), k=4.0),
    _layer(
        "positional_encoding",
        "PositionalEncoding",
        lambda: PositionalEncodingConfig(8).with_max_sequence_size(10).init(AD),
        (2, 6, 8),
    ),
    _layer("rotary_encoding", "RotaryEncoding", lambda: RotaryEncodingConfig(10, 8).init(AD), (2, 6, 8)),
    _layer("prelu", "PRelu", lambda: PReluConfig(3).init(AD), (2, 3, 4)),
    Case("relu", ("Relu",), Relu, _normal(4, 8), _fwd),
    Case("gelu", ("Gelu",), Gelu, _normal(4, 8), _fwd),
    Case("sigmoid", ("Sigmoid",), Sigmoid, _normal(4, 8), _fwd),
    Case("tanh", ("Tanh",), Tanh, _normal(4, 8), _fwd),
    Case("hard_swish", ("HardSwish",), HardSwish, _normal(4, 8), _fwd),
    _layer("leaky_relu", "LeakyRelu", lambda: LeakyReluConfig(0.1).init(), (4, 8)),
    _layer("hard_sigmoid", "HardSigmoid", HardSigmoidConfig().init, (4, 8)),
    _layer("softplus", "Softplus", lambda: SoftplusConfig(2.0).init(), (4, 8)),
    _layer("swiglu", "SwiGlu", lambda: SwiGluConfig(6, 4).init(AD), (3, 6), k=3.0),
    Case("glu", ("Glu", "GLU"), lambda: Glu(1), _normal(3, 8), _fwd),
    _layer(
        "activation",
        "Activation",
        lambda: ActivationConfig.PRelu(PReluConfig(num_parameters=4)).init(AD),
        (3, 4),
    ),
    Case(
        "interpolate1d_linear",
        ("Interpolate1d", "Interpolate1dConfig", "InterpolateMode"),
        lambda: Interpolate1dConfig(7).with_mode(InterpolateMode.Linear).init(),
        _normal(2, 3, 5),
        _fwd,
    ),
    _layer(
        "interpolate2d_nearest",
        "Interpolate2d",
        lambda: Interpolate2dConfig((5, 3)).with_mode(InterpolateMode.Nearest).init(),
        (2, 3, 4, 4),
    ),
    Case(
        "interpolate2d_cubic",
        ("Interpolate2d",),
        lambda: Interpolate2dConfig((6, 5)).with_mode(InterpolateMode.Cubic).init(),
        _normal(1, 2, 4, 3),
        _fwd,
    ),
    _layer("unfold4d", "Unfold4d", Unfold4dConfig((2, 2)).init, (2, 3, 4, 4)),
    # Losses: a sum over the batch, whose rounding to the half dtype is relative to the sum itself.
    _layer(
        "cross_entropy",
        "CrossEntropyLoss",
        lambda: CrossEntropyLossConfig().with_smoothing(0.1).init(AD),
        lambda rng: [rng.standard_normal((6, 5)).astype(np.float32), rng.integers(0, 5, (6,))],
        k=3.0,
    ),
    Case(
        "cross_entropy_with_logits",
        ("cross_entropy_with_logits",),
        _none,
        lambda rng: [rng.standard_normal((6, 5)), rng.dirichlet(np.ones(5), 6)],
        lambda _, x: [cross_entropy_with_logits(x[0], x[1])],
        k=3.0,
        frozen=(1,),
    ),
    _layer(
        "binary_cross_entropy",
        "BinaryCrossEntropyLoss",
        lambda: BinaryCrossEntropyLossConfig().with_logits(True).init(AD),
        lambda rng: [rng.standard_normal((6, 3)).astype(np.float32), rng.integers(0, 2, (6, 3))],
        k=3.0,
    ),
    Case(
        "mse",
        ("MseLoss",),
        MseLoss,
        lambda rng: [rng.standard_normal((6, 3)).astype(np.float32) for _ in range(2)],
        _fwd,
        k=3.0,
    ),
    _layer(
        "huber",
        "HuberLoss",
        lambda: HuberLossConfig(0.5).init(),
        lambda rng: [rng.standard_normal((6, 3)).astype(np.float32) for _ in range(2)],
        k=3.0,
    ),
    _layer(
        "poisson_nll",
        "PoissonNllLoss",
        lambda: PoissonNllLossConfig().with_full(True).init(),
        lambda rng: [rng.standard_normal((6, 3)), rng.integers(0, 5, (6, 3)).astype(np.float64)],
        k=3.0,
        frozen=(1,),
    ),
    Case(
        "cosine_embedding",
        ("CosineEmbeddingLoss", "CosineEmbeddingLossConfig"),
        lambda: CosineEmbeddingLossConfig().with_margin(0.2).init(),
        lambda rng: [
            rng.standard_normal((6, 4)).astype(np.float32),
            rng.standard_normal((6, 4)).astype(np.float32),
            np.array([1, -1, 1, -1, 1, -1]),
        ],
        _fwd,
        k=3.0,
    ),
]


def _leaves(arrays: Arrays, dtype: DType, frozen: Sequence[int]) -> Tensors:
    """The inputs on the autodiff device, float ones in ``dtype`` and tracked unless ``frozen``."""
    out: Tensors = []
    for i, a in enumerate(arrays):
        t: Tensor[Any, Any, Any] = Tensor.from_numpy(a, AD)
        if a.dtype == np.float32:
            t = t.cast(dtype)
            if i not in frozen:
                t = t.require_grad()
        out.append(t)
    return out


def _weights(outputs: Tensors, rng: np.random.Generator) -> list[npt.NDArray[np.float32]]:
    """Multiples of 1/4 in [-1, 1]: exact in every float dtype, so both runs seed the same gradient."""
    return [(rng.integers(-4, 5, o.dims()) / 4).astype(np.float32) for o in outputs]


def _run(
    case: Case, module: Module[Any] | None, arrays: Arrays, dtype: DType, seed: int
) -> tuple[Tensors, Tensors, Any]:
    """Forward (with ferrum's generator seeded, for the random layers), ``sum(out * w)`` backward;
    returns the outputs, the input leaves and the gradients."""
    leaves = _leaves(arrays, dtype, case.frozen)
    NdArray.seed(seed)
    outputs = case.run(module, leaves)
    ws = _weights(outputs, np.random.default_rng(seed))
    total: Tensor[Any, Any, Any] | None = None
    for out, w in zip(outputs, ws, strict=True):
        term = (out * Tensor.from_numpy(w, AD).cast(dtype)).sum()
        total = term if total is None else total + term
    assert total is not None
    return outputs, leaves, total.backward()


def _close(
    name: str,
    got: Tensor[Any, Any, Any],
    want: Tensor[Any, Any, Any],
    dtype: DType,
    k: float,
    scale: float | None = None,
) -> None:
    """``got`` in ``dtype`` and within ``eps * k`` of ``want`` relative to ``want``'s largest magnitude
    (or to ``scale``, where ``want`` is itself rounding noise)."""
    assert got.dtype == dtype, f"{name}: dtype {got.dtype}, expected {dtype}"
    g, w = got.to_numpy().astype(np.float64), want.to_numpy().astype(np.float64)
    assert g.shape == w.shape, f"{name}: shape {g.shape} vs {w.shape}"
    if scale is None:
        scale = float(np.abs(w).max()) if w.size else 0.0
    err = float(np.abs(g - w).max()) if w.size else 0.0
    bound = EPS[dtype] * k * max(scale, 1e-30)
    assert err <= bound, f"{name}: max error {err:.3g} > {k} eps * scale = {bound:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_layer_in_half_precision_matches_f32(case: Case, dtype: DType) -> None:
    rng = np.random.default_rng(7)
    built = case.build()
    half = ref = None
    if isinstance(built, Module):
        base = built.map(_Perturb(rng))
        half = base.map(_Cast(dtype))
        ref = half.map(_Cast(DType.F32))
        for path, param in half.named_parameters():
            assert param.val().dtype == dtype, path
    arrays = _leaves_arrays(case, rng, dtype)
    out_h, leaves_h, grads_h = _run(case, half if half is not None else built, arrays, dtype, seed=11)
    out_r, leaves_r, grads_r = _run(case, ref if ref is not None else built, arrays, DType.F32, seed=11)
    for i, (h, r) in enumerate(zip(out_h, out_r, strict=True)):
        _close(f"output {i}", h, r, dtype, case.k)
    for i, (h, r) in enumerate(zip(leaves_h, leaves_r, strict=True)):
        if h.is_require_grad():
            gh, gr = h.grad(grads_h), r.grad(grads_r)
            assert gh is not None and gr is not None, f"input {i} got no gradient"
            _close(f"d/d input {i}", gh, gr, dtype, case.k)
    if half is not None and ref is not None:
        refs = dict(ref.named_parameters())
        for path, param in half.named_parameters():
            gh, gr = param.val().grad(grads_h), refs[path].val().grad(grads_r)
            assert (gh is None) == (gr is None), path
            if gh is not None and gr is not None:
                scale = None
                if path.endswith(case.vanishing) and case.vanishing:
                    sibling = refs[path.removesuffix("bias") + "weight"].val().grad(grads_r)
                    assert sibling is not None, path
                    scale = float(np.abs(sibling.to_numpy()).max())
                _close(f"d/d {path}", gh, gr, dtype, case.k, scale)


def _leaves_arrays(case: Case, rng: np.random.Generator, dtype: DType) -> Arrays:
    """The case's inputs with the float ones rounded to ``dtype``: both runs start from the same values."""
    arrays = case.inputs(rng)
    return [
        Tensor.from_numpy(a, AD).cast(dtype).cast(DType.F32).to_numpy() if a.dtype.kind == "f" else a
        for a in arrays
    ]


# Exported names that are not layers: data classes of the layers above, helpers and enums
# with no computation of their own, or submodules.
NOT_LAYERS = {
    "Initializer",
    "LinearLayout",
    "PaddingConfig1d",
    "PaddingConfig2d",
    "PaddingConfig3d",
    "Reduction",
    "generate_sinusoids",
    "generate_autoregressive_mask",
    "generate_padding_mask",
    "GeneratePaddingMask",
    "SeqLengthOption",
    "TensorCache",
    "MhaCache",
    "CrossAttentionCache",
    "TransformerDecoderAutoregressiveCache",
    "TransformerEncoderAutoregressiveCache",
}


def test_every_exported_layer_has_a_case() -> None:
    covered = {name for case in CASES for name in case.covers}
    modules = [fnn, fnn.attention, fnn.transformer, fnn.loss, fnn.pool, fnn.conv, fnn.interpolate, fnn.cache]
    exported = {
        name
        for m in modules
        for name in getattr(m, "__all__", ())
        if not inspect.ismodule(getattr(m, name)) and name not in NOT_LAYERS
    }
    assert exported - covered == set(), "layers without a half-precision case"
