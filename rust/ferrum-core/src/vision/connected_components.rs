//! Connected-component labelling of Bool masks (Burn's
//! `connected_components` and `connected_components_with_stats`).
//!
//! Two raster passes with a union-find over provisional labels. The final
//! labels are compact, `1..=count`, numbered in the order each component's
//! first pixel appears in a row-major scan (scipy's `ndimage.label` and
//! OpenCV's order); the background is 0.

use std::sync::Mutex;

use crate::dtype::Kind;
use crate::error::{Error, Result};
use crate::kernels::{parallel, team};
use crate::shape::try_filled;
use crate::tensor::Tensor;

/// Which neighbours join a pixel to a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Connectivity {
    /// Left, right, up and down.
    Four,
    /// The four of [`Connectivity::Four`] and the four diagonals.
    Eight,
}

/// Burn's `ConnectedStatsOptions`. Burn's CPU backend computes every
/// statistic whatever these say (they save atomics on its GPU backends),
/// and so does this one; labels are always compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnectedStatsOptions {
    pub bounds_enabled: bool,
    pub max_label_enabled: bool,
    pub compact_labels: bool,
}

impl ConnectedStatsOptions {
    pub fn all() -> Self {
        ConnectedStatsOptions { bounds_enabled: true, max_label_enabled: true, compact_labels: true }
    }
    pub fn none() -> Self {
        ConnectedStatsOptions { bounds_enabled: false, max_label_enabled: false, compact_labels: false }
    }
}

impl Default for ConnectedStatsOptions {
    fn default() -> Self {
        Self::all()
    }
}

/// Per-label statistics, indexed by label (entry 0, the background, is all
/// zeros). For a `[h, w]` image each is an I64 `[max_label + 1]` tensor and
/// `max_label` is `[1]`; for a batch `[n, h, w]` each is `[n, L]` with `L`
/// the largest `max_label + 1` of the batch (zero past an image's own
/// labels) and `max_label` is `[n]`.
#[derive(Debug, Clone)]
pub struct ConnectedStats {
    /// Pixels in the component.
    pub area: Tensor,
    /// Smallest row.
    pub top: Tensor,
    /// Smallest column.
    pub left: Tensor,
    /// Largest column.
    pub right: Tensor,
    /// Largest row.
    pub bottom: Tensor,
    /// The largest label (the number of components).
    pub max_label: Tensor,
}

/// Statistics of one image, one entry per label (0 included).
#[derive(Debug, Clone, Default, PartialEq)]
struct ImageStats {
    area: Vec<i64>,
    top: Vec<i64>,
    left: Vec<i64>,
    right: Vec<i64>,
    bottom: Vec<i64>,
}

impl ImageStats {
    fn new(op: &'static str, labels: usize) -> Result<ImageStats> {
        Ok(ImageStats {
            area: try_filled(op, labels, 0)?,
            top: try_filled(op, labels, i64::MAX)?,
            left: try_filled(op, labels, i64::MAX)?,
            right: try_filled(op, labels, 0)?,
            bottom: try_filled(op, labels, 0)?,
        })
    }

    fn add(&mut self, label: usize, row: usize, col: usize) {
        let (r, c) = (row as i64, col as i64);
        self.area[label] += 1;
        self.top[label] = self.top[label].min(r);
        self.left[label] = self.left[label].min(c);
        self.right[label] = self.right[label].max(c);
        self.bottom[label] = self.bottom[label].max(r);
    }

    fn clear_background(&mut self) {
        for v in [&mut self.area, &mut self.top, &mut self.left, &mut self.right, &mut self.bottom] {
            v[0] = 0;
        }
    }
}

/// The root of `x`, halving the path on the way.
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// Join the sets of `a` and `b` under the smaller root, so every label's
/// parent is never larger than itself (what [`flatten`] relies on).
fn union(parent: &mut [u32], a: u32, b: u32) -> u32 {
    let (ra, rb) = (find(parent, a), find(parent, b));
    let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
    parent[hi as usize] = lo;
    lo
}

