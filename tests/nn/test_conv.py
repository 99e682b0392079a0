"""Convolutions (ferrum.nn.conv and the engine's conv functions) against NumPy references.

Forward results are compared with direct NumPy implementations written here
(a sum over kernel taps of strided slices); gradients of input, weight and
bias with central finite differences (tests/support/gradcheck.py), in f64 and over
contiguous and strided inputs. Layers are checked for Burn's config
defaults, weight layouts, init bounds, padding rules, records and errors.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, ShapeError, Tensor, _ferrum
from ferrum.backend import NdArray
from ferrum.nn import Initializer, PaddingConfig1d, PaddingConfig2d
from ferrum.nn.conv import (
    Conv1d,
    Conv1dConfig,
    Conv2d,
    Conv2dConfig,
    Conv3dConfig,
    ConvTranspose1dConfig,
    ConvTranspose2dConfig,
    ConvTranspose3dConfig,
    DeformConv2dConfig,
)

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr, f64
from tests.support.gradcheck import case, check_case, smooth

Array = npt.NDArray[Any]
Pair = tuple[int, int]


def f32(a: Array, device: Any = DEVICE) -> Tensor[Any, Any, Any]:
    return Tensor.from_floats(np.asarray(a, dtype=np.float32), device)


def np_conv2d(
    x: Array,
    w: Array,
    b: Array | None,
    stride: Pair = (1, 1),
    pad: tuple[Pair, Pair] = ((0, 0), (0, 0)),
    dilation: Pair = (1, 1),
    groups: int = 1,
) -> Array:
    """Convolution as a sum over kernel taps of strided slices of the padded input."""
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), pad[0], pad[1]))
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    og = o // groups
    out = np.zeros((x.shape[0], o, oh, ow))
    for g in range(groups):
        xg, wg = xp[:, g * cg : (g + 1) * cg], w[g * og : (g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                h0, w0 = i * dilation[0], j * dilation[1]
                patch = xg[
                    :,
                    :,
                    h0 : h0 + stride[0] * (oh - 1) + 1 : stride[0],
                    w0 : w0 + stride[1] * (ow - 1) + 1 : stride[1],
                ]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, wg[:, :, i, j])
    return out if b is None else out + b[None, :, None, None]


def np_conv_transpose2d(
    x: Array,
    w: Array,
    b: Array | None,
    stride: Pair = (1, 1),
    padding: Pair = (0, 0),
    padding_out: Pair = (0, 0),
    dilation: Pair = (1, 1),
    groups: int = 1,
) -> Array:
    """Every input element scatters ``x * w`` into the output; ``padding`` is then cut from both sides."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cpg = c // groups
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + padding_out[0]
    full_w = (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + padding_out[1]
    full = np.zeros((n, og * groups, full_h, full_w))
    for g in range(groups):
        xg, wg = x[:, g * cpg : (g + 1) * cpg], w[g * cpg : (g + 1) * cpg]
        for i in range(kh):
            for j in range(kw):
                h0, w0 = i * dilation[0], j * dilation[1]
                rows = slice(h0, h0 + stride[0] * (h - 1) + 1, stride[0])
                cols = slice(w0, w0 + stride[1] * (wd - 1) + 1, stride[1])
                full[:, g * og : (g + 1) * og, rows, cols] += np.einsum("nchw,co->nohw", xg, wg[:, :, i, j])
    out = full[:, :, padding[0] : full_h - padding[0], padding[1] : full_w - padding[1]]
    return out if b is None else out + b[None, :, None, None]


# --------------------------------------------------------------------------- engine functions

CONV2D_CASES = [
    # x shape, w shape, stride, padding per side, dilation, groups
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 4, 9, 8), (6, 2, 3, 2), (2, 3), ((1, 2), (0, 1)), (2, 1), 2),
    ((3, 5, 6, 5), (2, 5, 1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    ((1, 4, 8, 8), (8, 1, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 4),
    ((2, 16, 12, 12), (8, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    # 900 deep: several depth blocks of the f32 kernels
    ((2, 100, 6, 6), (24, 100, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
]


@pytest.mark.parametrize(("xs", "ws", "stride", "pad", "dilation", "groups"), CONV2D_CASES)
def test_conv2d_matches_numpy(
    xs: tuple[int, ...],
    ws: tuple[int, ...],
    stride: Pair,
    pad: tuple[Pair, Pair],
    dilation: Pair,
    groups: int,
) -> None:
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[0])
    got = _ferrum.conv2d(f64(x), f64(w), f64(b), stride, pad, dilation, groups)
    np.testing.assert_allclose(
        arr(got), np_conv2d(x, w, b, stride, pad, dilation, groups), rtol=1e-10, atol=1e-10
    )
    # f32 agrees to f32 precision; no bias means no bias.
    got32 = _ferrum.conv2d(
        Tensor.from_floats(x, DEVICE), Tensor.from_floats(w, DEVICE), None, stride, pad, dilation, groups
    )
    assert got32.dtype == DType.F32
    np.testing.assert_allclose(
        arr(got32), np_conv2d(x, w, None, stride, pad, dilation, groups), rtol=1e-4, atol=1e-4
    )


def test_conv2d_of_a_strided_view() -> None:
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(2, 3, 6, 5)), rng.normal(size=(4, 3, 3, 3))
    view = f64(np.swapaxes(x, 2, 3)).swap_dims(2, 3)
    got = _ferrum.conv2d(view, f64(w), None, (1, 1), (1, 1))
    np.testing.assert_allclose(arr(got), np_conv2d(x, w, None, pad=((1, 1), (1, 1))), rtol=1e-10, atol=1e-10)


def test_conv1d_matches_numpy_as_height_one() -> None:
    rng = np.random.default_rng(2)
    x, w, b = rng.normal(size=(3, 4, 13)), rng.normal(size=(6, 2, 3)), rng.normal(size=6)
    got = _ferrum.conv1d(f64(x), f64(w), f64(b), 2, (2, 1), 2, 2)
    want = np_conv2d(x[:, :, None], w[:, :, None], b, (1, 2), ((0, 0), (2, 1)), (1, 2), 2)[:, :, 0]
    np.testing.assert_allclose(arr(got), want, rtol=1e-10, atol=1e-10)


TRANSPOSE_CASES = [
    # x shape, w shape, stride, padding, padding_out, dilation, groups
    ((2, 3, 4, 5), (3, 2, 3, 3), (1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((2, 4, 5, 3), (4, 3, 3, 2), (2, 3), (1, 0), (1, 2), (1, 2), 2),
    ((1, 6, 4, 4), (6, 1, 4, 3), (2, 1), (2, 1), (0, 1), (1, 2), 3),
]


@pytest.mark.parametrize(
    ("xs", "ws", "stride", "padding", "padding_out", "dilation", "groups"), TRANSPOSE_CASES
)
def test_conv_transpose2d_matches_numpy(
    xs: tuple[int, ...],
    ws: tuple[int, ...],
    stride: Pair,
    padding: Pair,
    padding_out: Pair,
    dilation: Pair,
    groups: int,
) -> None:
    rng = np.random.default_rng(3)
    x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[1] * groups)
    got = _ferrum.conv_transpose2d(f64(x), f64(w), f64(b), stride, padding, padding_out, dilation, groups)
    want = np_conv_transpose2d(x, w, b, stride, padding, padding_out, dilation, groups)
    assert got.dims() == want.shape
    np.testing.assert_allclose(arr(got), want, rtol=1e-10, atol=1e-10)


def test_conv_transpose1d_matches_numpy() -> None:
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(2, 4, 6)), rng.normal(size=(4, 3, 3))
    got = _ferrum.conv_transpose1d(f64(x), f64(w), None, 3, 1, 2, 1, 2)
    want = np_conv_transpose2d(x[:, :, None], w[:, :, None], None, (1, 3), (0, 1), (0, 2), (1, 1), 2)[:, :, 0]
    np.testing.assert_allclose(arr(got), want, rtol=1e-10, atol=1e-10)


def test_conv_transpose_is_the_adjoint_of_conv() -> None:
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for the same geometry.
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(2, 4, 9, 8)), rng.normal(size=(6, 2, 3, 3))
    y = _ferrum.conv2d(f64(x), f64(w), None, (2, 2), (1, 1), (1, 1), 2)
    r = rng.normal(size=y.dims())
    back = _ferrum.conv_transpose2d(f64(r), f64(w), None, (2, 2), (1, 1), (0, 1), (1, 1), 2)
    assert back.dims() == x.shape
    assert np.isclose(np.sum(arr(y) * r), np.sum(x * arr(back)))


# --------------------------------------------------------------------------- gradients


def _conv2d_case(stride: Pair, pad: Any, dilation: Pair, groups: int) -> Any:
    def f(x: Any, w: Any, b: Any) -> Any:
        return _ferrum.conv2d(x, w, b, stride, pad, dilation, groups)

    return f


GRAD_CASES = [
    case(
        "conv2d_strided_dilated_grouped",
        _conv2d_case((2, 1), ((1, 0), (2, 1)), (1, 2), 2),
        smooth((2, 4, 5, 6)),
        smooth((4, 2, 2, 3), seed="w"),
        smooth((4,), seed="b"),
    ),
    case(
        "conv2d_pointwise",
        _conv2d_case((1, 1), (0, 0), (1, 1), 1),
        smooth((2, 3, 3, 4)),
        smooth((2, 3, 1, 1), seed="w"),
        smooth((2,), seed="b"),
    ),
    case(
        "conv1d",
        lambda x, w, b: _ferrum.conv1d(x, w, b, 2, (1, 2), 2),
        smooth((2, 3, 7)),
        smooth((2, 3, 3), seed="w"),
        smooth((2,), seed="b"),
    ),
    case(
        "conv_transpose2d",
        lambda x, w, b: _ferrum.conv_transpose2d(x, w, b, (2, 1), (1, 0), (1, 0), (1, 2), 2),
        smooth((2, 4, 3, 4)),
        smooth((4, 3, 3, 2), seed="w"),
        smooth((6,), seed="b"),
    ),
    case(
        "conv_transpose1d",
        lambda x, w: _ferrum.conv_transpose1d(x, w, None, 2, 1, 1),
        smooth((2, 3, 4)),
        smooth((3, 2, 3), seed="w"),
    ),
]


@pytest.mark.parametrize("c", GRAD_CASES, ids=lambda c: c.name)
def test_gradients_match_finite_differences(c: Any) -> None:
    check_case(c)


# --------------------------------------------------------------------------- layers


def test_conv2d_config_has_burns_defaults_and_layout() -> None:
    config = Conv2dConfig((3, 8), (3, 5))
    assert (config.stride, config.dilation, config.groups, config.bias) == ((1, 1), (1, 1), 1, True)
    assert config.padding == PaddingConfig2d.Valid
    assert config.initializer == Initializer.KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)
    layer = config.with_groups(1).init(DEVICE)
    assert layer.weight.shape() == (8, 3, 3, 5)
    assert layer.bias is not None and layer.bias.shape() == (8,)
    assert layer.num_params() == 8 * 3 * 15 + 8
    grouped = Conv2dConfig((4, 6), (3, 3)).with_groups(2).with_bias(False).init(DEVICE)
    assert grouped.weight.shape() == (6, 2, 3, 3) and grouped.bias is None


def test_kaiming_uniform_bounds_use_the_fan_in_per_group() -> None:
    NdArray.seed(3)
    layer = Conv2dConfig((8, 16), (3, 3)).with_groups(2).init(DEVICE)
    bound = 1.0 / math.sqrt(4 * 9)  # sqrt(3) * gain / sqrt(fan_in), gain = 1/sqrt(3)
    w = arr(layer.weight.val())
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert layer.bias is not None and np.abs(arr(layer.bias.val())).max() <= bound


# Each config with its weight shape and the fan its weight and bias are drawn over, by hand: a convolution's
# fan-out is channels_out / groups * kernel, a transposed one's channels_in / groups * kernel. Kaiming
# uniform with gain 1 over that fan draws within sqrt(3 / fan).
FAN_OUT_ONLY = Initializer.KaimingUniform(gain=1.0, fan_out_only=True)
Shape = tuple[int, ...]
CONV_FANS = [
    pytest.param(Conv1dConfig(8, 12, 5).with_groups(2), (12, 4, 5), 6 * 5, id="conv1d"),
    pytest.param(Conv2dConfig((8, 12), (3, 3)).with_groups(2), (12, 4, 3, 3), 6 * 9, id="conv2d"),
    pytest.param(Conv3dConfig((4, 12), (2, 2, 2)).with_groups(2), (12, 2, 2, 2, 2), 6 * 8, id="conv3d"),
    pytest.param(ConvTranspose1dConfig((8, 12), 5).with_groups(2), (8, 6, 5), 4 * 5, id="transpose1d"),
    pytest.param(ConvTranspose2dConfig((8, 12), (3, 3)).with_groups(2), (8, 6, 3, 3), 36, id="transpose2d"),
    pytest.param(
        DeformConv2dConfig((8, 12), (3, 3)).with_weight_groups(2), (12, 4, 3, 3), 6 * 9, id="deform2d"
    ),
]


@pytest.mark.parametrize(("config", "shape", "fan"), CONV_FANS)
def test_every_convolution_draws_over_its_fan_out_per_group(config: Any, shape: Shape, fan: int) -> None:
    NdArray.seed(5)
    layer = config.with_initializer(FAN_OUT_ONLY).init(DEVICE)
    bound = math.sqrt(3.0 / fan)
    w = arr(layer.weight.val())
    assert w.shape == shape and np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    # Every config here has 12 output channels.
    assert layer.bias is not None and layer.bias.shape() == (12,)
    assert np.abs(arr(layer.bias.val())).max() <= bound


def test_conv_transpose3d_draws_over_the_fan_in_alone_as_burn() -> None:
    NdArray.seed(5)
    config = ConvTranspose3dConfig((4, 6), (2, 2, 2)).with_groups(2)
    layer = config.with_initializer(Initializer.KaimingUniform(gain=1.0, fan_out_only=False)).init(DEVICE)
    w = arr(layer.weight.val())
    bound = math.sqrt(3.0 / (3 * 8))  # fan_in: channels_out / groups * kernel
    assert w.shape == (4, 3, 2, 2, 2) and np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    with pytest.raises(ValueError, match="needs fan_out"):
        config.with_initializer(FAN_OUT_ONLY).init(DEVICE)


@pytest.mark.parametrize(
    ("padding", "stride", "want_hw"),
    [
        (PaddingConfig2d.Valid, (1, 1), (26, 24)),
        (PaddingConfig2d.Same, (1, 1), (28, 28)),
        (PaddingConfig2d.Explicit(2, 0), (1, 1), (30, 24)),
        (PaddingConfig2d.Explicit(1, 2), (2, 3), (14, 10)),
    ],
)
def test_conv2d_layer_matches_numpy(padding: PaddingConfig2d, stride: Pair, want_hw: Pair) -> None:
    NdArray.seed(7)
    layer = Conv2dConfig((2, 3), (3, 5)).with_padding(padding).with_stride(stride).init(DEVICE)
    x = np.random.default_rng(6).normal(size=(2, 2, 28, 28)).astype(np.float32)
    out = layer.forward(Tensor.from_floats(x, DEVICE))
    assert out.dims()[2:] == want_hw
    ph, pw = padding.calculate_padding_2d(28, 28, (3, 5), stride)
    assert layer.bias is not None
    want = np_conv2d(
        x.astype(np.float64), arr(layer.weight.val()), arr(layer.bias.val()), stride, ((ph, ph), (pw, pw))
    )
    np.testing.assert_allclose(arr(out), want, rtol=1e-4, atol=1e-4)


def test_conv1d_layer_with_groups_dilation_and_same_padding() -> None:
    config = Conv1dConfig(4, 6, 3).with_groups(2).with_dilation(2).with_padding(PaddingConfig1d.Same)
    layer = config.init(DEVICE)
    assert layer.weight.shape() == (6, 2, 3)
    x = np.random.default_rng(8).normal(size=(2, 4, 10))
    out = layer.forward(f32(x))
    pad = PaddingConfig1d.Same.calculate_padding_1d(10, 3, 1)
    assert layer.bias is not None
    w, b = arr(layer.weight.val()), arr(layer.bias.val())
    want = np_conv2d(x[:, :, None], w[:, :, None], b, (1, 1), ((0, 0), (pad, pad)), (1, 2), 2)[:, :, 0]
    np.testing.assert_allclose(arr(out), want, rtol=1e-4, atol=1e-4)


def test_conv_transpose_layers_match_numpy() -> None:
    layer = (
        ConvTranspose2dConfig((4, 6), (3, 3))
        .with_stride((2, 2))
        .with_padding((1, 1))
        .with_padding_out((1, 1))
        .with_groups(2)
        .init(DEVICE)
    )
    assert layer.weight.shape() == (4, 3, 3, 3)
    x = np.random.default_rng(9).normal(size=(2, 4, 5, 5)).astype(np.float32)
    out = layer.forward(Tensor.from_floats(x, DEVICE))
    assert out.dims() == (2, 6, 10, 10)
    assert layer.bias is not None
    want = np_conv_transpose2d(
        x.astype(np.float64),
        arr(layer.weight.val()),
        arr(layer.bias.val()),
        (2, 2),
        (1, 1),
        (1, 1),
        (1, 1),
        2,
    )
    np.testing.assert_allclose(arr(out), want, rtol=1e-4, atol=1e-4)
    layer1 = ConvTranspose1dConfig((2, 3), 4).with_stride(2).with_bias(False).init(DEVICE)
    assert layer1.weight.shape() == (2, 3, 4) and layer1.bias is None
    x1 = np.random.default_rng(10).normal(size=(1, 2, 5)).astype(np.float32)
    out1 = layer1.forward(Tensor.from_floats(x1, DEVICE))
    want1 = np_conv_transpose2d(
        x1[:, :, None].astype(np.float64), arr(layer1.weight.val())[:, :, None], None, (1, 2)
    )[:, :, 0]
    np.testing.assert_allclose(arr(out1), want1, rtol=1e-4, atol=1e-4)


def test_training_gradients_reach_the_parameters() -> None:
    NdArray.seed(11)
    layer = Conv2dConfig((2, 3), (3, 3)).with_padding(PaddingConfig2d.Same).init(AD)
    rng = np.random.default_rng(12)
    x, c = rng.normal(size=(2, 2, 5, 5)), rng.normal(size=(2, 3, 5, 5))
    loss = (layer.forward(f32(x, AD)) * f32(c, AD)).sum()
    grads = loss.backward()
    assert layer.bias is not None
    gw, gb = layer.weight.val().grad(grads), layer.bias.val().grad(grads)
    assert gw is not None and gb is not None
    # d loss / d w[o, i, p, q] = sum over n, h, w of c[n, o] * x_padded[n, i, h + p, w + q].
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want_w = np.stack(
        [
            np.stack([np.einsum("nohw,nihw->oi", c, xp[:, :, p : p + 5, q : q + 5]) for q in range(3)], -1)
            for p in range(3)
        ],
        -2,
    )
    np.testing.assert_allclose(arr(gw), want_w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arr(gb), c.sum(axis=(0, 2, 3)), rtol=1e-4, atol=1e-4)
    # valid() runs the same layer on the inner backend, without tracking.
    plain = layer.valid().forward(f32(x))
    np.testing.assert_allclose(arr(plain), arr(layer.forward(f32(x, AD)).inner()), rtol=1e-6)


def test_records_hold_only_the_parameters_and_round_trip(tmp_path: Path) -> None:
    layer = Conv2dConfig((1, 2), (3, 3)).with_padding(PaddingConfig2d.Same).init(DEVICE)
    record = layer.into_record()
    # Burn's Conv2d record: the parameters, then its constants as nil ([usize; 2] as two nils).
    assert list(record) == ["weight", "bias", "stride", "kernel_size", "dilation", "groups", "padding"]
    assert record["stride"] == record["kernel_size"] == record["dilation"] == (None, None)
    assert record["groups"] is None and record["padding"] is None
    fresh = Conv2dConfig((1, 2), (3, 3)).with_padding(PaddingConfig2d.Same).init(DEVICE).load_record(record)
    x = Tensor.ones((1, 1, 4, 4), DEVICE)
    np.testing.assert_array_equal(arr(fresh.forward(x)), arr(layer.forward(x)))
    wrong = Conv2dConfig((1, 2), (5, 5)).init(DEVICE)
    with pytest.raises(ValueError, match="weight"):
        wrong.load_record(record)
    path = tmp_path / "conv.json"
    config = Conv2dConfig((3, 4), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 2)).with_groups(1)
    config.save(path)
    assert Conv2dConfig.load(path) == config


def test_repr_shows_the_settings_and_param_count() -> None:
    layer = Conv2dConfig((1, 8), (3, 3)).with_padding(PaddingConfig2d.Same).init(DEVICE)
    assert repr(layer) == (
        "Conv2d {ch_in: 1, ch_out: 8, stride: [1, 1], kernel_size: [3, 3], dilation: [1, 1],"
        " groups: 1, padding: Same, params: 80}"
    )
    assert "padding: Explicit(2)" in repr(
        Conv1dConfig(2, 2, 3).with_padding(PaddingConfig1d.Explicit(2)).init(DEVICE)
    )


def test_bad_configs_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"Conv2dConfig.groups \(3\) must divide both channels_in \(4\)"):
        Conv2dConfig((4, 6), (3, 3)).with_groups(3)
    with pytest.raises(ValueError, match="Same padding with an even kernel size"):
        Conv2dConfig((1, 1), (2, 2)).with_padding(PaddingConfig2d.Same)
    with pytest.raises(ValueError, match=r"Conv2dConfig.stride must be a pair of ints >= 1, found \(0, 1\)"):
        Conv2dConfig((1, 1), (3, 3), stride=(0, 1))
    with pytest.raises(ValueError, match=r"Conv1dConfig\.kernel_size must be an int >= 1"):
        Conv1dConfig(1, 1, 0)
    with pytest.raises(ValueError, match=r"ConvTranspose2dConfig\.padding_out must be a pair of ints >= 0"):
        ConvTranspose2dConfig((1, 1), (3, 3), padding_out=(-1, 0))


