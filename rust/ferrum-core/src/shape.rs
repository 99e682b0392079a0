//! Shape arithmetic: element counts, contiguous strides, dim normalisation and
//! Burn's broadcasting rule (equal ranks, size-1 dims stretch).

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// A layout's shape or strides. Ranks up to four sit inline, so making,
/// cloning and dropping a tensor's layout allocates nothing: for small
/// tensors those allocations cost more than the arithmetic.
pub type DimVec<T> = smallvec::SmallVec<[T; 4]>;

/// The element count of a shape that already belongs to a tensor (whose
/// count was checked when its layout was); use [`checked_numel`] for a
/// shape that comes from outside, whose product could wrap around to a
/// small number and pass for a valid shape.
#[inline]
pub fn numel(shape: &[usize]) -> usize {
    // Through `count`: a plain product of [huge, 3, 0] overflows on the way
    // to 0. Saturating keeps a count that cannot exist from wrapping.
    count(shape).unwrap_or(usize::MAX)
}

/// The element count of any shape, `None` when it overflows `usize`. A
/// dim of size 0 makes the count 0 whatever the others are, in any order.
#[inline]
pub fn count(shape: &[usize]) -> Option<usize> {
    match shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)) {
        Some(n) => Some(n),
        None if shape.contains(&0) => Some(0),
        None => None,
    }
}

/// The element count of a shape that is about to be allocated, refusing
/// counts that overflow or could never fit in memory (rather than aborting).
pub fn checked_numel(op: &'static str, shape: &[usize], elem_bytes: usize) -> Result<usize> {
    match count(shape) {
        Some(n) if n.checked_mul(elem_bytes).is_some_and(|b| b <= isize::MAX as usize) => Ok(n),
        _ => Err(Error::invalid(op, format!("shape {shape:?} has too many elements to allocate"))),
    }
}

/// Bytes that no single allocation may exceed: the machine's RAM plus swap.
/// Under Linux's default overcommit policy the kernel refuses a larger
/// mapping itself, but an allocator that reserves address space with
/// `MAP_NORESERVE` (mimalloc, which the Python binding uses) is granted it,
/// and the process is then killed when the memory is first written. Checking
/// up front keeps such a request an error.
pub fn memory_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: sysinfo only writes the struct it is given, which is
            // plain integers (all-zero is a valid value).
            let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
            if unsafe { libc::sysinfo(&mut info) } == 0 {
                let unit = (info.mem_unit as usize).max(1);
                return (info.totalram as usize).saturating_add(info.totalswap as usize).saturating_mul(unit);
            }
        }
        usize::MAX
    })
}

/// Fail unless `n` elements of `T` could fit in this machine's memory. For
/// a zeroed buffer made with `vec![zero; n]`, which the allocator can hand
/// out already zeroed (no pass over it) but which aborts on failure, this
/// turns the impossible sizes a huge view leads to into an error.
pub fn ensure_fits<T>(op: &'static str, n: usize) -> Result<()> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    let limit = memory_limit();
    if bytes > limit {
        return Err(Error::invalid(op, format!("cannot allocate {n} elements ({bytes} bytes): more than this machine's memory ({limit} bytes of RAM and swap)")));
    }
    Ok(())
}

/// `n` copies of `zero` (an all-zero-bytes value), or an error when they
/// could not fit in memory: `vec!` lets the allocator hand out memory that
/// is already zeroed, with no pass over it, where [`try_filled`] writes
/// every element.
pub fn try_zeroed<T: Clone>(op: &'static str, n: usize, zero: T) -> Result<Vec<T>> {
    ensure_fits::<T>(op, n)?;
    Ok(vec![zero; n])
}

/// An empty vector with room for `n` elements, or an error (not an abort)
/// when the memory cannot be had.
pub fn try_with_capacity<T>(op: &'static str, n: usize) -> Result<Vec<T>> {
    ensure_fits::<T>(op, n)?;
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::invalid(op, format!("cannot allocate {n} elements ({bytes} bytes): out of memory")))?;
    Ok(v)
}

/// A vector of `n` copies of `value`, or an error when it cannot be had.
pub fn try_filled<T: Clone>(op: &'static str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = try_with_capacity(op, n)?;
    v.resize(n, value);
    Ok(v)
}

/// Row-major strides of a contiguous tensor of this shape.
pub fn contiguous_strides(shape: &[usize]) -> DimVec<isize> {
    let mut strides = smallvec::smallvec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        // Saturates instead of overflowing: a layout whose count does not
        // fit is refused by `Layout::check_within` anyway.
        acc = acc.saturating_mul(d.max(1).min(isize::MAX as usize) as isize);
    }
    strides
}

/// Resolve a possibly negative dim against a rank.
pub fn norm_dim(op: &'static str, dim: isize, rank: usize) -> Result<usize> {
    let d = if dim < 0 { dim + rank as isize } else { dim };
    if d < 0 || d >= rank as isize {
        return Err(Error::DimOutOfRange { op, dim, rank });
    }
    Ok(d as usize)
}

/// A list of dims, each resolved against `rank`; a dim named twice (as
/// `1` and `-2` of a rank-3 tensor, say) is an error naming `op`.
pub fn distinct_dims(op: &'static str, dims: &[isize], rank: usize) -> Result<Vec<usize>> {
    let resolved = dims.iter().map(|&d| norm_dim(op, d, rank)).collect::<Result<Vec<_>>>()?;
    for (i, &d) in resolved.iter().enumerate() {
        if resolved[..i].contains(&d) {
            return Err(Error::invalid(op, format!("dim {d} appears more than once in {dims:?}")));
        }
    }
    Ok(resolved)
}

