//! Certificate compression (RFC 8879): the algorithms the endpoints offer and use, in order of
//! preference. zlib comes first: decompressing a certificate with it costs the client a few
//! microseconds per handshake, against about 19 µs with brotli, whose decoder is expensive to
//! set up (`cargo bench -p mpquic-proto --bench core -- handshake_in_memory`, both endpoints of
//! an in-memory handshake: 442–444 µs without compression, 444–447 µs with zlib, 463 µs when
//! brotli was chosen, on the machine of docs/PERFORMANCE.md), while either keeps a large
//! certificate within the server's anti-amplification budget. brotli stays for peers that offer
//! only it (browsers do).

use rustls::compress::{
    CertCompressor, CertDecompressor, BROTLI_COMPRESSOR, BROTLI_DECOMPRESSOR, ZLIB_COMPRESSOR,
    ZLIB_DECOMPRESSOR,
};

/// The compressors a server uses, most preferred first (rustls picks the first one the client
/// offered).
pub fn compressors() -> Vec<&'static dyn CertCompressor> {
    vec![ZLIB_COMPRESSOR, BROTLI_COMPRESSOR]
}

/// The decompressors a client offers.
pub fn decompressors() -> Vec<&'static dyn CertDecompressor> {
    vec![ZLIB_DECOMPRESSOR, BROTLI_DECOMPRESSOR]
}
