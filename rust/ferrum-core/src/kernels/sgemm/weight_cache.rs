//! Packed convolution weights kept between calls, for weights no gradient
//! will change: an inference network runs the same weights on every input,
//! and packing them afresh made ResNet-50 copy its whole 100 MB of weights
//! on every forward (6% of a batch-1 pass's samples).
//!
//! An entry holds a `Weak` to the weights' buffer. While it does, the
//! buffer cannot be written in place (`Arc::get_mut` refuses a buffer with
//! weak references, so an op that would reuse it allocates instead) and
//! its allocation cannot be freed and handed to other weights: the address
//! names the same values for as long as the entry lives. Entries whose
//! weights have died are dropped at the next insertion; the rest are
//! evicted least recently used first beyond [`CAPACITY_FLOATS`].
//!
//! Foreign memory (shared through DLPack or NumPy) is never cached: its
//! owner may write new values at the same address between calls.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};

use super::driver::Kernel;
use super::operand::{with_buffer, Aligned};
use crate::buffer::Buffer;
use crate::kernels::conv::KeepPacked;

/// Packed floats the cache holds at most (1 GiB): the convolutions of
/// ResNet-50 or VGG-19 take less than a tenth of it each.
const CAPACITY_FLOATS: usize = 1 << 28;

/// What a packing depends on besides the values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Key {
    /// Where the weights start in their buffer.
    pub offset: usize,
    /// Output channels per group, depth, groups.
    pub og: usize,
    pub k: usize,
    pub groups: usize,
    pub kernel: Kernel,
    /// Packed as the columns of a tile whose rows are output positions
    /// (`conv_positions`), not as its rows.
    pub positions: bool,
}

struct Entry {
    weights: Weak<Buffer<f32>>,
    key: Key,
    packed: Arc<Aligned>,
    floats: usize,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The packing of `weights` under `key`: the cached one, or a fresh one
/// made by `pack` (into an empty buffer, returning the floats it used) and
/// kept.
pub fn get_or_pack(weights: &Arc<Buffer<f32>>, key: Key, pack: impl FnOnce(&mut Aligned) -> usize) -> Arc<Aligned> {
    let same = |e: &Entry| e.key == key && std::ptr::eq(e.weights.as_ptr(), Arc::as_ptr(weights));
    if let Ok(mut cache) = CACHE.lock() {
        if let Some(at) = cache.iter().position(same) {
            // Most recently used last.
            let entry = cache.remove(at);
            let packed = entry.packed.clone();
            cache.push(entry);
            return packed;
        }
    }
    // Packed outside the lock: other threads' convolutions go on meanwhile.
    let mut buf = Aligned::default();
    let floats = pack(&mut buf);
    let packed = Arc::new(buf);
    if floats > CAPACITY_FLOATS {
        return packed;
    }
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|e| e.weights.strong_count() > 0);
        let mut held: usize = cache.iter().map(|e| e.floats).sum::<usize>() + floats;
        while held > CAPACITY_FLOATS && !cache.is_empty() {
            held -= cache.remove(0).floats;
        }
        if !cache.iter().any(same) {
            cache.push(Entry { weights: Arc::downgrade(weights), key, packed: packed.clone(), floats });
        }
    }
    packed
}

thread_local! {
    /// The calling thread's buffer for weights packed afresh (not cached),
    /// kept between calls so that it is not allocated for each.
    static WEIGHTS: RefCell<Aligned> = RefCell::new(Aligned::default());
}

/// Run `run` over `w` packed by `pack`: the packing kept in the weight
/// cache under `key` (its offset taken from `keep`) when `keep` describes
/// `w`, else packed afresh into this thread's buffer.
pub(super) fn with_packed<R>(keep: Option<KeepPacked<'_>>, w: &[f32], key: Key, pack: impl FnOnce(&mut Aligned) -> usize, run: impl FnOnce(&Aligned) -> R) -> R {
    match keep.filter(|keep| std::ptr::eq(keep.buffer.as_ptr().wrapping_add(keep.offset), w.as_ptr())) {
        Some(keep) => run(&get_or_pack(keep.buffer, Key { offset: keep.offset, ..key }, pack)),
        None => with_buffer(&WEIGHTS, |buf| {
            pack(buf);
            run(buf)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_once_per_live_weights_and_forgets_dead_ones() {
        let key = Key { offset: 0, og: 2, k: 3, groups: 1, kernel: Kernel::Avx2, positions: false };
        let w = Arc::new(Buffer::from(vec![1.0f32; 6]));
        let packs = std::cell::Cell::new(0);
        let fill = |buf: &mut Aligned| {
            packs.set(packs.get() + 1);
            buf.ensure(16);
            16
        };
        let a = get_or_pack(&w, key, fill);
        let b = get_or_pack(&w, key, fill);
        assert!(Arc::ptr_eq(&a, &b));
        // Another key over the same weights packs again.
        get_or_pack(&w, Key { og: 3, k: 2, ..key }, fill);
        assert_eq!(packs.get(), 2);
        // While cached, the weights cannot be written in place.
        let mut w = w;
        assert!(Arc::get_mut(&mut w).is_none());
        drop(w);
        // New weights (possibly at the old address) pack afresh.
        let w2 = Arc::new(Buffer::from(vec![2.0f32; 6]));
        get_or_pack(&w2, key, fill);
        assert_eq!(packs.get(), 3);
    }
}
