//! Views: ops that change only the layout and share the buffer. Reshape
//! copies only when the strides cannot express the new shape.

use super::Tensor;
use crate::autodiff::{record_lazy, sum_to_shape, FnBackward, Var};
use crate::error::{Error, Result};
use crate::layout::Layout;

/// One dim of a slice: `start..end` by `step` (Python semantics, already
/// clamped by the caller or by [`SliceSpec::resolve`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliceSpec {
    pub start: Option<isize>,
    pub end: Option<isize>,
    pub step: isize,
}

impl SliceSpec {
    pub fn range(start: isize, end: isize) -> Self {
        SliceSpec { start: Some(start), end: Some(end), step: 1 }
    }

    pub fn full() -> Self {
        SliceSpec { start: None, end: None, step: 1 }
    }

    /// Resolve against a dim of size `n` as Python's `slice.indices` does:
    /// returns (first index, element count, step).
    pub fn resolve(&self, op: &'static str, n: usize) -> Result<(usize, usize, isize)> {
        if self.step == 0 {
            return Err(Error::invalid(op, "slice step must not be 0"));
        }
        // In i128: with a dim near isize::MAX (a broadcast view) the
        // arithmetic below steps past isize's range.
        let (n, step) = (n as i128, self.step as i128);
        let clamp = |v: i128, lo: i128, hi: i128| v.max(lo).min(hi);
        let norm = |v: isize| if v < 0 { v as i128 + n } else { v as i128 };
        let (start, end) = if step > 0 {
            (
                self.start.map(|v| clamp(norm(v), 0, n)).unwrap_or(0),
                self.end.map(|v| clamp(norm(v), 0, n)).unwrap_or(n),
            )
        } else {
            (
                self.start.map(|v| clamp(norm(v), -1, n - 1)).unwrap_or(n - 1),
                self.end.map(|v| clamp(norm(v), -1, n - 1)).unwrap_or(-1),
            )
        };
        let count = if step > 0 {
            if end > start { (end - start + step - 1) / step } else { 0 }
        } else if start > end {
            (start - end + (-step) - 1) / (-step)
        } else {
            0
        };
        Ok((if count > 0 { start as usize } else { 0 }, count as usize, self.step))
    }
}

impl Tensor {
    /// Resolve a target shape with at most one -1 (inferred) and 0 (keep the
    /// input's size at that position), as Burn's reshape does.
    pub fn resolve_shape(&self, op: &'static str, shape: &[isize]) -> Result<Vec<usize>> {
        let err = || Error::Reshape { op, from: self.shape().to_vec(), to: shape.to_vec(), numel: self.numel() };
        let mut out = Vec::with_capacity(shape.len());
        let mut infer = None;
        for (i, &s) in shape.iter().enumerate() {
            match s {
                -1 if infer.is_none() => {
                    infer = Some(i);
                    out.push(1);
                }
                0 => out.push(*self.shape().get(i).ok_or_else(err)?),
                s if s > 0 => out.push(s as usize),
                _ => return Err(err()),
            }
        }
        // Checked: a product that wraps around could equal the element count
        // and pass a shape far larger than the buffer.
        let count = crate::shape::count;
        let known = count(&out).ok_or_else(err)?;
        if let Some(i) = infer {
            if known == 0 || !self.numel().is_multiple_of(known) {
                return Err(err());
            }
            out[i] = self.numel() / known;
        }
        if count(&out) != Some(self.numel()) {
            return Err(err());
        }
        Ok(out)
    }

    pub fn reshape(&self, shape: &[isize]) -> Result<Tensor> {
        let shape = self.resolve_shape("reshape", shape)?;
        match self.layout().reshape_view(&shape) {
            Some(l) => self.view("reshape", l),
            None => self.try_contiguous("reshape")?.view("reshape", Layout::contiguous(&shape)),
        }
    }

    pub fn swap_dims(&self, a: isize, b: isize) -> Result<Tensor> {
        let (a, b) = (self.dim("swap_dims", a)?, self.dim("swap_dims", b)?);
        Ok(self.subview(self.layout().transpose(a, b)))
    }

    /// Swap the last two dims (a no-op below rank 2), as Burn's transpose.
    pub fn transpose(&self) -> Tensor {
        let r = self.rank();
        if r < 2 {
            return self.clone();
        }
        self.subview(self.layout().transpose(r - 2, r - 1))
    }

