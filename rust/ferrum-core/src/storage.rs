//! Shared, reference-counted buffers. A buffer is written only while its
//! owner is unique (`Arc::get_mut`), which is how ops reuse memory in place
//! without any user-visible mutation.

use std::sync::Arc;

use crate::dtype::DType;

#[derive(Debug, Clone)]
pub enum Storage {
    F32(Arc<Vec<f32>>),
    F64(Arc<Vec<f64>>),
    I64(Arc<Vec<i64>>),
    Bool(Arc<Vec<bool>>),
}

impl Storage {
    pub fn dtype(&self) -> DType {
        match self {
            Storage::F32(_) => DType::F32,
            Storage::F64(_) => DType::F64,
            Storage::I64(_) => DType::I64,
            Storage::Bool(_) => DType::Bool,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Storage::F32(b) => b.len(),
            Storage::F64(b) => b.len(),
            Storage::I64(b) => b.len(),
            Storage::Bool(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when no other tensor shares this buffer.
    pub fn is_unique(&self) -> bool {
        match self {
            Storage::F32(b) => Arc::strong_count(b) == 1,
            Storage::F64(b) => Arc::strong_count(b) == 1,
            Storage::I64(b) => Arc::strong_count(b) == 1,
            Storage::Bool(b) => Arc::strong_count(b) == 1,
        }
    }

    /// Bytes held by the buffer.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().size_in_bytes()
    }
}
