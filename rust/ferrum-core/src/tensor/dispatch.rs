//! Dtype dispatch written once: each macro runs a body with a local type
//! alias bound to the tensor's element type.

/// Run `$body` with `$T` bound to the element type of `$dtype`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::F16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}

/// Numeric dtypes (Float and Int); Bool is a kind error naming `$op`.
#[macro_export]
macro_rules! with_num {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::Bool => {
                return Err($crate::Error::KindMismatch {
                    op: $op,
                    expected: $crate::Kind::Float,
                    found: $crate::Kind::Bool,
                })
            }
            storage => return Err($crate::Error::StorageDType { op: $op, dtype: storage }),
        }
    };
}

/// Float dtypes only; Int and Bool are kind errors naming `$op`.
#[macro_export]
macro_rules! with_float {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            storage @ ($crate::DType::F16 | $crate::DType::BF16) => {
                return Err($crate::Error::StorageDType { op: $op, dtype: storage })
            }
            other => {
                return Err($crate::Error::KindMismatch { op: $op, expected: $crate::Kind::Float, found: other.kind() })
            }
        }
    };
}

/// Every Float dtype, f16 and bf16 included, for kernels written over
/// [`FloatLanes`](crate::element::FloatLanes); Int and Bool are kind errors
/// naming `$op`.
#[macro_export]
macro_rules! with_float_lanes {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::F16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $T = $crate::half::bf16;
                $body
            }
            other => {
                return Err($crate::Error::KindMismatch { op: $op, expected: $crate::Kind::Float, found: other.kind() })
            }
        }
    };
}
