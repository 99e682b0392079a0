//! Fused recurrent sequences: the LSTM and GRU cells over every step of a
//! sequence, forward and backward (backpropagation through time), on
//! contiguous batch-first buffers.
//!
//! Each step is one GEMM of the hidden state against all the gates side by
//! side (`[batch, hidden] @ [hidden, gates * hidden]`) and one vectorised
//! pass of gate arithmetic; the input's share of every gate was computed for
//! the whole sequence beforehand, in one GEMM. Backward walks the steps in
//! reverse with one GEMM per step for the hidden state's gradient, then
//! computes the recurrent weight's gradient for all steps in one GEMM.
//!
//! Every function returns `None` when the user interrupted it (between steps).

use super::gemm::{Dims, GemmElement, Mat};
use super::parallel::simd;
use super::tanh::tanh;
use crate::element::FloatElement;
use crate::interrupt;
use crate::ops::unary::sigmoid;

/// Floats the recurrent kernels run on.
pub trait RnnFloat: FloatElement + GemmElement {
    /// `w` (`k x n`, through `mat`) made ready for the many products of a
    /// sequence: packed once where ferrum's f32 GEMM runs.
    fn prepare(w: &[Self], mat: Mat, k: usize, n: usize) -> Weight<'_, Self> {
        Weight { w, mat, k, n, packed: None }
    }
}

impl RnnFloat for f64 {}

impl RnnFloat for f32 {
    fn prepare(w: &[f32], mat: Mat, k: usize, n: usize) -> Weight<'_, f32> {
        let kernel = super::sgemm::Kernel::best().filter(|_| k > 0 && n > 0 && super::gemm::fits(mat, k, n, w.len()));
        // SAFETY: `fits` checked that every element of the k x n matrix is in
        // `w`; the kernel is one this CPU runs; k, n > 0.
        let packed = kernel.map(|kernel| unsafe {
            let b = super::sgemm::Operand { ptr: w.as_ptr().add(mat.offset), rs: mat.rs, cs: mat.cs };
            super::sgemm::PackedB::new(kernel, b, k, n)
        });
        Weight { w, mat, k, n, packed }
    }
}

/// A recurrent weight ready for `dst (+)= lhs @ w`.
pub struct Weight<'a, T> {
    w: &'a [T],
    mat: Mat,
    k: usize,
    n: usize,
    packed: Option<super::sgemm::PackedB>,
}

impl<T: RnnFloat> Weight<'_, T> {
    /// `dst[m x n] (+)= lhs @ w`, `dst` rows `n` apart.
    fn product(&self, dst: &mut [T], accumulate: bool, lhs: &[T], l: Mat, m: usize) {
        let (k, n) = (self.k, self.n);
        match &self.packed {
            Some(p) if m > 0 => {
                assert!(super::gemm::fits(l, m, k, lhs.len()) && dst.len() >= m * n, "recurrent product: operand out of bounds");
                let threads = if m * k * n >= super::gemm::PAR_GEMM_FLOPS { rayon::current_num_threads() } else { 1 };
                // SAFETY: T is f32 here (only f32 packs); the bounds were checked
                // above; dst is borrowed mutably.
                unsafe {
                    let a = super::sgemm::Operand { ptr: lhs.as_ptr().add(l.offset).cast(), rs: l.rs, cs: l.cs };
                    p.product(dst.as_mut_ptr().cast(), n, accumulate, a, m, threads);
                }
            }
            _ => T::gemm_into(dst, n, accumulate, lhs, l, self.w, self.mat, Dims { m, k, n }, true),
        }
    }
}

/// Sizes of a fused sequence: `gates` blocks of `hidden` columns per step.
#[derive(Clone, Copy, Debug)]
pub struct SeqDims {
    pub batch: usize,
    pub seq: usize,
    pub hidden: usize,
    pub gates: usize,
}

impl SeqDims {
    fn width(&self) -> usize {
        self.gates * self.hidden
    }

    /// The time index of the `s`-th step processed.
    fn time(&self, s: usize, reverse: bool) -> usize {
        if reverse { self.seq - 1 - s } else { s }
    }

    /// The time index processed just before `t`, if any.
    fn before(&self, t: usize, reverse: bool) -> Option<usize> {
        if reverse { (t + 1 < self.seq).then_some(t + 1) } else { t.checked_sub(1) }
    }
}

