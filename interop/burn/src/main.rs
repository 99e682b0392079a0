//! Burn 0.20.1 side of ferrum's file interop.
//!
//! `save <dir>` writes the model below (and an Adam optimizer record) with every
//! Burn file recorder at every precision, every config class ferrum has under
//! `configs/` (src/configs.rs) and an SQLite dataset `dataset.db`
//! (src/sqlite.rs); `load <dir>` loads the files ferrum wrote under the same
//! names and checks every value and id against the formulas (quantized
//! modules in src/quantized.rs), exiting non-zero
//! when any file fails. The formulas are repeated in ferrum's tests
//! (tests/support/burn_interop_model.py and its neighbours): keep them in sync.

mod burnpack;
mod configs;
mod layers;
mod quantized;
mod sqlite;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use burn::backend::{Autodiff, NdArray};
use burn::module::{Module, Param, ParamId, RunningState};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::record::AdaptorRecord;
use burn::optim::{Adam, AdamConfig, AdamState, AdaptiveMomentumState, Optimizer};
use burn::record::{
    BinFileRecorder, BinGzFileRecorder, DoublePrecisionSettings, FileRecorder, FullPrecisionSettings,
    HalfPrecisionSettings, JsonGzFileRecorder, NamedMpkFileRecorder, NamedMpkGzFileRecorder, PrecisionSettings,
    PrettyJsonFileRecorder, Recorder,
};
use burn::tensor::backend::Backend;
use burn::tensor::{Shape, Tensor, TensorData};

type B = NdArray<f32>;
type AD = Autodiff<B>;

/// Every record shape users meet: a Linear with and without bias (an
/// `Option` field), a Conv2d (constant fields), a BatchNorm (running
/// states), an Embedding and a `Vec` of modules.
#[derive(Module, Debug)]
pub struct Net<B: Backend> {
    fc: Linear<B>,
    head: Linear<B>,
    conv: Conv2d<B>,
    norm: BatchNorm<B>,
    embed: Embedding<B>,
    blocks: Vec<Linear<B>>,
}

/// Value `i` (row-major) of the tensor numbered `salt`: multiples of 1/16 in
/// [-3, 3], exact in f16, f32 and f64, so every precision compares exactly.
fn value(i: usize, salt: usize) -> f32 {
    ((i * 7 + salt * 13) % 97) as f32 / 16.0 - 3.0
}

/// The id of the tensor numbered `salt`: large enough to use all 13 base32hex characters.
fn id_of(salt: usize) -> u64 {
    0x0123_4567_89ab_cdef_u64.wrapping_mul(salt as u64 + 1)
}

/// (path, shape, salt) of every parameter and running state, in record order.
fn layout() -> Vec<(&'static str, Vec<usize>, usize)> {
    vec![
        ("fc.weight", vec![4, 3], 1),
        ("fc.bias", vec![3], 2),
        ("head.weight", vec![3, 2], 3),
        ("conv.weight", vec![3, 2, 3, 3], 4),
        ("conv.bias", vec![3], 5),
        ("norm.gamma", vec![3], 6),
        ("norm.beta", vec![3], 7),
        ("norm.running_mean", vec![3], 8),
        ("norm.running_var", vec![3], 9),
        ("embed.weight", vec![5, 4], 10),
        ("blocks.0.weight", vec![2, 2], 11),
        ("blocks.0.bias", vec![2], 12),
        ("blocks.1.weight", vec![2, 2], 13),
        ("blocks.1.bias", vec![2], 14),
    ]
}

fn tensor<B: Backend, const D: usize>(shape: &[usize], salt: usize, device: &B::Device) -> Tensor<B, D> {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|i| value(i, salt)).collect();
    Tensor::from_data(TensorData::new(data, Shape::from(shape.to_vec())), device)
}

fn param<B: Backend, const D: usize>(name: &str, device: &B::Device) -> Param<Tensor<B, D>> {
    let (_, shape, salt) = layout().into_iter().find(|(n, _, _)| *n == name).expect("known parameter");
    Param::initialized(ParamId::from(id_of(salt)), tensor(&shape, salt, device))
}

