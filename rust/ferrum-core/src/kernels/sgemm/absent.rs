//! The f32 GEMM's interface on architectures without ferrum's microkernels
//! (all but x86-64): [`Kernel`] has no variant, so no caller can reach a
//! product here and each takes the `gemm` crate's path; the types keep the
//! callers' code the same on every architecture.

/// The microkernels this engine has on this architecture: none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {}

impl Kernel {
    /// Whether this CPU runs the kernel (there is none to run).
    pub fn supported(self) -> bool {
        match self {}
    }

    /// The widest kernel this CPU runs: none.
    pub fn best() -> Option<Kernel> {
        None
    }
}

/// Whether this CPU runs any of the kernels: never on this architecture.
pub fn available() -> bool {
    false
}

/// One operand: a pointer to element (0, 0) and its (row, col) strides.
#[derive(Clone, Copy, Debug)]
pub struct Operand {
    pub ptr: *const f32,
    pub rs: isize,
    pub cs: isize,
}

/// The x86-64 `sgemm`'s signature; no `Kernel` value exists to call it with.
///
/// # Safety
/// None needed: it cannot be called.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(kernel: Kernel, _dst: *mut f32, _dst_rs: usize, _accumulate: bool, _a: Operand, _b: Operand, _m: usize, _k: usize, _n: usize, _threads: usize) {
    match kernel {}
}

/// A packed right-hand operand; none can be built without a `Kernel`.
pub struct PackedB {
    kernel: Kernel,
}

impl PackedB {
    /// # Safety
    /// None needed: no `Kernel` value exists to call it with.
    pub unsafe fn new(kernel: Kernel, _b: Operand, _k: usize, _n: usize) -> PackedB {
        match kernel {}
    }

    /// # Safety
    /// None needed: no `PackedB` exists.
    pub unsafe fn product(&self, _dst: *mut f32, _dst_rs: usize, _accumulate: bool, _a: Operand, _m: usize, _threads: usize) {
        match self.kernel {}
    }
}
