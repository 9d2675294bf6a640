//! Stream reassembly (RFC 9000 §2.2): 1 MB of one stream arriving as 1200-byte STREAM frames
//! into the receive side's reordering buffer, read by the application as it becomes readable.
//! In order; and reordered, each group of 8 frames arriving last to first (so 7 of every 8
//! frames wait in the buffer for the gap before them to fill).

use bytes::Bytes;
use criterion::{black_box, Criterion, Throughput};
use mpquic_proto::testing::Assembler;

const STREAM: usize = 1_000_000;
const FRAME: usize = 1200;
const GROUP: usize = 8;

/// Offsets of the frames in arrival order.
fn arrival_order(reorder: bool) -> Vec<usize> {
    let offsets: Vec<usize> = (0..STREAM).step_by(FRAME).collect();
    if !reorder {
        return offsets;
    }
    offsets
        .chunks(GROUP)
        .flat_map(|g| g.iter().rev().copied())
        .collect()
}

/// Inserts every frame in `order` and reads (copies out, as `Connection::read` does) whatever
/// is readable after each; returns the bytes read (the whole stream).
fn reassemble(data: &Bytes, order: &[usize], out: &mut [u8]) -> usize {
    let mut asm = Assembler::new();
    let mut read = 0;
    for &offset in order {
        let end = (offset + FRAME).min(STREAM);
        asm.insert(offset as u64, data.slice(offset..end))
            .expect("insert");
        loop {
            let n = asm.read(out);
            if n == 0 {
                break;
            }
            read += n;
        }
    }
    read
}

pub fn bench(c: &mut Criterion) {
    let data = Bytes::from((0..STREAM).map(|i| i as u8).collect::<Vec<u8>>());
    let mut out = vec![0u8; 64 * 1024];
    let mut group = c.benchmark_group("reassembly_1MB");
    group.throughput(Throughput::Bytes(STREAM as u64));
    for (name, reorder) in [("in_order", false), ("reordered_by_8", true)] {
        let order = arrival_order(reorder);
        assert_eq!(reassemble(&data, &order, &mut out), STREAM);
        group.bench_function(name, |b| {
            b.iter(|| black_box(reassemble(&data, &order, &mut out)))
        });
    }
    group.finish();
}
