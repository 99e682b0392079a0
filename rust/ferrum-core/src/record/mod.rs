//! Records: the tree of a module's state and the files Burn 0.20 writes it
//! to (named MessagePack, bincode, JSON, each optionally gzipped).

pub mod bincode;
pub mod file;
pub mod fuzz;
pub mod gzip;
pub mod item;
pub mod json;
pub mod limits;
pub mod mpk;
pub mod param_id;
pub mod precision;
pub mod quantized;
pub mod recorder;
pub mod schema;
pub mod wire;

#[cfg(test)]
mod quantized_tests;
#[cfg(test)]
mod tests;

pub use item::Item;
pub use precision::{Precision, StoredDType};
pub use recorder::{from_bytes, load_file, save_file, to_bytes, Format};
