//! Output buffers for kernels. A kernel that writes every element of its
//! output gets the buffer uninitialised: zeroing it first would be a whole
//! extra pass over memory (calloc of recycled heap memory memsets it). The
//! allocation is fallible, so a huge output is an error rather than an abort,
//! and large buffers ask the kernel for transparent huge pages, which turns
//! the first-touch page faults of a fresh mapping (one per 4 KiB, the main
//! cost of a large element-wise op) into one per 2 MiB, as NumPy does.

use std::mem::MaybeUninit;

use crate::error::{Error, Result};
use crate::shape::try_with_capacity;

/// Bytes from which a buffer is advised to use huge pages (NumPy's threshold).
const HUGE_PAGE_MIN_BYTES: usize = 1 << 22;

/// A vector of `n` elements, each written once by `fill`.
///
/// A kernel that stops early on an interrupt ([`crate::interrupt::poll`])
/// leaves elements unwritten: then the buffer is dropped as it is, empty,
/// and the call fails with [`Error::Interrupted`].
///
/// # Safety
/// `fill` must initialise every element of the slice it is given, unless
/// the call it belongs to has been stopped.
pub unsafe fn new_filled<T>(op: &'static str, n: usize, fill: impl FnOnce(&mut [MaybeUninit<T>])) -> Result<Vec<T>> {
    let mut v: Vec<T> = try_with_capacity(op, n)?;
    advise_huge_pages(&mut v);
    fill(&mut v.spare_capacity_mut()[..n]);
    if crate::interrupt::stopped() {
        return Err(Error::Interrupted);
    }
    // SAFETY: the caller guarantees `fill` wrote all `n` elements when the
    // call was not stopped.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Ask for huge pages over a large buffer before it is first touched.
/// Advice only: failure changes nothing but speed. The range starts at the
/// page holding the buffer's first byte (as NumPy does), not at the next
/// 2 MiB boundary: the kernel places large mappings 2 MiB-aligned, so the
/// allocator's header sits in the first huge page, which would otherwise be
/// left to 512 small-page faults.
fn advise_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 1 << 12;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < HUGE_PAGE_MIN_BYTES {
            return;
        }
        let start = v.as_mut_ptr() as usize & !(PAGE - 1);
        let end = (v.as_mut_ptr() as usize + bytes) & !(PAGE - 1);
        // SAFETY: the pages are mapped (they hold the buffer), and
        // MADV_HUGEPAGE never changes memory contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (v, HUGE_PAGE_MIN_BYTES);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_vector_has_every_element() {
        for n in [0, 5, (1 << 22) + 3] {
            // SAFETY: the closure writes every slot.
            let v = unsafe { new_filled::<f32>("test", n, |s| s.iter_mut().enumerate().for_each(|(i, x)| { x.write(i as f32); })) }.unwrap();
            assert_eq!(v.len(), n);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as f32));
        }
    }

    #[test]
    fn memory_limit_is_the_machines_memory() {
        let limit = crate::shape::memory_limit();
        // Some machine between 64 MiB and 64 PiB.
        assert!(limit > 1 << 26 && limit < 1 << 56, "{limit}");
        let err = crate::shape::try_with_capacity::<u8>("repeat", limit + 1).unwrap_err();
        assert!(err.to_string().contains("more than this machine's memory"), "{err}");
    }

    #[test]
    fn impossible_size_is_an_error() {
        let err = unsafe { new_filled::<f64>("zeros", usize::MAX / 16, |_| unreachable!()) }.unwrap_err();
        assert!(err.to_string().contains("cannot allocate"), "{err}");
    }
}
