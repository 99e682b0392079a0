//! Non-maximum suppression of boxes (Burn's `nms` and `NmsOptions`).
//!
//! Boxes are `(x1, y1, x2, y2)`. Those scoring below `score_threshold` are
//! dropped; the rest are visited by descending score (ties keep their
//! input order), and each box kept suppresses every later one whose IoU with
//! it is above `iou_threshold`. The result lists the kept boxes' indices in
//! the order they were kept.

use crate::dtype::{DType, Kind};

use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Burn's `NmsOptions`, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NmsOptions {
    /// A box whose IoU with a kept, higher-scoring box is above this is
    /// suppressed.
    pub iou_threshold: f64,
    /// Boxes scoring below this are dropped first.
    pub score_threshold: f64,
    /// At most this many boxes are kept; 0 keeps every one.
    pub max_output_boxes: usize,
}

impl Default for NmsOptions {
    fn default() -> Self {
        NmsOptions { iou_threshold: 0.5, score_threshold: 0.0, max_output_boxes: 0 }
    }
}

fn nms_typed<T: FloatElement>(op: &'static str, boxes: &Tensor, scores: &Tensor, opts: NmsOptions) -> Result<Vec<i64>> {
    let b = boxes.cast(T::DTYPE)?.try_to_vec::<T>(op)?;
    let s = scores.cast(T::DTYPE)?.try_to_vec::<T>(op)?;
    let (iou_threshold, score_threshold) = (T::from_f64(opts.iou_threshold), T::from_f64(opts.score_threshold));
    let mut order: Vec<usize> = (0..s.len()).filter(|&i| s[i] >= score_threshold).collect();
    // Stable, so equal scores keep their input order. NaN scores failed the
    // threshold above, so the order is total.
    order.sort_by(|&i, &j| s[j].partial_cmp(&s[i]).unwrap_or(std::cmp::Ordering::Equal));
    // Coordinates in visiting order, one array each, so the inner loop
    // reads them contiguously.
    let coord = |k: usize| order.iter().map(|&i| b[4 * i + k]).collect::<Vec<T>>();
    let (x1, y1, x2, y2) = (coord(0), coord(1), coord(2), coord(3));
    let area: Vec<T> = (0..order.len()).map(|j| (x2[j] - x1[j]) * (y2[j] - y1[j])).collect();
    let zero = T::ZERO;
    let mut suppressed = vec![false; order.len()];
    let mut keep = Vec::new();
    for i in 0..order.len() {
        if suppressed[i] {
            continue;
        }
        keep.push(order[i] as i64);
        if opts.max_output_boxes > 0 && keep.len() >= opts.max_output_boxes {
            break;
        }
        for j in i + 1..order.len() {
            let w = (x2[i].min(x2[j]) - x1[i].max(x1[j])).max(zero);
            let h = (y2[i].min(y2[j]) - y1[i].max(y1[j])).max(zero);
            let inter = w * h;
            let iou = inter / (area[i] + area[j] - inter);
            // A NaN IoU (two empty boxes) suppresses nothing.
            if iou > iou_threshold {
                suppressed[j] = true;
            }
        }
    }
    Ok(keep)
}

