//! Every wire decoder (varints, frames, headers, transport parameters) over arbitrary bytes.
//! The harness is mpquic_fuzzing::wire_decode (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::wire_decode(data));
