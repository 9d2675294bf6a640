//! Every wire decoder (frames, headers, transport parameters) over arbitrary bytes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mpquic_wire::fuzz_decode_all(data);
});
