#![no_main]
//! See `ferrum_core::record::fuzz::param_id_text`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrum_core::record::fuzz::param_id_text(data));
