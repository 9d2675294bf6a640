//! Datagrams (raw, or frames in a sealed server Initial) into a client, handshaking or established.
//! The harness is mpquic_fuzzing::client_datagram (crates/fuzzing).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzzing::client_datagram(data));
