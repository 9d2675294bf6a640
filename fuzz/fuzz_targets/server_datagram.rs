//! Datagrams (raw, or frames in a client Initial sealed with the public keys) into a server.
//! The harness is mpquic_fuzzing::server_datagram (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::server_datagram(data));
