//! Burn's SQLite datasets: `save` writes `dataset.db` with Burn's
//! `SqliteDatasetWriter` (table `row_id, item`, each item a MessagePack blob
//! of serde's compact form: a struct as an array of its fields); `load` reads
//! ferrum's `dataset.db` with Burn's `SqliteDataset` and checks every item.
//! The items follow the formula of `item` below, repeated in ferrum's tests
//! (tests/support/burn_interop_sqlite.py): keep them in sync.

use std::path::Path;

use burn::data::dataset::{Dataset, SqliteDataset, SqliteDatasetWriter};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Label {
    Cat,
    Dog,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

/// An item with every kind of field a dataset row holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub text: String,
    pub bytes: Vec<u8>,
    pub count: i64,
    pub small: u8,
    pub flag: bool,
    pub ratio: f64,
    pub weight: f32,
    pub maybe: Option<i32>,
    pub values: Vec<f32>,
    pub pair: (i32, String),
    pub label: Label,
    pub point: Point,
}

/// Item `i` of a split.
pub fn item(i: usize) -> Item {
    Item {
        text: format!("item {i}"),
        bytes: vec![i as u8, 255 - i as u8, 7],
        count: i as i64 * 1000 - 3,
        small: (i * 50) as u8,
        flag: i % 2 == 0,
        ratio: i as f64 / 3.0,
        weight: i as f32 * 0.25,
        maybe: if i % 3 == 0 { None } else { Some(-(i as i32)) },
        values: vec![i as f32 + 0.5; i % 3],
        pair: (i as i32, format!("p{i}")),
        label: if i % 2 == 0 { Label::Cat } else { Label::Dog },
        point: Point { x: i as f32, y: -0.5 },
    }
}

/// (split, number of items).
pub const SPLITS: [(&str, usize); 2] = [("train", 5), ("test", 2)];

pub fn save(path: &Path) -> Result<(), String> {
    let mut writer = SqliteDatasetWriter::<Item>::new(path, true).map_err(|e| e.to_string())?;
    for (split, n) in SPLITS {
        for i in 0..n {
            writer.write(split, &item(i)).map_err(|e| e.to_string())?;
        }
    }
    writer.set_completed().map_err(|e| e.to_string())
}

pub fn check(path: &Path, report: &mut Vec<String>) {
    if !path.exists() {
        report.push(format!("skip {} (not written)", path.display()));
        return;
    }
    let mut errors = Vec::new();
    for (split, n) in SPLITS {
        let dataset = match SqliteDataset::<Item>::from_db_file(path, split) {
            Ok(d) => d,
            Err(e) => {
                errors.push(format!("split {split}: cannot open: {e}"));
                continue;
            }
        };
        if dataset.len() != n {
            errors.push(format!("split {split}: {} items, expected {n}", dataset.len()));
        }
        for i in 0..n {
            match dataset.get(i) {
                Some(got) if got == item(i) => {}
                other => errors.push(format!("split {split} item {i}: {other:?}, expected {:?}", item(i))),
            }
        }
    }
    let ok = errors.is_empty();
    report.push(format!("{} {}", if ok { "ok  " } else { "FAIL" }, path.display()));
    report.extend(errors.into_iter().map(|e| format!("     {e}")));
}
