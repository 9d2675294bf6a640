//! Frames into an established connection (first byte: design, direction, second path).
//! The harness is mpquic_fuzzing::established_frames (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::established_frames(data));
