#![no_main]
//! See `ferrum_core::record::fuzz::self_describing`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrum_core::record::fuzz::self_describing(data));