/// LSTM settings: the direction, the cell clip, and whether the forget gate
/// is `1 - i` (then the gate blocks are `i, g, o`; else `i, f, g, o`).
#[derive(Clone, Copy, Debug)]
pub struct LstmFlags {
    pub reverse: bool,
    pub clip: Option<f64>,
    pub coupled: bool,
}

fn row_major(cols: usize) -> Mat {
    Mat { offset: 0, rs: cols as isize, cs: 1 }
}

/// `dst[batch x n] (+)= rows @ w` where row `b` of the left operand starts at
/// `offset + b * stride` in `src`.
fn gemm_rows<T: RnnFloat>(dst: &mut [T], accumulate: bool, src: &[T], offset: usize, stride: usize, w: &Weight<'_, T>, batch: usize) {
    w.product(dst, accumulate, src, Mat { offset, rs: stride as isize, cs: 1 }, batch);
}

/// `w^T` of a row-major `[rows, cols]` matrix.
fn transposed(cols: usize) -> Mat {
    Mat { offset: 0, rs: 1, cs: cols as isize }
}

/// The LSTM forward. `xp` is `[batch, seq, gates * hidden]` (the input's
/// share of every gate, biases included), `w` the recurrent weight
/// `[hidden, gates * hidden]`. Returns the hidden states then the cell
/// states, `[2, batch, seq, hidden]`, and (when `keep`) the gate activations
/// `[batch, seq, gates * hidden]` that backward reads.
pub fn lstm_forward<T: RnnFloat>(xp: &[T], w: &[T], h0: &[T], c0: &[T], d: SeqDims, f: LstmFlags, keep: bool) -> Option<(Vec<T>, Vec<T>)> {
    let (b_n, t_n, h_n, gw) = (d.batch, d.seq, d.hidden, d.width());
    let plane = b_n * t_n * h_n;
    let mut y = vec![T::zero(); 2 * plane];
    let mut acts = if keep { vec![T::zero(); b_n * t_n * gw] } else { Vec::new() };
    let mut pre = vec![T::zero(); b_n * gw];
    let mut scratch = vec![T::zero(); if keep { 0 } else { gw }];
    let (mut h, mut c) = (h0.to_vec(), c0.to_vec());
    let clip = f.clip.map(|v| T::from(v).unwrap_or_else(T::infinity));
    let wp = T::prepare(w, row_major(gw), h_n, gw);
    for s in 0..t_n {
        if interrupt::poll() {
            return None;
        }
        let t = d.time(s, f.reverse);
        for b in 0..b_n {
            pre[b * gw..(b + 1) * gw].copy_from_slice(&xp[(b * t_n + t) * gw..][..gw]);
        }
        gemm_rows(&mut pre, true, &h, 0, h_n, &wp, b_n);
        let (hs, cs) = y.split_at_mut(plane);
        // The closure must inline into `simd`'s target-feature function:
        // left out of line, the cell compiled to baseline SSE and took as
        // long as the step's GEMM.
        simd(
            #[inline(always)]
            || {
                for b in 0..b_n {
                    let at = (b * t_n + t) * h_n;
                    let p = &pre[b * gw..(b + 1) * gw];
                    let a = if keep { &mut acts[(b * t_n + t) * gw..][..gw] } else { &mut scratch[..] };
                    lstm_cell(p, a, &mut c[b * h_n..][..h_n], &mut h[b * h_n..][..h_n], h_n, f.coupled, clip);
                    hs[at..at + h_n].copy_from_slice(&h[b * h_n..][..h_n]);
                    cs[at..at + h_n].copy_from_slice(&c[b * h_n..][..h_n]);
                }
            },
        );
    }
    Some((y, acts))
}

/// One LSTM cell for one batch row: gates from `p`, state updated in place.
/// One loop per gate keeps each loop a plain map that vectorises.
#[inline(always)]
fn lstm_cell<T: FloatElement>(p: &[T], a: &mut [T], c: &mut [T], h: &mut [T], n: usize, coupled: bool, clip: Option<T>) {
    let blocks = if coupled { 3 } else { 4 };
    let (p, a) = (&p[..blocks * n], &mut a[..blocks * n]);
    let (c, h) = (&mut c[..n], &mut h[..n]);
    // The cell candidate block takes tanh (block 1 coupled, 2 otherwise), the others sigmoid.
    let g_at = if coupled { n } else { 2 * n };
    let (a_sig, a_rest) = a.split_at_mut(g_at);
    let (a_g, a_o) = a_rest.split_at_mut(n);
    for (d, &x) in a_sig.iter_mut().zip(&p[..g_at]) {
        *d = sigmoid(x);
    }
    for (d, &x) in a_g.iter_mut().zip(&p[g_at..g_at + n]) {
        *d = tanh(x);
    }
    for (d, &x) in a_o.iter_mut().zip(&p[g_at + n..]) {
        *d = sigmoid(x);
    }
    let (i, rest) = a.split_at(n);
    let (g, o) = (&rest[g_at - n..g_at], &rest[g_at..g_at + n]);
    if coupled {
        for j in 0..n {
            c[j] = (T::one() - i[j]) * c[j] + i[j] * g[j];
        }
    } else {
        let f = &rest[..n];
        for j in 0..n {
            c[j] = f[j] * c[j] + i[j] * g[j];
        }
    }
    if let Some(m) = clip {
        for v in c.iter_mut() {
            *v = if *v > m { m } else if *v < -m { -m } else { *v };
        }
    }
    for j in 0..n {
        h[j] = o[j] * tanh(c[j]);
    }
}

