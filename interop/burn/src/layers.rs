//! The layers Burn 0.20 has beyond the core ones (issue 16), as one model:
//! recurrent, attention, transformer, encodings, 3-d and deformable
//! convolution, the enum wrappers and the parameter-free modules whose
//! records are constants.
//!
//! Values and ids come from the formulas of `main.rs`, numbered in visit order
//! from `FIRST_SALT` (a `ModuleMapper` fills them, a `ModuleVisitor` checks
//! them), so the Python mirror (tests/support/burn_interop_layers.py) needs no table of
//! paths: it numbers the leaves of ferrum's record in the same order.

use std::path::Path;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::nn::activation::{Activation, ActivationConfig};
use burn::nn::attention::{CrossAttention, CrossAttentionConfig, MultiHeadAttention, MultiHeadAttentionConfig};
use burn::nn::conv::{Conv3d, Conv3dConfig, ConvTranspose3d, ConvTranspose3dConfig, DeformConv2d, DeformConv2dConfig};
use burn::nn::gru::{Gru, GruConfig};
use burn::nn::interpolate::{Interpolate2d, Interpolate2dConfig};
use burn::nn::norm::{Normalization, NormalizationConfig};
use burn::nn::transformer::{
    PositionWiseFeedForward, PositionWiseFeedForwardConfig, TransformerDecoder, TransformerDecoderConfig, TransformerEncoder,
    TransformerEncoderConfig,
};
use burn::nn::{
    BiLstm, BiLstmConfig, GaussianNoise, GaussianNoiseConfig, LayerNormConfig, Lstm, LstmConfig, PReluConfig,
    PositionalEncoding, PositionalEncodingConfig, RotaryEncoding, RotaryEncodingConfig, Unfold4d, Unfold4dConfig, GLU,
};
use burn::record::FileRecorder;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

use crate::{id_of, tensor, value, B};

/// The salt of the first parameter; each next one in visit order adds 1.
pub const FIRST_SALT: usize = 100;

#[derive(Module, Debug)]
pub struct Layers<B: Backend> {
    lstm: Lstm<B>,
    bilstm: BiLstm<B>,
    gru: Gru<B>,
    gru_no_bias: Gru<B>,
    mha: MultiHeadAttention<B>,
    cross: CrossAttention<B>,
    encoder: TransformerEncoder<B>,
    decoder: TransformerDecoder<B>,
    pwff: PositionWiseFeedForward<B>,
    positional: PositionalEncoding<B>,
    rotary: RotaryEncoding<B>,
    conv3d: Conv3d<B>,
    conv_transpose3d: ConvTranspose3d<B>,
    deform: DeformConv2d<B>,
    norm: Normalization<B>,
    activation: Activation<B>,
    glu: GLU,
    noise: GaussianNoise,
    unfold: Unfold4d,
    interpolate: Interpolate2d,
}

/// The model with Burn's random initial values and ids.
fn fresh(device: &<B as Backend>::Device) -> Layers<B> {
    Layers {
        lstm: LstmConfig::new(3, 4, true).init(device),
        bilstm: BiLstmConfig::new(2, 3, true).init(device),
        gru: GruConfig::new(3, 2, true).init(device),
        gru_no_bias: GruConfig::new(2, 2, false).with_reset_after(false).init(device),
        mha: MultiHeadAttentionConfig::new(4, 2).init(device),
        cross: CrossAttentionConfig::new(4, 6, 2, 1, 2).init(device),
        encoder: TransformerEncoderConfig::new(4, 6, 2, 1).init(device),
        decoder: TransformerDecoderConfig::new(4, 6, 2, 1).with_norm_first(true).init(device),
        pwff: PositionWiseFeedForwardConfig::new(4, 5).init(device),
        positional: PositionalEncodingConfig::new(4).with_max_sequence_size(8).init(device),
        rotary: RotaryEncodingConfig::new(8, 4).init(device),
        conv3d: Conv3dConfig::new([2, 2], [2, 1, 2]).init(device),
        conv_transpose3d: ConvTranspose3dConfig::new([2, 2], [1, 2, 2]).with_bias(false).init(device),
        deform: DeformConv2dConfig::new([2, 2], [2, 2]).init(device),
        norm: NormalizationConfig::Layer(LayerNormConfig::new(3)).init(device),
        activation: ActivationConfig::PRelu(PReluConfig::new().with_num_parameters(3)).init(device),
        glu: GLU::new(1),
        noise: GaussianNoiseConfig::new(0.25).init(),
        unfold: Unfold4dConfig::new([2, 2]).init(),
        interpolate: Interpolate2dConfig::new().with_output_size(Some([4, 4])).init(),
    }
}

/// Gives each float parameter, in visit order, the formula values and id of its number.
struct Fill {
    next: usize,
}

impl<Be: Backend> ModuleMapper<Be> for Fill {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<Be, D>>) -> Param<Tensor<Be, D>> {
        let salt = self.next;
        self.next += 1;
        let t = param.val();
        let (shape, device) = (t.dims().to_vec(), t.device());
        Param::initialized(ParamId::from(id_of(salt)), tensor(&shape, salt, &device))
    }
}

/// Checks each float parameter, in visit order, against the formulas.
struct Check {
    next: usize,
    errors: Vec<String>,
}

impl<Be: Backend> ModuleVisitor<Be> for Check {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<Be, D>>) {
        let salt = self.next;
        self.next += 1;
        if param.id.val() != id_of(salt) {
            self.errors.push(format!("parameter {salt}: id {}, expected {}", param.id.val(), id_of(salt)));
        }
        let values = param.val().into_data().convert::<f32>().to_vec::<f32>().expect("f32 data");
        if let Some(i) = values.iter().enumerate().position(|(i, v)| *v != value(i, salt)) {
            self.errors.push(format!("parameter {salt}[{i}]: {}, expected {}", values[i], value(i, salt)));
        }
    }
}

/// The model holding the formula values and ids.
pub fn model(device: &<B as Backend>::Device) -> Layers<B> {
    fresh(device).map(&mut Fill { next: FIRST_SALT })
}

fn count(net: &Layers<B>) -> usize {
    let mut c = Check { next: 0, errors: Vec::new() };
    net.visit(&mut c);
    c.next
}

/// Save `layers_{name}`, or load ferrum's file of that name (when written) and check it; one report line.
pub fn run<R: FileRecorder<B> + Default>(save: bool, dir: &Path, name: &str, report: &mut Vec<String>) {
    let device = Default::default();
    let recorder = R::default();
    let path = dir.join(format!("layers_{name}"));
    if save {
        model(&device).save_file(&path, &recorder).expect("save the layers");
        return;
    }
    let file = format!("{}.{}", path.display(), <R as FileRecorder<B>>::file_extension());
    if !Path::new(&file).exists() {
        report.push(format!("skip {file} (not written)"));
        return;
    }
    let errors = match fresh(&device).load_file(&path, &recorder, &device) {
        Ok(net) => {
            let mut check = Check { next: FIRST_SALT, errors: Vec::new() };
            net.visit(&mut check);
            let expected = count(&fresh(&device));
            if check.next - FIRST_SALT != expected {
                check.errors.push(format!("{} parameters, expected {expected}", check.next - FIRST_SALT));
            }
            check.errors
        }
        Err(e) => vec![format!("cannot load: {e}")],
    };
    report.push(format!("{} {file}", if errors.is_empty() { "ok  " } else { "FAIL" }));
    report.extend(errors.into_iter().map(|e| format!("     {e}")));
}