    pub fn permute(&self, axes: &[isize]) -> Result<Tensor> {
        let op = "permute";
        if axes.len() != self.rank() {
            return Err(Error::invalid(op, format!("expected {} axes for shape {:?}, found {:?}", self.rank(), self.shape(), axes)));
        }
        let axes = axes.iter().map(|&a| self.dim(op, a)).collect::<Result<Vec<_>>>()?;
        let mut seen = vec![false; axes.len()];
        for &a in &axes {
            if std::mem::replace(&mut seen[a], true) {
                return Err(Error::invalid(op, format!("axis {a} appears twice in {axes:?}")));
            }
        }
        Ok(self.subview(self.layout().permute(&axes)))
    }

    /// Move dims `src` to positions `dst`, keeping the others in order.
    pub fn movedim(&self, src: &[isize], dst: &[isize]) -> Result<Tensor> {
        let op = "movedim";
        if src.len() != dst.len() {
            return Err(Error::invalid(op, format!("source has {} dims, destination {}", src.len(), dst.len())));
        }
        let r = self.rank();
        let src = src.iter().map(|&d| self.dim(op, d)).collect::<Result<Vec<_>>>()?;
        let dst = dst.iter().map(|&d| self.dim(op, d)).collect::<Result<Vec<_>>>()?;
        let mut order: Vec<Option<usize>> = vec![None; r];
        for (&s, &d) in src.iter().zip(&dst) {
            if order[d].is_some() {
                return Err(Error::invalid(op, format!("destination dim {d} repeats")));
            }
            order[d] = Some(s);
        }
        let mut rest = (0..r).filter(|i| !src.contains(i));
        let axes: Vec<isize> = order.into_iter().map(|o| o.or_else(|| rest.next()).unwrap() as isize).collect();
        self.permute(&axes)
    }

    /// Reverse the order along each of `axes`; an axis named twice is an
    /// error (as in Burn and PyTorch), not a flip undone.
    pub fn flip(&self, axes: &[isize]) -> Result<Tensor> {
        let dims = crate::shape::distinct_dims("flip", axes, self.rank())?;
        let mut l = self.layout().clone();
        for d in dims {
            l = l.flip(d);
        }
        Ok(self.subview(l))
    }

