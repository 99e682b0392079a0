"""The layers Burn 0.20 adds around convolution and sampling (ferrum.nn.conv3d,
deform_conv, interpolate, unfold, noise, Glu, PaddingConfig3d, pools with indices):
Burn's config defaults, weight layouts, records, forward against the functional ops
(themselves checked against NumPy in test_functional.py) and input errors."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import ShapeError, Tensor
from ferrum import functional as F
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import (
    GLU,
    Conv3dConfig,
    ConvTranspose3dConfig,
    DeformConv2dConfig,
    GaussianNoise,
    GaussianNoiseConfig,
    Glu,
    Interpolate1dConfig,
    Interpolate2dConfig,
    InterpolateMode,
    MaxPool1dConfig,
    MaxPool2dConfig,
    PaddingConfig3d,
    Unfold4dConfig,
)
from ferrum.record import NamedMpkFileRecorder

from tests.support.devices import AD, DEVICE


def rand(shape: tuple[int, ...], seed: int = 0) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32), DEVICE)


def test_conv3d_config_defaults_layout_and_same_padding() -> None:
    config = Conv3dConfig((4, 6), (3, 1, 3))
    assert (config.stride, config.dilation, config.groups, config.padding, config.bias) == (
        (1, 1, 1),
        (1, 1, 1),
        1,
        PaddingConfig3d.Valid,
        True,
    )
    conv = config.with_groups(2).with_padding(PaddingConfig3d.Same).init(DEVICE)
    assert conv.weight.shape() == (6, 2, 3, 1, 3) and conv.bias is not None and conv.bias.shape() == (6,)
    # Kaiming uniform with gain 1/sqrt(3) over fan_in = 2 * 9: bound 1/sqrt(fan_in).
    assert np.abs(conv.weight.val().to_numpy()).max() <= 1 / math.sqrt(18) + 1e-6
    x = rand((2, 4, 5, 4, 6))
    out = conv.forward(x)
    assert out.dims() == (2, 6, 5, 4, 6)
    ref = F.conv3d(x, conv.weight.val(), conv.bias.val(), (1, 1, 1), (1, 0, 1), (1, 1, 1), 2)
    np.testing.assert_array_equal(out.to_numpy(), ref.to_numpy())
    with pytest.raises(ShapeError, match=r"Conv3d.forward: expected \[batch, channels_in=4"):
        conv.forward(rand((2, 3, 5, 4, 6)))
    with pytest.raises(ValueError, match="kernel_size must be a triple"):
        Conv3dConfig((1, 1), (3, 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^Conv3dConfig\.channels must be a pair of ints >= 1, found \(0,"):
        Conv3dConfig((0, 2), (3, 3, 3))
    with pytest.raises(ValueError, match=r"^ConvTranspose3dConfig\.padding must be a triple of ints >= 0"):
        ConvTranspose3dConfig((2, 2), (3, 3, 3), padding=(1, -1, 0))
    assert repr(PaddingConfig3d.Explicit(1, 2, 3)) == "PaddingConfig3d.Explicit(1, 2, 3)"
    assert PaddingConfig3d.Explicit(1, 2, 3).calculate_padding_3d(4, 4, 4, (3, 3, 3), (1, 1, 1)) == (1, 2, 3)


def test_conv_transpose3d_layout_and_output_size() -> None:
    config = ConvTranspose3dConfig((4, 2), (2, 3, 2))
    assert (config.padding, config.padding_out) == ((0, 0, 0), (0, 0, 0))
    up = config.with_stride((2, 1, 2)).with_padding_out((1, 0, 0)).init(DEVICE)
    assert up.weight.shape() == (4, 2, 2, 3, 2)
    x = rand((1, 4, 3, 2, 3))
    out = up.forward(x)
    # (n - 1) * stride - 2 * padding + dilation * (k - 1) + padding_out + 1
    assert out.dims() == (1, 2, 2 * 2 + 1 + 1 + 1, 1 + 2 + 1, 2 * 2 + 1 + 1)
    assert up.bias is not None
    ref = F.conv_transpose3d(x, up.weight.val(), up.bias.val(), (2, 1, 2), (0, 0, 0), (1, 0, 0))
    np.testing.assert_array_equal(out.to_numpy(), ref.to_numpy())


def test_deform_conv2d_layer() -> None:
    config = DeformConv2dConfig((4, 2), (3, 3))
    assert (config.weight_groups, config.offset_groups, config.bias) == (1, 1, True)
    conv = config.with_offset_groups(2).init(DEVICE)
    assert conv.weight.shape() == (2, 4, 3, 3)
    x, offset, mask = rand((1, 4, 5, 5)), rand((1, 36, 3, 3), 1), rand((1, 18, 3, 3), 2)
    assert conv.bias is not None
    ref = F.deform_conv2d(x, offset, conv.weight.val(), mask, conv.bias.val(), offset_groups=2)
    np.testing.assert_array_equal(conv.forward(x, offset, mask).to_numpy(), ref.to_numpy())
    with pytest.raises(ValueError, match="offset_groups"):
        DeformConv2dConfig((3, 2), (3, 3), offset_groups=2)


def test_interpolate_layers() -> None:
    one = Interpolate1dConfig()
    assert (one.output_size, one.scale_factor, one.mode) == (None, None, InterpolateMode.Nearest)
    x = rand((2, 3, 5))
    layer = Interpolate1dConfig(scale_factor=1.5, mode=InterpolateMode.Linear).init()
    out = layer.forward(x)
    ref = F.interpolate(x.reshape((2, 3, 1, 5)), (1, 7), F.InterpolateMode.Bilinear).reshape((2, 3, 7))
    np.testing.assert_array_equal(out.to_numpy(), ref.to_numpy())
    x2 = rand((1, 2, 4, 3))
    two = Interpolate2dConfig((6, 5), mode=InterpolateMode.Cubic).init()
    ref2 = F.interpolate(x2, (6, 5), F.InterpolateMode.Bicubic)
    np.testing.assert_array_equal(two.forward(x2).to_numpy(), ref2.to_numpy())
    with pytest.raises(ValueError, match="exactly one of output_size and scale_factor"):
        Interpolate2dConfig().init()
    with pytest.raises(
        ShapeError, match=r"Interpolate2d.forward: expected \[batch, channels, height, width\]"
    ):
        two.forward(x)


def test_unfold4d_layer() -> None:
    config = Unfold4dConfig((2, 3))
    assert (config.stride, config.dilation, config.padding) == ((1, 1), (1, 1), (0, 0))
    x = rand((2, 3, 5, 6))
    layer = config.with_stride((2, 1)).with_padding((1, 1)).init()
    ref = F.unfold4d(x, (2, 3), (2, 1), (1, 1), (1, 1))
    np.testing.assert_array_equal(layer.forward(x).to_numpy(), ref.to_numpy())


def test_gaussian_noise_only_while_training() -> None:
    assert GaussianNoiseConfig(0.3).init().std == 0.3
    x = Tensor.zeros((20000,), AD)
    Autodiff[NdArray].seed(3)
    noisy = GaussianNoise(0.3).forward(x).to_numpy()
    assert abs(noisy.mean()) < 0.01 and abs(noisy.std() - 0.3) < 0.01
    plain = Tensor.ones((4,), DEVICE)
    np.testing.assert_array_equal(GaussianNoise(0.3).forward(plain).to_numpy(), np.ones(4))
    with pytest.raises(ValueError, match="std must be a finite number >= 0"):
        GaussianNoiseConfig(-1.0)


def test_glu_halves_a_dim() -> None:
    a = np.random.default_rng(0).uniform(-2, 2, (3, 4, 2)).astype(np.float32)
    got = Glu(1).forward(Tensor.from_numpy(a, DEVICE)).to_numpy()
    np.testing.assert_allclose(got, a[:, :2] / (1 + np.exp(-a[:, 2:])), rtol=1e-6)
    assert GLU is Glu


def test_max_pool_layers_with_indices() -> None:
    x = rand((2, 3, 6, 7))
    pool = MaxPool2dConfig((3, 2)).with_stride((2, 2)).init()
    out, idx = pool.forward_with_indices(x)
    np.testing.assert_array_equal(out.to_numpy(), pool.forward(x).to_numpy())
    picked = np.take_along_axis(x.to_numpy().reshape(2, 3, -1), idx.to_numpy().reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(picked.reshape(out.dims()), out.to_numpy())
    x1 = rand((2, 3, 9))
    pool1 = MaxPool1dConfig(3).init()
    out1, idx1 = pool1.forward_with_indices(x1)
    np.testing.assert_array_equal(np.take_along_axis(x1.to_numpy(), idx1.to_numpy(), 2), out1.to_numpy())


def test_parameter_free_layers_save_as_constants(tmp_path: Path) -> None:
    recorder = NamedMpkFileRecorder()
    for layer in (
        Unfold4dConfig((2, 2)).init(),
        Interpolate2dConfig((2, 2)).init(),
        GaussianNoise(0.1),
        Glu(0),
    ):
        # Burn's ConstantRecord: nil in the file.
        assert layer.into_record() is None
        layer.save_file(tmp_path / "layer", recorder)
        assert b"\xa4item\xc0" in (tmp_path / "layer.mpk").read_bytes()