/// Final compact labels of the provisional ones, and their count. A set's
/// root is its smallest provisional label, which was made at the set's
/// first pixel in scan order, so numbering roots in increasing order
/// numbers components by their first pixel.
fn flatten(parent: &[u32]) -> (Vec<u32>, usize) {
    let mut fin = vec![0u32; parent.len()];
    let mut next = 1u32;
    for i in 1..parent.len() {
        let p = parent[i] as usize;
        if p < i {
            fin[i] = fin[p];
        } else {
            fin[i] = next;
            next += 1;
        }
    }
    (fin, next as usize - 1)
}

/// Label one `[h, w]` image into `out`; the statistics when asked for.
fn label_image(op: &'static str, img: &[bool], h: usize, w: usize, conn: Connectivity, out: &mut [i64], stats: bool) -> Labelled {
    let mut prov: Vec<u32> = try_filled(op, h * w, 0)?;
    // Label 0 is the background; it is its own root and never joined.
    let mut parent: Vec<u32> = vec![0];
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if !img[i] {
                continue;
            }
            let mut label = 0u32;
            let mut join = |n: u32, parent: &mut Vec<u32>| {
                if n != 0 {
                    label = if label == 0 { find(parent, n) } else { union(parent, label, n) };
                }
            };
            if x > 0 {
                join(prov[i - 1], &mut parent);
            }
            if y > 0 {
                let up = i - w;
                join(prov[up], &mut parent);
                if conn == Connectivity::Eight {
                    if x > 0 {
                        join(prov[up - 1], &mut parent);
                    }
                    if x + 1 < w {
                        join(prov[up + 1], &mut parent);
                    }
                }
            }
            if label == 0 {
                label = parent.len() as u32;
                parent.push(label);
            }
            prov[i] = label;
        }
    }
    // Every parent chain ends at a root; point each label at it directly.
    for i in 0..parent.len() {
        let r = find(&mut parent, i as u32);
        parent[i] = r;
    }
    let (fin, count) = flatten(&parent);
    let mut st = if stats { Some(ImageStats::new(op, count + 1)?) } else { None };
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            let l = fin[prov[i] as usize] as usize;
            out[i] = l as i64;
            if let (Some(s), true) = (st.as_mut(), l != 0) {
                s.add(l, y, x);
            }
        }
    }
    if let Some(s) = st.as_mut() {
        s.clear_background();
    }
    Ok((count, st))
}

/// One image's component count and statistics.
type Labelled = Result<(usize, Option<ImageStats>)>;

struct Batch {
    labels: Tensor,
    counts: Vec<usize>,
    stats: Vec<ImageStats>,
}

fn run(op: &'static str, img: &Tensor, conn: Connectivity, stats: bool) -> Result<Batch> {
    img.expect_kind(op, Kind::Bool)?;
    let (n, h, w) = match img.shape() {
        &[h, w] => (1, h, w),
        &[n, h, w] => (n, h, w),
        s => {
            return Err(Error::invalid(op, format!("expected a Bool image [height, width] or a batch [batch, height, width], found shape {s:?}")));
        }
    };
    // Provisional labels are u32: an image has at most half its pixels plus one of them.
    if h.saturating_mul(w) >= u32::MAX as usize {
        return Err(Error::invalid(op, format!("an image of {h} x {w} pixels is too large to label (at most {} pixels)", u32::MAX - 1)));
    }
    let data = img.try_to_vec::<bool>(op)?;
    let plane = h * w;
    let mut labels: Vec<i64> = try_filled(op, n * plane, 0)?;
    let results: Vec<Mutex<Option<Labelled>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let threaded = n > 1 && parallel::go_parallel(n * plane, parallel::PAR_CHEAP);
    let label_one = |b: usize, out: &mut [i64]| {
        let r = label_image(op, &data[b * plane..(b + 1) * plane], h, w, conn, out, stats);
        *results[b].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    };
    if plane == 0 {
        (0..n).for_each(|b| label_one(b, &mut []));
    } else if threaded {
        team::for_each_chunk_mut(&mut labels, plane, label_one);
    } else {
        labels.chunks_mut(plane).enumerate().for_each(|(b, out)| label_one(b, out));
    }
    let mut counts = Vec::with_capacity(n);
    let mut all = Vec::with_capacity(n);
    for r in results {
        let r = r.into_inner().unwrap_or_else(|e| e.into_inner());
        let (count, s) = r.ok_or_else(|| Error::Internal { reason: format!("{op}: an image was not labelled") })??;
        counts.push(count);
        all.push(s.unwrap_or_default());
    }
    Ok(Batch { labels: Tensor::from_vec(labels, img.shape())?, counts, stats: all })
}

