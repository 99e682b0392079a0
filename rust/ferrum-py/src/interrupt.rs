//! Ctrl-C during long engine calls. The engine polls between blocks of its
//! long kernels (see `ferrum_core::interrupt`); the check it polls runs
//! Python's signal handlers, on the main thread (the only one Python
//! delivers signals to), taking the GIL back for that moment. A handler
//! that raises (KeyboardInterrupt, by default) stops the call, and that
//! exception is what the call then raises; a handler that only records the
//! signal (a training loop's graceful interrupter) lets the call finish.

use std::cell::RefCell;
use std::sync::OnceLock;

use pyo3::prelude::*;

/// The thread Python runs signal handlers on.
static MAIN_THREAD: OnceLock<u64> = OnceLock::new();

thread_local! {
    /// The exception a signal handler raised during the current call.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Install the engine's check; called once, at import.
pub fn install(py: Python<'_>) -> PyResult<()> {
    let main: u64 = py.import("threading")?.call_method0("main_thread")?.getattr("ident")?.extract()?;
    let _ = MAIN_THREAD.set(main);
    ferrum_core::interrupt::set_check(run_signal_handlers);
    Ok(())
}

/// Whether this is the thread Python delivers signals to.
pub fn on_main_thread() -> bool {
    // SAFETY: reads the calling thread's identity; needs no interpreter state.
    let me = unsafe { pyo3::ffi::PyThread_get_thread_ident() } as u64;
    MAIN_THREAD.get() == Some(&me)
}

/// The engine's check: run pending signal handlers; true when one raised.
fn run_signal_handlers() -> bool {
    if !on_main_thread() {
        return false;
    }
    Python::attach(|py| match py.check_signals() {
        Ok(()) => false,
        Err(e) => {
            PENDING.with(|p| *p.borrow_mut() = Some(e));
            true
        }
    })
}

/// The exception to raise for an interrupted call: the one the signal
/// handler raised, or KeyboardInterrupt.
pub fn raised() -> PyErr {
    PENDING.with(|p| p.borrow_mut().take()).unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"))
}