/// Gradients of the LSTM forward: `gy` is the gradient of its
/// `[2, batch, seq, hidden]` output, `y` that output and `acts` the gate
/// activations it kept. Returns the gradients of `xp`, `w`, `h0` and `c0`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn lstm_backward<T: RnnFloat>(
    gy: &[T],
    y: &[T],
    acts: &[T],
    w: &[T],
    h0: &[T],
    c0: &[T],
    d: SeqDims,
    f: LstmFlags,
) -> Option<(Vec<T>, Vec<T>, Vec<T>, Vec<T>)> {
    let (b_n, t_n, h_n, gw) = (d.batch, d.seq, d.hidden, d.width());
    let plane = b_n * t_n * h_n;
    let (gh, gc) = gy.split_at(plane);
    let (hs, cs) = y.split_at(plane);
    let clip = f.clip.map(|v| T::from(v).unwrap_or_else(T::infinity));
    let mut dxp = vec![T::zero(); b_n * t_n * gw];
    let mut dh_next = vec![T::zero(); b_n * h_n];
    let mut dc = vec![T::zero(); b_n * h_n];
    let wt = T::prepare(w, transposed(gw), gw, h_n);
    for s in (0..t_n).rev() {
        if interrupt::poll() {
            return None;
        }
        let t = d.time(s, f.reverse);
        let prev = d.before(t, f.reverse);
        simd(
            #[inline(always)]
            || {
                for b in 0..b_n {
                    let at = (b * t_n + t) * h_n;
                    let c_prev = match prev {
                        Some(tp) => &cs[(b * t_n + tp) * h_n..][..h_n],
                        None => &c0[b * h_n..][..h_n],
                    };
                    let io = StepIo {
                        gh: &gh[at..at + h_n],
                        gc: &gc[at..at + h_n],
                        c: &cs[at..at + h_n],
                        c_prev,
                        a: &acts[(b * t_n + t) * gw..][..gw],
                    };
                    let dp = &mut dxp[(b * t_n + t) * gw..][..gw];
                    lstm_cell_backward(&io, &dh_next[b * h_n..][..h_n], &mut dc[b * h_n..][..h_n], dp, h_n, f.coupled, clip);
                }
            },
        );
        // dh of the step before: this step's gate gradients through w^T.
        gemm_rows(&mut dh_next, false, &dxp, t * gw, t_n * gw, &wt, b_n);
    }
    let dw = weight_grad(hs, h0, &dxp, d, f.reverse);
    Some((dxp, dw, dh_next, dc))
}

/// What one backward step of one batch row reads.
struct StepIo<'a, T> {
    gh: &'a [T],
    gc: &'a [T],
    c: &'a [T],
    c_prev: &'a [T],
    a: &'a [T],
}

