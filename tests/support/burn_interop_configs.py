"""The configs interop/burn/src/configs.rs writes, built with ferrum: keep the two in sync.

Each entry is (file stem, config): Burn writes ``configs/<stem>.json`` with
``Config::save``; ferrum must load it to an equal config, and write a file that
Burn's ``Config::load`` reads back to the same values.
"""

from __future__ import annotations

from typing import Any

from ferrum.lr_scheduler import (
    ComposedLrSchedulerConfig,
    CosineAnnealingLrSchedulerConfig,
    ExponentialLrSchedulerConfig,
    LinearLrSchedulerConfig,
    NoamLrSchedulerConfig,
    SchedulerReduction,
    StepLrSchedulerConfig,
)
from ferrum.nn import (
    BatchNormConfig,
    DropoutConfig,
    EmbeddingConfig,
    GroupNormConfig,
    Initializer,
    InstanceNormConfig,
    LayerNormConfig,
    LinearConfig,
    LinearLayout,
    PaddingConfig1d,
    PaddingConfig2d,
    RmsNormConfig,
)
from ferrum.nn.activation import (
    HardSigmoidConfig,
    LeakyReluConfig,
    PReluConfig,
    SoftplusConfig,
    SwiGluConfig,
)
from ferrum.nn.conv import Conv1dConfig, Conv2dConfig, ConvTranspose1dConfig, ConvTranspose2dConfig
from ferrum.nn.loss import BinaryCrossEntropyLossConfig, CrossEntropyLossConfig, HuberLossConfig
from ferrum.nn.pool import (
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    MaxPool1dConfig,
    MaxPool2dConfig,
)
from ferrum.optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClippingConfig,
    MomentumConfig,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
)