impl Tensor {
    /// The component label of every pixel of a Bool `[h, w]` image (or a
    /// batch `[n, h, w]`, each image labelled on its own): I64, the same
    /// shape, 0 for the background and `1..=count` for the components in
    /// the order their first pixels appear in a row-major scan.
    pub fn connected_components(&self, connectivity: Connectivity) -> Result<Tensor> {
        Ok(run("connected_components", self, connectivity, false)?.labels)
    }

    /// [`Tensor::connected_components`] with the area and bounding box of
    /// every component (see [`ConnectedStats`] for the shapes).
    pub fn connected_components_with_stats(&self, connectivity: Connectivity, _options: ConnectedStatsOptions) -> Result<(Tensor, ConnectedStats)> {
        let op = "connected_components_with_stats";
        let batch = run(op, self, connectivity, true)?;
        let batched = self.rank() == 3;
        let width = batch.counts.iter().map(|c| c + 1).max().unwrap_or(1);
        let n = batch.counts.len();
        let field = |get: fn(&ImageStats) -> &Vec<i64>| -> Result<Tensor> {
            let mut v: Vec<i64> = try_filled(op, n * width, 0)?;
            for (b, s) in batch.stats.iter().enumerate() {
                let src = get(s);
                v[b * width..b * width + src.len()].copy_from_slice(src);
            }
            if batched { Tensor::from_vec(v, &[n, width]) } else { Tensor::from_vec(v, &[width]) }
        };
        let max_label: Vec<i64> = batch.counts.iter().map(|&c| c as i64).collect();
        let stats = ConnectedStats {
            area: field(|s| &s.area)?,
            top: field(|s| &s.top)?,
            left: field(|s| &s.left)?,
            right: field(|s| &s.right)?,
            bottom: field(|s| &s.bottom)?,
            max_label: Tensor::from_vec(max_label, &[n])?,
        };
        Ok((batch.labels, stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn mask(rows: &[&[u8]]) -> Tensor {
        let (h, w) = (rows.len(), rows[0].len());
        let v: Vec<bool> = rows.iter().flat_map(|r| r.iter().map(|&x| x != 0)).collect();
        Tensor::from_vec(v, &[h, w]).unwrap()
    }

    /// Burn's test image (tests/connected_components.rs).
    fn space_invader() -> Vec<Vec<u8>> {
        vec![
            vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
            vec![0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0],
            vec![0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
            vec![0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0],
            vec![0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0],
            vec![1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1],
            vec![1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1],
            vec![1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1],
            vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
        ]
    }

    fn invader_tensor() -> Tensor {
        let rows = space_invader();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        mask(&refs)
    }

    const FOUR_EXPECTED: [[i64; 14]; 9] = [
        [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0],
        [0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0],
        [0, 0, 0, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0],
        [0, 0, 3, 3, 0, 0, 3, 3, 0, 0, 3, 3, 0, 0],
        [0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0],
        [4, 0, 0, 3, 3, 0, 0, 0, 0, 3, 3, 0, 0, 5],
        [4, 4, 0, 0, 3, 3, 3, 3, 3, 3, 0, 0, 5, 5],
        [4, 4, 0, 3, 3, 3, 0, 0, 3, 3, 3, 0, 5, 5],
        [0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0],
    ];

    fn v(t: &Tensor) -> Vec<i64> {
        t.to_vec::<i64>()
    }

    // Burn's expected values: every pixel one component with 8 neighbours.
    #[test]
    fn burn_eight_connectivity() {
        let labels = invader_tensor().connected_components(Connectivity::Eight).unwrap();
        assert_eq!(labels.dtype(), DType::I64);
        assert_eq!(labels.shape(), &[9, 14]);
        let want: Vec<i64> = space_invader().concat().iter().map(|&x| x as i64).collect();
        assert_eq!(v(&labels), want);
    }

    #[test]
    fn burn_eight_connectivity_with_stats() {
        let (labels, s) = invader_tensor().connected_components_with_stats(Connectivity::Eight, ConnectedStatsOptions::all()).unwrap();
        let want: Vec<i64> = space_invader().concat().iter().map(|&x| x as i64).collect();
        assert_eq!(v(&labels), want);
        assert_eq!(v(&s.area), [0, 58]);
        assert_eq!(v(&s.left), [0, 0]);
        assert_eq!(v(&s.top), [0, 0]);
        assert_eq!(v(&s.right), [0, 13]);
        assert_eq!(v(&s.bottom), [0, 8]);
        assert_eq!(v(&s.max_label), [1]);
    }

    #[test]
    fn burn_four_connectivity() {
        let labels = invader_tensor().connected_components(Connectivity::Four).unwrap();
        assert_eq!(v(&labels), FOUR_EXPECTED.concat());
    }

    #[test]
    fn burn_four_connectivity_with_stats() {
        let (labels, s) = invader_tensor().connected_components_with_stats(Connectivity::Four, ConnectedStatsOptions::none()).unwrap();
        assert_eq!(v(&labels), FOUR_EXPECTED.concat());
        assert_eq!(&v(&s.area)[1..], [1, 1, 46, 5, 5]);
        assert_eq!(&v(&s.left)[1..], [3, 10, 1, 0, 12]);
        assert_eq!(&v(&s.top)[1..], [0, 0, 1, 5, 5]);
        assert_eq!(&v(&s.right)[1..], [3, 10, 12, 1, 13]);
        assert_eq!(&v(&s.bottom)[1..], [0, 0, 8, 7, 7]);
        assert_eq!(v(&s.max_label), [5]);
        assert_eq!(v(&s.area)[0], 0);
    }

    /// A label that a simple flood fill would give, for checking the
    /// union-find on awkward shapes (a U whose arms meet late, a spiral).
    fn flood_fill(img: &[bool], h: usize, w: usize, eight: bool) -> Vec<i64> {
        let mut out = vec![0i64; h * w];
        let mut next = 0;
        for start in 0..h * w {
            if !img[start] || out[start] != 0 {
                continue;
            }
            next += 1;
            let mut stack = vec![start];
            out[start] = next;
            while let Some(p) = stack.pop() {
                let (y, x) = ((p / w) as isize, (p % w) as isize);
                for dy in -1isize..=1 {
                    for dx in -1isize..=1 {
                        if (dy == 0 && dx == 0) || (!eight && dy != 0 && dx != 0) {
                            continue;
                        }
                        let (ny, nx) = (y + dy, x + dx);
                        if ny < 0 || nx < 0 || ny >= h as isize || nx >= w as isize {
                            continue;
                        }
                        let q = ny as usize * w + nx as usize;
                        if img[q] && out[q] == 0 {
                            out[q] = next;
                            stack.push(q);
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn matches_a_flood_fill_on_pseudo_random_masks() {
        let mut state = 12345u64;
        for case in 0..40 {
            let (h, w) = (1 + case % 7 * 3, 1 + case % 5 * 4);
            let img: Vec<bool> = (0..h * w)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (state >> 33) % 100 < 45 + (case as u64 % 3) * 10
                })
                .collect();
            let t = Tensor::from_vec(img.clone(), &[h, w]).unwrap();
            for (conn, eight) in [(Connectivity::Four, false), (Connectivity::Eight, true)] {
                let want = flood_fill(&img, h, w, eight);
                assert_eq!(v(&t.connected_components(conn).unwrap()), want, "case {case} eight={eight}");
            }
        }
    }

    #[test]
    fn u_shapes_and_diagonals() {
        // Arms of a U get different provisional labels, joined at the bottom.
        let u = mask(&[&[1, 0, 1, 0, 1], &[1, 0, 1, 0, 1], &[1, 1, 1, 1, 1]]);
        assert_eq!(v(&u.connected_components(Connectivity::Four).unwrap()), [1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1]);
        // A diagonal joins only with 8 neighbours; the anti-diagonal checks the upper-right one.
        let d = mask(&[&[0, 1, 0, 1], &[1, 0, 1, 0]]);
        assert_eq!(v(&d.connected_components(Connectivity::Four).unwrap()), [0, 1, 0, 2, 3, 0, 4, 0]);
        assert_eq!(v(&d.connected_components(Connectivity::Eight).unwrap()), [0, 1, 0, 1, 1, 0, 1, 0]);
    }

    #[test]
    fn batches_label_each_image_alone() {
        let a = space_invader().concat();
        let mut both: Vec<bool> = a.iter().map(|&x| x != 0).collect();
        both.extend(vec![false; 9 * 14]);
        both[9 * 14 + 5] = true;
        let t = Tensor::from_vec(both, &[2, 9, 14]).unwrap();
        let (labels, s) = t.connected_components_with_stats(Connectivity::Four, ConnectedStatsOptions::all()).unwrap();
        let l = v(&labels);
        assert_eq!(&l[..9 * 14], FOUR_EXPECTED.concat().as_slice());
        assert_eq!(l[9 * 14 + 5], 1);
        assert_eq!(l[9 * 14..].iter().sum::<i64>(), 1);
        assert_eq!(s.area.shape(), &[2, 6]);
        assert_eq!(v(&s.area), [0, 1, 1, 46, 5, 5, 0, 1, 0, 0, 0, 0]);
        assert_eq!(v(&s.left)[6..8], [0, 5]);
        assert_eq!(v(&s.max_label), [5, 1]);
    }

    #[test]
    fn large_batches_run_in_parallel_with_the_same_result() {
        let (n, h, w) = (4, 200, 200);
        let img: Vec<bool> = (0..n * h * w).map(|i| (i * 7919 % 13) < 6).collect();
        let t = Tensor::from_vec(img.clone(), &[n, h, w]).unwrap();
        let labels = v(&t.connected_components(Connectivity::Eight).unwrap());
        for b in 0..n {
            let want = flood_fill(&img[b * h * w..(b + 1) * h * w], h, w, true);
            assert_eq!(&labels[b * h * w..(b + 1) * h * w], want.as_slice());
        }
    }

    #[test]
    fn empty_and_blank_images() {
        let blank = Tensor::zeros(&[3, 4], DType::Bool);
        let (l, s) = blank.connected_components_with_stats(Connectivity::Eight, ConnectedStatsOptions::all()).unwrap();
        assert_eq!(v(&l), [0; 12]);
        assert_eq!(v(&s.area), [0]);
        assert_eq!(v(&s.max_label), [0]);
        let empty = Tensor::zeros(&[0, 5], DType::Bool);
        assert_eq!(empty.connected_components(Connectivity::Four).unwrap().shape(), &[0, 5]);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let e = Tensor::zeros(&[3, 3], DType::F32).connected_components(Connectivity::Four).unwrap_err().to_string();
        assert!(e.contains("expected a Bool tensor, found Float"), "{e}");
        let e = Tensor::zeros(&[3], DType::Bool).connected_components(Connectivity::Four).unwrap_err().to_string();
        assert!(e.contains("found shape [3]"), "{e}");
    }
}
