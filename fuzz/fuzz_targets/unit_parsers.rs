//! Size, duration and path-spec parsers of netsim, the lab and the CLI.
//! The harness is mpquic_fuzzing::unit_parsers (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::unit_parsers(data));
