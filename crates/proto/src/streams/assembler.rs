//! The receiving half's reordering buffer (RFC 9000 §2.2): out-of-order STREAM or
//! CRYPTO data is held until the bytes before it arrive, then delivered in order.

use std::collections::VecDeque;

use bytes::{Buf, Bytes, BytesMut};

/// Largest offset + 1 a stream can carry: 2^62 - 1 (RFC 9000 §19.8).
pub(crate) const MAX_STREAM_OFFSET: u64 = (1 << 62) - 1;

/// Chunk count above which [`Assembler`] considers defragmenting.
const DEFRAG_MIN_CHUNKS: usize = 64;
/// Defragment only when chunks average fewer bytes than this: tiny chunks may
/// each pin a whole received datagram in memory (RFC 9000 §21.10).
const DEFRAG_SMALL_CHUNK: usize = 256;
/// Chunk slots an assembler keeps whatever it holds; above it, one using under a quarter of
/// its capacity gives the rest back.
const KEPT_CHUNKS: usize = 16;

/// A piece smaller than [`DEFRAG_SMALL_CHUNK`] is copied out of the datagram that carried it:
/// a `Bytes` slice keeps its whole datagram alive, so one-byte frames in full-size datagrams
/// would otherwise hold a datagram per buffered byte until the next defragmentation (which only
/// runs when the chunk count doubles: up to half the chunks, RFC 9000 §21.10). Larger pieces
/// keep at most a datagram's size per `DEFRAG_SMALL_CHUNK` bytes buffered. Received DATAGRAM
/// payloads waiting to be read follow the same rule (`connection/datagrams.rs`).
pub(crate) fn detach_small(piece: Bytes) -> Bytes {
    if piece.len() < DEFRAG_SMALL_CHUNK {
        Bytes::copy_from_slice(&piece)
    } else {
        piece
    }
}

/// Error from [`Assembler::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AssemblerError {
    /// `offset + len` exceeds 2^62 - 1 (RFC 9000 §19.8: FRAME_ENCODING_ERROR or
    /// FLOW_CONTROL_ERROR; §19.6: FRAME_ENCODING_ERROR or CRYPTO_BUFFER_EXCEEDED).
    #[error("data beyond the maximum stream offset 2^62-1")]
    OffsetOverflow,
}

/// Reassembles a byte stream from chunks received at arbitrary offsets, with
/// duplicates and overlaps (RFC 9000 §2.2: endpoints MUST deliver stream data as an
/// ordered byte stream; "Data that has already been received can be discarded").
///
/// Chunks are stored without copying as disjoint [`Bytes`] slices sorted by offset (a
/// deque: data arriving in order is pushed at the back and read from the front, with no
/// allocation per chunk);
/// overlapping input is trimmed to the parts not already held. Memory held is
/// bounded by the caller's flow control (data beyond the advertised limit must be
/// rejected before insertion). When many tiny chunks accumulate, they are copied
/// out of the datagrams that carried them (defragmentation), so that a peer
/// cannot pin whole datagrams with one-byte frames.
#[derive(Debug)]
pub struct Assembler {
    /// Disjoint chunks, sorted by offset, all at or after `read`.
    chunks: VecDeque<(u64, Bytes)>,
    /// Offset of the next byte to deliver.
    read: u64,
    /// Bytes held in `chunks`.
    buffered: usize,
    /// Highest `offset + len` ever inserted.
    end: u64,
    /// Chunk count that triggers the next defragmentation check.
    defrag_at: usize,
}

/// The same as [`Assembler::new`]: a derived `Default` would set `defrag_at` to 0, which made
/// every insert (even an empty CRYPTO frame from the network) run the defragmentation check.
impl Default for Assembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Assembler {
    /// An empty assembler expecting offset 0.
    pub fn new() -> Self {
        Self {
            chunks: VecDeque::new(),
            read: 0,
            buffered: 0,
            end: 0,
            defrag_at: DEFRAG_MIN_CHUNKS,
        }
    }

    /// Stores `data` received at `offset`, ignoring the parts already received or
    /// read. Returns the number of newly buffered bytes.
    pub fn insert(&mut self, offset: u64, data: Bytes) -> Result<usize, AssemblerError> {
        let end = offset
            .checked_add(data.len() as u64)
            .filter(|&e| e <= MAX_STREAM_OFFSET)
            .ok_or(AssemblerError::OffsetOverflow)?;
        self.end = self.end.max(end);
        let mut start = offset.max(self.read);
        // `i`: the first chunk at or after `start`. A predecessor may cover the beginning of
        // the new data (chunks are disjoint, so none starts in what it covers).
        let mut i = self.chunks.partition_point(|&(s, _)| s < start);
        if let Some((ps, pd)) = i.checked_sub(1).map(|p| &self.chunks[p]) {
            start = start.max(ps + pd.len() as u64);
        }
        let mut added = 0;
        while start < end {
            // The next held chunk at or after `start`, if it begins before `end`.
            let next = self
                .chunks
                .get(i)
                .filter(|&&(s, _)| s < end)
                .map(|(s, d)| (*s, s + d.len() as u64));
            let gap_end = next.map_or(end, |(s, _)| s);
            if gap_end > start {
                let piece = data.slice((start - offset) as usize..(gap_end - offset) as usize);
                added += piece.len();
                self.chunks.insert(i, (start, detach_small(piece)));
                i += 1;
            }
            start = next.map_or(end, |(_, e)| e);
            i += usize::from(next.is_some());
        }
        self.buffered += added;
        if self.chunks.len() >= self.defrag_at {
            self.maybe_defragment();
        }
        Ok(added)
    }

