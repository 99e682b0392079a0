//! Property tests: whatever shapes, strides, offsets and chains of view ops
//! are thrown at the engine, huge and overflowing ones included, a layout
//! that a tensor accepts never reaches outside its buffer.

use proptest::prelude::*;

use crate::layout::{DimVec, Layout};
use crate::shape::numel;
use crate::{SliceSpec, Tensor};

/// Offsets reached by a layout, computed independently of `check_within`:
/// by walking every element (small layouts only).
fn walk(l: &Layout) -> Vec<i128> {
    let n = numel(l.shape());
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0usize; l.shape().len()];
    for _ in 0..n {
        out.push(l.offset() as i128 + index.iter().zip(l.strides()).map(|(&i, &s)| i as i128 * s as i128).sum::<i128>());
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < l.shape()[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..5, 1 => Just(usize::MAX), 1 => Just((1usize << 62) + 1), 1 => Just(1usize << 32)]
}

fn stride() -> impl Strategy<Value = isize> {
    prop_oneof![8 => -12isize..12, 1 => Just(isize::MAX), 1 => Just(isize::MIN), 1 => Just(1isize << 40)]
}

fn layout() -> impl Strategy<Value = Layout> {
    // Ranks past four: a layout's dims are stored inline up to four and on
    // the heap beyond, and both must behave alike.
    (0usize..7)
        .prop_flat_map(|rank| (proptest::collection::vec(dim(), rank), proptest::collection::vec(stride(), rank), 0usize..80))
        .prop_map(|(shape, strides, offset)| Layout { shape: DimVec::from_vec(shape), strides: DimVec::from_vec(strides), offset })
}

/// One view op with arguments drawn wide enough to be nonsense as often as not.
#[derive(Debug, Clone)]
enum ViewOp {
    Reshape(Vec<isize>),
    Expand(Vec<isize>),
    Slice(Vec<(Option<isize>, Option<isize>, isize)>),
    Narrow(isize, usize, usize),
    Permute(Vec<isize>),
    Flip(Vec<isize>),
    Unsqueeze(isize),
    Squeeze,
    Transpose,
    Unfold(isize, usize, usize),
    Split(usize, isize),
    SplitSizes(Vec<usize>, isize),
}

fn size() -> impl Strategy<Value = isize> {
    prop_oneof![6 => -1isize..6, 1 => Just(isize::MAX), 1 => Just((1isize << 62) + 1), 1 => Just(1isize << 31)]
}

fn count() -> impl Strategy<Value = usize> {
    prop_oneof![6 => 0usize..6, 1 => Just(usize::MAX), 1 => Just(1usize << 62)]
}

fn view_op() -> impl Strategy<Value = ViewOp> {
    let small = -4isize..4;
    prop_oneof![
        proptest::collection::vec(size(), 0..5).prop_map(ViewOp::Reshape),
        proptest::collection::vec(size(), 0..5).prop_map(ViewOp::Expand),
        proptest::collection::vec(
            (
                proptest::option::of(-8isize..8),
                proptest::option::of(-8isize..8),
                prop_oneof![4 => -3isize..=-1, 4 => 1isize..=3, 1 => Just(isize::MAX), 1 => Just(isize::MIN + 1), 1 => Just(1isize << 62)]
            ),
            0..4
        )
        .prop_map(ViewOp::Slice),
        (small.clone(), count(), count()).prop_map(|(d, s, n)| ViewOp::Narrow(d, s, n)),
        proptest::collection::vec(small.clone(), 0..5).prop_map(ViewOp::Permute),
        proptest::collection::vec(small.clone(), 0..3).prop_map(ViewOp::Flip),
        small.clone().prop_map(ViewOp::Unsqueeze),
        Just(ViewOp::Squeeze),
        Just(ViewOp::Transpose),
        (small.clone(), count(), count()).prop_map(|(d, s, n)| ViewOp::Unfold(d, s, n)),
        (count(), small.clone()).prop_map(|(s, d)| ViewOp::Split(s, d)),
        (proptest::collection::vec(count(), 0..4), small).prop_map(|(s, d)| ViewOp::SplitSizes(s, d)),
    ]
}

