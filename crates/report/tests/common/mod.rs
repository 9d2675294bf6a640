//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh, unique directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "mpquic-report-{name}-{}-{nanos}-{n}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Decodes a PNG file into (width, height, RGB(A) bytes, channels).
pub fn decode_png(path: &Path) -> (u32, u32, Vec<u8>, usize) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf, info.color_type.samples())
}

/// Number of pixels that are not the white background.
pub fn non_background_pixels(path: &Path) -> usize {
    let (_, _, buf, channels) = decode_png(path);
    buf.chunks(channels)
        .filter(|px| px[..3].iter().any(|&c| c < 250))
        .count()
}

/// Counts pixels of an exact colour (RGB) in a PNG.
pub fn pixels_of(path: &Path, rgb: [u8; 3]) -> usize {
    let (_, _, buf, channels) = decode_png(path);
    buf.chunks(channels).filter(|px| px[..3] == rgb).count()
}
