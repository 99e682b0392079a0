//! Quantized modules: Burn 0.20 writes a quantized parameter as `QFloat(scheme)`
//! tensor data (the int8 values, then one f32 scale per tensor or per block).
//!
//! `QNet` (two Linears, 4 -> 16 -> 16, every tensor's length a multiple of the
//! block size) holds the formula values of main.rs with salts 20-23, and is
//! quantized with Burn's own `Quantizer` (min-max calibration, symmetric
//! int8) per tensor and in blocks of 16. `save` writes
//! `quantized_{level}_{recorder}`; `load` reads ferrum's files of those names
//! and compares them with Burn's quantization of the same values: the int8
//! values and scales must be equal, not only close.
//! Mirrored in tests/support/burn_interop_quantized.py.

use std::path::Path;

use burn::module::{Module, Param, ParamId, Quantizer};
use burn::nn::{Linear, LinearConfig};
use burn::record::{FullPrecisionSettings, NamedMpkFileRecorder, BinFileRecorder, PrettyJsonFileRecorder, FileRecorder};
use burn::tensor::backend::Backend;
use burn::tensor::quantization::{Calibration, QuantLevel, QuantParam, QuantScheme, QuantStore, QuantValue};
use burn::tensor::{DType, Tensor, TensorData};

use crate::{id_of, tensor, B};

#[derive(Module, Debug)]
pub struct QNet<B: Backend> {
    a: Linear<B>,
    b: Linear<B>,
}

/// (path, shape, salt) of QNet's parameters, in record order.
pub fn layout() -> Vec<(&'static str, Vec<usize>, usize)> {
    vec![
        ("a.weight", vec![4, 16], 20),
        ("a.bias", vec![16], 21),
        ("b.weight", vec![16, 16], 22),
        ("b.bias", vec![16], 23),
    ]
}

fn param<B: Backend, const D: usize>(name: &str, device: &B::Device) -> Param<Tensor<B, D>> {
    let (_, shape, salt) = layout().into_iter().find(|(n, _, _)| *n == name).expect("known parameter");
    Param::initialized(ParamId::from(id_of(salt)), tensor(&shape, salt, device))
}

fn fresh<B: Backend>(device: &B::Device) -> QNet<B> {
    QNet { a: LinearConfig::new(4, 16).init(device), b: LinearConfig::new(16, 16).init(device) }
}

fn model<B: Backend>(device: &B::Device) -> QNet<B> {
    let mut net = fresh::<B>(device);
    net.a.weight = param("a.weight", device);
    net.a.bias = Some(param("a.bias", device));
    net.b.weight = param("b.weight", device);
    net.b.bias = Some(param("b.bias", device));
    net
}

/// The two schemes, by the name used in file names.
fn schemes() -> Vec<(&'static str, QuantScheme)> {
    let q8 = QuantScheme::default()
        .with_value(QuantValue::Q8S)
        .with_store(QuantStore::Native)
        .with_param(QuantParam::F32);
    vec![("tensor", q8.with_level(QuantLevel::Tensor)), ("block16", q8.with_level(QuantLevel::block([16])))]
}

/// The quantized model as Burn's `Quantizer` makes it.
fn quantized(scheme: QuantScheme, device: &<B as Backend>::Device) -> QNet<B> {
    let mut quantizer = Quantizer { calibration: Calibration::MinMax, scheme };
    model::<B>(device).quantize_weights(&mut quantizer)
}

/// Every (path, id, record data) of a model: quantized data stays `QFloat`.
fn flatten(net: &QNet<B>) -> Vec<(String, u64, TensorData)> {
    fn p<const D: usize>(name: &str, param: &Param<Tensor<B, D>>) -> (String, u64, TensorData) {
        (name.into(), param.id.val(), param.val().into_data())
    }
    let mut out = vec![p("a.weight", &net.a.weight)];
    out.extend(net.a.bias.as_ref().map(|b| p("a.bias", b)));
    out.push(p("b.weight", &net.b.weight));
    out.extend(net.b.bias.as_ref().map(|b| p("b.bias", b)));
    out
}

fn check(net: &QNet<B>, scheme: QuantScheme, device: &<B as Backend>::Device) -> Vec<String> {
    let found = flatten(net);
    let expected = flatten(&quantized(scheme, device));
    let mut errors = Vec::new();
    if found.len() != expected.len() {
        errors.push(format!("{} parameters, expected {}", found.len(), expected.len()));
        return errors;
    }
    for ((name, id, data), (_, want_id, want)) in found.iter().zip(&expected) {
        if *id != *want_id {
            errors.push(format!("{name}: id {id}, expected {want_id}"));
        }
        if data.dtype != DType::QFloat(scheme) {
            errors.push(format!("{name}: dtype {:?}, expected {:?}", data.dtype, DType::QFloat(scheme)));
        } else if data.shape != want.shape || data.as_bytes() != want.as_bytes() {
            errors.push(format!("{name}: shape {:?} and bytes differ from Burn's quantization", data.shape));
        }
    }
    errors
}

fn run<R: FileRecorder<B> + Default>(save: bool, dir: &Path, recorder_name: &str, report: &mut Vec<String>) {
    let device = Default::default();
    let recorder = R::default();
    for (level, scheme) in schemes() {
        let path = dir.join(format!("quantized_{level}_{recorder_name}"));
        if save {
            quantized(scheme, &device).save_file(&path, &recorder).expect("save quantized model");
            continue;
        }
        let file = format!("{}.{}", path.display(), <R as FileRecorder<B>>::file_extension());
        let errors = match fresh::<B>(&device).load_file(&path, &recorder, &device) {
            Ok(net) => check(&net, scheme, &device),
            Err(e) => vec![format!("cannot load: {e}")],
        };
        report.push(format!("{} {file}", if errors.is_empty() { "ok  " } else { "FAIL" }));
        report.extend(errors.into_iter().map(|e| format!("     {e}")));
    }
}

/// Save (or load and check) the quantized model with three recorders at full precision.
pub fn run_all(save: bool, dir: &Path, report: &mut Vec<String>) {
    run::<NamedMpkFileRecorder<FullPrecisionSettings>>(save, dir, "named_mpk", report);
    run::<BinFileRecorder<FullPrecisionSettings>>(save, dir, "bin", report);
    run::<PrettyJsonFileRecorder<FullPrecisionSettings>>(save, dir, "pretty_json", report);
}
