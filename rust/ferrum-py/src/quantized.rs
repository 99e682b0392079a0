//! Quantized tensors (`ferrum.QTensor`) and the `Tensor` methods that make
//! them; the schemes are `ferrum.quantization.QuantScheme` objects, read
//! through their `_engine_args()`.

use ferrum_core::ops::conv::ConvOptions;
use ferrum_core::quant::{
    conv2d_u8s8, dynamic_quantize_u8, pack_int8_conv, run_int8_conv, Int8Conv, Int8Matrix, IntConv2d, IntConvResult, QTensor, QuantLevel, QuantParam, QuantScheme, Requant,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::conv::{Pad, NO_PAD};
use crate::device::PyDevice;
use crate::error::to_py;
use crate::tensor::PyTensor;

/// A tensor stored quantized: integer values and scales, `value ≈ scale * q`
/// (symmetric), one scale per tensor or per block of consecutive values,
/// as Burn's quantized tensors. Made by `Tensor.quantize(scheme, qparams)` or
/// `Tensor.quantize_dynamic(scheme)`; `dequantize()` gives the float tensor
/// back. A rank-2 `[d_input, d_output]` QTensor with 8-bit values and one
/// scale runs `linear(x, bias)` on an int8 product (the input quantized per
/// row at each call); other schemes dequantize first.
///
/// Example:
///     >>> from ferrum.quantization import QuantScheme, QuantValue
///     >>> x = Tensor.from_data([5.0, 0.0, 4.0, -12.7], device)
///     >>> q = x.quantize_dynamic(QuantScheme().with_value(QuantValue.Q8S))
///     >>> q.values().to_data().to_list()
///     [50, 0, 40, -127]
///     >>> [round(v, 4) for v in q.dequantize().to_data().to_list()]
///     [5.0, 0.0, 4.0, -12.7]
#[pyclass(frozen, name = "QTensor", module = "ferrum")]
pub struct PyQTensor {
    pub q: QTensor,
    pub device: Py<PyDevice>,
    scheme: Py<PyAny>,
}

fn engine_scheme(scheme: &Bound<'_, PyAny>) -> PyResult<QuantScheme> {
    let (value, block, param): (String, Option<Vec<usize>>, String) = scheme.call_method0("_engine_args")?.extract()?;
    QuantScheme::from_names(&value, block, &param).map_err(|e| to_py(scheme.py(), e))
}

impl PyQTensor {
    /// A quantized tensor read from a record, with its scheme as a Python
    /// `QuantScheme` (its store the one ferrum writes the values in).
    pub fn from_record(py: Python<'_>, q: QTensor, device: Py<PyDevice>) -> PyResult<PyQTensor> {
        let s = q.scheme();
        let block = match &s.level {
            QuantLevel::Tensor => None,
            QuantLevel::Block(dims) => Some(dims.clone()),
        };
        let param = match s.param {
            QuantParam::F32 => "F32",
            QuantParam::F16 => "F16",
            QuantParam::BF16 => "BF16",
        };
        let scheme = py.import("ferrum.quantization.scheme")?.getattr("_record_scheme")?.call1((s.value.name(), block, param))?;
        Ok(PyQTensor { q, device, scheme: scheme.unbind() })
    }
}

#[pymethods]
impl PyTensor {
    /// This float tensor quantized with precomputed scales (Burn's
    /// `quantize`): `q = clamp(round(x / scale), a, b)` for the value type's
    /// range `[a, b]`; `qparams.scales` holds one scale per tensor or block.
    fn quantize(&self, py: Python<'_>, scheme: &Bound<'_, PyAny>, qparams: &Bound<'_, PyAny>) -> PyResult<PyQTensor> {
        let s = engine_scheme(scheme)?;
        let scales: PyRef<'_, PyTensor> = qparams.getattr("scales")?.extract()?;
        self.same_backend(py, "quantize", &scales)?;
        let scales = scales.t.clone();
        let q = self.run(py, |t| QTensor::quantize(t, &s, &scales))?;
        Ok(PyQTensor { q, device: self.device.clone_ref(py), scheme: scheme.clone().unbind() })
    }

    /// This float tensor quantized with scales from its own range (Burn's
    /// `quantize_dynamic`, min-max calibration): per tensor or per block,
    /// `scale = 2 * max(|min|, |max|) / (b - a)`.
    fn quantize_dynamic(&self, py: Python<'_>, scheme: &Bound<'_, PyAny>) -> PyResult<PyQTensor> {
        let s = engine_scheme(scheme)?;
        let q = self.run(py, |t| QTensor::quantize_dynamic(t, &s))?;
        Ok(PyQTensor { q, device: self.device.clone_ref(py), scheme: scheme.clone().unbind() })
    }
}

#[pymethods]
impl PyQTensor {
    /// The shape as a tuple of ints.
    fn dims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.q.shape())
    }

    /// The number of dims.
    fn rank(&self) -> usize {
        self.q.shape().len()
    }

    /// The number of values.
    fn num_elements(&self) -> usize {
        self.q.shape().iter().product()
    }

    /// The scheme it was quantized with.
    fn scheme(&self, py: Python<'_>) -> Py<PyAny> {
        self.scheme.clone_ref(py)
    }

    /// The device of the tensor it was quantized from.
    fn device(&self, py: Python<'_>) -> Py<PyDevice> {
        self.device.clone_ref(py)
    }

    /// Bytes of the values at their bit width, plus the scales.
    fn nbytes(&self) -> usize {
        self.q.nbytes()
    }

    /// The float tensor the values stand for, `scale * q` (f32).
    fn dequantize(&self, py: Python<'_>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.q.dequantize().map_err(|e| to_py(py, e))?, self.device.clone_ref(py)))
    }

    /// The integer values, an Int tensor of the same shape.
    fn values(&self, py: Python<'_>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.q.values().map_err(|e| to_py(py, e))?, self.device.clone_ref(py)))
    }

    /// The scales, one per tensor or block (Burn's parameter shape).
    fn scales(&self, py: Python<'_>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.q.scales().map_err(|e| to_py(py, e))?, self.device.clone_ref(py)))
    }

    /// Whether `linear` runs on the int8 product (rank 2, 8-bit values, one scale).
    fn has_int8_product(&self) -> bool {
        self.q.has_int8_product()
    }

    /// `x @ self + bias` for `x` `[..., d_input]` and this QTensor a
    /// `[d_input, d_output]` weight, in `x`'s dtype; inference only (no backward).
    #[pyo3(signature = (x, bias = None))]
    fn linear(&self, py: Python<'_>, x: PyRef<'_, PyTensor>, bias: Option<PyRef<'_, PyTensor>>) -> PyResult<PyTensor> {
        if let Some(b) = &bias {
            x.same_backend(py, "quantized linear", b)?;
        }
        let b = bias.as_deref().map(|b| b.t.clone());
        x.op(py, "quantized linear", |t| self.q.linear(t, b.as_ref()))
    }

    /// Whether `conv2d` with `groups` runs on the int8 product (rank 4, 8-bit values, one scale, one group).
    #[pyo3(signature = (groups = 1))]
    fn has_int8_conv(&self, groups: usize) -> bool {
        self.q.has_int8_conv(groups)
    }

    /// `conv2d(x, self) + bias` for `x` `[batch, c_in, h, w]` and this QTensor a
    /// `[c_out, c_in / groups, kh, kw]` weight (arguments as `ferrum.functional`'s
    /// `conv2d`), in `x`'s dtype; inference only (no backward).
    #[pyo3(signature = (x, bias = None, stride = (1, 1), padding = (NO_PAD, NO_PAD), dilation = (1, 1), groups = 1))]
    #[allow(clippy::too_many_arguments)]
    fn conv2d(
        &self,
        py: Python<'_>,
        x: PyRef<'_, PyTensor>,
        bias: Option<PyRef<'_, PyTensor>>,
        stride: (usize, usize),
        padding: (Pad, Pad),
        dilation: (usize, usize),
        groups: usize,
    ) -> PyResult<PyTensor> {
        if let Some(b) = &bias {
            x.same_backend(py, "quantized conv2d", b)?;
        }
        let o = ConvOptions { stride: [stride.0, stride.1], padding: [padding.0.sides(), padding.1.sides()], dilation: [dilation.0, dilation.1], groups };
        let b = bias.as_deref().map(|b| b.t.clone());
        x.op(py, "quantized conv2d", |t| self.q.conv2d(t, b.as_ref(), &o))
    }

    fn __repr__(&self) -> String {
        let s = self.q.scheme();
        format!("QTensor(shape={:?}, value={}, scales={})", self.q.shape(), s.value.name(), self.q.raw_scales().len())
    }
}

