//! Shared, reference-counted buffers. A buffer is written only while its
//! owner is unique (`Arc::get_mut`) and ferrum allocated it
//! ([`Buffer::as_mut_slice`]), which is how ops reuse memory in place
//! without any user-visible mutation; memory lent by another library
//! ([`Buffer::from_foreign`]) is only read.

use std::sync::Arc;

use crate::buffer::Buffer;
use crate::dtype::DType;

#[derive(Debug, Clone)]
pub enum Storage {
    F32(Arc<Buffer<f32>>),
    F64(Arc<Buffer<f64>>),
    F16(Arc<Buffer<half::f16>>),
    BF16(Arc<Buffer<half::bf16>>),
    I64(Arc<Buffer<i64>>),
    I32(Arc<Buffer<i32>>),
    U8(Arc<Buffer<u8>>),
    Bool(Arc<Buffer<bool>>),
}

impl Storage {
    pub fn dtype(&self) -> DType {
        match self {
            Storage::F32(_) => DType::F32,
            Storage::F64(_) => DType::F64,
            Storage::F16(_) => DType::F16,
            Storage::BF16(_) => DType::BF16,
            Storage::I64(_) => DType::I64,
            Storage::I32(_) => DType::I32,
            Storage::U8(_) => DType::U8,
            Storage::Bool(_) => DType::Bool,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Storage::F32(b) => b.len(),
            Storage::F64(b) => b.len(),
            Storage::F16(b) => b.len(),
            Storage::BF16(b) => b.len(),
            Storage::I64(b) => b.len(),
            Storage::I32(b) => b.len(),
            Storage::U8(b) => b.len(),
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
            Storage::F16(b) => Arc::strong_count(b) == 1,
            Storage::BF16(b) => Arc::strong_count(b) == 1,
            Storage::I64(b) => Arc::strong_count(b) == 1,
            Storage::I32(b) => Arc::strong_count(b) == 1,
            Storage::U8(b) => Arc::strong_count(b) == 1,
            Storage::Bool(b) => Arc::strong_count(b) == 1,
        }
    }

    /// True when the memory belongs to another library (shared through
    /// DLPack or NumPy): read, never written, and possibly written by its
    /// owner between ops.
    pub fn is_foreign(&self) -> bool {
        match self {
            Storage::F32(b) => b.is_foreign(),
            Storage::F64(b) => b.is_foreign(),
            Storage::F16(b) => b.is_foreign(),
            Storage::BF16(b) => b.is_foreign(),
            Storage::I64(b) => b.is_foreign(),
            Storage::I32(b) => b.is_foreign(),
            Storage::U8(b) => b.is_foreign(),
            Storage::Bool(b) => b.is_foreign(),
        }
    }

    /// Bytes held by the buffer.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().size_in_bytes()
    }
}
