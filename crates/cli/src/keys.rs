//! Operator key files (`--token-key`, `--reset-key`) and `mpquic keygen`.
//!
//! A key file holds 32 bytes, raw or as 64 hexadecimal characters with an optional trailing
//! newline. Anything else is refused: a key silently padded or truncated would weaken it, and
//! a server restarted with a different reset key than before no longer resets the connections
//! of its previous life.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use rand::RngCore;

use crate::exit::UsageError;

/// Length of every operator key.
pub const KEY_LEN: usize = 32;

/// Arguments of `mpquic keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// File to create (refused if it exists); gets 64 hex characters and a newline, mode 0600.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// Read a key file; errors name the file and say what was expected.
pub fn load_key(path: &Path) -> Result<[u8; KEY_LEN], UsageError> {
    let data = std::fs::read(path)
        .map_err(|e| UsageError::new(format!("key file {}: {e}", path.display())))?;
    parse_key(&data).map_err(|why| UsageError::new(format!("key file {}: {why}", path.display())))
}

/// The key in a key file's contents.
pub fn parse_key(data: &[u8]) -> Result<[u8; KEY_LEN], String> {
    if data.len() == KEY_LEN && !data.iter().all(u8::is_ascii_hexdigit) {
        let mut key = [0u8; KEY_LEN];
        key.copy_from_slice(data);
        return Ok(key);
    }
    let text = data
        .strip_suffix(b"\r\n")
        .or_else(|| data.strip_suffix(b"\n"))
        .unwrap_or(data);
    if text.len() == 2 * KEY_LEN {
        if let Some(key) = decode_hex(text) {
            return Ok(key);
        }
        return Err("expected 64 hexadecimal characters, found other characters".to_owned());
    }
    if data.len() == KEY_LEN {
        // 32 hex digits is a 16-byte key in hex far more likely than a random raw key
        // (probability (22/256)^32); taking it as raw would halve the key's strength unnoticed.
        return Err(
            "32 hexadecimal characters is a 16-byte key; a key has 32 bytes \
                    (64 hexadecimal characters)"
                .to_owned(),
        );
    }
    Err(format!(
        "expected {KEY_LEN} raw bytes or {} hexadecimal characters, found {} bytes \
         (make one with `mpquic keygen FILE`)",
        2 * KEY_LEN,
        data.len()
    ))
}

fn decode_hex(text: &[u8]) -> Option<[u8; KEY_LEN]> {
    let digit = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    let mut key = [0u8; KEY_LEN];
    for (byte, pair) in key.iter_mut().zip(text.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(key)
}

/// Hexadecimal text of a key.
pub fn encode_hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Run `mpquic keygen FILE`: a fresh key from the operating system's random source.
pub fn keygen(args: &KeygenArgs) -> anyhow::Result<()> {
    let mut key = [0u8; KEY_LEN];
    rand::rngs::OsRng.fill_bytes(&mut key);
    let mut file = create_private(&args.file).map_err(|e| {
        UsageError::new(format!(
            "cannot create key file {}: {e}",
            args.file.display()
        ))
    })?;
    file.write_all(format!("{}\n", encode_hex(&key)).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| anyhow::anyhow!("writing key file {}: {e}", args.file.display()))?;
    crate::say(format_args!(
        "wrote a new {KEY_LEN}-byte key to {}",
        args.file.display()
    ));
    Ok(())
}

/// A new file only its owner can read: an existing file is never overwritten (it may be the
/// key a running server depends on).
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_raw_keys_are_read() {
        let mut key = [0u8; KEY_LEN];
        for (i, b) in key.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) ^ 0x80;
        }
        let hex = encode_hex(&key);
        assert_eq!(parse_key(hex.as_bytes()), Ok(key));
        assert_eq!(
            parse_key(format!("{}\n", hex.to_uppercase()).as_bytes()),
            Ok(key)
        );
        assert_eq!(parse_key(format!("{hex}\r\n").as_bytes()), Ok(key));
        assert_eq!(parse_key(&key), Ok(key));
    }

    #[test]
    fn malformed_keys_are_refused() {
        let hex = "ab".repeat(32);
        for bad in [
            &b""[..],
            b"\n",
            &hex.as_bytes()[..62],
            format!("{hex}\n\n").as_bytes(),
            format!("{hex}00").as_bytes(),
            format!("{}zz", &hex[..62]).as_bytes(),
            &hex.as_bytes()[..32],
            &[7u8; 33],
        ] {
            assert!(parse_key(bad).is_err(), "accepted {bad:?}");
        }
    }
}
