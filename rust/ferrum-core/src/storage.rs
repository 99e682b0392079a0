//! Shared, reference-counted buffers. A buffer is written only while its
//! owner is unique (`Arc::get_mut`), which is how ops reuse memory in place
//! without any user-visible mutation.

use std::sync::{Arc, Weak};

use crate::dtype::DType;

#[derive(Debug, Clone)]
pub enum Storage {
    F32(Arc<Vec<f32>>),
    F64(Arc<Vec<f64>>),
    F16(Arc<Vec<half::f16>>),
    BF16(Arc<Vec<half::bf16>>),
    I64(Arc<Vec<i64>>),
    I32(Arc<Vec<i32>>),
    U8(Arc<Vec<u8>>),
    Bool(Arc<Vec<bool>>),
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

    /// The buffer watched without being held.
    pub fn downgrade(&self) -> WeakStorage {
        match self {
            Storage::F32(b) => WeakStorage::F32(Arc::downgrade(b)),
            Storage::F64(b) => WeakStorage::F64(Arc::downgrade(b)),
            Storage::F16(b) => WeakStorage::F16(Arc::downgrade(b)),
            Storage::BF16(b) => WeakStorage::BF16(Arc::downgrade(b)),
            Storage::I64(b) => WeakStorage::I64(Arc::downgrade(b)),
            Storage::I32(b) => WeakStorage::I32(Arc::downgrade(b)),
            Storage::U8(b) => WeakStorage::U8(Arc::downgrade(b)),
            Storage::Bool(b) => WeakStorage::Bool(Arc::downgrade(b)),
        }
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

    /// Bytes held by the buffer.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().size_in_bytes()
    }
}

/// A buffer watched without being held: it upgrades back to a [`Storage`]
/// while some tensor still holds the buffer.
#[derive(Debug, Clone)]
pub enum WeakStorage {
    F32(Weak<Vec<f32>>),
    F64(Weak<Vec<f64>>),
    F16(Weak<Vec<half::f16>>),
    BF16(Weak<Vec<half::bf16>>),
    I64(Weak<Vec<i64>>),
    I32(Weak<Vec<i32>>),
    U8(Weak<Vec<u8>>),
    Bool(Weak<Vec<bool>>),
}

impl WeakStorage {
    pub fn upgrade(&self) -> Option<Storage> {
        Some(match self {
            WeakStorage::F32(b) => Storage::F32(b.upgrade()?),
            WeakStorage::F64(b) => Storage::F64(b.upgrade()?),
            WeakStorage::F16(b) => Storage::F16(b.upgrade()?),
            WeakStorage::BF16(b) => Storage::BF16(b.upgrade()?),
            WeakStorage::I64(b) => Storage::I64(b.upgrade()?),
            WeakStorage::I32(b) => Storage::I32(b.upgrade()?),
            WeakStorage::U8(b) => Storage::U8(b.upgrade()?),
            WeakStorage::Bool(b) => Storage::Bool(b.upgrade()?),
        })
    }
}
