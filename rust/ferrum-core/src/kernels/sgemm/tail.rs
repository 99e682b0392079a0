//! The last step of a span, shared: threads that have run out of spans
//! take row blocks of another span's last step.
//!
//! A product from `SHARE_FROM` up runs one span per thread, each packing
//! all of A itself, so a thread that finishes first has nothing left to
//! claim: on two threads of a shared Xeon, 2048^3 calls ended with one
//! thread idle for 1-5 ms of 65-83 (once 12 ms; the other had been
//! preempted or ran slower), and a second span per thread would pack A again, which costs
//! as much as it saves. The row blocks of a span's last depth step need
//! no more packing of A than the owner does, and no other thread writes
//! their output afterwards, so any thread can run some of them: it packs
//! the blocks of A it runs and reads the owner's packed B.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// A step that any thread may run row blocks of: everything a row block
/// needs besides its packed A.
#[derive(Clone, Copy)]
pub(super) struct Open<S> {
    pub(super) step: S,
    /// Row blocks in the step.
    pub(super) blocks: usize,
}

/// One span's shared last step, opened by the span's owner for as long as
/// it runs the step.
pub(super) struct Tail<S> {
    /// The open step and its generation, or None between steps.
    open: Mutex<Option<(u32, Open<S>)>>,
    /// The generation of the open step (high 32 bits) and its next
    /// unclaimed row block (low 32 bits). A thread that copied the step
    /// of an older generation can claim nothing of a newer one.
    claim: AtomicU64,
    /// Row blocks of the open step that other threads have finished.
    finished: AtomicUsize,
    /// Row blocks of the open step, 0 when none is open: read before the
    /// lock, so that threads waiting for work leave it to the owner.
    blocks: AtomicUsize,
}

impl<S> Default for Tail<S> {
    fn default() -> Tail<S> {
        Tail { open: Mutex::new(None), claim: AtomicU64::new(0), finished: AtomicUsize::new(0), blocks: AtomicUsize::new(0) }
    }
}

/// Counts one finished block when dropped, so that a block that unwinds
/// still ends its owner's wait.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Closes a tail's step when dropped.
struct Close<'a, S>(&'a Tail<S>);

impl<S> Drop for Close<'_, S> {
    fn drop(&mut self) {
        self.0.blocks.store(0, Ordering::Release);
        *self.0.open.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

const LOW: u64 = (1 << 32) - 1;

impl<S: Copy> Tail<S> {
    /// Run every row block of `open.step` with `run(block)`, letting threads
    /// that call [`Tail::help`] meanwhile take some; returns when every
    /// block has finished, so the step's buffers may be reused.
    pub(super) fn share(&self, open: Open<S>, mut run: impl FnMut(usize)) {
        let blocks = open.blocks.min(LOW as usize);
        let generation = {
            let mut slot = self.open.lock().unwrap_or_else(|e| e.into_inner());
            // Only the owner opens steps, under the lock, so the last
            // generation is the one in `claim`.
            let generation = ((self.claim.load(Ordering::Relaxed) >> 32) as u32).wrapping_add(1);
            self.finished.store(0, Ordering::Relaxed);
            self.claim.store(u64::from(generation) << 32, Ordering::Release);
            self.blocks.store(blocks, Ordering::Release);
            *slot = Some((generation, Open { blocks, ..open }));
            generation
        };
        // Closed on the way out, also if a block unwinds.
        let _close = Close(self);
        let mut ran = 0;
        while let Some(block) = self.next(generation, blocks) {
            run(block);
            ran += 1;
        }
        // Every block is claimed; wait for those that others run.
        while self.finished.load(Ordering::Acquire) < blocks - ran {
            std::hint::spin_loop();
        }
    }

    /// Run row blocks of the open step, if there is one, with
    /// `run(step, block)` until none is left unclaimed; whether any ran.
    pub(super) fn help(&self, mut run: impl FnMut(&S, usize)) -> bool {
        if (self.claim.load(Ordering::Acquire) & LOW) as usize >= self.blocks.load(Ordering::Acquire) {
            return false;
        }
        let Some((generation, open)) = *self.open.lock().unwrap_or_else(|e| e.into_inner()) else { return false };
        let mut any = false;
        while let Some(block) = self.next(generation, open.blocks) {
            let _finished = Finished(&self.finished);
            run(&open.step, block);
            any = true;
        }
        any
    }

    /// Claim the next row block of step `generation`, or None when it is
    /// all claimed or no longer open.
    fn next(&self, generation: u32, blocks: usize) -> Option<usize> {
        let mut now = self.claim.load(Ordering::Acquire);
        loop {
            let block = (now & LOW) as usize;
            if now >> 32 != u64::from(generation) || block >= blocks {
                return None;
            }
            match self.claim.compare_exchange_weak(now, now + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(block),
                Err(seen) => now = seen,
            }
        }
    }
}

/// Help with the open steps of `tails` until no part is in its spans:
/// what a part does once it has run out of spans. `running` counts the
/// parts that have started on their spans and not finished them; a part
/// not yet started does not count, so this never waits on a part queued
/// behind the calling thread.
pub(super) fn help_until_done<S: Copy>(tails: &[Tail<S>], running: &AtomicUsize, mut run: impl FnMut(&S, usize)) {
    loop {
        let mut helped = false;
        for tail in tails {
            helped |= tail.help(&mut run);
        }
        if !helped && running.load(Ordering::Acquire) == 0 {
            return;
        }
        std::hint::spin_loop();
    }
}
