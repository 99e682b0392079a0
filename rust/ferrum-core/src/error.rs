//! The one error type of the engine. Every variant names the operation and the
//! shapes, dims or kinds involved, so a Python user can act on the message.

use crate::dtype::{DType, Kind};

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("{op}: incompatible shapes {lhs:?} and {rhs:?}: {reason}")]
    ShapeMismatch { op: &'static str, lhs: Vec<usize>, rhs: Vec<usize>, reason: String },

    #[error("{op}: expected a tensor of rank {expected}, found rank {found} (shape {shape:?})")]
    RankMismatch { op: &'static str, expected: usize, found: usize, shape: Vec<usize> },

    #[error("{op}: dim {dim} is out of range for a tensor of rank {rank}")]
    DimOutOfRange { op: &'static str, dim: isize, rank: usize },

    #[error("{op}: index {index} is out of bounds for dim {dim} of size {size}")]
    IndexOutOfBounds { op: &'static str, index: i64, dim: usize, size: usize },

    #[error("{op}: expected a {expected} tensor, found {found}")]
    KindMismatch { op: &'static str, expected: Kind, found: Kind },

    #[error("{op}: dtypes differ: {lhs} and {rhs}; convert one with .cast(DType.{}) (or .cast(DType.{}))", rhs.name().to_uppercase(), lhs.name().to_uppercase())]
    DTypeMismatch { op: &'static str, lhs: DType, rhs: DType },

    /// A compute kernel met a storage dtype (f16, bf16, i32, u8): callers
    /// convert to `dtype.compute()` and run the op again.
    #[error("{op}: this kernel does not read {dtype} tensors; cast to {} first", dtype.compute())]
    StorageDType { op: &'static str, dtype: DType },

    #[error("{op}: cannot reshape a tensor of shape {from:?} ({numel} elements) into {to:?}")]
    Reshape { op: &'static str, from: Vec<usize>, to: Vec<isize>, numel: usize },

    #[error("{op}: {reason}")]
    InvalidArgument { op: &'static str, reason: String },

    /// A file-system call failed (a full or read-only disk, a missing folder): the OS's error
    /// code is kept, so the binding raises an `OSError` a caller's `except OSError` catches.
    #[error("{op}: {path}: {message}")]
    File { op: &'static str, path: String, errno: Option<i32>, message: String },

    /// The call was stopped by an interrupt (Ctrl-C) before it finished.
    #[error("interrupted")]
    Interrupted,

    /// A panic caught at the boundary: a bug, since every failure the
    /// engine expects is one of the variants above.
    #[error("internal error: {reason} (this is a bug in ferrum; please report it)")]
    Internal { reason: String },
}

impl Error {
    pub fn invalid(op: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument { op, reason: reason.into() }
    }

    /// The same error reported under the op the user called (for ops built
    /// from others).
    pub fn with_op(self, name: &'static str) -> Self {
        match self {
            Error::ShapeMismatch { lhs, rhs, reason, .. } => Error::ShapeMismatch { op: name, lhs, rhs, reason },
            Error::RankMismatch { expected, found, shape, .. } => Error::RankMismatch { op: name, expected, found, shape },
            Error::DimOutOfRange { dim, rank, .. } => Error::DimOutOfRange { op: name, dim, rank },
            Error::IndexOutOfBounds { index, dim, size, .. } => Error::IndexOutOfBounds { op: name, index, dim, size },
            Error::KindMismatch { expected, found, .. } => Error::KindMismatch { op: name, expected, found },
            Error::DTypeMismatch { lhs, rhs, .. } => Error::DTypeMismatch { op: name, lhs, rhs },
            Error::StorageDType { dtype, .. } => Error::StorageDType { op: name, dtype },
            Error::Reshape { from, to, numel, .. } => Error::Reshape { op: name, from, to, numel },
            Error::InvalidArgument { reason, .. } => Error::InvalidArgument { op: name, reason },
            Error::File { path, errno, message, .. } => Error::File { op: name, path, errno, message },
            Error::Internal { reason } => Error::Internal { reason: format!("{name}: {reason}") },
            Error::Interrupted => Error::Interrupted,
        }
    }

    pub fn shapes(op: &'static str, lhs: &[usize], rhs: &[usize], reason: impl Into<String>) -> Self {
        Error::ShapeMismatch { op, lhs: lhs.to_vec(), rhs: rhs.to_vec(), reason: reason.into() }
    }
}

/// Run `f`, turning a panic inside it into [`Error::Internal`] with the
/// panic's message: for the boundary with a caller that must never see one
/// (the Python binding).
pub fn catch_panics<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let reason = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with no message".into());
        Err(Error::Internal { reason })
    })
}

/// Return early with an [`Error::InvalidArgument`].
#[macro_export]
macro_rules! bail {
    ($op:expr, $($fmt:tt)*) => {
        return Err($crate::error::Error::invalid($op, format!($($fmt)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_internal_errors() {
        assert_eq!(catch_panics(|| Ok(3)), Ok(3));
        let formatted = catch_panics::<()>(|| panic!("index {} out of range", 7)).unwrap_err();
        assert_eq!(formatted, Error::Internal { reason: "index 7 out of range".into() });
        let literal = catch_panics::<()>(|| panic!("plain")).unwrap_err();
        assert!(literal.to_string().starts_with("internal error: plain (this is a bug in ferrum"), "{literal}");
        let v: Vec<u8> = Vec::new();
        let indexed = catch_panics(|| Ok(v[1])).unwrap_err();
        assert!(matches!(indexed, Error::Internal { .. }));
    }
}
