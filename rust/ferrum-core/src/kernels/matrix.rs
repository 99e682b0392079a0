//! How every product kernel (gemm, gemv, sgemm, bgemm) describes its operands:
//! a matrix as an offset and strides into a buffer, and the sizes of one
//! product. Its own file so that the kernels share it without importing each other.

/// One matrix: base pointer offset into its buffer and (row, col) strides.
#[derive(Clone, Copy, Debug)]
pub struct Mat {
    pub offset: usize,
    pub rs: isize,
    pub cs: isize,
}

/// Matrix sizes of one product: `[m x k] @ [k x n]`.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub m: usize,
    pub k: usize,
    pub n: usize,
}
