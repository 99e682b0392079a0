//! Burn's config files: one JSON file per config class ferrum has, each with
//! values away from the defaults wherever a field allows one (enums in every
//! form serde writes: unit, newtype, tuple and struct variants).
//!
//! `save` writes `configs/<Name>.json` with Burn's `Config::save`; `load`
//! reads ferrum's files of the same names with Burn's `Config::load` and
//! compares them, as JSON values, with the configs built here. The same
//! values are written in ferrum's tests (tests/support/burn_interop_configs.py):
//! keep them in sync.

use std::path::Path;

use burn::config::Config;
use burn::grad_clipping::GradientClippingConfig;
use burn::lr_scheduler::composed::{ComposedLrSchedulerConfig, SchedulerReduction};
use burn::lr_scheduler::cosine::CosineAnnealingLrSchedulerConfig;
use burn::lr_scheduler::exponential::ExponentialLrSchedulerConfig;
use burn::lr_scheduler::linear::LinearLrSchedulerConfig;
use burn::lr_scheduler::noam::NoamLrSchedulerConfig;
use burn::lr_scheduler::step::StepLrSchedulerConfig;
use burn::nn::conv::{Conv1dConfig, Conv2dConfig, ConvTranspose1dConfig, ConvTranspose2dConfig};
use burn::nn::loss::{BinaryCrossEntropyLossConfig, CrossEntropyLossConfig, HuberLossConfig};
use burn::nn::pool::{
    AdaptiveAvgPool1dConfig, AdaptiveAvgPool2dConfig, AvgPool1dConfig, AvgPool2dConfig, MaxPool1dConfig, MaxPool2dConfig,
};
use burn::nn::{
    BatchNormConfig, DropoutConfig, EmbeddingConfig, GroupNormConfig, HardSigmoidConfig, Initializer, InstanceNormConfig,
    LayerNormConfig, LeakyReluConfig, LinearConfig, LinearLayout, PReluConfig, PaddingConfig1d, PaddingConfig2d,
    RmsNormConfig, SoftplusConfig, SwiGluConfig,
};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdaGradConfig, AdamConfig, AdamWConfig, RmsPropConfig, SgdConfig};

/// Save (`save` true) or load-and-compare one config file.
type Case = fn(&Path, bool) -> Result<(), String>;

macro_rules! case {
    ($name:literal, $ty:ty, $value:expr) => {
        ($name, {
            fn run(path: &Path, save: bool) -> Result<(), String> {
                let value: $ty = $value;
                if save {
                    return value.save(path).map_err(|e| e.to_string());
                }
                let loaded = <$ty>::load(path).map_err(|e| format!("cannot load: {e}"))?;
                let (got, want) = (serde_json::to_value(&loaded).unwrap(), serde_json::to_value(&value).unwrap());
                if got == want { Ok(()) } else { Err(format!("loaded {got}, expected {want}")) }
            }
            run as Case
        })
    };
}

