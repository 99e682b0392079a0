"""The layers model of interop/burn/src/layers.rs, built in ferrum.

Keep in sync with the Rust program: the same layers with the same configs in
the same order. Parameters are numbered in record order from ``FIRST_SALT``
and hold the formulas of tests/support/burn_interop_model.py (``values``, ``id_of``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

import numpy as np
from ferrum import Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module
from ferrum.nn import (
    Activation,
    ActivationConfig,
    BiLstm,
    BiLstmConfig,
    Conv3d,
    Conv3dConfig,
    ConvTranspose3d,
    ConvTranspose3dConfig,
    DeformConv2d,
    DeformConv2dConfig,
    GaussianNoise,
    GaussianNoiseConfig,
    Glu,
    Gru,
    GruConfig,
    Interpolate2d,
    Interpolate2dConfig,
    LayerNormConfig,
    Lstm,
    LstmConfig,
    Normalization,
    NormalizationConfig,
    PositionalEncoding,
    PositionalEncodingConfig,
    PReluConfig,
    RotaryEncoding,
    RotaryEncodingConfig,
    Unfold4d,
    Unfold4dConfig,
)
from ferrum.nn.attention import (
    CrossAttention,
    CrossAttentionConfig,
    MultiHeadAttention,
    MultiHeadAttentionConfig,
)
from ferrum.nn.transformer import (
    PositionWiseFeedForward,
    PositionWiseFeedForwardConfig,
    TransformerDecoder,
    TransformerDecoderConfig,
    TransformerEncoder,
    TransformerEncoderConfig,
)

from tests.support.burn_interop_model import DEVICE, id_of, values

B = TypeVar("B", bound=Backend)
FIRST_SALT = 100


class Layers(Module[B]):
    """Burn's ``Layers``: every layer of issue 16 that has a record."""

    lstm: Lstm[B]
    bilstm: BiLstm[B]
    gru: Gru[B]
    gru_no_bias: Gru[B]
    mha: MultiHeadAttention[B]
    cross: CrossAttention[B]
    encoder: TransformerEncoder[B]
    decoder: TransformerDecoder[B]
    pwff: PositionWiseFeedForward[B]
    positional: PositionalEncoding[B]
    rotary: RotaryEncoding[B]
    conv3d: Conv3d[B]
    conv_transpose3d: ConvTranspose3d[B]
    deform: DeformConv2d[B]
    norm: Normalization[B]
    activation: Activation[B]
    glu: Glu
    noise: GaussianNoise
    unfold: Unfold4d
    interpolate: Interpolate2d


def fresh() -> Layers[NdArray]:
    """The model with random values and ids, as built before loading."""
    return Layers(
        LstmConfig(3, 4, True).init(DEVICE),
        BiLstmConfig(2, 3, True).init(DEVICE),
        GruConfig(3, 2, True).init(DEVICE),
        GruConfig(2, 2, False).with_reset_after(False).init(DEVICE),
        MultiHeadAttentionConfig(4, 2).init(DEVICE),
        CrossAttentionConfig(4, 6, 2, 1, 2).init(DEVICE),
        TransformerEncoderConfig(4, 6, 2, 1).init(DEVICE),
        TransformerDecoderConfig(4, 6, 2, 1).with_norm_first(True).init(DEVICE),
        PositionWiseFeedForwardConfig(4, 5).init(DEVICE),
        PositionalEncodingConfig(4).with_max_sequence_size(8).init(DEVICE),
        RotaryEncodingConfig(8, 4).init(DEVICE),
        Conv3dConfig((2, 2), (2, 1, 2)).init(DEVICE),
        ConvTranspose3dConfig((2, 2), (1, 2, 2)).with_bias(False).init(DEVICE),
        DeformConv2dConfig((2, 2), (2, 2)).init(DEVICE),
        NormalizationConfig.Layer(LayerNormConfig(3)).init(DEVICE),
        ActivationConfig.PRelu(PReluConfig(num_parameters=3)).init(DEVICE),
        Glu(1),
        GaussianNoiseConfig(0.25).init(),
        Unfold4dConfig((2, 2)).init(),
        Interpolate2dConfig((4, 4)).init(),
    )


def _params(record: Any) -> Iterator[dict[str, Any]]:
    """The ``{"id", "param"}`` leaves of a record, in record (Burn's visit) order."""
    if isinstance(record, dict):
        if set(record) == {"id", "param"}:
            yield record
            return
        for value in record.values():
            yield from _params(value)
    elif isinstance(record, (list, tuple)):
        for value in record:
            yield from _params(value)


def model() -> Layers[NdArray]:
    """The model holding the formula values and ids."""
    net = fresh()
    record = net.into_record()
    for salt, leaf in enumerate(_params(record), FIRST_SALT):
        shape = leaf["param"].dims()
        leaf["id"] = id_of(salt)
        leaf["param"] = Tensor.from_numpy(values(shape, salt).astype(np.float32), DEVICE)
    return net.load_record(record)


def check(net: Layers[Any]) -> int:
    """Assert every parameter's id, shape and values against the formulas; the parameter count."""
    expected = [tuple(leaf["param"].dims()) for leaf in _params(fresh().into_record())]
    found = list(_params(net.into_record()))
    assert [tuple(leaf["param"].dims()) for leaf in found] == expected
    for salt, leaf in enumerate(found, FIRST_SALT):
        assert int(leaf["id"]) == id_of(salt), salt
        array = leaf["param"].to_numpy()
        np.testing.assert_array_equal(array, values(array.shape, salt), err_msg=str(salt))
    return len(found)
