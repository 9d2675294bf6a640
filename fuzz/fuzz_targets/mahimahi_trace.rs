//! The Mahimahi trace parser, and a simulated link driven by any trace it accepts.
//! The harness is mpquic_fuzzing::mahimahi_trace (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::mahimahi_trace(data));
