//! The lab's TOML scenario loader on arbitrary text.
//! The harness is mpquic_fuzzing::scenario_toml (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::scenario_toml(data));
