//! The hq-interop (HTTP/0.9) request parser and its path confinement.
//! The harness is mpquic_fuzzing::hq_request (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::hq_request(data));
