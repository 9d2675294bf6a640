//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;

/// A fresh directory under the system temp dir, removed when the value is dropped (the tests
/// run often: leaving their PNGs and reports behind would fill the temp dir).
pub struct TestDir(tempfile::TempDir);

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

/// A fresh, unique directory whose name starts with `mpquic-report-{name}`.
pub fn temp_dir(name: &str) -> TestDir {
    TestDir(
        tempfile::Builder::new()
            .prefix(&format!("mpquic-report-{name}-"))
            .tempdir()
            .unwrap(),
    )
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