    /// Merge dims `start..=end` into one.
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        let (s, e) = (self.dim("flatten", start)?, self.dim("flatten", end)?);
        if s > e {
            return Err(Error::invalid("flatten", format!("start dim {s} is after end dim {e}")));
        }
        let mut shape: Vec<isize> = self.shape()[..s].iter().map(|&d| d as isize).collect();
        shape.push(self.shape()[s..=e].iter().product::<usize>() as isize);
        shape.extend(self.shape()[e + 1..].iter().map(|&d| d as isize));
        self.reshape(&shape)
    }

    /// Remove every dim of size 1.
    pub fn squeeze(&self) -> Tensor {
        let mut l = self.layout().clone();
        for d in (0..self.rank()).rev() {
            if l.shape[d] == 1 {
                l = l.squeeze(d);
            }
        }
        self.subview(l)
    }

    pub fn squeeze_dim(&self, dim: isize) -> Result<Tensor> {
        self.squeeze_dims(&[dim]).map_err(|e| e.with_op("squeeze_dim"))
    }

    /// Remove the given dims, each of which must have size 1; an empty list
    /// removes every dim of size 1 (Burn's rule).
    pub fn squeeze_dims(&self, dims: &[isize]) -> Result<Tensor> {
        if dims.is_empty() {
            return Ok(self.squeeze());
        }
        let mut ds = dims.iter().map(|&d| self.dim("squeeze_dims", d)).collect::<Result<Vec<_>>>()?;
        ds.sort_unstable();
        ds.dedup();
        let mut l = self.layout().clone();
        for &d in ds.iter().rev() {
            if self.shape()[d] != 1 {
                return Err(Error::invalid(
                    "squeeze_dims",
                    format!("dim {d} has size {}, only dims of size 1 can be squeezed (shape {:?})", self.shape()[d], self.shape()),
                ));
            }
            l = l.squeeze(d);
        }
        Ok(self.subview(l))
    }

    /// Insert a dim of size 1 at `dim` (which may equal the rank).
    pub fn unsqueeze_dim(&self, dim: isize) -> Result<Tensor> {
        let d = crate::shape::norm_dim("unsqueeze_dim", dim, self.rank() + 1)?;
        Ok(self.subview(self.layout().unsqueeze(d)))
    }

    /// Insert size-1 dims at the given positions of the output (of rank
    /// `rank + dims.len()`), with Burn's rules: each negative position counts
    /// from the end past the new dims already placed from the end (so
    /// `[-1, -1]` adds two trailing dims), and a position already taken
    /// moves to the next free one.
    pub fn unsqueeze_dims(&self, dims: &[isize]) -> Result<Tensor> {
        let positions = crate::shape::unsqueeze_positions("unsqueeze_dims", self.rank(), dims)?;
        let mut l = self.layout().clone();
        for d in positions {
            l = l.unsqueeze(d);
        }
        Ok(self.subview(l))
    }

    /// Add leading size-1 dims up to `rank` (Burn's `unsqueeze::<D2>()`).
    pub fn unsqueeze_to(&self, rank: usize) -> Result<Tensor> {
        if rank < self.rank() {
            return Err(Error::invalid("unsqueeze", format!("cannot unsqueeze rank {} to lower rank {rank}", self.rank())));
        }
        Ok(self.subview(self.layout().unsqueeze_leading("unsqueeze", rank - self.rank())?))
    }

    /// Broadcast to `shape`, which may have more leading dims; -1 keeps a size.
    pub fn expand(&self, shape: &[isize]) -> Result<Tensor> {
        let op = "expand";
        if shape.len() < self.rank() {
            return Err(Error::invalid(op, format!("cannot expand shape {:?} to fewer dims {:?}", self.shape(), shape)));
        }
        let new_dims = shape.len() - self.rank();
        if let Some(i) = shape[..new_dims].iter().position(|&s| s == -1) {
            return Err(Error::invalid(
                op,
                format!("-1 at position {i} of {shape:?} names no dim of shape {:?}: -1 keeps an existing size, a new leading dim needs one", self.shape()),
            ));
        }
        let base = self.unsqueeze_to(shape.len())?;
        let target = shape
            .iter()
            .zip(base.shape())
            .map(|(&s, &d)| if s == -1 { Ok(d) } else if s >= 0 { Ok(s as usize) } else { Err(Error::invalid(op, format!("bad size {s} in {shape:?}"))) })
            .collect::<Result<Vec<_>>>()?;
        base.view(op, base.layout().broadcast_to(op, &target)?)
    }

    /// Elements `start..start + length` of `dim`; `length` must be at least
    /// 1, as in Burn (an empty range is a `slice`).
    pub fn narrow(&self, dim: isize, start: usize, length: usize) -> Result<Tensor> {
        let d = self.dim("narrow", dim)?;
        if length == 0 {
            return Err(Error::invalid("narrow", format!("length must be at least 1, found 0 (dim {d}, start {start}); slice an empty range instead")));
        }
        let n = self.shape()[d];
        if start.checked_add(length).is_none_or(|end| end > n) {
            return Err(Error::invalid("narrow", format!("range {start}..{} exceeds dim {d} of size {n}", start as u128 + length as u128)));
        }
        Ok(self.subview(self.layout().narrow_step(d, start, length, 1)))
    }

    /// Slice with one spec per leading dim; missing dims are kept whole.
    pub fn slice(&self, specs: &[SliceSpec]) -> Result<Tensor> {
        if specs.len() > self.rank() {
            return Err(Error::invalid("slice", format!("{} ranges given for a tensor of rank {} (shape {:?})", specs.len(), self.rank(), self.shape())));
        }
        let mut l = self.layout().clone();
        for (d, spec) in specs.iter().enumerate() {
            let (start, count, step) = spec.resolve("slice", self.shape()[d])?;
            l = l.narrow_step(d, start, count, step);
        }
        Ok(self.subview(l))
    }

    /// Slice with Burn's ranges: a range running past its dim is clamped to
    /// it, and one that starts at or after its end is empty.
    pub fn slice_ranges(&self, ranges: &[(usize, usize)]) -> Result<Tensor> {
        let at_most = |v: usize| v.min(isize::MAX as usize) as isize;
        let specs: Vec<SliceSpec> = ranges.iter().map(|&(s, e)| SliceSpec::range(at_most(s), at_most(e))).collect();
        self.slice(&specs)
    }


    /// Split `dim` into pieces of the given sizes.
    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        let d = self.dim("split_with_sizes", dim)?;
        // Checked: sizes that wrap around could sum to the dim's size.
        let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
        if total != Some(self.shape()[d]) {
            let total = sizes.iter().map(|&s| s as u128).sum::<u128>();
            return Err(Error::invalid("split_with_sizes", format!("sizes {sizes:?} sum to {total}, dim {d} has size {}", self.shape()[d])));
        }
        // A broadcast view can have a dim far longer than memory could hold
        // pieces for: the list is allocated fallibly.
        let mut pieces = crate::shape::try_with_capacity("split", sizes.len())?;
        let mut start = 0;
        for &s in sizes {
            pieces.push(self.subview(self.layout().narrow_step(d, start, s, 1)));
            start += s;
        }
        Ok(pieces)
    }

    /// Split `dim` into pieces of `size` (the last may be smaller); a dim
    /// of size 0 splits into no pieces, whatever the size (Burn's rule).
    pub fn split(&self, size: usize, dim: isize) -> Result<Vec<Tensor>> {
        let d = self.dim("split", dim)?;
        let n = self.shape()[d];
        if n == 0 {
            return Ok(Vec::new());
        }
        if size == 0 {
            return Err(Error::invalid("split", format!("split size must be positive for dim {d} of size {n}, found 0")));
        }
        let mut sizes = crate::shape::try_filled("split", n / size, size)?;
        if !n.is_multiple_of(size) {
            sizes.push(n % size);
        }
        self.split_with_sizes(&sizes, dim)
    }

    /// Split `dim` into `chunks` pieces as equal as possible (torch.chunk rule).
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        let d = self.dim("chunk", dim)?;
        if chunks == 0 {
            return Err(Error::invalid("chunk", "number of chunks must be positive"));
        }
        let n = self.shape()[d];
        self.split(n.div_ceil(chunks).max(1), dim)
    }

    /// Slices of size 1 along `dim`, keeping the dim.
    pub fn iter_dim(&self, dim: isize) -> Result<Vec<Tensor>> {
        self.split(1, dim).map_err(|e| e.with_op("iter_dim"))
    }

    /// Sliding windows of `size` every `step` along `dim`; the windows become
    /// a new last dim and `dim` counts the windows (Burn's/torch's unfold).
    pub fn unfold(&self, dim: isize, size: usize, step: usize) -> Result<Tensor> {
        let d = self.dim("unfold", dim)?;
        let n = self.shape()[d];
        if step == 0 || size == 0 || size > n {
            return Err(Error::invalid("unfold", format!("window size {size} and step {step} do not fit dim {d} of size {n}")));
        }
        let mut l = self.layout().clone();
        let s = l.strides[d];
        let windows = (n - size) / step + 1;
        l.shape[d] = windows;
        // One window never steps to the next, so a step too large to
        // express as a stride only matters when there are several.
        l.strides[d] = if windows == 1 {
            s
        } else {
            isize::try_from(step)
                .ok()
                .and_then(|step| s.checked_mul(step))
                .ok_or_else(|| Error::invalid("unfold", format!("step {step} is too large a stride for dim {d}")))?
        };
        l.shape.push(size);
        l.strides.push(s);
        // Overlapping windows hold more elements than the tensor: checked.
        self.view("unfold", l)
    }
}

