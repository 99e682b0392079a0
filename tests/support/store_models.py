"""The torch models of scripts/make_store_fixtures.py, built in ferrum (shared by the store tests)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from ferrum import D2, D4, Device, Tensor
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import BatchNorm, BatchNormConfig, Linear, LinearConfig, Relu
from ferrum.nn.conv import Conv2d, Conv2dConfig
from ferrum.nn.norm import LayerNorm, LayerNormConfig
from ferrum.nn.padding import PaddingConfig2d
from ferrum.nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig

B = TypeVar("B", bound=Backend)
STORE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "store"

# torch.nn.TransformerEncoderLayer's module names -> Burn's (the adapter already made
# self_attn.in_proj_* into query/key/value and out_proj into output).
ENCODER_REMAP = [
    (r"\.self_attn\.", ".mha."),
    (r"\.linear1\.", ".pwff.linear_inner."),
    (r"\.linear2\.", ".pwff.linear_outer."),
]
# torch's norm1 is the norm of the attention sub-layer; Burn's norm_first layer normalizes the
# attention's input with norm_2 and the feed-forward's with norm_1 (after the sum it is the other way).
ENCODER_NORMS = {
    False: [(r"\.norm(\d)\.", r".norm_\1.")],
    True: [(r"\.norm1\.", ".norm_2."), (r"\.norm2\.", ".norm_1.")],
}


class Cnn(Module[B]):
    """torch: features = Sequential(Conv2d, BatchNorm2d, ReLU, Conv2d(padding=1), ReLU), pool, head."""

    conv1: Conv2d[B]
    norm: BatchNorm[B]
    conv2: Conv2d[B]
    pool: AdaptiveAvgPool2d
    head: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D2]:
        x = self.relu.forward(self.norm.forward(self.conv1.forward(x)))
        x = self.pool.forward(self.relu.forward(self.conv2.forward(x)))
        return self.head.forward(x.reshape((x.dims()[0], 6 * 2 * 2)))


def cnn(device: Device[B]) -> Cnn[B]:
    return Cnn(
        conv1=Conv2dConfig((2, 4), (3, 3)).init(device),
        norm=BatchNormConfig(4).init(device),
        conv2=Conv2dConfig((4, 6), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 1)).init(device),
        pool=AdaptiveAvgPool2dConfig((2, 2)).init(),
        head=LinearConfig(6 * 2 * 2, 5).init(device),
        relu=Relu(),
    )


# torch's Sequential indices onto the ferrum fields.
CNN_REMAP = [(r"^features\.0\.", "conv1."), (r"^features\.1\.", "norm."), (r"^features\.3\.", "conv2.")]


class Mlp(Module[B]):
    """torch: layers = Sequential(Linear(6, 16), ReLU, Linear(16, 12)), LayerNorm(12), ReLU, Linear(12, 3)."""

    layers: list[Linear[B]]
    norm: LayerNorm[B]
    head: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        x = self.layers[1].forward(self.relu.forward(self.layers[0].forward(x)))
        return self.head.forward(self.relu.forward(self.norm.forward(x)))


def mlp(device: Device[B]) -> Mlp[B]:
    return Mlp(
        layers=[LinearConfig(6, 16).init(device), LinearConfig(16, 12).init(device)],
        norm=LayerNormConfig(12).init(device),
        head=LinearConfig(12, 3).init(device),
        relu=Relu(),
    )
