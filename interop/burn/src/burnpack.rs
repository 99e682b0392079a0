//! Burnpack (`.bpk`, burn-store's `burnpack` feature) side of the interop.
//!
//! `save` writes the interop model with `BurnpackStore` as `burn_model.bpk`;
//! `load` loads ferrum's `ferrum_model.bpk` into a fresh model and checks every
//! value against the formulas. Burn's loader keeps the module's own parameter
//! ids (it applies values only), so ids are checked on ferrum's side: ferrum
//! writes the same model byte for byte (tests/store/test_burnpack.py).

use std::path::Path;

use burn_store::{BurnpackStore, ModuleSnapshot};

use super::{check_model, fresh, model, B};

pub const BURN_FILE: &str = "burn_model.bpk";
pub const FERRUM_FILE: &str = "ferrum_model.bpk";

pub fn save(dir: &Path) {
    let device = Default::default();
    let net = model::<B>(&device);
    let mut store = BurnpackStore::from_file(dir.join(BURN_FILE)).overwrite(true);
    net.save_into(&mut store).expect("write the Burnpack file");
    println!("wrote {BURN_FILE} under {}", dir.display());
}

pub fn load(dir: &Path, report: &mut Vec<String>) {
    let path = dir.join(FERRUM_FILE);
    if !path.exists() {
        report.push(format!("skipped {FERRUM_FILE}: absent"));
        return;
    }
    let device = Default::default();
    let mut net = fresh::<B>(&device);
    let mut store = BurnpackStore::from_file(&path);
    match net.load_from(&mut store) {
        Err(err) => report.push(format!("FAIL {FERRUM_FILE}: {err}")),
        Ok(result) if !result.errors.is_empty() || !result.missing.is_empty() || !result.unused.is_empty() => {
            report.push(format!("FAIL {FERRUM_FILE}: {result:?}"))
        }
        Ok(result) => {
            // Burn keeps the fresh model's ids on load: compare values and shapes only.
            let errors: Vec<String> = check_model(&net).into_iter().filter(|e| !e.contains(": id ")).collect();
            if errors.is_empty() {
                report.push(format!("ok {FERRUM_FILE} ({} tensors applied)", result.applied.len()));
            } else {
                report.push(format!("FAIL {FERRUM_FILE}: {}", errors.join("; ")));
            }
        }
    }
}
