//! The request/response format and the payload both sides agree on: the client sends the
//! size it wants as 8 bytes (big endian) and finishes; the server answers with that many bytes
//! of a position-dependent pattern and finishes, so that a byte lost, duplicated or moved is
//! caught by the client's check.

use anyhow::{bail, ensure};

/// Largest download a request may ask for (keeps a malformed request from costing memory).
pub const MAX_SIZE: u64 = 1 << 30;

/// Bytes written per `write_all` on the server (bounds its per-stream buffer).
pub const CHUNK: u64 = 16 * 1024;

pub fn encode_request(size: u64) -> [u8; 8] {
    size.to_be_bytes()
}

pub fn decode_request(request: &[u8]) -> anyhow::Result<u64> {
    let Ok(bytes) = <[u8; 8]>::try_from(request) else {
        bail!("malformed request of {} bytes", request.len());
    };
    let size = u64::from_be_bytes(bytes);
    ensure!(
        size <= MAX_SIZE,
        "request for {size} bytes is above {MAX_SIZE}"
    );
    Ok(size)
}

/// Byte `i` of every response: a multiplicative hash, so that no short period can hide a
/// misplaced block.
fn byte_at(i: u64) -> u8 {
    (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8 ^ i as u8
}

/// Bytes `offset .. offset + len` of a response.
pub fn chunk(offset: u64, len: u64) -> Vec<u8> {
    (offset..offset + len).map(byte_at).collect()
}

/// Whether `body` is exactly the `size`-byte response.
pub fn verify(body: &[u8], size: u64) -> anyhow::Result<()> {
    ensure!(
        body.len() as u64 == size,
        "received {} bytes instead of {size}",
        body.len()
    );
    if let Some(i) = (0..size).find(|&i| body[i as usize] != byte_at(i)) {
        bail!("byte {i} differs");
    }
    Ok(())
}
