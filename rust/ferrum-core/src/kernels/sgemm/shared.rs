//! One operand of a threaded product, packed once for all its parts.
//!
//! The output is split between threads by columns (or rows), so every part
//! needs all of A (or all of B). Packed per part, that operand is packed once
//! per thread: at 1024^3 on two threads each thread packed 4 MiB of A that
//! the other packed too. Here the blocks of the shared operand live in one
//! buffer; a part that reaches a block claims its panels a few at a time,
//! so parts arriving together split the packing and a part arriving later
//! finds the block done. A part waits only for panels that another part has
//! claimed and is packing, so a part that never starts holds nobody up.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::operand::Aligned;

/// Panels a part claims at once: a few KiB of packing each (6 x 256 floats
/// for the AVX2 tile), so that the claim's cache-line transfer between
/// cores is small against the copy.
const CLAIM: usize = 4;

/// Spins between looks at a block's progress and offers of the core.
const SPINS: u32 = 64;

/// Floats above which the shared operand is not packed whole (32 MiB, which
/// covers both operands up to 2048 x 2048): each part then packs its own
/// blocks, as a single thread does.
pub const MAX_FLOATS: usize = 8 << 20;

thread_local! {
    /// The calling thread's buffer for shared blocks, kept between calls so
    /// that a repeated product neither allocates nor page-faults.
    static BUFFER: RefCell<Aligned> = RefCell::new(Aligned::default());
}

/// Progress of one block: panels claimed by some part, panels packed.
#[derive(Default)]
struct Block {
    claimed: AtomicUsize,
    done: AtomicUsize,
}

/// The packed blocks of the shared operand: `k_blocks x across` blocks of
/// `block` floats each, block `(p, i)` at `(p * across + i) * block`.
pub struct SharedPacks {
    buf: *mut f32,
    block: usize,
    across: usize,
    blocks: Vec<Block>,
}

// SAFETY: parts write disjoint panels of the buffer (each panel is claimed
// by exactly one part) and read a block only after every panel of it is
// done (Acquire on `done` pairs with the packer's Release).
unsafe impl Sync for SharedPacks {}

impl SharedPacks {
    /// Block `(p, i)`, packed: `pack(first, count, dst)` packs panels
    /// `first .. first + count` into `dst` (the block's start) for the
    /// panels that no other part has claimed; the call returns once all
    /// `panels` panels are done.
    ///
    /// # Safety
    /// Every part asks for a block with the same `panels` and a `pack` that
    /// writes only those panels, within the block's `block` floats.
    pub unsafe fn get(&self, p: usize, i: usize, panels: usize, pack: impl Fn(usize, usize, *mut f32)) -> *const f32 {
        let index = p * self.across + i;
        let state = &self.blocks[index];
        // SAFETY: block `index` lies inside the buffer (see `with_shared`).
        let dst = unsafe { self.buf.add(index * self.block) };
        if state.done.load(Ordering::Acquire) < panels {
            loop {
                let first = state.claimed.fetch_add(CLAIM, Ordering::Relaxed);
                if first >= panels {
                    break;
                }
                let count = CLAIM.min(panels - first);
                pack(first, count, dst);
                state.done.fetch_add(count, Ordering::Release);
            }
            // The wait is for at most a claim per other part, unless its
            // thread was preempted: then give the core up.
            while state.done.load(Ordering::Acquire) < panels {
                for _ in 0..SPINS {
                    std::hint::spin_loop();
                }
                if state.done.load(Ordering::Acquire) < panels {
                    std::thread::yield_now();
                }
            }
        }
        dst
    }
}

/// Run `f` with room for `k_blocks x across` shared blocks of `block`
/// floats, or with None when that is more than [`MAX_FLOATS`] or this
/// thread's buffer is in use (a product started from inside a product).
pub fn with_shared<R>(k_blocks: usize, across: usize, block: usize, f: impl FnOnce(Option<&SharedPacks>) -> R) -> R {
    let floats = k_blocks.saturating_mul(across).saturating_mul(block);
    if floats > MAX_FLOATS {
        return f(None);
    }
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            let blocks = (0..k_blocks * across).map(|_| Block::default()).collect();
            let shared = SharedPacks { buf: buffer.ensure(floats), block, across, blocks };
            f(Some(&shared))
        }
        Err(_) => f(None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_panel_is_packed_once_whichever_part_arrives() {
        // 4 threads ask for every block, in different orders; each panel
        // must be packed exactly once, and each caller must see it packed.
        let (k_blocks, across, panels, width) = (3, 5, 11, 8);
        let packs: Vec<AtomicUsize> = (0..k_blocks * across * panels).map(|_| AtomicUsize::new(0)).collect();
        with_shared(k_blocks, across, panels * width, |shared| {
            let shared = shared.expect("room for 15 small blocks");
            std::thread::scope(|scope| {
                for t in 0..4 {
                    let packs = &packs;
                    scope.spawn(move || {
                        for b in 0..k_blocks * across {
                            let b = if t % 2 == 0 { b } else { k_blocks * across - 1 - b };
                            let (p, i) = (b / across, b % across);
                            // SAFETY: every caller packs panel q of block b
                            // into its own `width` floats.
                            let block = unsafe {
                                shared.get(p, i, panels, |first, count, dst| {
                                    for q in first..first + count {
                                        packs[b * panels + q].fetch_add(1, Ordering::Relaxed);
                                        for x in 0..width {
                                            *dst.add(q * width + x) = (b * 1000 + q) as f32;
                                        }
                                    }
                                })
                            };
                            for q in 0..panels {
                                // SAFETY: the block is done, so readable.
                                let v = unsafe { *block.add(q * width + width - 1) };
                                assert_eq!(v, (b * 1000 + q) as f32, "block {b} panel {q} read before it was packed");
                            }
                        }
                    });
                }
            });
        });
        assert!(packs.iter().all(|n| n.load(Ordering::Relaxed) == 1), "a panel was packed twice or never");
    }

    #[test]
    fn no_shared_room_past_the_cap_or_inside_a_product() {
        with_shared(1, 1, MAX_FLOATS + 1, |s| assert!(s.is_none(), "more than the cap"));
        with_shared(1, 1, 16, |outer| {
            assert!(outer.is_some());
            with_shared(1, 1, 16, |inner| assert!(inner.is_none(), "the calling thread's buffer is in use"));
        });
    }
}
