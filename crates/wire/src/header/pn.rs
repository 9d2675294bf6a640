//! Packet-number encoding and decoding (RFC 9000 §17.1, Appendix A.2, A.3).

/// Number of bytes (1..=4) to encode packet number `pn`, given the largest
/// packet number acknowledged by the peer in this space (RFC 9000 §17.1 and
/// Appendix A.2): enough bits to represent more than twice the number of
/// unacknowledged packets.
pub fn pn_encode_len(pn: u64, largest_acked: Option<u64>) -> usize {
    let num_unacked = match largest_acked {
        Some(la) => pn.saturating_sub(la),
        None => pn.saturating_add(1),
    };
    if num_unacked <= 1 {
        return 1;
    }
    // min_bits = ceil(log2(num_unacked)) + 1; bytes = ceil(min_bits / 8).
    let ceil_log2 = 64 - (num_unacked - 1).leading_zeros() as usize;
    let min_bits = ceil_log2 + 1;
    min_bits.div_ceil(8).clamp(1, 4)
}

/// Number of bytes (1..=4) to encode `pn` when up to `overtaking` packets numbered above `pn` may
/// reach the receiver before it does (RFC 9000 §17.1: "An endpoint SHOULD use a large enough
/// packet number encoding to allow the packet number to be recovered even if the packet arrives
/// after packets that are sent afterwards").
///
/// The receiver decodes against its largest received packet number `L` (Appendix A.3): the
/// result is the value congruent to the truncated number in `(L + 1 - hwin, L + 1 + hwin]`,
/// `hwin` being half the window `2^(8 * len)`. So `pn` is recovered for every `L` in
/// `[largest_acked, pn + overtaking]` (the receiver has at least what it acknowledged, and at
/// most `overtaking` higher numbers before this packet) exactly when
/// - `pn <= largest_acked + 1 + hwin`, which [`pn_encode_len`] (Appendix A.2) guarantees, and
/// - `pn + overtaking + 1 - hwin < pn`, i.e. `hwin >= overtaking + 2`.
///
/// The result is the shortest length meeting both, at most 4 (the longest the header allows).
pub fn pn_encode_len_overtaken(pn: u64, largest_acked: Option<u64>, overtaking: u64) -> usize {
    let below = pn_encode_len(pn, largest_acked);
    let need = overtaking.saturating_add(2);
    // Shortest len with 2^(8 * len - 1) >= need.
    let above = (1..=4)
        .find(|len| 1u64 << (8 * len - 1) >= need)
        .unwrap_or(4);
    below.max(above)
}

/// Packet number length (1..=4) from an **unprotected** first byte
/// (RFC 9000 §17.2, §17.3.1: the two low bits hold length - 1).
pub fn decode_pn_len(first_byte: u8) -> usize {
    usize::from(first_byte & 0x03) + 1
}

/// Reads a truncated packet number of `len` bytes (big-endian) from the start
/// of `bytes`, which must begin at the packet number (i.e. `&packet[pn_offset..]`).
/// Reads at most 4 bytes and never past the end of `bytes`.
pub fn read_truncated_pn(bytes: &[u8], len: usize) -> u64 {
    bytes
        .iter()
        .take(len.min(4))
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Recovers the full packet number from a truncated one (RFC 9000 Appendix
/// A.3). `largest_received` is the largest packet number successfully
/// processed in this packet number space (`None` if none yet).
pub fn decode_packet_number(truncated: u64, pn_len: usize, largest_received: Option<u64>) -> u64 {
    let pn_nbits = 8 * pn_len.clamp(1, 4) as u32;
    let expected = largest_received.map_or(0, |l| l.saturating_add(1));
    let win = 1u64 << pn_nbits;
    let hwin = win / 2;
    let mask = win - 1;
    let candidate = (expected & !mask) | (truncated & mask);
    // The RFC's conditions, with overflow-free arithmetic.
    if candidate.saturating_add(hwin) <= expected && candidate < (1u64 << 62).saturating_sub(win) {
        candidate + win
    } else if candidate > expected.saturating_add(hwin) && candidate >= win {
        candidate - win
    } else {
        candidate
    }
}