/// Gradients of views: every view is undone on the gradient (reshape back,
/// inverse permutation, flip again, sum over expanded dims, or scatter into
/// zeros for slices).
impl Var {
    /// A view: memory-bound, `forward` remakes it from the input under
    /// balanced checkpointing; `back` undoes it on the gradient.
    fn view_op(
        &self,
        name: &'static str,
        y: Tensor,
        forward: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
        back: impl Fn(Tensor) -> Result<Tensor> + Send + Sync + 'static,
    ) -> Var {
        record_lazy(y, &[self], move |v| forward(&v[0]), |_| FnBackward::new(name, move |g, _| Ok(vec![Some(back(g)?)])))
    }

    fn reshaped(&self, name: &'static str, y: Tensor) -> Var {
        let shape: Vec<isize> = self.value.shape().iter().map(|&d| d as isize).collect();
        let to: Vec<isize> = y.shape().iter().map(|&d| d as isize).collect();
        self.view_op(name, y, move |x| x.reshape(&to), move |g| g.reshape(&shape))
    }

    pub fn reshape(&self, shape: &[isize]) -> Result<Var> {
        Ok(self.reshaped("reshape", self.value.reshape(shape)?))
    }

    pub fn flatten(&self, start: isize, end: isize) -> Result<Var> {
        Ok(self.reshaped("flatten", self.value.flatten(start, end)?))
    }

