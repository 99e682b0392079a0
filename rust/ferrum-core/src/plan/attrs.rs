//! The static attributes of a plan instruction, read and checked at build.

use std::collections::HashMap;

use crate::dtype::DType;
use crate::error::{Error, Result};

/// One attribute value, as the builder gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    Str(String),
}

/// An instruction's attributes by name, read with errors naming the op and the attribute.
pub struct Attrs<'a> {
    pub op: &'a str,
    pub map: &'a HashMap<String, Attr>,
}

const OP: &str = "Plan.build";

impl Attrs<'_> {
    fn missing(&self, name: &str, what: &str) -> Error {
        Error::invalid(OP, format!("instruction {:?}: attribute {name:?} must be {what}", self.op))
    }

    pub fn int(&self, name: &str) -> Result<i64> {
        match self.map.get(name) {
            Some(Attr::Int(v)) => Ok(*v),
            _ => Err(self.missing(name, "an int")),
        }
    }

    pub fn int_or(&self, name: &str, default: i64) -> Result<i64> {
        if self.map.contains_key(name) { self.int(name) } else { Ok(default) }
    }

    pub fn float(&self, name: &str) -> Result<f64> {
        match self.map.get(name) {
            Some(Attr::Float(v)) => Ok(*v),
            Some(Attr::Int(v)) => Ok(*v as f64),
            _ => Err(self.missing(name, "a float")),
        }
    }

    pub fn ints(&self, name: &str) -> Result<Vec<i64>> {
        match self.map.get(name) {
            Some(Attr::Ints(v)) => Ok(v.clone()),
            _ => Err(self.missing(name, "a list of ints")),
        }
    }

    /// A list of ints, or None when the attribute is absent.
    pub fn ints_opt(&self, name: &str) -> Result<Option<Vec<i64>>> {
        if self.map.contains_key(name) { self.ints(name).map(Some) } else { Ok(None) }
    }

    pub fn string(&self, name: &str) -> Result<&str> {
        match self.map.get(name) {
            Some(Attr::Str(v)) => Ok(v.as_str()),
            _ => Err(self.missing(name, "a string")),
        }
    }

    pub fn dims(&self, name: &str) -> Result<Vec<isize>> {
        self.ints(name)?.into_iter().map(|v| isize::try_from(v).map_err(|_| self.missing(name, "dims in isize range"))).collect()
    }

    pub fn sizes(&self, name: &str) -> Result<Vec<usize>> {
        self.ints(name)?.into_iter().map(|v| usize::try_from(v).map_err(|_| self.missing(name, "a list of non-negative ints"))).collect()
    }

    /// Exactly `N` non-negative ints.
    pub fn array<const N: usize>(&self, name: &str) -> Result<[usize; N]> {
        let v = self.sizes(name)?;
        v.try_into().map_err(|_| self.missing(name, &format!("a list of {N} non-negative ints")))
    }

    pub fn flag(&self, name: &str) -> Result<bool> {
        Ok(self.int_or(name, 0)? != 0)
    }

    pub fn dtype(&self, name: &str) -> Result<DType> {
        let s = self.string(name)?;
        dtype_named(s).ok_or_else(|| self.missing(name, "a dtype name (f32, f64, f16, bf16, i64, i32, u8, bool)"))
    }
}

/// The dtype called `name` (`DType::name`'s spelling).
pub fn dtype_named(name: &str) -> Option<DType> {
    [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8, DType::Bool]
        .into_iter()
        .find(|d| d.name() == name)
}