def test_bad_inputs_raise_shape_errors_naming_the_op() -> None:
    layer: Conv2d[NdArray] = Conv2dConfig((3, 4), (3, 3)).init(DEVICE)
    with pytest.raises(ShapeError, match=r"conv2d: .*the input has 2"):
        layer.forward(Tensor.ones((1, 2, 5, 5), DEVICE))
    with pytest.raises(ShapeError, match=r"conv2d: .*smaller than the kernel"):
        layer.forward(Tensor.ones((1, 3, 2, 5), DEVICE))
    conv1: Conv1d[NdArray] = Conv1dConfig(1, 1, 3).init(DEVICE)
    with pytest.raises(ShapeError, match="conv1d: expected a tensor of rank 3, found rank 2"):
        conv1.forward(Tensor.ones((1, 5), DEVICE))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- fused convolution

FUSED_CASES = [
    # x shape, w shape, stride, padding per side, dilation, groups: the implicit-GEMM kernel's geometries
    # (a batch that feeds the threads, one image split by columns or by output channels, strided,
    # dilated, grouped, pointwise, 1008 deep: four depth blocks) and one it leaves to the other kernels
    # (4 output channels).
    ((3, 16, 9, 11), (32, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((1, 32, 28, 28), (48, 32, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((1, 64, 7, 7), (160, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 24, 15, 13), (40, 24, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 16, 12, 12), (32, 8, 3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 2),
    ((1, 3, 30, 30), (64, 3, 7, 7), (2, 2), ((3, 3), (3, 3)), (1, 1), 1),
    ((2, 64, 14, 14), (128, 64, 1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    ((2, 64, 14, 14), (32, 64, 1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1), 1),
    ((1, 112, 6, 6), (32, 112, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 5, 8, 8), (4, 5, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
]


@pytest.mark.parametrize(("xs", "ws", "stride", "pad", "dilation", "groups"), FUSED_CASES)
@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
def test_conv2d_fused_matches_numpy(
    xs: tuple[int, ...],
    ws: tuple[int, ...],
    stride: Pair,
    pad: tuple[Pair, Pair],
    dilation: Pair,
    groups: int,
    dtype: DType,
) -> None:
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=xs), rng.normal(size=ws)
    scale, shift = rng.normal(size=ws[0]), rng.normal(size=ws[0])
    conv = np_conv2d(x, w, None, stride, pad, dilation, groups)
    residual = rng.normal(size=conv.shape)

    def t(a: Array) -> Tensor[Any, Any, Any]:
        return Tensor.from_numpy(np.ascontiguousarray(a), DEVICE, dtype=dtype)

    tol = 1e-4 if dtype == DType.F32 else 1e-10
    per = (None, slice(None), None, None)
    tails: list[tuple[dict[str, Any], Array]] = [
        ({}, conv),
        ({"shift": t(shift)}, conv + shift[per]),
        ({"scale": t(scale), "shift": t(shift), "relu": True}, np.maximum(conv * scale[per] + shift[per], 0)),
        (
            {"scale": t(scale), "shift": t(shift), "residual": t(residual), "relu": True},
            np.maximum(conv * scale[per] + shift[per] + residual, 0),
        ),
        ({"residual": t(residual)}, conv + residual),
    ]
    for kwargs, want in tails:
        got = _ferrum.conv2d_fused(t(x), t(w), stride, pad, dilation, groups, **kwargs)
        assert got.dtype == dtype
        np.testing.assert_allclose(arr(got), want, rtol=tol, atol=tol)


def test_conv2d_fused_keeps_nan_through_relu_and_reuses_its_packed_weights() -> None:
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(1, 16, 6, 6)), rng.normal(size=(32, 16, 3, 3))
    x[0, :, 2, 3] = np.nan
    want = np.maximum(np_conv2d(x, w, None, (1, 1), ((1, 1), (1, 1))), 0)
    weight = f32(w)
    # The same weights twice (the second call reads their kept packing), then new values at the same
    # shape (packed afresh): each result matches its own weights.
    for _ in range(2):
        got = arr(_ferrum.conv2d_fused(f32(x), weight, padding=(1, 1), relu=True))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    got = arr(_ferrum.conv2d_fused(f32(x), f32(-w), padding=(1, 1), relu=True))
    np.testing.assert_allclose(
        got, np.maximum(-np_conv2d(x, w, None, (1, 1), ((1, 1), (1, 1))), 0), atol=1e-4
    )


def test_conv2d_fused_names_bad_tails() -> None:
    x, w = Tensor.ones((1, 2, 4, 4), DEVICE), Tensor.ones((3, 2, 3, 3), DEVICE)
    with pytest.raises(ShapeError, match="scale needs one value per output channel"):
        _ferrum.conv2d_fused(x, w, scale=Tensor.ones((2,), DEVICE))
    with pytest.raises(ShapeError, match="shift needs one value per output channel"):
        _ferrum.conv2d_fused(x, w, shift=Tensor.ones((3, 1), DEVICE))  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="residual must have the convolution's output shape"):
        _ferrum.conv2d_fused(x, w, residual=Tensor.ones((1, 3, 4, 4), DEVICE))
    with pytest.raises(TypeError, match="dtype"):
        _ferrum.conv2d_fused(x, w, shift=Tensor.ones((3,), DEVICE).cast(DType.F64))


def _fused_case(x: Any, w: Any, scale: Any, shift: Any, residual: Any) -> Any:
    return _ferrum.conv2d_fused(
        x, w, (2, 1), ((1, 0), (1, 1)), scale=scale, shift=shift, residual=residual, relu=True
    )


@pytest.mark.parametrize(
    "c",
    [
        case(
            "conv2d_fused",
            _fused_case,
            smooth((2, 3, 5, 6)),
            smooth((4, 3, 3, 2), seed="w"),
            smooth((4,), seed="scale"),
            smooth((4,), 0.5, 1.5, seed="shift"),
            smooth((2, 4, 2, 7), seed="residual"),
        )
    ],
    ids=lambda c: c.name,
)
def test_conv2d_fused_gradients_match_finite_differences(c: Any) -> None:
    check_case(c)