fn apply(t: &Tensor, op: &ViewOp) -> crate::Result<Vec<Tensor>> {
    let one = |r: crate::Result<Tensor>| r.map(|t| vec![t]);
    match op {
        // A reshape that cannot be a view copies the tensor. Only small ones here: a broadcast
        // view of 2^31 elements would otherwise be written out in full (once 24 GB, killed by OOM).
        ViewOp::Reshape(_) if !t.is_contiguous() && t.numel() > 1 << 16 => {
            Err(crate::Error::invalid("test", "a copying reshape of a large view is skipped"))
        }
        ViewOp::Reshape(s) => one(t.reshape(s)),
        ViewOp::Expand(s) => one(t.expand(s)),
        ViewOp::Slice(specs) => {
            let specs: Vec<SliceSpec> = specs.iter().map(|&(start, end, step)| SliceSpec { start, end, step }).collect();
            one(t.slice(&specs))
        }
        ViewOp::Narrow(d, s, n) => one(t.narrow(*d, *s, *n)),
        ViewOp::Permute(axes) => one(t.permute(axes)),
        ViewOp::Flip(axes) => one(t.flip(axes)),
        ViewOp::Unsqueeze(d) => one(t.unsqueeze_dim(*d)),
        ViewOp::Squeeze => Ok(vec![t.squeeze()]),
        ViewOp::Transpose => Ok(vec![t.transpose()]),
        ViewOp::Unfold(d, s, n) => one(t.unfold(*d, *s, *n)),
        ViewOp::Split(s, d) => t.split(*s, *d),
        ViewOp::SplitSizes(s, d) => t.split_with_sizes(s, *d),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// `check_within` accepts exactly the layouts whose every element lies
    /// in the buffer (checked by walking them when they are small enough).
    #[test]
    fn check_within_matches_a_walk(l in layout(), len in 0usize..120) {
        let accepted = l.check_within("test", len).is_ok();
        let count = if l.shape().contains(&0) { Some(0) } else { l.shape().iter().try_fold(1usize, |a, &d| a.checked_mul(d)) };
        if let Some(n) = count.filter(|&n| n <= 4096) {
            let strides_ok = l.strides().iter().all(|s| s.unsigned_abs() <= (isize::MAX / 8) as usize);
            let inside = walk(&l).iter().all(|&o| (0..len as i128).contains(&o)) && (n > 0 || l.offset() <= len);
            prop_assert_eq!(accepted, inside && strides_ok, "layout {:?} in a buffer of {}", l, len);
        } else if accepted {
            // Too many elements to walk: then it can only be accepted if the
            // count fits, and its extreme offsets (one per sign of stride) lie inside.
            let n = count.expect("an accepted layout has a count that fits");
            prop_assert!(n <= isize::MAX as usize / 8);
            let reach: i128 = l.shape().iter().zip(l.strides()).map(|(&d, &s)| (d as i128 - 1) * (s as i128).abs()).sum();
            prop_assert!(reach < len as i128);
        }
    }

    /// Chains of view ops on a small tensor: each step either fails with an
    /// error or gives tensors whose every element can be read from the buffer.
    #[test]
    fn views_never_leave_the_buffer(dims in proptest::collection::vec(0usize..4, 0..4), ops in proptest::collection::vec(view_op(), 1..6)) {
        let n: usize = dims.iter().product();
        let mut current = vec![Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), &dims).unwrap()];
        for op in &ops {
            let mut next = Vec::new();
            for t in &current {
                if let Ok(views) = apply(t, op) {
                    next.extend(views);
                }
            }
            for v in &next {
                prop_assert!(v.layout().check_within("test", v.storage().len()).is_ok(), "{:?} after {:?}", v.layout(), ops);
                if v.numel() <= 4096 {
                    let values = v.try_to_vec::<i64>("test").unwrap();
                    prop_assert!(values.iter().all(|&x| (0..n as i64).contains(&x)));
                }
            }
            if !next.is_empty() {
                current = next;
            }
        }
    }
}

#[test]
fn overflowing_shapes_are_refused() {
    let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    // (2^62 + 1) * 4 wraps around to 4 elements.
    let err = t.reshape(&[(1 << 62) + 1, 4]).unwrap_err().to_string();
    assert!(err.contains("reshape"), "{err}");
    assert!(Tensor::from_vec(vec![0.0f32; 4], &[(1 << 62) + 1, 4]).is_err());
    let one = Tensor::from_vec(vec![1.0f32], &[1, 1]).unwrap();
    let err = one.expand(&[1 << 62, 1 << 62]).unwrap_err().to_string();
    assert!(err.contains("expand") && err.contains("more elements than can be addressed"), "{err}");
    let err = crate::shape::broadcast_shape("add", &[1 << 40, 1], &[1, 1 << 40]).unwrap_err().to_string();
    assert!(err.contains("add"), "{err}");
}

#[test]
fn layouts_outside_the_buffer_are_refused() {
    let storage = <f32 as crate::Element>::wrap_vec(vec![0.0; 6]);
    let ok = Layout { shape: DimVec::from_slice(&[2, 3]), strides: DimVec::from_slice(&[3, 1]), offset: 0 };
    assert!(Tensor::from_parts(storage.clone(), ok).is_ok());
    for (shape, strides, offset) in [
        (vec![2, 3], vec![3, 1], 1usize),
        (vec![2, 3], vec![-3, 1], 0),
        (vec![7], vec![1], 0),
        (vec![2], vec![isize::MAX], 0),
        (vec![0], vec![1], 7),
        (vec![2, 3], vec![3], 0),
    ] {
        let l = Layout { shape: DimVec::from_slice(&shape), strides: DimVec::from_slice(&strides), offset };
        let err = Tensor::from_parts(storage.clone(), l).unwrap_err().to_string();
        assert!(err.contains("layout"), "{shape:?} {strides:?} {offset}: {err}");
    }
}
