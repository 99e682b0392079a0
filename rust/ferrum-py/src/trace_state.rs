//! What tensor creation tells the trace recorder (`crate::trace`): serial numbers, and which
//! tensors a trace made without recording them. Apart from the recorder so that `tensor` does not
//! depend on it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

static SERIAL: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// The native call in progress, as Python's profile hook reports it while tracing.
    static CALL: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Serial -> the call that made the tensor during the trace without an instruction.
    static UNTRACED: RefCell<HashMap<u64, String>> = RefCell::new(HashMap::new());
}

/// A new tensor's serial number (never reused in a process).
pub fn next_serial() -> u64 {
    SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// Whether a trace records on this thread.
pub fn active() -> bool {
    ACTIVE.get()
}

/// Start or stop recording on this thread (stopping forgets the untraced tensors).
pub fn set_active(on: bool) {
    ACTIVE.set(on);
    CALL.with(|c| *c.borrow_mut() = None);
    UNTRACED.with(|u| u.borrow_mut().clear());
}

/// Called for each tensor an op makes: while tracing, it is untraced until an instruction claims it.
pub fn made(serial: u64) {
    if !ACTIVE.get() {
        return;
    }
    let by = CALL.with(|c| c.borrow().clone()).unwrap_or_else(|| "a Python operator (such as a bitwise shift)".to_string());
    UNTRACED.with(|u| u.borrow_mut().insert(serial, by));
}

/// The call that made `serial` without an instruction, if it did.
pub fn untraced_by(serial: u64) -> Option<String> {
    UNTRACED.with(|u| u.borrow().get(&serial).cloned())
}

/// `serial` is accounted for (recorded, or a constant); `by`: it is untraced after all, made by `by`.
pub fn settle(serial: u64, by: Option<String>) {
    UNTRACED.with(|u| {
        let mut u = u.borrow_mut();
        match by {
            Some(by) => u.insert(serial, by),
            None => u.remove(&serial),
        }
    });
}

/// Set the native call in progress (`None` when it returned).
pub fn set_call(name: Option<String>) {
    CALL.with(|c| *c.borrow_mut() = name);
}