/// An int8 matrix packed once for integer products (ONNX's `MatMulInteger`
/// and `QLinearMatMul` with a constant weight): `matmul(a, a_zero)` is
/// `(a - a_zero) @ (values - zero)`, exact in int32, on the int8 tiles.
///
/// Example:
///     >>> b = Tensor.from_data([[1, 4], [2, 5], [3, 6]], device)
///     >>> w = Int8Matrix.pack(b, [0])
///     >>> a = Tensor.from_data([[11, 7, 3], [10, 6, 2]], device)
///     >>> w.matmul(a, [12]).to_data().to_list()
///     [-38, -83, -44, -98]
#[pyclass(frozen, name = "Int8Matrix", module = "ferrum")]
pub struct PyInt8Matrix {
    m: Int8Matrix,
}

#[pymethods]
impl PyInt8Matrix {
    /// `values` (an Int tensor `[k, n]`) and its zero points (1 or `n`)
    /// packed; None when a value or zero point is outside int8's range.
    #[staticmethod]
    fn pack(py: Python<'_>, values: PyRef<'_, PyTensor>, zero: Vec<i64>) -> PyResult<Option<PyInt8Matrix>> {
        Ok(values.run(py, |t| Int8Matrix::new(t, &zero))?.map(|m| PyInt8Matrix { m }))
    }