#[inline(always)]
fn lstm_cell_backward<T: FloatElement>(io: &StepIo<'_, T>, dh_next: &[T], dc: &mut [T], dp: &mut [T], n: usize, coupled: bool, clip: Option<T>) {
    let one = T::one();
    let blocks = if coupled { 3 } else { 4 };
    let (a, dp) = (&io.a[..blocks * n], &mut dp[..blocks * n]);
    let g_at = if coupled { n } else { 2 * n };
    let (i, g, o) = (&a[..n], &a[g_at..g_at + n], &a[g_at + n..g_at + 2 * n]);
    let (gh, gc, c, c_prev, dh_next, dc) = (&io.gh[..n], &io.gc[..n], &io.c[..n], &io.c_prev[..n], &dh_next[..n], &mut dc[..n]);
    // dp's o block first holds dh, the i block dc (through the cell), then each becomes its gate's gradient.
    let (dp_i, dp_rest) = dp.split_at_mut(n);
    let (dp_mid, dp_o) = dp_rest.split_at_mut(g_at);
    for j in 0..n {
        let dh = gh[j] + dh_next[j];
        let tc = tanh(c[j]);
        dp_o[j] = dh * tc * o[j] * (one - o[j]);
        dp_i[j] = dc[j] + gc[j] + dh * o[j] * (one - tc * tc);
    }
    if let Some(m) = clip {
        // The clamp passes the gradient only where it did not clip.
        for (d, &v) in dp_i.iter_mut().zip(c) {
            *d = if v < m && v > -m { *d } else { T::zero() };
        }
    }
    if coupled {
        let dp_g = &mut dp_mid[..n];
        for j in 0..n {
            let dcj = dp_i[j];
            let di = dcj * g[j] - dcj * c_prev[j];
            dc[j] = dcj * (one - i[j]);
            dp_g[j] = dcj * i[j] * (one - g[j] * g[j]);
            dp_i[j] = di * i[j] * (one - i[j]);
        }
    } else {
        let f = &a[n..2 * n];
        let (dp_f, dp_g) = dp_mid.split_at_mut(n);
        for j in 0..n {
            let dcj = dp_i[j];
            dc[j] = dcj * f[j];
            dp_f[j] = dcj * c_prev[j] * f[j] * (one - f[j]);
            dp_g[j] = dcj * i[j] * (one - g[j] * g[j]);
            dp_i[j] = dcj * g[j] * i[j] * (one - i[j]);
        }
    }
}

/// `sum_t h_prev(t)^T @ dp(t)`: the recurrent weight's gradient for every
/// step in one GEMM, `h_prev` being each step's incoming hidden state.
fn weight_grad<T: RnnFloat>(hs: &[T], h0: &[T], dp: &[T], d: SeqDims, reverse: bool) -> Vec<T> {
    let (b_n, t_n, h_n, gw) = (d.batch, d.seq, d.hidden, d.width());
    let mut h_prev = vec![T::zero(); b_n * t_n * h_n];
    for b in 0..b_n {
        for t in 0..t_n {
            let src = match d.before(t, reverse) {
                Some(tp) => &hs[(b * t_n + tp) * h_n..][..h_n],
                None => &h0[b * h_n..][..h_n],
            };
            h_prev[(b * t_n + t) * h_n..][..h_n].copy_from_slice(src);
        }
    }
    let mut dw = vec![T::zero(); h_n * gw];
    let k = b_n * t_n;
    T::gemm_into(&mut dw, gw, false, &h_prev, transposed(h_n), dp, row_major(gw), Dims { m: h_n, k, n: gw }, true);
    dw
}

/// The GRU forward (reset gate after the recurrent weight, as PyTorch):
/// `xp` is `[batch, seq, 3 * hidden]` (blocks z, r, n; input biases
/// included), `w` `[hidden, 3 * hidden]`, `bh` the recurrent bias. Returns
/// the hidden states `[batch, seq, hidden]` and (when `keep`) `[batch, seq,
/// 4 * hidden]` of z, r, n and the new gate's recurrent term for backward.
pub fn gru_forward<T: RnnFloat>(xp: &[T], w: &[T], bh: Option<&[T]>, h0: &[T], d: SeqDims, keep: bool) -> Option<(Vec<T>, Vec<T>)> {
    let (b_n, t_n, h_n) = (d.batch, d.seq, d.hidden);
    let gw = 3 * h_n;
    let mut y = vec![T::zero(); b_n * t_n * h_n];
    let mut acts = if keep { vec![T::zero(); b_n * t_n * 4 * h_n] } else { Vec::new() };
    let mut hp = vec![T::zero(); b_n * gw];
    let mut h = h0.to_vec();
    let mut scratch = vec![T::zero(); 4 * h_n];
    let wp = T::prepare(w, row_major(gw), h_n, gw);
    for t in 0..t_n {
        if interrupt::poll() {
            return None;
        }
        gemm_rows(&mut hp, false, &h, 0, h_n, &wp, b_n);
        if let Some(bh) = bh {
            for row in hp.chunks_exact_mut(gw) {
                row.iter_mut().zip(bh).for_each(|(v, &b)| *v = *v + b);
            }
        }
        simd(
            #[inline(always)]
            || {
                for b in 0..b_n {
                    let x = &xp[(b * t_n + t) * gw..][..gw];
                    let a = if keep { &mut acts[(b * t_n + t) * 4 * h_n..][..4 * h_n] } else { &mut scratch[..] };
                    let row = &mut h[b * h_n..][..h_n];
                    gru_cell(x, &hp[b * gw..][..gw], a, row, h_n);
                    y[(b * t_n + t) * h_n..][..h_n].copy_from_slice(row);
                }
            },
        );
    }
    Some((y, acts))
}