impl Tensor {
    /// Non-maximum suppression of Float boxes `[n, 4]` (`x1, y1, x2, y2`)
    /// scored by Float `[n]`: the I64 indices `[m]` of the boxes kept, by
    /// descending score. Computed in f64 for f64 boxes, f32 otherwise (as
    /// Burn computes in f32).
    pub fn nms(&self, scores: &Tensor, opts: NmsOptions) -> Result<Tensor> {
        let op = "nms";
        self.expect_kind(op, Kind::Float)?;
        scores.expect_kind(op, Kind::Float)?;
        let n = match self.shape() {
            &[n, 4] => n,
            s => return Err(Error::invalid(op, format!("boxes must be [n, 4] (x1, y1, x2, y2), found shape {s:?}"))),
        };
        if scores.shape() != [n] {
            return Err(Error::shapes(op, self.shape(), scores.shape(), format!("scores must be [{n}], one per box")));
        }
        let keep = if self.dtype() == DType::F64 { nms_typed::<f64>(op, self, scores, opts)? } else { nms_typed::<f32>(op, self, scores, opts)? };
        let m = keep.len();
        Tensor::from_vec(keep, &[m])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes() -> Tensor {
        let b: Vec<f32> = [[0, 0, 100, 100], [0, 1, 100, 100], [0, 101, 200, 200], [0, 100, 200, 200], [0, 170, 300, 300]]
            .iter()
            .flatten()
            .map(|&v| v as f32)
            .collect();
        Tensor::from_vec(b, &[5, 4]).unwrap()
    }

    fn scores() -> Tensor {
        Tensor::from_vec(vec![0.1f32, 0.2, 0.4, 0.3, 0.5], &[5]).unwrap()
    }

    fn run(iou: f64, score: f64, max: usize) -> Vec<i64> {
        let o = NmsOptions { iou_threshold: iou, score_threshold: score, max_output_boxes: max };
        boxes().nms(&scores(), o).unwrap().to_vec::<i64>()
    }

    // Burn's tests (tests/nms.rs).
    #[test]
    fn burn_expected_values() {
        assert_eq!(run(0.5, 0.0, 0), [4, 2, 1]);
        assert_eq!(run(0.5, 0.3, 0), [4, 2]);
        assert_eq!(run(0.1, 0.0, 0), [4, 1]);
        assert_eq!(run(0.5, 0.0, 1), [4]);
        assert_eq!(NmsOptions::default(), NmsOptions { iou_threshold: 0.5, score_threshold: 0.0, max_output_boxes: 0 });
    }

    // Hand-computed: boxes 0 and 1 overlap by 50 of 150 (IoU 1/3).
    #[test]
    fn iou_threshold_is_strict() {
        let b = Tensor::from_vec(vec![0.0f64, 0.0, 10.0, 10.0, 5.0, 0.0, 15.0, 10.0], &[2, 4]).unwrap();
        let s = Tensor::from_vec(vec![0.9f64, 0.8], &[2]).unwrap();
        let at = |t: f64| b.nms(&s, NmsOptions { iou_threshold: t, ..Default::default() }).unwrap().to_vec::<i64>();
        assert_eq!(at(1.0 / 3.0), [0, 1]);
        assert_eq!(at(0.33), [0]);
        // Equal scores keep input order; a score at the threshold stays.
        let tie = Tensor::from_vec(vec![0.5f64, 0.5], &[2]).unwrap();
        assert_eq!(b.nms(&tie, NmsOptions { iou_threshold: 0.9, score_threshold: 0.5, max_output_boxes: 0 }).unwrap().to_vec::<i64>(), [0, 1]);
    }

    #[test]
    fn empty_and_degenerate_boxes() {
        let none = Tensor::zeros(&[0, 4], DType::F32).nms(&Tensor::zeros(&[0], DType::F32), NmsOptions::default()).unwrap();
        assert_eq!(none.shape(), &[0]);
        assert_eq!(none.dtype(), DType::I64);
        // Two empty boxes at one point: IoU 0/0 suppresses nothing.
        let b = Tensor::from_vec(vec![1.0f32; 8], &[2, 4]).unwrap();
        let s = Tensor::from_vec(vec![0.2f32, 0.7], &[2]).unwrap();
        assert_eq!(b.nms(&s, NmsOptions::default()).unwrap().to_vec::<i64>(), [1, 0]);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let msg = |r: Result<Tensor>| r.unwrap_err().to_string();
        assert!(msg(Tensor::zeros(&[3, 5], DType::F32).nms(&Tensor::zeros(&[3], DType::F32), NmsOptions::default())).contains("boxes must be [n, 4]"));
        assert!(msg(boxes().nms(&Tensor::zeros(&[4], DType::F32), NmsOptions::default())).contains("scores must be [5]"));
        assert!(msg(boxes().nms(&Tensor::zeros(&[5], DType::I64), NmsOptions::default())).contains("expected a Float tensor, found Int"));
    }
}