    /// `[k, n]`.
    fn dims(&self) -> (usize, usize) {
        let [k, n] = self.m.shape();
        (k, n)
    }

    /// `(a - a_zero) @ (self - zero)` for an Int `a` `[..., k]`: an Int tensor
    /// `[..., n]`; `a_zero` is 1 value or one per row of a matrix. None when a
    /// value of `a` or a zero point is outside uint8's range.
    fn matmul(&self, py: Python<'_>, a: PyRef<'_, PyTensor>, a_zero: Vec<i64>) -> PyResult<Option<PyTensor>> {
        let out = a.run(py, |t| self.m.matmul(t, &a_zero))?;
        Ok(out.map(|t| PyTensor::made(t, a.device.clone_ref(py))))
    }

    /// onnxruntime's dynamically quantized linear in one call: an f32 `x`
    /// `[..., k]` quantized per tensor as `DynamicQuantizeLinear` does, the
    /// exact product with `self`, then `float(sum) * (x_scale * w_scale[j]) +
    /// bias[j]` and `relu`, each step rounded in f32 as the graph's nodes
    /// compute it: an f32 tensor `[..., n]`. `w_scale` holds 1 or `n` values,
    /// `bias` is an f32 tensor `[n]` or None. None for another dtype, an empty
    /// `x` or a non-finite value.
    #[pyo3(signature = (x, w_scale, bias, relu))]
    fn dynamic_linear(&self, py: Python<'_>, x: PyRef<'_, PyTensor>, w_scale: Vec<f32>, bias: Option<PyRef<'_, PyTensor>>, relu: bool) -> PyResult<Option<PyTensor>> {
        let b = bias.map(|b| b.t.clone());
        let out = x.run(py, |t| self.m.dynamic_linear(t, &w_scale, b.as_ref(), relu))?;
        Ok(out.map(|t| PyTensor::new(t, x.device.clone_ref(py))))
    }

