//! The memory behind a tensor: a vector ferrum allocated, or memory another
//! library allocated and lent (DLPack, NumPy), kept alive by an owner handle.
//!
//! Both read as a `[T]` through the same pointer and length, so a kernel
//! pays nothing for the second kind. Only ferrum's own vectors are ever
//! written: [`Buffer::as_mut_slice`] and [`Buffer::into_vec`] refuse or copy
//! foreign memory, which is how the in-place reuse of a uniquely owned
//! buffer (see [`crate::Storage`]) leaves a producer's memory untouched.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;

use crate::error::{Error, Result};

/// What keeps foreign memory alive: dropped once, when the last tensor
/// sharing the buffer goes.
pub type ForeignOwner = Box<dyn Send + Sync>;

enum Backing {
    /// A `Vec` taken apart: its capacity, to give the allocation back whole.
    Owned { capacity: usize },
    Foreign(#[allow(dead_code)] ForeignOwner),
}

/// A read-only run of `len` values of `T`: an owned `Vec<T>` or foreign memory.
pub struct Buffer<T> {
    ptr: NonNull<T>,
    len: usize,
    backing: Backing,
}

// SAFETY: an owned buffer is a `Vec<T>`, which is Send and Sync for such
// `T`. Foreign memory is only read through a buffer, and its owner is Send
// and Sync; `Buffer::from_foreign`'s caller vouches for the memory itself.
unsafe impl<T: Send + Sync> Send for Buffer<T> {}
// SAFETY: as for Send: shared access only reads.
unsafe impl<T: Send + Sync> Sync for Buffer<T> {}

impl<T> From<Vec<T>> for Buffer<T> {
    #[inline]
    fn from(v: Vec<T>) -> Self {
        let mut v = ManuallyDrop::new(v);
        // SAFETY: a Vec's pointer is never null (dangling but aligned when empty).
        let ptr = unsafe { NonNull::new_unchecked(v.as_mut_ptr()) };
        Buffer { ptr, len: v.len(), backing: Backing::Owned { capacity: v.capacity() } }
    }
}

impl<T> Buffer<T> {
    /// A buffer over `len` values at `ptr` that another library owns,
    /// kept alive by `owner` until the last tensor over it is dropped.
    ///
    /// An error, and `owner` dropped, when `ptr` is null or not aligned for
    /// `T` or the values would span more than `isize::MAX` bytes: the
    /// caller then copies instead.
    ///
    /// # Safety
    ///
    /// While `owner` lives, `ptr` must be valid for reads of `len` values
    /// of `T`, each a valid `T` (a `bool` byte is 0 or 1). Ferrum never
    /// writes there; writes by anyone else must not happen while an op
    /// reads the buffer (they are seen by the ops that run afterwards).
    pub unsafe fn from_foreign(ptr: *const T, len: usize, owner: ForeignOwner) -> Result<Self> {
        let align = std::mem::align_of::<T>();
        let Some(nn) = NonNull::new(ptr as *mut T) else {
            return Err(Error::invalid("from_foreign", "expected a non-null pointer, found null"));
        };
        if !(ptr as usize).is_multiple_of(align) {
            return Err(Error::invalid("from_foreign", format!("expected a pointer aligned to {align} bytes, found {ptr:p}")));
        }
        if len.checked_mul(std::mem::size_of::<T>()).is_none_or(|bytes| bytes > isize::MAX as usize) {
            return Err(Error::invalid("from_foreign", format!("{len} values do not fit in an address space")));
        }
        Ok(Buffer { ptr: nn, len, backing: Backing::Foreign(owner) })
    }

    /// True when the memory belongs to another library (never written here).
    #[inline]
    pub fn is_foreign(&self) -> bool {
        matches!(self.backing, Backing::Foreign(_))
    }

    /// The values to write in place, for an owned buffer; None for foreign
    /// memory, which is only read.
    #[inline]
    pub fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        match self.backing {
            // SAFETY: `ptr` and `len` are the Vec's, which `&mut self` holds exclusively.
            Backing::Owned { .. } => Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }),
            Backing::Foreign(_) => None,
        }
    }
}

