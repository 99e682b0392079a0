//! Vision ops (Burn's `burn-vision`), called by `ferrum.vision`, which
//! holds the typed API and the option classes: connected components,
//! morphology and non-maximum suppression. None has a gradient.

use ferrum_core::vision::{
    create_structuring_element, BorderType, ConnectedStatsOptions, Connectivity, KernelShape, MorphOp, MorphOptions, NmsOptions, Point, Size,
};
use pyo3::prelude::*;

use crate::device::PyDevice;
use crate::error::{argument_error, engine};
use crate::tensor::PyTensor;

fn connectivity(py: Python<'_>, op: &str, name: &str) -> PyResult<Connectivity> {
    match name {
        "four" => Ok(Connectivity::Four),
        "eight" => Ok(Connectivity::Eight),
        other => Err(argument_error(py, format!("{op}: connectivity must be 'four' or 'eight', found {other:?}"))),
    }
}

fn point(anchor: Option<(usize, usize)>) -> Option<Point> {
    anchor.map(|(x, y)| Point { x, y })
}

/// Labels of the connected components of a Bool image `[h, w]` (or batch
/// `[n, h, w]`): I64, 0 for the background, `1..=count` in scan order.
/// `connectivity` is `"four"` or `"eight"`.
///
/// Example:
///     >>> m = Tensor.from_bool([[True, False, True]], device)
///     >>> vision_connected_components(m, "four").to_data().to_list()
///     [[1, 0, 2]]
#[pyfunction]
pub fn vision_connected_components(py: Python<'_>, img: PyRef<'_, PyTensor>, connectivity: &str) -> PyResult<PyTensor> {
    let op = "connected_components";
    let conn = self::connectivity(py, op, connectivity)?;
    img.op(py, op, |t| t.connected_components(conn))
}

/// `vision_connected_components` and the per-label statistics: `(labels,
/// area, top, left, right, bottom, max_label)`, each statistic `[max_label
/// + 1]` (`[n, L]` for a batch) with entry 0 the background's zeros.
///
/// Example:
///     >>> m = Tensor.from_bool([[True, False, True]], device)
///     >>> out = vision_connected_components_with_stats(m, "four")
///     >>> out[1].to_data().to_list(), out[6].to_data().to_list()
///     ([0, 1, 1], [2])
#[pyfunction]
#[pyo3(signature = (img, connectivity, bounds_enabled = true, max_label_enabled = true, compact_labels = true))]
#[allow(clippy::type_complexity)]
pub fn vision_connected_components_with_stats(
    py: Python<'_>,
    img: PyRef<'_, PyTensor>,
    connectivity: &str,
    bounds_enabled: bool,
    max_label_enabled: bool,
    compact_labels: bool,
) -> PyResult<(PyTensor, PyTensor, PyTensor, PyTensor, PyTensor, PyTensor, PyTensor)> {
    let op = "connected_components_with_stats";
    let conn = self::connectivity(py, op, connectivity)?;
    let options = ConnectedStatsOptions { bounds_enabled, max_label_enabled, compact_labels };
    let (labels, s) = img.run(py, |t| t.connected_components_with_stats(conn, options))?;
    let w = |t| img.wrap(py, t);
    Ok((w(labels), w(s.area), w(s.top), w(s.left), w(s.right), w(s.bottom), w(s.max_label)))
}

