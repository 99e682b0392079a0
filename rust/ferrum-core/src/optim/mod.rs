//! Fused optimizer updates. Each step is one pass over contiguous buffers
//! that reads the old parameter and the gradient, writes the new parameter
//! and rewrites the optimizer state where it is when no other tensor shares
//! it (the binding's `StateTensor` keeps it so; a shared state is copied
//! first): `sgd_update`, `adam_update`, `adagrad_update` and
//! `rmsprop_update`, with by-value `*_step` forms beside them.
//! The formulas are Burn's (`burn-optim`), so a model trains the same in both.

/// `$run!(a, b, c)` with the literals `true`/`false` that match the three
/// booleans of `$flags`: a loop generic over three `const` flags is compiled
/// once per combination, so no flag is tested per element.
macro_rules! with_flags3 {
    ($flags:expr, $run:ident) => {
        match $flags {
            (false, false, false) => $run!(false, false, false),
            (false, false, true) => $run!(false, false, true),
            (false, true, false) => $run!(false, true, false),
            (false, true, true) => $run!(false, true, true),
            (true, false, false) => $run!(true, false, false),
            (true, false, true) => $run!(true, false, true),
            (true, true, false) => $run!(true, true, false),
            (true, true, true) => $run!(true, true, true),
        }
    };
}

mod buffers;

pub mod adagrad;
pub mod adam;
pub mod clipping;
pub mod rmsprop;
pub mod sgd;

pub use adagrad::{adagrad_step, adagrad_update, AdaGradOptions};
pub use adam::{adam_step, adam_update, AdamOptions};
pub use clipping::{clip_by_norm, clip_by_value};
pub use rmsprop::{rmsprop_step, rmsprop_update, RmsPropOptions, RmsPropState};
pub use sgd::{sgd_step, sgd_update, Momentum, SgdOptions};