impl<T: Clone> Buffer<T> {
    /// The values as a `Vec`: the owned one itself, or a copy of foreign
    /// memory (whose owner is then released).
    #[inline]
    pub fn into_vec(self) -> Vec<T> {
        let this = ManuallyDrop::new(self);
        match this.backing {
            // SAFETY: the parts of the Vec this buffer was made from, taken
            // back once: `this` is never dropped.
            Backing::Owned { capacity } => unsafe { Vec::from_raw_parts(this.ptr.as_ptr(), this.len, capacity) },
            Backing::Foreign(_) => {
                let copy = this.to_vec();
                // Releases the owner: the buffer is gone once the copy is made.
                drop(ManuallyDrop::into_inner(this));
                copy
            }
        }
    }
}

impl<T> Deref for Buffer<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: an owned buffer holds `len` initialised values; foreign
        // memory does while its owner (held here) lives, as `from_foreign`'s
        // caller promised.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for Buffer<T> {
    #[inline]
    fn drop(&mut self) {
        if let Backing::Owned { capacity } = self.backing {
            // SAFETY: the parts of the Vec this buffer was made from, given back once.
            drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, capacity) });
        }
        // A foreign owner drops with the field.
    }
}

impl<T: fmt::Debug> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its drops, holding the values it lends.
    struct Owner {
        _values: Vec<f32>,
        drops: Arc<AtomicUsize>,
    }
    impl Drop for Owner {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn foreign(values: Vec<f32>) -> (Buffer<f32>, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let (ptr, len) = (values.as_ptr(), values.len());
        let owner = Owner { _values: values, drops: drops.clone() };
        // SAFETY: the owner holds the Vec, whose heap memory does not move.
        (unsafe { Buffer::from_foreign(ptr, len, Box::new(owner)) }.unwrap(), drops)
    }

    #[test]
    fn owned_buffers_round_trip_their_vec() {
        let v = vec![1.0f32, 2.0, 3.0];
        let ptr = v.as_ptr();
        let mut b = Buffer::from(v);
        assert_eq!(&*b, &[1.0, 2.0, 3.0]);
        b.as_mut_slice().unwrap()[1] = 5.0;
        let back = b.into_vec();
        assert_eq!(back, vec![1.0, 5.0, 3.0]);
        assert_eq!(back.as_ptr(), ptr, "the owned vector comes back without a copy");
        assert!(Buffer::<i64>::from(Vec::new()).is_empty());
    }

    #[test]
    fn foreign_buffers_are_read_only_and_copied_out() {
        let (mut b, drops) = foreign(vec![1.0, 2.0]);
        assert!(b.is_foreign());
        assert!(b.as_mut_slice().is_none());
        let ptr = b.as_ptr();
        let v = b.into_vec();
        assert_eq!(v, vec![1.0, 2.0]);
        assert_ne!(v.as_ptr(), ptr);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn bad_pointers_are_errors_and_release_the_owner() {
        let drops = Arc::new(AtomicUsize::new(0));
        let backing = [0u64; 4];
        let odd = (backing.as_ptr() as *const u8).wrapping_add(1) as *const f32;
        let owner = Owner { _values: Vec::new(), drops: drops.clone() };
        // SAFETY: refused before anything is read.
        let e = unsafe { Buffer::from_foreign(odd, 2, Box::new(owner)) }.unwrap_err().to_string();
        assert!(e.contains("aligned to 4 bytes"), "{e}");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // SAFETY: refused before anything is read.
        let e = unsafe { Buffer::<f32>::from_foreign(std::ptr::null(), 0, Box::new(())) }.unwrap_err().to_string();
        assert!(e.contains("non-null"), "{e}");
        // SAFETY: refused before anything is read.
        let e = unsafe { Buffer::<f64>::from_foreign(backing.as_ptr() as *const f64, usize::MAX / 4, Box::new(())) }.unwrap_err().to_string();
        assert!(e.contains("do not fit"), "{e}");
    }
}
