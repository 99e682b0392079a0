//! ferrum's Python binding: converts types, errors and the GIL, nothing else.
//! All numeric work lives in `ferrum-core`.

mod activation;
mod attention;
mod conv;
mod custom_op;
mod data;
mod device;
mod distribution;
mod error;
mod gradients;
mod interrupt;
mod optim;
mod record;
mod recurrent;
mod tensor;

use pyo3::prelude::*;

/// A training step frees and re-allocates buffers of the same sizes (new
/// parameters, optimizer state, activations) every time. glibc's malloc
/// hands large freed blocks back to the kernel, so each step paid first-touch
/// page faults again (over half of an Adam update of a 400K-parameter model);
/// mimalloc keeps freed pages in the process for reuse. Only the allocations
/// of this extension go through it, never Python's or NumPy's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _ferrum(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<data::PyTensorData>()?;
    m.add_class::<gradients::PyGradients>()?;
    m.add_class::<device::PyDevice>()?;
    m.add_class::<device::PyDType>()?;
    m.add_class::<device::PyKind>()?;
    m.add_class::<device::KindFloat>()?;
    m.add_class::<device::KindInt>()?;
    m.add_class::<device::KindBool>()?;
    m.add_class::<distribution::PyDistribution>()?;
    m.add_function(wrap_pyfunction!(distribution::seed, m)?)?;
    m.add_function(wrap_pyfunction!(distribution::random_state, m)?)?;
    m.add_function(wrap_pyfunction!(distribution::set_random_state, m)?)?;
    m.add_function(wrap_pyfunction!(custom_op::custom_op, m)?)?;
    error::register(m)?;
    interrupt::install(m.py())?;
    activation::register(m)?;
    attention::register(m)?;
    conv::register(m)?;
    record::register(m)?;
    recurrent::register(m)?;
    optim::register(m)?;
    Ok(())
}
