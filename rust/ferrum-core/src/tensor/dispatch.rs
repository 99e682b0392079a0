//! Dtype dispatch written once: each macro runs a body with a local type
//! alias bound to the tensor's element type.

/// The `match` the macros below expand to: for each listed
/// `Variant => type;` an arm `DType::Variant => { type $T = type; $body }`,
/// then the caller's own arms (`pattern => refusal,`) for the dtypes it
/// does not run.
#[doc(hidden)]
#[macro_export]
macro_rules! __dtype_arms {
    ($dtype:expr, $T:ident => $body:expr, [$($variant:ident => $ty:ty;)+] $($rest:pat => $refuse:expr,)*) => {
        match $dtype {
            $($crate::DType::$variant => {
                type $T = $ty;
                $body
            })+
            $($rest => $refuse,)*
        }
    };
}

/// Run `$body` with `$T` bound to the element type of `$dtype`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        $crate::__dtype_arms!($dtype, $T => $body, [
            F32 => f32; F64 => f64; F16 => $crate::half::f16; BF16 => $crate::half::bf16;
            I64 => i64; I32 => i32; U8 => u8; Bool => bool;
        ])
    };
}

/// Numeric dtypes (Float and Int); Bool is a kind error naming `$op`.
#[macro_export]
macro_rules! with_num {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        $crate::__dtype_arms!($dtype, $T => $body, [F32 => f32; F64 => f64; I64 => i64;]
            $crate::DType::Bool => return Err($crate::Error::KindMismatch { op: $op, expected: $crate::Kind::Float, found: $crate::Kind::Bool }),
            storage => return Err($crate::Error::StorageDType { op: $op, dtype: storage }),
        )
    };
}

/// Float dtypes only; Int and Bool are kind errors naming `$op`.
#[macro_export]
macro_rules! with_float {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        $crate::__dtype_arms!($dtype, $T => $body, [F32 => f32; F64 => f64;]
            storage @ ($crate::DType::F16 | $crate::DType::BF16) => return Err($crate::Error::StorageDType { op: $op, dtype: storage }),
            other => return Err($crate::Error::KindMismatch { op: $op, expected: $crate::Kind::Float, found: other.kind() }),
        )
    };
}

/// Every Float dtype, f16 and bf16 included, for kernels written over
/// [`FloatLanes`](crate::element::FloatLanes); Int and Bool are kind errors
/// naming `$op`.
#[macro_export]
macro_rules! with_float_lanes {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        $crate::__dtype_arms!($dtype, $T => $body, [F32 => f32; F64 => f64; F16 => $crate::half::f16; BF16 => $crate::half::bf16;]
            other => return Err($crate::Error::KindMismatch { op: $op, expected: $crate::Kind::Float, found: other.kind() }),
        )
    };
}