fn running<B: Backend>(name: &str, device: &B::Device) -> RunningState<Tensor<B, 1>> {
    let (_, shape, salt) = layout().into_iter().find(|(n, _, _)| *n == name).expect("known state");
    RunningState::with_id(ParamId::from(id_of(salt)), tensor(&shape, salt, device))
}

/// The model with fresh random values and ids, as a user would build it before loading.
fn fresh<B: Backend>(device: &B::Device) -> Net<B> {
    Net {
        fc: LinearConfig::new(4, 3).init(device),
        head: LinearConfig::new(3, 2).with_bias(false).init(device),
        conv: Conv2dConfig::new([2, 3], [3, 3]).init(device),
        norm: BatchNormConfig::new(3).init(device),
        embed: EmbeddingConfig::new(5, 4).init(device),
        blocks: vec![LinearConfig::new(2, 2).init(device), LinearConfig::new(2, 2).init(device)],
    }
}

/// The model holding the formula values and ids.
fn model<B: Backend>(device: &B::Device) -> Net<B> {
    let mut net = fresh::<B>(device);
    net.fc.weight = param("fc.weight", device);
    net.fc.bias = Some(param("fc.bias", device));
    net.head.weight = param("head.weight", device);
    net.conv.weight = param("conv.weight", device);
    net.conv.bias = Some(param("conv.bias", device));
    net.norm.gamma = param("norm.gamma", device);
    net.norm.beta = param("norm.beta", device);
    net.norm.running_mean = running("norm.running_mean", device);
    net.norm.running_var = running("norm.running_var", device);
    net.embed.weight = param("embed.weight", device);
    for (i, block) in net.blocks.iter_mut().enumerate() {
        block.weight = param(&format!("blocks.{i}.weight"), device);
        block.bias = Some(param(&format!("blocks.{i}.bias"), device));
    }
    net
}

/// Every (path, id, shape, values) of a loaded model, in record order.
fn flatten<B: Backend>(net: &Net<B>) -> Vec<(String, u64, Vec<usize>, Vec<f32>)> {
    fn p<B: Backend, const D: usize>(name: &str, param: &Param<Tensor<B, D>>) -> (String, u64, Vec<usize>, Vec<f32>) {
        let t = param.val();
        (name.into(), param.id.val(), t.dims().to_vec(), t.into_data().convert::<f32>().to_vec::<f32>().expect("f32 data"))
    }
    fn r<B: Backend>(name: &str, state: &RunningState<Tensor<B, 1>>) -> (String, u64, Vec<usize>, Vec<f32>) {
        let t = state.value();
        // A running state's id is private: its record (a Param) shows it.
        let id = Module::<B>::into_record(state.clone()).id.val();
        (name.into(), id, t.dims().to_vec(), t.into_data().convert::<f32>().to_vec::<f32>().expect("f32 data"))
    }
    let mut out = vec![p("fc.weight", &net.fc.weight)];
    out.extend(net.fc.bias.as_ref().map(|b| p("fc.bias", b)));
    out.push(p("head.weight", &net.head.weight));
    out.extend(net.head.bias.as_ref().map(|b| p("head.bias", b)));
    out.push(p("conv.weight", &net.conv.weight));
    out.extend(net.conv.bias.as_ref().map(|b| p("conv.bias", b)));
    out.push(p("norm.gamma", &net.norm.gamma));
    out.push(p("norm.beta", &net.norm.beta));
    out.push(r("norm.running_mean", &net.norm.running_mean));
    out.push(r("norm.running_var", &net.norm.running_var));
    out.push(p("embed.weight", &net.embed.weight));
    for (i, block) in net.blocks.iter().enumerate() {
        out.push(p(&format!("blocks.{i}.weight"), &block.weight));
        out.extend(block.bias.as_ref().map(|b| p(&format!("blocks.{i}.bias"), b)));
    }
    out
}