    pub fn squeeze(&self) -> Var {
        self.reshaped("squeeze", self.value.squeeze())
    }

    pub fn squeeze_dims(&self, dims: &[isize]) -> Result<Var> {
        Ok(self.reshaped("squeeze_dims", self.value.squeeze_dims(dims)?))
    }

    pub fn unsqueeze_dims(&self, dims: &[isize]) -> Result<Var> {
        Ok(self.reshaped("unsqueeze_dims", self.value.unsqueeze_dims(dims)?))
    }

    pub fn unsqueeze_to(&self, rank: usize) -> Result<Var> {
        Ok(self.reshaped("unsqueeze", self.value.unsqueeze_to(rank)?))
    }

    pub fn swap_dims(&self, a: isize, b: isize) -> Result<Var> {
        Ok(self.view_op("swap_dims", self.value.swap_dims(a, b)?, move |x| x.swap_dims(a, b), move |g| g.swap_dims(a, b)))
    }

    pub fn transpose(&self) -> Var {
        self.view_op("transpose", self.value.transpose(), |x| Ok(x.transpose()), |g| Ok(g.transpose()))
    }

    pub fn permute(&self, axes: &[isize]) -> Result<Var> {
        let y = self.value.permute(axes)?;
        let rank = self.value.rank();
        let mut inverse = vec![0isize; rank];
        for (i, &a) in axes.iter().enumerate() {
            inverse[crate::shape::norm_dim("permute", a, rank)?] = i as isize;
        }
        let axes = axes.to_vec();
        Ok(self.view_op("permute", y, move |x| x.permute(&axes), move |g| g.permute(&inverse)))
    }

    pub fn movedim(&self, src: &[isize], dst: &[isize]) -> Result<Var> {
        let y = self.value.movedim(src, dst)?;
        let (s, d) = (src.to_vec(), dst.to_vec());
        let (s2, d2) = (s.clone(), d.clone());
        Ok(self.view_op("movedim", y, move |x| x.movedim(&s2, &d2), move |g| g.movedim(&d, &s)))
    }

    pub fn flip(&self, axes: &[isize]) -> Result<Var> {
        let (a, a2) = (axes.to_vec(), axes.to_vec());
        Ok(self.view_op("flip", self.value.flip(axes)?, move |x| x.flip(&a2), move |g| g.flip(&a)))
    }

    pub fn expand(&self, shape: &[isize]) -> Result<Var> {
        let (from, to) = (self.value.shape().to_vec(), shape.to_vec());
        Ok(self.view_op("expand", self.value.expand(shape)?, move |x| x.expand(&to), move |g| sum_to_shape(g, &from)))
    }

    pub fn slice(&self, specs: &[SliceSpec]) -> Result<Var> {
        let y = self.value.slice(specs)?;
        let (shape, dtype, s, s2) = (self.value.shape().to_vec(), self.value.dtype(), specs.to_vec(), specs.to_vec());
        Ok(self.view_op("slice", y, move |x| x.slice(&s2), move |g| Tensor::zeros(&shape, dtype).slice_assign(&s, &g)))
    }

    pub fn narrow(&self, dim: isize, start: usize, length: usize) -> Result<Var> {
        // Checked first: the range below is only valid inside the dim.
        self.value.narrow(dim, start, length)?;
        self.narrow_range(dim, start, length)
    }

    /// `narrow` that also takes an empty range (split pieces of size 0).
    fn narrow_range(&self, dim: isize, start: usize, length: usize) -> Result<Var> {
        let d = self.value.dim("narrow", dim)?;
        let mut specs = vec![SliceSpec::full(); d + 1];
        specs[d] = SliceSpec::range(start as isize, (start + length) as isize);
        self.slice(&specs)
    }

    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Var>> {
        self.value.split_with_sizes(sizes, dim)?;
        let mut start = 0;
        sizes
            .iter()
            .map(|&n| {
                let v = self.narrow_range(dim, start, n);
                start += n;
                v
            })
            .collect()
    }

