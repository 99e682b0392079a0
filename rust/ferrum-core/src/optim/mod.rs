//! Fused optimizer updates. Each step is one pass over contiguous buffers
//! that reads the gradient and rewrites the parameter and the optimizer
//! state together, reusing any buffer this call owns alone: SGD, AdaGrad
//! and RMSProp take their state by value, Adam's `adam_update` rewrites
//! moments no other tensor shares where they are (the binding's
//! `StateTensor` keeps them so) and writes new ones beside shared moments.
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
