//! The fused convolution with each activation of its epilogue, on every route
//! `conv_forward_fused` takes (the tiled GEMM, the few-positions and batch-rows
//! kernels, the depthwise loop), against the f64 reference.

use super::conv::conv_forward_fused;
use super::conv_reference::{assert_close, conv_forward_naive_f64, geom, values};
use super::epilogue::{Activation, Epilogue};

#[test]
fn fused_activations_match_the_reference_on_every_route() {
    let acts = [
        Activation::Clip { low: 0.0, high: 6.0 },
        Activation::HardSigmoid { alpha: 1.0 / 6.0, beta: 0.5 },
        Activation::HardSwish,
        Activation::Sigmoid,
        Activation::Silu,
    ];
    let geoms = [
        // a 3x3 convolution over a 16x16 image: the tiled GEMM
        geom(1, 8, (16, 16), 32, (3, 3), [1, 1], [1, 1], [1, 1], 1),
        // pointwise, as MobileNet's expansions
        geom(2, 16, (8, 8), 48, (1, 1), [1, 1], [0, 0], [1, 1], 1),
        // a squeeze-excitation gate: one position per image
        geom(1, 24, (1, 1), 40, (1, 1), [1, 1], [0, 0], [1, 1], 1),
        // few positions at batch 4, strided
        geom(4, 16, (4, 4), 32, (3, 3), [2, 2], [1, 1], [1, 1], 1),
        // depthwise 5x5, stride 2
        geom(1, 24, (9, 9), 24, (5, 5), [2, 2], [2, 2], [1, 1], 24),
        // few input channels at batch 2: the direct kernels, with a bias alone
        geom(2, 8, (12, 12), 48, (1, 1), [1, 1], [0, 0], [1, 1], 1),
        geom(2, 3, (16, 16), 24, (3, 3), [2, 2], [1, 1], [1, 1], 1),
    ];
    #[cfg(target_arch = "x86_64")]
    assert!(geoms.iter().any(super::conv_direct::forward_applies), "no case on the direct kernels");
    for g in &geoms {
        let n = g.batch * g.c_out * g.p();
        let x: Vec<f32> = values(g.batch * g.c_in * g.hw(), 11).iter().map(|v| v * 3.0).collect();
        let w = values(g.c_out * g.k(), 12);
        let (scale, shift, residual) = (values(g.c_out, 13), values(g.c_out, 14), values(n, 15));
        for act in acts {
            for full in [false, true] {
                let epi = if full {
                    Epilogue { scale: Some(&scale), shift: Some(&shift), residual: Some(&residual), relu: false, act }
                } else {
                    Epilogue { shift: Some(&shift), act, ..Default::default() }
                };
                let what = format!("{act:?} full tail {full}, {g:?}");
                let y = conv_forward_fused(&x, &w, epi, g, None).unwrap_or_else(|| panic!("{what}: no fused route"));
                assert_close(&y, &conv_forward_naive_f64(&x, &w, epi, g), g.k(), &what);
            }
        }
    }
}