    /// Copies in-order data into `buf`; returns the number of bytes copied (0 when
    /// the next byte has not arrived).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let mut n = 0;
        while n < buf.len() {
            let Some(chunk) = self.read_chunk(buf.len() - n) else {
                break;
            };
            buf[n..n + chunk.len()].copy_from_slice(&chunk);
            n += chunk.len();
        }
        n
    }

    /// Removes and returns the next in-order chunk of at most `max` bytes, without
    /// copying.
    pub fn read_chunk(&mut self, max: usize) -> Option<Bytes> {
        if max == 0 {
            return None;
        }
        let (offset, first) = self.chunks.front_mut()?;
        if *offset != self.read {
            return None;
        }
        let out = if first.len() <= max {
            let out = self.chunks.pop_front().map(|(_, data)| data)?;
            self.release_spare();
            out
        } else {
            // The rest stays in place, starting `max` bytes later.
            *offset += max as u64;
            first.split_to(max)
        };
        self.read += out.len() as u64;
        self.buffered -= out.len();
        Some(out)
    }

    /// Whether the next in-order byte is available.
    pub fn is_readable(&self) -> bool {
        self.chunks.front().is_some_and(|&(s, _)| s == self.read)
    }

    /// Offset of the next byte to deliver (= bytes delivered so far).
    pub fn read_offset(&self) -> u64 {
        self.read
    }

    /// Bytes held, waiting to be read.
    pub fn bytes_buffered(&self) -> usize {
        self.buffered
    }

    /// Number of chunks held (adjacent ones may be separate).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Discards all held data; subsequent reads see nothing until data at the
    /// current read offset arrives.
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.release_spare();
        self.buffered = 0;
    }

    /// Gives back most of a large capacity the assembler no longer uses (a burst of
    /// reordered chunks must not pin memory once read).
    fn release_spare(&mut self) {
        let capacity = self.chunks.capacity();
        if capacity > KEPT_CHUNKS && self.chunks.len() < capacity / 4 {
            self.chunks
                .shrink_to((2 * self.chunks.len()).max(KEPT_CHUNKS));
        }
    }

    /// Merges contiguous runs of chunks into fresh allocations when chunks are small
    /// on average. Amortized: the threshold doubles with the chunk count.
    fn maybe_defragment(&mut self) {
        // `checked_div`: nothing to merge when no chunk is held (e.g. after an empty insert).
        let average = self.buffered.checked_div(self.chunks.len());
        if average.is_some_and(|avg| avg < DEFRAG_SMALL_CHUNK) {
            let old = std::mem::take(&mut self.chunks);
            let mut run: Option<(u64, BytesMut)> = None;
            for (off, data) in old {
                match &mut run {
                    Some((start, buf)) if *start + buf.len() as u64 == off => {
                        buf.extend_from_slice(&data)
                    }
                    _ => {
                        if let Some((s, b)) = run.take() {
                            self.chunks.push_back((s, b.freeze()));
                        }
                        run = Some((off, BytesMut::from(data.chunk())));
                    }
                }
            }
            if let Some((s, b)) = run {
                self.chunks.push_back((s, b.freeze()));
            }
        }
        self.defrag_at = (self.chunks.len() * 2).max(DEFRAG_MIN_CHUNKS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn b(s: &[u8]) -> Bytes {
        Bytes::copy_from_slice(s)
    }

    #[test]
    fn overlaps_and_duplicates() {
        let mut a = Assembler::new();
        assert_eq!(a.insert(4, b(b"efgh")), Ok(4));
        assert_eq!(a.insert(2, b(b"cdefghij")), Ok(4)); // "cd" + "ij"
        assert_eq!(a.insert(4, b(b"ef")), Ok(0));
        let mut buf = [0u8; 16];
        assert_eq!(a.read(&mut buf), 0);
        assert_eq!(a.insert(0, b(b"abc")), Ok(2));
        assert_eq!(a.bytes_buffered(), 10);
        assert_eq!(a.read(&mut buf[..4]), 4);
        assert_eq!(&buf[..4], b"abcd");
        assert_eq!(a.read_chunk(100).as_deref(), Some(&b"efgh"[..]));
        assert_eq!(a.read(&mut buf), 2);
        assert_eq!(&buf[..2], b"ij");
        assert_eq!(a.insert(0, b(b"abcdefghij")), Ok(0)); // all already read
        assert_eq!(a.bytes_buffered(), 0);
        assert_eq!(
            a.insert(MAX_STREAM_OFFSET, b(b"x")),
            Err(AssemblerError::OffsetOverflow)
        );
    }

    #[test]
    fn tiny_chunks_are_defragmented() {
        let mut a = Assembler::new();
        for i in (1..2000u64).rev() {
            a.insert(i, b(&[i as u8])).unwrap();
        }
        assert!(
            a.chunk_count() <= DEFRAG_MIN_CHUNKS,
            "{} chunks",
            a.chunk_count()
        );
        a.insert(0, b(&[0])).unwrap();
        let mut buf = vec![0u8; 4000];
        assert_eq!(a.read(&mut buf), 2000);
        assert!(buf[..2000].iter().enumerate().all(|(i, &x)| x == i as u8));
    }

    #[test]
    fn small_pieces_do_not_keep_their_datagram() {
        let datagram = Bytes::from(vec![1u8; 1200]);
        let range = datagram.as_ptr_range();
        let mut a = Assembler::new();
        a.insert(1, datagram.slice(10..11)).unwrap();
        a.insert(100, datagram.slice(100..100 + DEFRAG_SMALL_CHUNK))
            .unwrap();
        let held = |off: u64| {
            let (_, data) = a.chunks.iter().find(|(s, _)| *s == off).expect("chunk");
            data.as_ptr()
        };
        assert!(!range.contains(&held(1)), "a one-byte piece was copied out");
        assert!(
            range.contains(&held(100)),
            "a large piece is kept without copying"
        );
    }

    #[test]
    fn default_is_new_and_empty_inserts_are_harmless() {
        // Regression: `Default` left `defrag_at` at 0, so an empty insert into an empty
        // assembler divided by the chunk count (0) in `maybe_defragment`.
        let mut a = Assembler::default();
        assert_eq!(a.defrag_at, DEFRAG_MIN_CHUNKS);
        assert_eq!(a.insert(0, Bytes::new()), Ok(0));
        assert_eq!(a.insert(10, Bytes::new()), Ok(0));
        assert_eq!(a.chunk_count(), 0);
        let mut raw = Assembler {
            defrag_at: 0,
            ..Assembler::new()
        };
        assert_eq!(raw.insert(0, Bytes::new()), Ok(0));
        assert_eq!(raw.chunk_count(), 0);
    }

    proptest! {
        /// Random chunking, reordering and duplication reassemble exactly.
        #[test]
        fn reassembles_exactly(
            len in 1usize..20_000,
            cuts in proptest::collection::vec((any::<u16>(), 1u16..2000), 1..200),
            seed in any::<u64>(),
            read_sizes in proptest::collection::vec(1usize..5000, 1..8),
        ) {
            let stream: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let data = Bytes::from(stream.clone());
            // Random (possibly overlapping) pieces plus a full cover in random order.
            let mut pieces: Vec<(usize, usize)> = cuts
                .iter()
                .map(|&(s, l)| {
                    let s = s as usize % len;
                    (s, (s + l as usize).min(len))
                })
                .collect();
            let mut pos = 0;
            for &(_, l) in &cuts {
                if pos >= len { break; }
                let e = (pos + l as usize).min(len);
                pieces.push((pos, e));
                pos = e;
            }
            if pos < len { pieces.push((pos, len)); }
            let mut rng = seed | 1;
            for i in (1..pieces.len()).rev() {
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
                pieces.swap(i, (rng % (i as u64 + 1)) as usize);
            }
            let mut a = Assembler::new();
            let mut out = Vec::new();
            for (k, &(s, e)) in pieces.iter().enumerate() {
                a.insert(s as u64, data.slice(s..e)).unwrap();
                // Sorted, disjoint, at or after the read offset, and counted.
                let mut at = a.read_offset();
                for (off, piece) in &a.chunks {
                    prop_assert!(*off >= at && !piece.is_empty());
                    at = off + piece.len() as u64;
                }
                let held: usize = a.chunks.iter().map(|(_, p)| p.len()).sum();
                prop_assert_eq!(held, a.bytes_buffered());
                let mut buf = vec![0u8; read_sizes[k % read_sizes.len()]];
                let n = a.read(&mut buf);
                out.extend_from_slice(&buf[..n]);
            }
            while let Some(c) = a.read_chunk(usize::MAX) {
                out.extend_from_slice(&c);
            }
            prop_assert_eq!(out, stream);
            prop_assert_eq!(a.bytes_buffered(), 0);
        }
    }
}
