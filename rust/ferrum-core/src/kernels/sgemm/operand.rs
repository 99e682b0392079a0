//! The matrices a GEMM reads (strided operands) and the aligned buffers it
//! packs them into.

use std::cell::RefCell;

/// One operand: a pointer to element (0, 0) and its (row, col) strides,
/// which may be negative (flipped views) or zero (expanded views).
#[derive(Clone, Copy, Debug)]
pub struct Operand {
    pub ptr: *const f32,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: an Operand is only read through, by threads that the caller of
// `sgemm` keeps inside its borrow of the buffer.
unsafe impl Send for Operand {}
// SAFETY: as above; reads only.
unsafe impl Sync for Operand {}

impl Operand {
    /// Address of element `(i, j)`.
    ///
    /// # Safety
    /// `(i, j)` lies inside the matrix the operand describes.
    #[inline(always)]
    pub unsafe fn at(self, i: usize, j: usize) -> *const f32 {
        // SAFETY: the caller keeps (i, j) inside the matrix, whose elements
        // are all inside one allocation.
        unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }

    /// The operand from element `(i, j)` on.
    ///
    /// # Safety
    /// `(i, j)` lies inside the matrix.
    pub(super) unsafe fn from(self, i: usize, j: usize) -> Operand {
        // SAFETY: forwarded from the caller.
        Operand { ptr: unsafe { self.at(i, j) }, ..self }
    }
}

/// A 64-byte aligned float buffer that only grows.
#[derive(Default)]
pub(super) struct Aligned(Vec<Lane>);

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lane([f32; 16]);

impl Aligned {
    /// The buffer's start, to read what was written.
    pub(super) fn ptr(&self) -> *const f32 {
        self.0.as_ptr().cast()
    }

    /// The buffer, grown to at least `floats` floats.
    pub(super) fn ensure(&mut self, floats: usize) -> *mut f32 {
        let lanes = floats.div_ceil(16);
        if self.0.len() < lanes {
            self.0.resize(lanes, Lane([0.0; 16]));
        }
        self.0.as_mut_ptr().cast()
    }
}

/// Run `f` with this thread's buffer in `cell` (a fresh one if the thread
/// is already using it, which only a re-entrant caller could cause).
pub(super) fn with_buffer<R>(cell: &'static std::thread::LocalKey<RefCell<Aligned>>, f: impl FnOnce(&mut Aligned) -> R) -> R {
    cell.with(|c| match c.try_borrow_mut() {
        Ok(mut buf) => f(&mut buf),
        Err(_) => f(&mut Aligned::default()),
    })
}
