"""model.rs: the generator, the critic (Burn's ``Discriminator``), their config, and the ``Clip`` mapper."""

from __future__ import annotations

from typing import Any, TypeVar

from ferrum import D2, D4, Device, Float, ParamId, Tensor, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import BatchNorm, BatchNormConfig, LeakyRelu, LeakyReluConfig, Linear, LinearConfig, Tanh

B = TypeVar("B", bound=Backend)


class LayerBlock(Module[B]):
    """Linear, batch norm (epsilon 0.8, as Burn's and the PyTorch example's), leaky ReLU (slope 0.2)."""

    fc: Linear[B]
    bn: BatchNorm[B]
    leakyrelu: LeakyRelu

    @staticmethod
    def new(d_input: int, d_output: int, device: Device[B]) -> LayerBlock[B]:
        return LayerBlock(
            fc=LinearConfig(d_input, d_output).init(device),
            bn=BatchNormConfig(d_output, epsilon=0.8).init(device),
            leakyrelu=LeakyReluConfig(0.2).init(),
        )

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        """``[batch, d_input]`` to ``[batch, d_output]``."""
        return self.leakyrelu.forward(self.bn.forward(self.fc.forward(x)))


class Generator(Module[B]):
    layer1: LayerBlock[B]
    layer2: LayerBlock[B]
    layer3: LayerBlock[B]
    layer4: LayerBlock[B]
    fc: Linear[B]
    tanh: Tanh

    def forward(self, noise: Tensor[B, D2]) -> Tensor[B, D2]:
        """Noise ``[batch, latent_dim]`` to images ``[batch, channels * height * width]`` in [-1, 1]."""
        x = self.layer4.forward(self.layer3.forward(self.layer2.forward(self.layer1.forward(noise))))
        return self.tanh.forward(self.fc.forward(x))


class Discriminator(Module[B]):
    """The critic: a score per image, higher for images it takes for real (no sigmoid: a WGAN's critic)."""

    fc1: Linear[B]
    leakyrelu1: LeakyRelu
    fc2: Linear[B]
    leakyrelu2: LeakyRelu
    fc3: Linear[B]

    def forward(self, images: Tensor[B, D4]) -> Tensor[B, D2]:
        """Images ``[batch, channels, height, width]`` to scores ``[batch, 1]``."""
        x = images.flatten(1, 3)  # [batch, channels * height * width]
        x = self.leakyrelu1.forward(self.fc1.forward(x))
        x = self.leakyrelu2.forward(self.fc2.forward(x))
        return self.fc3.forward(x)


@config
class ModelConfig:
    """The sizes of the two networks (Burn's defaults; ``width`` is the first hidden layer, 128 in Burn's
    fixed layout, and the others are multiples of it, so that ``--smoke`` can train a tiny pair)."""

    latent_dim: int = 100
    image_size: int = 28
    channels: int = 1
    width: int = 128

    def init(self, device: Device[B]) -> tuple[Generator[B], Discriminator[B]]:
        """A fresh generator and critic, their parameters on ``device``."""
        w, pixels = self.width, self.channels * self.image_size * self.image_size
        generator = Generator(
            layer1=LayerBlock.new(self.latent_dim, w, device),
            layer2=LayerBlock.new(w, 2 * w, device),
            layer3=LayerBlock.new(2 * w, 4 * w, device),
            layer4=LayerBlock.new(4 * w, 8 * w, device),
            fc=LinearConfig(8 * w, pixels).init(device),
            tanh=Tanh(),
        )
        discriminator = Discriminator(
            fc1=LinearConfig(pixels, 4 * w).init(device),
            leakyrelu1=LeakyReluConfig(0.2).init(),
            fc2=LinearConfig(4 * w, 2 * w).init(device),
            leakyrelu2=LeakyReluConfig(0.2).init(),
            fc3=LinearConfig(2 * w, 1).init(device),
        )
        return generator, discriminator


class Clip:
    """A module mapper that clamps every float tensor to ``[min, max]`` (the WGAN's weight clipping).

    Use it as ``critic = critic.map(Clip(-0.01, 0.01))``; the parameters keep
    their ids and their require-grad flags, and the clamp is not recorded in
    any graph (Burn's clamps the inner tensor for the same reason).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Initializer, LinearConfig
        >>> layer = LinearConfig(2, 2).with_initializer(Initializer.Ones).init(NdArray.device())
        >>> clipped = layer.map(Clip(-0.01, 0.01)).weight.val()
        >>> round(clipped.min().into_scalar(), 6), round(clipped.max().into_scalar(), 6)
        (0.01, 0.01)
    """

    def __init__(self, min: float, max: float) -> None:
        self.min, self.max = min, max

    def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
        if tensor.device().is_autodiff:
            return Tensor.from_inner(tensor.inner().clamp(self.min, self.max))
        return tensor.clamp(self.min, self.max)