/// (file stem, case) for every config.
pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        case!("LinearConfig", LinearConfig, LinearConfig::new(3, 4)
            .with_bias(false)
            .with_initializer(Initializer::Normal { mean: 0.5, std: 0.25 })
            .with_layout(LinearLayout::Col)),
        case!("EmbeddingConfig", EmbeddingConfig, EmbeddingConfig::new(10, 4).with_initializer(Initializer::Uniform { min: -0.5, max: 0.5 })),
        case!("DropoutConfig", DropoutConfig, DropoutConfig::new(0.25)),
        case!("Conv1dConfig", Conv1dConfig, Conv1dConfig::new(2, 3, 5)
            .with_stride(2)
            .with_dilation(2)
            .with_padding(PaddingConfig1d::Explicit(2))
            .with_bias(false)
            .with_initializer(Initializer::XavierUniform { gain: 2.0 })),
        case!("Conv2dConfig", Conv2dConfig, Conv2dConfig::new([2, 4], [3, 3])
            .with_stride([2, 1])
            .with_dilation([1, 2])
            .with_groups(2)
            .with_padding(PaddingConfig2d::Explicit(1, 2))
            .with_initializer(Initializer::KaimingNormal { gain: 1.5, fan_out_only: true })),
        case!("Conv2dConfig_same", Conv2dConfig, Conv2dConfig::new([1, 1], [3, 3]).with_padding(PaddingConfig2d::Same)),
        case!("ConvTranspose1dConfig", ConvTranspose1dConfig, ConvTranspose1dConfig::new([2, 4], 3)
            .with_stride(2)
            .with_padding(1)
            .with_padding_out(1)
            .with_initializer(Initializer::Constant { value: 0.5 })),
        case!("ConvTranspose2dConfig", ConvTranspose2dConfig, ConvTranspose2dConfig::new([2, 4], [3, 3])
            .with_stride([2, 2])
            .with_padding([1, 0])
            .with_padding_out([1, 1])
            .with_groups(2)
            .with_initializer(Initializer::Zeros)),
        case!("MaxPool1dConfig", MaxPool1dConfig, MaxPool1dConfig::new(3)
            .with_stride(2)
            .with_padding(PaddingConfig1d::Same)
            .with_dilation(2)
            .with_ceil_mode(true)),
        case!("MaxPool2dConfig", MaxPool2dConfig, MaxPool2dConfig::new([3, 3])
            .with_strides([2, 1])
            .with_padding(PaddingConfig2d::Explicit(1, 1))
            .with_dilation([1, 2])
            .with_ceil_mode(true)),
        case!("AvgPool1dConfig", AvgPool1dConfig, AvgPool1dConfig::new(3)
            .with_stride(1)
            .with_padding(PaddingConfig1d::Explicit(1))
            .with_count_include_pad(false)
            .with_ceil_mode(true)),
        case!("AvgPool2dConfig", AvgPool2dConfig, AvgPool2dConfig::new([3, 3])
            .with_strides([1, 1])
            .with_padding(PaddingConfig2d::Same)
            .with_count_include_pad(false)),
        case!("AdaptiveAvgPool1dConfig", AdaptiveAvgPool1dConfig, AdaptiveAvgPool1dConfig::new(4)),
        case!("AdaptiveAvgPool2dConfig", AdaptiveAvgPool2dConfig, AdaptiveAvgPool2dConfig::new([4, 2])),
        case!("BatchNormConfig", BatchNormConfig, BatchNormConfig::new(5).with_epsilon(1e-3).with_momentum(0.2)),
        case!("LayerNormConfig", LayerNormConfig, LayerNormConfig::new(6).with_epsilon(1e-6).with_bias(false)),
        case!("GroupNormConfig", GroupNormConfig, GroupNormConfig::new(2, 6).with_epsilon(1e-4).with_affine(false)),
        case!("InstanceNormConfig", InstanceNormConfig, InstanceNormConfig::new(3).with_epsilon(1e-4).with_affine(false)),
        case!("RmsNormConfig", RmsNormConfig, RmsNormConfig::new(8).with_epsilon(1e-6)),
        case!("LeakyReluConfig", LeakyReluConfig, LeakyReluConfig::new().with_negative_slope(0.2)),
        case!("PReluConfig", PReluConfig, PReluConfig::new().with_num_parameters(3).with_alpha(0.1)),
        case!("HardSigmoidConfig", HardSigmoidConfig, HardSigmoidConfig::new().with_alpha(0.25).with_beta(0.4)),
        case!("SoftplusConfig", SoftplusConfig, SoftplusConfig::new().with_beta(2.0)),
        case!("SwiGluConfig", SwiGluConfig, SwiGluConfig::new(3, 5)
            .with_bias(true)
            .with_initializer(Initializer::Orthogonal { gain: 1.0 })
            .with_layout(LinearLayout::Col)),
        case!("CrossEntropyLossConfig", CrossEntropyLossConfig, CrossEntropyLossConfig::new()
            .with_pad_tokens(Some(vec![0, 3]))
            .with_weights(Some(vec![1.0, 2.0, 0.5]))
            .with_smoothing(Some(0.1))
            .with_logits(false)),
        case!("BinaryCrossEntropyLossConfig", BinaryCrossEntropyLossConfig, BinaryCrossEntropyLossConfig::new()
            .with_weights(Some(vec![0.5, 1.5]))
            .with_smoothing(Some(0.05))
            .with_logits(true)),
        case!("HuberLossConfig", HuberLossConfig, HuberLossConfig::new(0.5)),
        case!("AdamConfig", AdamConfig, AdamConfig::new()
            .with_beta_1(0.8)
            .with_beta_2(0.99)
            .with_epsilon(1e-6)
            .with_weight_decay(Some(WeightDecayConfig::new(0.01)))
            .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))),
        case!("AdamWConfig", AdamWConfig, AdamWConfig::new()
            .with_weight_decay(0.05)
            .with_cautious_weight_decay(true)
            .with_grad_clipping(Some(GradientClippingConfig::Value(0.5)))),
        case!("AdaGradConfig", AdaGradConfig, AdaGradConfig::new()
            .with_lr_decay(0.01)
            .with_epsilon(1e-6)
            .with_weight_decay(Some(WeightDecayConfig::new(0.001)))),
        case!("SgdConfig", SgdConfig, SgdConfig::new()
            .with_weight_decay(Some(WeightDecayConfig::new(1e-4)))
            .with_momentum(Some(MomentumConfig::new().with_momentum(0.8).with_dampening(0.0).with_nesterov(true)))
            .with_gradient_clipping(Some(GradientClippingConfig::Value(1.0)))),
        case!("RmsPropConfig", RmsPropConfig, RmsPropConfig::new()
            .with_alpha(0.9)
            .with_momentum(0.5)
            .with_epsilon(1e-6)
            .with_centered(true)
            .with_weight_decay(Some(WeightDecayConfig::new(0.01)))),
        case!("WeightDecayConfig", WeightDecayConfig, WeightDecayConfig::new(0.5)),
        case!("MomentumConfig", MomentumConfig, MomentumConfig::new().with_momentum(0.5).with_dampening(0.25)),
        case!("GradientClippingConfig", GradientClippingConfig, GradientClippingConfig::Value(0.25)),
        case!("StepLrSchedulerConfig", StepLrSchedulerConfig, StepLrSchedulerConfig::new(0.1, 10).with_gamma(0.5)),
        case!("ExponentialLrSchedulerConfig", ExponentialLrSchedulerConfig, ExponentialLrSchedulerConfig::new(0.1, 0.9)),
        case!("LinearLrSchedulerConfig", LinearLrSchedulerConfig, LinearLrSchedulerConfig::new(0.1, 0.01, 100)),
        case!("NoamLrSchedulerConfig", NoamLrSchedulerConfig, NoamLrSchedulerConfig::new(0.5).with_warmup_steps(100).with_model_size(64)),
        case!("CosineAnnealingLrSchedulerConfig", CosineAnnealingLrSchedulerConfig, CosineAnnealingLrSchedulerConfig::new(0.1, 50).with_min_lr(0.001)),
        case!("ComposedLrSchedulerConfig", ComposedLrSchedulerConfig, ComposedLrSchedulerConfig::new()
            .linear(LinearLrSchedulerConfig::new(1.0, 0.5, 10))
            .cosine(CosineAnnealingLrSchedulerConfig::new(1.0, 20))
            .exponential(ExponentialLrSchedulerConfig::new(1.0, 0.95))
            .noam(NoamLrSchedulerConfig::new(2.0))
            .with_reduction(SchedulerReduction::Avg)),
        case!("Initializer_Ones", Initializer, Initializer::Ones),
        case!("Initializer_KaimingUniform", Initializer, Initializer::KaimingUniform { gain: 0.5, fan_out_only: true }),
        case!("PaddingConfig1d_Explicit", PaddingConfig1d, PaddingConfig1d::Explicit(4)),
        case!("PaddingConfig2d_Valid", PaddingConfig2d, PaddingConfig2d::Valid),
    ]
}

/// Write every config under `dir`.
pub fn save_all(dir: &Path) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    for (name, run) in cases() {
        run(&dir.join(format!("{name}.json")), true).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(cases().len())
}

/// Load ferrum's file of each config under `dir`; one report line per file.
pub fn check_all(dir: &Path, report: &mut Vec<String>) {
    for (name, run) in cases() {
        let path = dir.join(format!("{name}.json"));
        if !path.exists() {
            report.push(format!("skip {} (not written)", path.display()));
            continue;
        }
        match run(&path, false) {
            Ok(()) => report.push(format!("ok   {}", path.display())),
            Err(e) => report.push(format!("FAIL {}\n     {e}", path.display())),
        }
    }
}