    fn pieces(&self, parts: Vec<Tensor>, dim: isize) -> Result<Vec<Var>> {
        let d = self.value.dim("split", dim)?;
        let sizes: Vec<usize> = parts.iter().map(|p| p.shape()[d]).collect();
        self.split_with_sizes(&sizes, dim)
    }

    pub fn split(&self, size: usize, dim: isize) -> Result<Vec<Var>> {
        self.pieces(self.value.split(size, dim)?, dim)
    }

    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Var>> {
        self.pieces(self.value.chunk(chunks, dim)?, dim)
    }

    pub fn iter_dim(&self, dim: isize) -> Result<Vec<Var>> {
        self.pieces(self.value.iter_dim(dim)?, dim)
    }

    pub fn squeeze_dim(&self, dim: isize) -> Result<Var> {
        Ok(self.reshaped("squeeze_dim", self.value.squeeze_dim(dim)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), shape).unwrap()
    }

    #[test]
    fn reshape_infers_and_rejects() {
        let x = t(&[2, 3]);
        assert_eq!(x.reshape(&[-1]).unwrap().shape(), &[6]);
        assert_eq!(x.reshape(&[3, -1]).unwrap().shape(), &[3, 2]);
        let e = x.reshape(&[4, -1]).unwrap_err().to_string();
        assert!(e.contains("[2, 3]") && e.contains("[4, -1]"), "{e}");
    }

    #[test]
    fn unsqueeze_to_a_huge_rank_is_an_error_not_a_hang() {
        let x = t(&[2, 3]).transpose();
        let y = x.unsqueeze_to(5).unwrap();
        assert_eq!(y.shape(), &[1, 1, 1, 3, 2]);
        assert_eq!(y.reshape(&[6]).unwrap().to_vec::<i64>(), vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(t(&[]).unsqueeze_to(2).unwrap().shape(), &[1, 1]);
        let e = x.unsqueeze_to(1 << 60).unwrap_err().to_string();
        assert!(e.contains("unsqueeze"), "{e}");
    }

    #[test]
    fn reshape_of_transposed_copies() {
        let x = t(&[2, 3]).transpose();
        assert_eq!(x.reshape(&[6]).unwrap().to_vec::<i64>(), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn slices_follow_python() {
        let x = t(&[5]);
        let s = |a, b, c| x.slice(&[SliceSpec { start: a, end: b, step: c }]).unwrap().to_vec::<i64>();
        assert_eq!(s(None, None, -1), vec![4, 3, 2, 1, 0]);
        assert_eq!(s(Some(1), Some(-1), 2), vec![1, 3]);
        assert_eq!(s(Some(-2), None, 1), vec![3, 4]);
        assert_eq!(s(Some(3), Some(1), 1), Vec::<i64>::new());
    }

    #[test]
    fn views_share_the_buffer() {
        let x = t(&[4, 4]);
        let v = x.narrow(0, 1, 2).unwrap().transpose();
        assert!(std::sync::Arc::ptr_eq(
            match x.storage() { crate::Storage::I64(b) => b, _ => unreachable!() },
            match v.storage() { crate::Storage::I64(b) => b, _ => unreachable!() },
        ));
    }

    #[test]
    fn chunk_and_split() {
        let x = t(&[7]);
        let sizes: Vec<usize> = x.chunk(3, 0).unwrap().iter().map(|c| c.numel()).collect();
        assert_eq!(sizes, vec![3, 3, 1]);
        assert!(x.split_with_sizes(&[3, 3], 0).is_err());
    }

    #[test]
    fn unfold_makes_windows() {
        let x = t(&[5]);
        let u = x.unfold(0, 2, 2).unwrap();
        assert_eq!(u.shape(), &[2, 2]);
        assert_eq!(u.to_vec::<i64>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn movedim_moves() {
        let x = t(&[2, 3, 4]);
        assert_eq!(x.movedim(&[0], &[2]).unwrap().shape(), &[3, 4, 2]);
    }
}