/// Compare a loaded model with the formulas; one line per problem.
fn check_model<B: Backend>(net: &Net<B>) -> Vec<String> {
    let found = flatten(net);
    let expected = layout();
    let mut errors = Vec::new();
    let names: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|e| e.0).collect();
    if names != want {
        errors.push(format!("parameters {names:?}, expected {want:?}"));
        return errors;
    }
    for ((name, id, shape, values), (_, want_shape, salt)) in found.iter().zip(&expected) {
        if *id != id_of(*salt) {
            errors.push(format!("{name}: id {id}, expected {}", id_of(*salt)));
        }
        if shape != want_shape {
            errors.push(format!("{name}: shape {shape:?}, expected {want_shape:?}"));
        }
        for (i, v) in values.iter().enumerate() {
            if *v != value(i, *salt) {
                errors.push(format!("{name}[{i}]: {v}, expected {}", value(i, *salt)));
                break;
            }
        }
    }
    errors
}

// ---- Adam -----------------------------------------------------------------

type AdamOptim = OptimizerAdaptor<Adam, Net<AD>, AD>;
type AdamRecord = <AdamOptim as Optimizer<Net<AD>, AD>>::Record;

/// Adam's state of the parameters `fc.weight` (rank 2) and `fc.bias`
/// (rank 1): the step count and both moments follow the formulas
/// (moment_2 gets salt + 50 and is made non-negative).
const ADAM_TIME: usize = 3;

fn moment_2_value(i: usize, salt: usize) -> f32 {
    value(i, salt + 50).abs()
}

fn adam_state<const D: usize>(shape: &[usize], salt: usize, device: &<B as Backend>::Device) -> AdamState<B, D> {
    let n: usize = shape.iter().product();
    let m2: Vec<f32> = (0..n).map(|i| moment_2_value(i, salt)).collect();
    let m2 = Tensor::from_data(TensorData::new(m2, Shape::from(shape.to_vec())), device);
    AdamState::new(AdaptiveMomentumState::new(ADAM_TIME, tensor(shape, salt, device), m2))
}

fn adam_record(device: &<B as Backend>::Device) -> AdamRecord {
    let mut record = AdamRecord::default();
    record.insert(ParamId::from(id_of(1)), AdaptorRecord::from_state::<2>(adam_state::<2>(&[4, 3], 1, device)));
    record.insert(ParamId::from(id_of(2)), AdaptorRecord::from_state::<1>(adam_state::<1>(&[3], 2, device)));
    record
}

fn check_adam_state<const D: usize>(name: &str, record: AdaptorRecord<Adam, AD>, shape: &[usize], salt: usize) -> Vec<String> {
    let state: AdamState<B, D> = record.into_state::<D>();
    let m = state.momentum;
    let mut errors = Vec::new();
    if m.time != ADAM_TIME {
        errors.push(format!("{name}: time {}, expected {ADAM_TIME}", m.time));
    }
    let m1 = m.moment_1.into_data().to_vec::<f32>().expect("f32");
    let m2 = m.moment_2.into_data().to_vec::<f32>().expect("f32");
    let n: usize = shape.iter().product();
    if m1.len() != n || m2.len() != n {
        errors.push(format!("{name}: {} and {} moment values, expected {n}", m1.len(), m2.len()));
        return errors;
    }
    for i in 0..n {
        if m1[i] != value(i, salt) || m2[i] != moment_2_value(i, salt) {
            errors.push(format!("{name}[{i}]: moments {} {}, expected {} {}", m1[i], m2[i], value(i, salt), moment_2_value(i, salt)));
            break;
        }
    }
    errors
}

fn check_adam(mut record: AdamRecord) -> Vec<String> {
    let mut errors = Vec::new();
    if record.len() != 2 {
        errors.push(format!("{} optimizer states, expected 2", record.len()));
    }
    match record.remove(&ParamId::from(id_of(1))) {
        Some(r) => errors.extend(check_adam_state::<2>("adam fc.weight", r, &[4, 3], 1)),
        None => errors.push("no Adam state for fc.weight".into()),
    }
    match record.remove(&ParamId::from(id_of(2))) {
        Some(r) => errors.extend(check_adam_state::<1>("adam fc.bias", r, &[3], 2)),
        None => errors.push("no Adam state for fc.bias".into()),
    }
    errors
}

// ---- the recorders ----------------------------------------------------------

