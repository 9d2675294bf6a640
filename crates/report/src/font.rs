//! Embedded fonts, so PNG text renders on machines without any fonts.
//!
//! plotters' `ab_glyph` text backend only knows fonts registered at run
//! time. We register DejaVu Sans (shipped inside the `dejavu` crate) under the
//! generic family names plotters uses, once per process.

use plotters::style::{register_font, FontStyle};
use std::sync::Once;

/// The font family name every chart in this crate uses.
pub(crate) const FAMILY: &str = "sans-serif";

/// Registers the embedded fonts; cheap after the first call.
pub(crate) fn ensure_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let regular = dejavu::sans::regular();
        let bold = dejavu::sans::bold();
        let oblique = dejavu::sans::oblique();
        let mono = dejavu::sans_mono::regular();
        for family in ["sans-serif", "serif"] {
            // Registration only fails for corrupt font data, which the
            // embedded fonts are not; nothing useful can be done otherwise.
            let _ = register_font(family, FontStyle::Normal, regular).is_ok();
            let _ = register_font(family, FontStyle::Bold, bold).is_ok();
            let _ = register_font(family, FontStyle::Italic, oblique).is_ok();
            let _ = register_font(family, FontStyle::Oblique, oblique).is_ok();
        }
        let _ = register_font("monospace", FontStyle::Normal, mono).is_ok();
    });
}