CONFIGS: list[tuple[str, Any]] = [
    (
        "LinearConfig",
        LinearConfig(3, 4)
        .with_bias(False)
        .with_initializer(Initializer.Normal(0.5, 0.25))
        .with_layout(LinearLayout.Col),
    ),
    ("EmbeddingConfig", EmbeddingConfig(10, 4).with_initializer(Initializer.Uniform(-0.5, 0.5))),
    ("DropoutConfig", DropoutConfig(0.25)),
    (
        "Conv1dConfig",
        Conv1dConfig(2, 3, 5)
        .with_stride(2)
        .with_dilation(2)
        .with_padding(PaddingConfig1d.Explicit(2))
        .with_bias(False)
        .with_initializer(Initializer.XavierUniform(2.0)),
    ),
    (
        "Conv2dConfig",
        Conv2dConfig((2, 4), (3, 3))
        .with_stride((2, 1))
        .with_dilation((1, 2))
        .with_groups(2)
        .with_padding(PaddingConfig2d.Explicit(1, 2))
        .with_initializer(Initializer.KaimingNormal(1.5, True)),
    ),
    ("Conv2dConfig_same", Conv2dConfig((1, 1), (3, 3)).with_padding(PaddingConfig2d.Same)),
    (
        "ConvTranspose1dConfig",
        ConvTranspose1dConfig((2, 4), 3)
        .with_stride(2)
        .with_padding(1)
        .with_padding_out(1)
        .with_initializer(Initializer.Constant(0.5)),
    ),
    (
        "ConvTranspose2dConfig",
        ConvTranspose2dConfig((2, 4), (3, 3))
        .with_stride((2, 2))
        .with_padding((1, 0))
        .with_padding_out((1, 1))
        .with_groups(2)
        .with_initializer(Initializer.Zeros),
    ),
    (
        "MaxPool1dConfig",
        MaxPool1dConfig(3)
        .with_stride(2)
        .with_padding(PaddingConfig1d.Same)
        .with_dilation(2)
        .with_ceil_mode(True),
    ),
    (
        "MaxPool2dConfig",
        MaxPool2dConfig((3, 3))
        .with_stride((2, 1))
        .with_padding(PaddingConfig2d.Explicit(1, 1))
        .with_dilation((1, 2))
        .with_ceil_mode(True),
    ),
    (
        "AvgPool1dConfig",
        AvgPool1dConfig(3)
        .with_stride(1)
        .with_padding(PaddingConfig1d.Explicit(1))
        .with_count_include_pad(False)
        .with_ceil_mode(True),
    ),
    (
        "AvgPool2dConfig",
        AvgPool2dConfig((3, 3))
        .with_stride((1, 1))
        .with_padding(PaddingConfig2d.Same)
        .with_count_include_pad(False),
    ),
    ("AdaptiveAvgPool1dConfig", AdaptiveAvgPool1dConfig(4)),
    ("AdaptiveAvgPool2dConfig", AdaptiveAvgPool2dConfig((4, 2))),
    ("BatchNormConfig", BatchNormConfig(5).with_epsilon(1e-3).with_momentum(0.2)),
    ("LayerNormConfig", LayerNormConfig(6).with_epsilon(1e-6).with_bias(False)),
    ("GroupNormConfig", GroupNormConfig(2, 6).with_epsilon(1e-4).with_affine(False)),
    ("InstanceNormConfig", InstanceNormConfig(3).with_epsilon(1e-4).with_affine(False)),
    ("RmsNormConfig", RmsNormConfig(8).with_epsilon(1e-6)),
    ("LeakyReluConfig", LeakyReluConfig().with_negative_slope(0.2)),
    ("PReluConfig", PReluConfig().with_num_parameters(3).with_alpha(0.1)),
    ("HardSigmoidConfig", HardSigmoidConfig().with_alpha(0.25).with_beta(0.4)),
    ("SoftplusConfig", SoftplusConfig().with_beta(2.0)),
    (
        "SwiGluConfig",
        SwiGluConfig(3, 5)
        .with_bias(True)
        .with_initializer(Initializer.Orthogonal(1.0))
        .with_layout(LinearLayout.Col),
    ),
    (
        "CrossEntropyLossConfig",
        CrossEntropyLossConfig()
        .with_pad_tokens((0, 3))
        .with_weights((1.0, 2.0, 0.5))
        .with_smoothing(0.1)
        .with_logits(False),
    ),
    (
        "BinaryCrossEntropyLossConfig",
        BinaryCrossEntropyLossConfig().with_weights((0.5, 1.5)).with_smoothing(0.05).with_logits(True),
    ),
    ("HuberLossConfig", HuberLossConfig(0.5)),
    (
        "AdamConfig",
        AdamConfig()
        .with_beta_1(0.8)
        .with_beta_2(0.99)
        .with_epsilon(1e-6)
        .with_weight_decay(WeightDecayConfig(0.01))
        .with_grad_clipping(GradientClippingConfig.Norm(1.0)),
    ),
    (
        "AdamWConfig",
        AdamWConfig()
        .with_weight_decay(0.05)
        .with_cautious_weight_decay(True)
        .with_grad_clipping(GradientClippingConfig.Value(0.5)),
    ),
    (
        "AdaGradConfig",
        AdaGradConfig().with_lr_decay(0.01).with_epsilon(1e-6).with_weight_decay(WeightDecayConfig(0.001)),
    ),
    (
        "SgdConfig",
        SgdConfig()
        .with_weight_decay(WeightDecayConfig(1e-4))
        .with_momentum(MomentumConfig().with_momentum(0.8).with_dampening(0.0).with_nesterov(True))
        .with_gradient_clipping(GradientClippingConfig.Value(1.0)),
    ),
    (
        "RmsPropConfig",
        RmsPropConfig()
        .with_alpha(0.9)
        .with_momentum(0.5)
        .with_epsilon(1e-6)
        .with_centered(True)
        .with_weight_decay(WeightDecayConfig(0.01)),
    ),
    ("WeightDecayConfig", WeightDecayConfig(0.5)),
    ("MomentumConfig", MomentumConfig().with_momentum(0.5).with_dampening(0.25)),
    ("GradientClippingConfig", GradientClippingConfig.Value(0.25)),
    ("StepLrSchedulerConfig", StepLrSchedulerConfig(0.1, 10).with_gamma(0.5)),
    ("ExponentialLrSchedulerConfig", ExponentialLrSchedulerConfig(0.1, 0.9)),
    ("LinearLrSchedulerConfig", LinearLrSchedulerConfig(0.1, 0.01, 100)),
    ("NoamLrSchedulerConfig", NoamLrSchedulerConfig(0.5).with_warmup_steps(100).with_model_size(64)),
    ("CosineAnnealingLrSchedulerConfig", CosineAnnealingLrSchedulerConfig(0.1, 50).with_min_lr(0.001)),
    (
        "ComposedLrSchedulerConfig",
        ComposedLrSchedulerConfig()
        .linear(LinearLrSchedulerConfig(1.0, 0.5, 10))
        .cosine(CosineAnnealingLrSchedulerConfig(1.0, 20))
        .exponential(ExponentialLrSchedulerConfig(1.0, 0.95))
        .noam(NoamLrSchedulerConfig(2.0))
        .with_reduction(SchedulerReduction.Avg),
    ),
    ("Initializer_Ones", Initializer.Ones),
    ("Initializer_KaimingUniform", Initializer.KaimingUniform(0.5, True)),
    ("PaddingConfig1d_Explicit", PaddingConfig1d.Explicit(4)),
    ("PaddingConfig2d_Valid", PaddingConfig2d.Valid),
]
