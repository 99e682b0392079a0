//! ferrum's Python binding: converts types, errors and the GIL, nothing else.
//! All numeric work lives in `ferrum-core`.

/// Adds each named `#[pyfunction]` to the module `m`:
/// `add_functions!(m, a, b)` is `m.add_function(wrap_pyfunction!(a, m)?)?;`
/// then the same for `b`. Defined before the `mod` lines so that every
/// module's `register` can use it.
macro_rules! add_functions {
    ($m:expr, $($f:path),+ $(,)?) => {
        $( $m.add_function(pyo3::wrap_pyfunction!($f, $m)?)?; )+
    };
}

mod activation;
mod attention;
mod conv;
mod custom_op;
mod device;
mod distribution;
mod error;
mod gradients;
mod interrupt;
mod module_ops;
mod norm;
mod optim;
mod pad_mode;
mod plan;
mod quantized;
mod record;
mod recurrent;
mod tensor;
mod trace;
mod trace_state;
mod vision;

use pyo3::prelude::*;

/// A training step frees and re-allocates buffers of the same sizes (new
/// parameters, optimizer state, activations) every time. glibc's malloc
/// hands large freed blocks back to the kernel, so each step paid first-touch
/// page faults again (over half of an Adam update of a 400K-parameter model);
/// mimalloc keeps freed pages in the process for reuse. Only the allocations
/// of this extension go through it, never Python's or NumPy's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long mimalloc keeps a freed page before handing it back to the
/// kernel. Its default, one second, is shorter than a training step of a
/// mid-sized model on a busy machine: every step then re-faulted its
/// activations, one zeroed 2 MiB huge page at a time (15% of the CPU time
/// of a transformer-encoder step, `clear_page_erms` in perf). Ten seconds
/// still returns the memory of a process that stops computing. A user's
/// own `MIMALLOC_PURGE_DELAY` wins.
const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

fn keep_freed_pages() {
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // `mi_option_purge_delay` in mimalloc.h (v2 and v3 alike: retired
    // options keep their numbers there, so the enum's values are stable).
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's documented option setter, given a valid option.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

#[pymodule]
fn _ferrum(m: &Bound<'_, PyModule>) -> PyResult<()> {
    keep_freed_pages();
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<tensor::data::PyTensorData>()?;
    m.add_class::<gradients::PyGradients>()?;
    m.add_class::<device::PyDevice>()?;
    m.add_class::<device::PyDType>()?;
    m.add_class::<device::PyKind>()?;
    m.add_class::<device::KindFloat>()?;
    m.add_class::<device::KindInt>()?;
    m.add_class::<device::KindBool>()?;
    m.add_class::<distribution::PyDistribution>()?;
    m.add_class::<pad_mode::PyPadMode>()?;
    add_functions!(
        m,
        distribution::seed, distribution::random_state, distribution::set_random_state, custom_op::custom_op,
        tensor::format::set_print_options, tensor::format::get_print_options,
    );
    error::register(m)?;
    interrupt::install(m.py())?;
    activation::register(m)?;
    attention::register(m)?;
    conv::register(m)?;
    module_ops::register(m)?;
    norm::register(m)?;
    record::register(m)?;
    recurrent::register(m)?;
    optim::register(m)?;
    plan::register(m)?;
    trace::register(m)?;
    quantized::register(m)?;
    vision::register(m)?;
    Ok(())
}