    fn __repr__(&self) -> String {
        format!("Int8Matrix(dims={:?})", self.m.shape())
    }
}

/// ONNX's `DynamicQuantizeLinear` of a float32 tensor in one range pass and
/// one quantizing pass: `(y, scale, zero)` with `y` an Int tensor of `x`'s
/// shape holding uint8 values, `scale = (max(x, 0) - min(x, 0)) / 255` and
/// `zero = round(clamp(-min(x, 0) / scale, 0, 255))` (each step in float32,
/// rounding half to even); None for another dtype, an empty `x` or a
/// non-finite value.
///
/// Example:
///     >>> from ferrum._ferrum import dynamic_quantize_u8
///     >>> y, scale, zero = dynamic_quantize_u8(Tensor.from_data([0.0, 2.0, -0.55, 1.0], device))
///     >>> y.to_data().to_list(), round(scale, 6), zero
///     ([55, 255, 0, 155], 0.01, 55)
#[pyfunction(name = "dynamic_quantize_u8")]
fn dynamic_quantize_u8_py(py: Python<'_>, x: PyRef<'_, PyTensor>) -> PyResult<Option<(PyTensor, f32, i64)>> {
    let out = x.run(py, dynamic_quantize_u8)?;
    Ok(out.map(|(y, scale, zero)| (PyTensor::made(y, x.device.clone_ref(py)), scale, zero)))
}

/// `conv2d(x - x_zero, w - w_zero)` exactly (ONNX's `ConvInteger`, wrapped
/// to int32) on the int8 product: `x` an Int tensor `[batch, c_in, h, w]` of
/// uint8 values, `w` `[c_out, c_in / groups, kh, kw]` of int8 values, `w_zero`
/// 1 or `c_out` zero points, `pads` (top, left, bottom, right); an Int tensor
/// `[batch, c_out, oh, ow]`. None when a value or zero point is outside
/// those ranges.
///
/// Example:
///     >>> from ferrum._ferrum import int8_conv2d
///     >>> x = Tensor.from_data([[[[3, 4], [5, 6]]]], device)
///     >>> w = Tensor.from_data([[[[1, -1], [2, 0]]]], device)
///     >>> int8_conv2d(x, 2, w, [0], (1, 1), (0, 0, 0, 0), (1, 1), 1).to_data().to_list()
///     [[[[5]]]]
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn int8_conv2d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    x_zero: i64,
    w: PyRef<'_, PyTensor>,
    w_zero: Vec<i64>,
    strides: (usize, usize),
    pads: (usize, usize, usize, usize),
    dilations: (usize, usize),
    groups: usize,
) -> PyResult<Option<PyTensor>> {
    let g = IntConv2d { stride: [strides.0, strides.1], pads: [pads.0, pads.1, pads.2, pads.3], dilation: [dilations.0, dilations.1], groups };
    let wt = w.t.clone();
    let out = x.run(py, |t| conv2d_u8s8(t, x_zero, &wt, &w_zero, &g))?;
    Ok(out.map(|t| PyTensor::made(t, x.device.clone_ref(py))))
}

/// An int8 filter bank packed once for integer convolutions (ONNX's
/// `ConvInteger` and `QLinearConv` with a constant weight): `conv` gives
/// the exact sums `conv2d(x - x_zero, w - w_zero)`, `qlinear` requantizes
/// them in the same pass over the output. Inputs are Int tensors
/// `[batch, c_in, h, w]` of uint8 values (a U8 tensor is read in place).
///
/// Example:
///     >>> from ferrum._ferrum import Int8Conv
///     >>> w = Int8Conv.pack(Tensor.from_data([[[[1, -1], [2, 0]]]], device), [0], 1)
///     >>> x = Tensor.from_data([[[[3, 4], [5, 6]]]], device)
///     >>> w.conv(x, 2, (1, 1), (0, 0, 0, 0), (1, 1)).to_data().to_list()
///     [[[[5]]]]
///     >>> w.qlinear(x, 2, (1, 1), (0, 0, 0, 0), (1, 1), [0.5], [4], 10, 0, 255).to_data().to_list()
///     [[[[15]]]]
#[pyclass(frozen, name = "Int8Conv", module = "ferrum")]
pub struct PyInt8Conv {
    c: Int8Conv,
}

