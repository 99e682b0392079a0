//! The operand layouts the GEMM tests (f32, bf16, f16) run every product
//! over: each form a view can give a matrix in its buffer.

use crate::kernels::gemm::Mat;

/// How an operand is laid out in its buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Form {
    RowMajor,
    Transposed,
    /// A view into a larger matrix: 3 extra columns, starting at (2, 1).
    Sliced,
    /// Every row the same (stride 0 over rows, as `expand` gives).
    BroadcastRows,
    /// Both axes walked backwards (a `flip` view).
    Flipped,
}

impl Form {
    /// The buffer length and the layout of a `rows x cols` matrix in this form.
    pub(crate) fn layout(self, rows: usize, cols: usize) -> (usize, Mat) {
        let (r, c) = (rows as isize, cols as isize);
        match self {
            Form::RowMajor => (rows * cols, Mat { offset: 0, rs: c, cs: 1 }),
            Form::Transposed => (rows * cols, Mat { offset: 0, rs: 1, cs: r }),
            Form::Sliced => ((rows + 2) * (cols + 3), Mat { offset: 2 * (cols + 3) + 1, rs: c + 3, cs: 1 }),
            Form::BroadcastRows => (cols, Mat { offset: 0, rs: 0, cs: 1 }),
            Form::Flipped => (rows * cols, Mat { offset: (rows * cols).saturating_sub(1), rs: -c, cs: -1 }),
        }
    }
}
