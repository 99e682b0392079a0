//! Vision ops, as Burn's `burn-vision` crate has them (names after OpenCV):
//! connected-component labelling with per-component statistics,
//! morphology (erode, dilate, structuring elements) and non-maximum
//! suppression of boxes.
//!
//! Images are plain tensors: a Bool `[height, width]` mask (or a batch
//! `[batch, height, width]`) for connected components, `[height, width,
//! channels]` (or `[batch, height, width, channels]`) of any dtype for
//! morphology. None of these ops has a gradient.

pub mod connected_components;
pub mod morphology;
pub mod nms;

pub use connected_components::{ConnectedStats, ConnectedStatsOptions, Connectivity};
pub use morphology::{create_structuring_element, BorderType, KernelShape, MorphOp, MorphOptions, Point, Size};
pub use nms::NmsOptions;