/// One GRU cell for one batch row (`hp` holds `h @ w + bh`); one loop per gate.
#[inline(always)]
fn gru_cell<T: FloatElement>(x: &[T], hp: &[T], a: &mut [T], h: &mut [T], n: usize) {
    let (x, hp, a, h) = (&x[..3 * n], &hp[..3 * n], &mut a[..4 * n], &mut h[..n]);
    for j in 0..2 * n {
        a[j] = sigmoid(x[j] + hp[j]);
    }
    let (zr, rest) = a.split_at_mut(2 * n);
    let (g, hn) = rest.split_at_mut(n);
    hn.copy_from_slice(&hp[2 * n..]);
    for j in 0..n {
        g[j] = tanh(x[2 * n + j] + zr[n + j] * hn[j]);
    }
    for j in 0..n {
        h[j] = (T::one() - zr[j]) * g[j] + zr[j] * h[j];
    }
}

/// Gradients of the GRU forward: of `xp`, `w`, the recurrent bias and `h0`.
#[allow(clippy::type_complexity)]
pub fn gru_backward<T: RnnFloat>(gy: &[T], y: &[T], acts: &[T], w: &[T], h0: &[T], d: SeqDims) -> Option<(Vec<T>, Vec<T>, Vec<T>, Vec<T>)> {
    let (b_n, t_n, h_n) = (d.batch, d.seq, d.hidden);
    let gw = 3 * h_n;
    let mut dxp = vec![T::zero(); b_n * t_n * gw];
    // The gradient of each step's recurrent product h @ w + bh.
    let mut dhp = vec![T::zero(); b_n * t_n * gw];
    let mut dh_next = vec![T::zero(); b_n * h_n];
    let wt = T::prepare(w, transposed(gw), gw, h_n);
    for t in (0..t_n).rev() {
        if interrupt::poll() {
            return None;
        }
        simd(
            #[inline(always)]
            || {
                for b in 0..b_n {
                    let at = (b * t_n + t) * h_n;
                    let h_prev = if t > 0 { &y[at - h_n..at] } else { &h0[b * h_n..][..h_n] };
                    let a = &acts[(b * t_n + t) * 4 * h_n..][..4 * h_n];
                    let (dx, dr) = (&mut dxp[(b * t_n + t) * gw..][..gw], &mut dhp[(b * t_n + t) * gw..][..gw]);
                    gru_cell_backward(&gy[at..at + h_n], h_prev, a, &mut dh_next[b * h_n..][..h_n], dx, dr, h_n);
                }
            },
        );
        gemm_rows(&mut dh_next, true, &dhp, t * gw, t_n * gw, &wt, b_n);
    }
    let mut db = vec![T::zero(); gw];
    for row in dhp.chunks_exact(gw) {
        for (s, &v) in db.iter_mut().zip(row) {
            *s = *s + v;
        }
    }
    let dw = weight_grad(y, h0, &dhp, SeqDims { gates: 3, ..d }, false);
    Some((dxp, dw, db, dh_next))
}

/// One GRU backward step of one batch row. `dh` holds the gradient reaching
/// this step's output and leaves the part that flows straight to `h_prev`
/// (the part through `w` is added by the caller's GEMM).
#[inline(always)]
fn gru_cell_backward<T: FloatElement>(gy: &[T], h_prev: &[T], a: &[T], dh: &mut [T], dx: &mut [T], dr: &mut [T], n: usize) {
    let one = T::one();
    for j in 0..n {
        let (z, r, g, hn) = (a[j], a[n + j], a[2 * n + j], a[3 * n + j]);
        let d = gy[j] + dh[j];
        let dpn = d * (one - z) * (one - g * g);
        let dpz = d * (h_prev[j] - g) * z * (one - z);
        let dpr = dpn * hn * r * (one - r);
        dx[j] = dpz;
        dx[n + j] = dpr;
        dx[2 * n + j] = dpn;
        dr[j] = dpz;
        dr[n + j] = dpr;
        dr[2 * n + j] = dpn * r;
        dh[j] = d * z;
    }
}