/// Save or load with one recorder type at one precision.
fn run<S: PrecisionSettings, R: FileRecorder<B> + FileRecorder<AD> + Default>(
    save: bool,
    dir: &Path,
    name: &str,
    report: &mut Vec<String>,
) {
    let device = Default::default();
    let recorder = R::default();
    let model_path: PathBuf = dir.join(name);
    let adam_path: PathBuf = dir.join(format!("adam_{name}"));
    layers::run::<R>(save, dir, name, report);
    if save {
        model::<B>(&device).save_file(&model_path, &recorder).expect("save model");
        Recorder::<AD>::record(&recorder, adam_record(&device), adam_path).expect("save adam");
        return;
    }
    let file = format!("{}.{}", model_path.display(), <R as FileRecorder<B>>::file_extension());
    let errors = match fresh::<B>(&device).load_file(&model_path, &recorder, &device) {
        Ok(net) => check_model(&net),
        Err(e) => vec![format!("cannot load: {e}")],
    };
    report.push(format!("{} {file}", if errors.is_empty() { "ok  " } else { "FAIL" }));
    report.extend(errors.into_iter().map(|e| format!("     {e}")));
    let adam_file = format!("{}.{}", adam_path.display(), <R as FileRecorder<B>>::file_extension());
    if !Path::new(&adam_file).exists() {
        report.push(format!("skip {adam_file} (not written)"));
        return;
    }
    let loaded: Result<AdamRecord, _> = Recorder::<AD>::load(&recorder, adam_path, &device);
    let errors = match loaded {
        Ok(record) => {
            // Through the optimizer too: what a user does to resume training.
            let optim: AdamOptim = AdamConfig::new().init();
            check_adam(optim.load_record(record).to_record())
        }
        Err(e) => vec![format!("cannot load: {e}")],
    };
    report.push(format!("{} {adam_file}", if errors.is_empty() { "ok  " } else { "FAIL" }));
    report.extend(errors.into_iter().map(|e| format!("     {e}")));
}

fn all<S: PrecisionSettings>(save: bool, dir: &Path, precision: &str, report: &mut Vec<String>) {
    run::<S, NamedMpkFileRecorder<S>>(save, dir, &format!("named_mpk_{precision}"), report);
    run::<S, NamedMpkGzFileRecorder<S>>(save, dir, &format!("named_mpk_gz_{precision}"), report);
    run::<S, BinFileRecorder<S>>(save, dir, &format!("bin_{precision}"), report);
    run::<S, BinGzFileRecorder<S>>(save, dir, &format!("bin_gz_{precision}"), report);
    run::<S, JsonGzFileRecorder<S>>(save, dir, &format!("json_gz_{precision}"), report);
    run::<S, PrettyJsonFileRecorder<S>>(save, dir, &format!("pretty_json_{precision}"), report);
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(cmd), Some(dir)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: ferrum-burn-interop save|load <dir>");
        return ExitCode::from(2);
    };
    let save = match cmd.as_str() {
        "save" => true,
        "load" => false,
        other => {
            eprintln!("unknown command {other:?}: expected save or load");
            return ExitCode::from(2);
        }
    };
    let dir = PathBuf::from(dir);
    if save {
        std::fs::create_dir_all(&dir).expect("create the output directory");
    }
    let mut report = Vec::new();
    all::<FullPrecisionSettings>(save, &dir, "full", &mut report);
    all::<HalfPrecisionSettings>(save, &dir, "half", &mut report);
    all::<DoublePrecisionSettings>(save, &dir, "double", &mut report);
    quantized::run_all(save, &dir, &mut report);
    if save {
        burnpack::save(&dir);
        let written = match configs::save_all(&dir.join("configs")) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("cannot write a config: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Err(e) = sqlite::save(&dir.join("dataset.db")) {
            eprintln!("cannot write the SQLite dataset: {e}");
            return ExitCode::FAILURE;
        }
        println!("wrote {} records (6 quantized), burn_model.bpk, {written} configs and dataset.db under {}", 60, dir.display());
        return ExitCode::SUCCESS;
    }
    burnpack::load(&dir, &mut report);
    configs::check_all(&dir.join("configs"), &mut report);
    sqlite::check(&dir.join("dataset.db"), &mut report);
    report.iter().for_each(|l| println!("{l}"));
    let failed = report.iter().filter(|l| l.starts_with("FAIL")).count();
    let ok = report.iter().filter(|l| l.starts_with("ok")).count();
    println!("{ok} files loaded and checked, {failed} failed");
    if failed == 0 && ok > 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