/// Erode (`op="erode"`) or dilate (`op="dilate"`) an image `[h, w, c]` (or
/// batch `[n, h, w, c]`) of any dtype by a Bool `[kh, kw]` structuring
/// element; `anchor` is `(x, y)`, `border_type` one of `"constant"`,
/// `"replicate"`, `"reflect"`, `"reflect101"`, `"wrap"` (refused), and
/// `border_value` one value per channel for the constant border.
///
/// Example:
///     >>> x = Tensor.from_data([[[0.0], [5.0], [0.0]]], device)
///     >>> k = Tensor.from_bool([[True, True, True]], device)
///     >>> vision_morph(x, k, "dilate").to_data().to_list()
///     [[[5.0], [5.0], [5.0]]]
#[pyfunction]
#[pyo3(signature = (x, kernel, op, anchor = None, iterations = 1, border_type = "constant", border_value = None))]
#[allow(clippy::too_many_arguments)]
pub fn vision_morph(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel: PyRef<'_, PyTensor>,
    op: &str,
    anchor: Option<(usize, usize)>,
    iterations: usize,
    border_type: &str,
    border_value: Option<Vec<f64>>,
) -> PyResult<PyTensor> {
    let (morph, name) = match op {
        "erode" => (MorphOp::Erode, "erode"),
        "dilate" => (MorphOp::Dilate, "dilate"),
        other => return Err(argument_error(py, format!("vision_morph: op must be 'erode' or 'dilate', found {other:?}"))),
    };
    let border_type = match border_type {
        "constant" => BorderType::Constant,
        "replicate" => BorderType::Replicate,
        "reflect" => BorderType::Reflect,
        "reflect101" => BorderType::Reflect101,
        "wrap" => BorderType::Wrap,
        other => {
            return Err(argument_error(py, format!("{name}: border_type must be one of 'constant', 'replicate', 'reflect', 'reflect101', 'wrap', found {other:?}")));
        }
    };
    let opts = MorphOptions { anchor: point(anchor), iterations, border_type, border_value };
    x.op2(py, name, &kernel, |t, k| t.morph(k, morph, &opts))
}

/// A Bool `[height, width]` structuring element of `shape` `"rect"`,
/// `"cross"` or `"ellipse"` (OpenCV's `getStructuringElement`); `anchor`
/// `(x, y)` places a cross's arms, the centre by default.
///
/// Example:
///     >>> vision_structuring_element("cross", 3, 3, None, device).to_data().to_list()
///     [[False, True, False], [True, True, True], [False, True, False]]
#[pyfunction]
#[pyo3(signature = (shape, width, height, anchor, device))]
pub fn vision_structuring_element(py: Python<'_>, shape: &str, width: usize, height: usize, anchor: Option<(usize, usize)>, device: Py<PyDevice>) -> PyResult<PyTensor> {
    let shape = match shape {
        "rect" => KernelShape::Rect,
        "cross" => KernelShape::Cross,
        "ellipse" => KernelShape::Ellipse,
        other => return Err(argument_error(py, format!("create_structuring_element: shape must be 'rect', 'cross' or 'ellipse', found {other:?}"))),
    };
    let t = engine(py, false, || create_structuring_element(shape, Size { width, height }, point(anchor)))?;
    Ok(PyTensor::new(t, device))
}

/// Non-maximum suppression: the I64 indices `[m]` of the Float boxes
/// `[n, 4]` (`x1, y1, x2, y2`) kept, by descending Float `scores` `[n]`.
///
/// Example:
///     >>> b = Tensor.from_data([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.9]], device)
///     >>> vision_nms(b, Tensor.from_data([0.5, 0.9], device)).to_data().to_list()
///     [1]
#[pyfunction]
#[pyo3(signature = (boxes, scores, iou_threshold = 0.5, score_threshold = 0.0, max_output_boxes = 0))]
pub fn vision_nms(
    py: Python<'_>,
    boxes: PyRef<'_, PyTensor>,
    scores: PyRef<'_, PyTensor>,
    iou_threshold: f64,
    score_threshold: f64,
    max_output_boxes: usize,
) -> PyResult<PyTensor> {
    let opts = NmsOptions { iou_threshold, score_threshold, max_output_boxes };
    boxes.op2(py, "nms", &scores, |b, s| b.nms(s, opts))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, vision_connected_components, vision_connected_components_with_stats, vision_morph, vision_structuring_element, vision_nms);
    Ok(())
}
