//! Stopping long kernels early when the user interrupts (Ctrl-C).
//!
//! The engine knows nothing of signals: whoever drives it (the Python
//! binding) installs a check with [`set_check`] and runs each call it wants
//! interruptible under [`watched`]. Long kernels call [`poll`] between
//! blocks of work (a GEMM block, a convolution band, a graph node); on the
//! watching thread `poll` runs the installed check at most every
//! [`CHECK_EVERY`], and once it reports a stop every thread working for
//! that call (team helpers included, through the call's token) sees `poll`
//! return true, leaves its loop, and `watched` returns
//! [`Error::Interrupted`]. What the cut-short kernels left in their outputs
//! is never seen: the whole call's result is replaced by the error.
//!
//! A kernel that stops early must leave its output in a state that is safe
//! to drop (see `kernels::alloc::new_filled`), nothing more.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How often the watching thread runs the installed check: often enough
/// to stop within about 100 ms of a Ctrl-C, rarely enough that the check's
/// cost (the binding takes Python's lock for it) does not show.
pub const CHECK_EVERY: Duration = Duration::from_millis(40);

/// The installed check: true when the user asked to stop.
static CHECK: OnceLock<fn() -> bool> = OnceLock::new();

thread_local! {
    /// The stop token of the call this thread works for: set by `watched`
    /// on the calling thread, and by team helpers while they run its parts.
    static TOKEN: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
    /// On the watching thread, when the check is next due.
    static NEXT_CHECK: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Install the check that tells whether the user asked to stop. The first
/// one installed stays (the binding installs it once, at import).
pub fn set_check(check: fn() -> bool) {
    let _ = CHECK.set(check);
}

/// Run `f` as one interruptible call on this thread: kernels inside it
/// stop at their next [`poll`] once the check reports a stop, and the call
/// then returns [`Error::Interrupted`] whatever `f` returned. A call
/// nested inside another one shares the outer one's token.
pub fn watched<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    if CHECK.get().is_none() || TOKEN.with(|t| t.borrow().is_some()) {
        return f();
    }
    /// Clears this thread's watch however `f` ends, a panic included.
    struct Unwatch;
    impl Drop for Unwatch {
        fn drop(&mut self) {
            TOKEN.with(|t| *t.borrow_mut() = None);
            NEXT_CHECK.with(|n| n.set(None));
        }
    }
    let token = Arc::new(AtomicBool::new(false));
    TOKEN.with(|t| *t.borrow_mut() = Some(token.clone()));
    NEXT_CHECK.with(|n| n.set(Some(Instant::now() + CHECK_EVERY)));
    let unwatch = Unwatch;
    let result = f();
    drop(unwatch);
    if token.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    result
}

/// Whether the current call should stop now. Cheap enough to call once per
/// block of a kernel: a thread-local read, and on the watching thread a
/// clock read, with the installed check run only every [`CHECK_EVERY`].
#[inline]
pub fn poll() -> bool {
    TOKEN.with(|t| {
        let t = t.borrow();
        let Some(token) = t.as_ref() else { return false };
        if token.load(Ordering::Relaxed) {
            return true;
        }
        let due = NEXT_CHECK.with(|n| match n.get() {
            Some(at) if Instant::now() >= at => {
                n.set(Some(Instant::now() + CHECK_EVERY));
                true
            }
            _ => false,
        });
        if due && CHECK.get().is_some_and(|check| check()) {
            token.store(true, Ordering::Relaxed);
            return true;
        }
        false
    })
}

/// Whether the call this thread works for has been stopped (without
/// running the check): for code that must not keep a cut-short result.
pub fn stopped() -> bool {
    TOKEN.with(|t| t.borrow().as_ref().is_some_and(|token| token.load(Ordering::Relaxed)))
}

/// The token of the call this thread works for, for a parallel loop to
/// hand to the threads that run its parts.
pub(crate) fn token() -> Option<Arc<AtomicBool>> {
    TOKEN.with(|t| t.borrow().clone())
}

/// Run `f` (a part of a parallel loop, on a helper thread) for the call
/// whose token is `token`, so that [`poll`] inside it sees that call's stop.
pub(crate) fn working_for<R>(token: Option<&Arc<AtomicBool>>, f: impl FnOnce() -> R) -> R {
    /// Puts back the thread's own token however `f` ends.
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            TOKEN.with(|t| *t.borrow_mut() = self.0.take());
        }
    }
    let Some(token) = token else { return f() };
    let _restore = Restore(TOKEN.with(|t| t.borrow_mut().replace(token.clone())));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static CALLS: AtomicUsize = AtomicUsize::new(0);
    static STOP_AFTER: AtomicUsize = AtomicUsize::new(usize::MAX);

    fn test_check() -> bool {
        CALLS.fetch_add(1, Ordering::SeqCst) + 1 >= STOP_AFTER.load(Ordering::SeqCst)
    }

    #[test]
    fn a_stop_reaches_every_poll_and_the_call_fails() {
        set_check(test_check);
        STOP_AFTER.store(CALLS.load(Ordering::SeqCst) + 1, Ordering::SeqCst);
        assert!(!poll(), "outside a watched call nothing stops");
        let start = Instant::now();
        let mut polls = 0;
        let r: Result<()> = watched(|| {
            while !poll() {
                polls += 1;
                assert!(start.elapsed() < Duration::from_secs(5), "the check never ran");
            }
            // Once stopped, stopped for good, on helpers too.
            assert!(poll());
            let token = token();
            let seen = std::thread::scope(|s| s.spawn(|| working_for(token.as_ref(), poll)).join().unwrap());
            assert!(seen);
            Ok(())
        });
        assert_eq!(r, Err(Error::Interrupted));
        assert!(start.elapsed() >= CHECK_EVERY, "the check runs no more often than CHECK_EVERY");
        assert!(polls > 0);
        // The next call starts afresh.
        STOP_AFTER.store(usize::MAX, Ordering::SeqCst);
        assert_eq!(watched(|| Ok(poll())), Ok(false));
    }
}