impl PyInt8Conv {
    fn geometry(&self, strides: (usize, usize), pads: (usize, usize, usize, usize), dilations: (usize, usize)) -> IntConv2d {
        IntConv2d { stride: [strides.0, strides.1], pads: [pads.0, pads.1, pads.2, pads.3], dilation: [dilations.0, dilations.1], groups: self.c.groups() }
    }
}

#[pymethods]
impl PyInt8Conv {
    /// `w` (an Int tensor `[c_out, c_in / groups, kh, kw]`) with its zero
    /// points (1 or `c_out`) packed in `groups` groups; None when a value or
    /// zero point is outside int8's range.
    #[staticmethod]
    fn pack(py: Python<'_>, w: PyRef<'_, PyTensor>, zero: Vec<i64>, groups: usize) -> PyResult<Option<PyInt8Conv>> {
        Ok(w.run(py, |t| pack_int8_conv(t, &zero, groups))?.map(|c| PyInt8Conv { c }))
    }

    /// `[c_out, c_in / groups, kh, kw]`.
    fn dims(&self) -> (usize, usize, usize, usize) {
        let [a, b, c, d] = self.c.shape();
        (a, b, c, d)
    }

    /// The exact sums `conv2d(x - x_zero, self)` (pads: top, left, bottom,
    /// right): an Int tensor `[batch, c_out, oh, ow]` of int32 values. None
    /// when a value of `x` or `x_zero` is outside uint8.
    fn conv(
        &self,
        py: Python<'_>,
        x: PyRef<'_, PyTensor>,
        x_zero: i64,
        strides: (usize, usize),
        pads: (usize, usize, usize, usize),
        dilations: (usize, usize),
    ) -> PyResult<Option<PyTensor>> {
        let g = self.geometry(strides, pads, dilations);
        let out = x.run(py, |t| run_int8_conv(&self.c, t, x_zero, &g, IntConvResult::Sums))?;
        Ok(out.map(|t| PyTensor::new(t, x.device.clone_ref(py))))
    }

    /// `clamp(round_half_even((sum + bias[o]) * scale[o] + y_zero), lo, hi)`
    /// of the sums `conv` gives (`scale`: 1 or `c_out` values, `bias`:
    /// `c_out` int32 values or None), computed in f64: a U8 tensor when
    /// `lo..=hi` lies in 0..=255, else an Int tensor. None when a value of
    /// `x` or `x_zero` is outside uint8.
    #[allow(clippy::too_many_arguments)]
    fn qlinear(
        &self,
        py: Python<'_>,
        x: PyRef<'_, PyTensor>,
        x_zero: i64,
        strides: (usize, usize),
        pads: (usize, usize, usize, usize),
        dilations: (usize, usize),
        scale: Vec<f64>,
        bias: Option<Vec<i32>>,
        y_zero: i32,
        lo: i32,
        hi: i32,
    ) -> PyResult<Option<PyTensor>> {
        let g = self.geometry(strides, pads, dilations);
        let rq = Requant { scale: &scale, bias: bias.as_deref(), y_zero, lo, hi };
        let out = x.run(py, |t| run_int8_conv(&self.c, t, x_zero, &g, IntConvResult::Requant(rq)))?;
        Ok(out.map(|t| PyTensor::new(t, x.device.clone_ref(py))))
    }

    fn __repr__(&self) -> String {
        format!("Int8Conv(dims={:?}, groups={})", self.c.shape(), self.c.groups())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyQTensor>()?;
    m.add_class::<PyInt8Conv>()?;
    m.add_class::<PyInt8Matrix>()?;
    m.add_function(wrap_pyfunction!(dynamic_quantize_u8_py, m)?)?;
    m.add_function(wrap_pyfunction!(int8_conv2d, m)?)?;
    Ok(())
}
