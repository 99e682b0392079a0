//! Dtypes and kinds. Burn's three kinds (Float, Int, Bool) map onto eight
//! dtypes: Float is f32 by default, f64, f16 or bf16; Int is i64 by default,
//! i32 or u8; Bool is bool.
//!
//! f16, bf16, i32 and u8 are storage dtypes: views, cat, gather, casts,
//! NumPy and records handle them as they are, and the kernels that compute
//! (arithmetic, reductions, matmul...) read them as their compute dtype
//! (f32 or i64), as CPUs without native half floats do.

use std::fmt;


#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F64,
    F16,
    BF16,
    I64,
    I32,
    U8,
    Bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Float,
    Int,
    Bool,
}

impl DType {
    pub fn kind(self) -> Kind {
        match self {
            DType::F32 | DType::F64 | DType::F16 | DType::BF16 => Kind::Float,
            DType::I64 | DType::I32 | DType::U8 => Kind::Int,
            DType::Bool => Kind::Bool,
        }
    }

    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 => 8,
            DType::F16 | DType::BF16 => 2,
            DType::U8 | DType::Bool => 1,
        }
    }

    /// The dtype the compute kernels read this one as: f16 and bf16 as
    /// f32, i32 and u8 as i64; the others as themselves.
    pub fn compute(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            DType::I32 | DType::U8 => DType::I64,
            other => other,
        }
    }

    /// True for the dtypes that are stored but computed as another
    /// ([`DType::compute`]).
    pub fn is_storage_only(self) -> bool {
        self.compute() != self
    }

    /// The values an Int dtype holds (inclusive), or None for Float and Bool.
    pub fn int_range(self) -> Option<(i64, i64)> {
        match self {
            DType::I64 => Some((i64::MIN, i64::MAX)),
            DType::I32 => Some((i32::MIN as i64, i32::MAX as i64)),
            DType::U8 => Some((0, u8::MAX as i64)),
            _ => None,
        }
    }

    /// Every dtype, in the order the API lists them.
    pub const ALL: [DType; 8] =
        [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8, DType::Bool];

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::U8 => "u8",
            DType::Bool => "bool",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Float => "Float",
            Kind::Int => "Int",
            Kind::Bool => "Bool",
        })
    }
}

/// A scalar crossing the API: ops that take "an element" (fill values, scalar
/// arithmetic) take this and convert it to the tensor's dtype.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Float(f64),
    Int(i64),
    Bool(bool),
}

impl Scalar {
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Float(v) => v,
            Scalar::Int(v) => v as f64,
            Scalar::Bool(v) => v as u8 as f64,
        }
    }
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Float(v) => v as i64,
            Scalar::Int(v) => v,
            Scalar::Bool(v) => v as i64,
        }
    }
    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Float(v) => v != 0.0,
            Scalar::Int(v) => v != 0,
            Scalar::Bool(v) => v,
        }
    }
}