/// The positions, in ascending order, that `unsqueeze_dims(dims)` gives its
/// new size-1 dims in an output of rank `rank + dims.len()`. Burn's rules:
/// each dim lies in `-out..out`; a negative one counts from the end past the
/// new dims that negative dims already placed there, so `[-1, -1]` adds two
/// trailing dims; a position already taken moves to the next free one.
pub fn unsqueeze_positions(op: &'static str, rank: usize, dims: &[isize]) -> Result<Vec<usize>> {
    let out = rank + dims.len();
    let out_i = out as isize;
    let mut from_end = out_i;
    let mut positions = Vec::with_capacity(dims.len());
    for &d in dims {
        if d < -out_i || d >= out_i {
            return Err(Error::DimOutOfRange { op, dim: d, rank: out });
        }
        let p = if d < 0 {
            from_end -= 1;
            d + from_end + 1
        } else {
            d
        };
        if p < 0 {
            return Err(Error::invalid(op, format!("dims {dims:?} place more new dims before position {d} than the output of rank {out} has")));
        }
        positions.push(p as usize);
    }
    positions.sort_unstable();
    let mut next = 0;
    for p in positions.iter_mut() {
        *p = (*p).max(next);
        next = *p + 1;
    }
    if next > out {
        return Err(Error::invalid(op, format!("dims {dims:?} do not fit in the output of rank {out}: too many new dims at the end")));
    }
    Ok(positions)
}

/// The shape two operands broadcast to. Burn broadcasts only between equal
/// ranks, stretching dims of size 1.
pub fn broadcast_shape(op: &'static str, lhs: &[usize], rhs: &[usize]) -> Result<DimVec<usize>> {
    if lhs == rhs {
        // The common case, and the shape of a tensor that exists: its count fits.
        return Ok(DimVec::from_slice(lhs));
    }
    if lhs.len() != rhs.len() {
        return Err(Error::shapes(
            op,
            lhs,
            rhs,
            format!("ranks differ ({} and {}); broadcasting needs equal ranks", lhs.len(), rhs.len()),
        ));
    }
    let out = lhs
        .iter()
        .zip(rhs)
        .enumerate()
        .map(|(i, (&a, &b))| match (a, b) {
            _ if a == b => Ok(a),
            (1, _) => Ok(b),
            (_, 1) => Ok(a),
            _ => Err(Error::shapes(op, lhs, rhs, format!("dim {i} has sizes {a} and {b}, neither is 1"))),
        })
        .collect::<Result<DimVec<usize>>>()?;
    // Two shapes that each fit can broadcast to one whose count does not
    // ([n, 1] and [1, n]); every kernel sizes its output from this shape.
    checked_numel(op, &out, 1)?;
    Ok(out)
}

/// Broadcast several shapes of equal rank at once.
pub fn broadcast_shapes(op: &'static str, shapes: &[&[usize]]) -> Result<DimVec<usize>> {
    let mut out: DimVec<usize> = DimVec::from_slice(shapes[0]);
    for s in &shapes[1..] {
        out = broadcast_shape(op, &out, s)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_are_row_major() {
        assert_eq!(contiguous_strides(&[2, 3, 4])[..], [12, 4, 1]);
        assert!(contiguous_strides(&[]).is_empty());
    }

    #[test]
    fn broadcast_follows_burn() {
        assert_eq!(broadcast_shape("add", &[2, 1], &[1, 3]).unwrap()[..], [2, 3]);
        assert!(broadcast_shape("add", &[2, 3], &[3]).is_err());
        let err = broadcast_shape("add", &[2, 3], &[4, 3]).unwrap_err();
        assert!(err.to_string().contains("dim 0 has sizes 2 and 4"));
    }

    #[test]
    fn distinct_dims_refuse_repeats() {
        assert_eq!(distinct_dims("flip", &[0, -1], 3).unwrap(), vec![0, 2]);
        let e = distinct_dims("flip", &[1, -2], 3).unwrap_err().to_string();
        assert_eq!(e, "flip: dim 1 appears more than once in [1, -2]");
        assert!(matches!(distinct_dims("flip", &[3], 3), Err(Error::DimOutOfRange { .. })));
    }

    #[test]
    fn unsqueeze_positions_follow_burn() {
        // Burn's tests: [3, 4, 5] with [1, -2] -> [3, 1, 4, 1, 5]; [0, 4];
        // [0, -1, -1] -> [1, 3, 4, 5, 1, 1]; [0, -6] panics (out of range).
        assert_eq!(unsqueeze_positions("u", 3, &[1, -2]).unwrap(), vec![1, 3]);
        assert_eq!(unsqueeze_positions("u", 3, &[0, 4]).unwrap(), vec![0, 4]);
        assert_eq!(unsqueeze_positions("u", 3, &[0, -1, -1]).unwrap(), vec![0, 4, 5]);
        assert!(matches!(unsqueeze_positions("u", 3, &[0, -6]), Err(Error::DimOutOfRange { dim: -6, rank: 5, .. })));
        // A repeated position moves to the next free one, as Burn's copy loop does.
        assert_eq!(unsqueeze_positions("u", 3, &[1, 1]).unwrap(), vec![1, 2]);
        assert_eq!(unsqueeze_positions("u", 1, &[-1, -1, -1]).unwrap(), vec![1, 2, 3]);
        // Positions that would fall off either end are errors, never a panic.
        assert!(unsqueeze_positions("u", 3, &[4, 4]).is_err());
        assert!(unsqueeze_positions("u", 0, &[-2, -2]).is_err());
        assert_eq!(unsqueeze_positions("u", 2, &[]).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn dims_normalise() {
        assert_eq!(norm_dim("x", -1, 3).unwrap(), 2);
        assert!(norm_dim("x", 3, 3).is_err());
    }
}
