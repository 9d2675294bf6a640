//! HTTP/0.9 over QUIC, as used by the QUIC interop runner (ALPN `hq-interop`): the client
//! opens a bidirectional stream, sends `GET /path\r\n` and finishes it; the server answers with
//! the file's bytes and a FIN, or resets the stream with one of the [`code`]s.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::AsyncReadExt;

use crate::{Connection, ConnectionError, ReadToEndError, RecvStream, SendStream, WriteError};

/// The ALPN protocol name.
pub const ALPN: &[u8] = b"hq-interop";

/// Longest request the server reads.
pub const MAX_REQUEST: usize = 8 * 1024;

/// Bytes of a served file read (and handed to the stream) at a time.
const FILE_CHUNK: usize = 256 * 1024;

/// Application error codes of RESET_STREAM sent by the server (HTTP status numbers).
pub mod code {
    /// The request was not `GET <path>`.
    pub const BAD_REQUEST: u64 = 400;
    /// The path leaves the served directory.
    pub const FORBIDDEN: u64 = 403;
    /// No such file.
    pub const NOT_FOUND: u64 = 404;
    /// Reading the file failed.
    pub const INTERNAL: u64 = 500;
}

/// Errors of requests and of serving them.
#[derive(Debug, thiserror::Error)]
pub enum HqError {
    /// The request is not `GET /path`.
    #[error("bad request: {0}")]
    BadRequest(String),
    /// The path leaves the served directory.
    #[error("forbidden path: {0}")]
    Forbidden(String),
    /// No such file.
    #[error("not found: {0}")]
    NotFound(String),
    /// Reading the served file failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The connection ended.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// Writing to the stream failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Reading from the stream failed.
    #[error(transparent)]
    Read(#[from] ReadToEndError),
}

impl HqError {
    /// The RESET_STREAM code the server answers this error with.
    pub fn reset_code(&self) -> u64 {
        match self {
            HqError::BadRequest(_) | HqError::Read(_) => code::BAD_REQUEST,
            HqError::Forbidden(_) => code::FORBIDDEN,
            HqError::NotFound(_) => code::NOT_FOUND,
            _ => code::INTERNAL,
        }
    }
}

/// Send `GET <path>` on a new bidirectional stream; the returned stream carries the response.
pub async fn request(conn: &Connection, path: &str) -> Result<RecvStream, HqError> {
    if !path.starts_with('/') || path.contains(['\r', '\n']) {
        return Err(HqError::BadRequest(format!(
            "request path must start with '/': {path:?}"
        )));
    }
    let (mut send, recv) = conn.open_bi().await?;
    send.write_all(format!("GET {path}\r\n").as_bytes()).await?;
    send.finish()?;
    Ok(recv)
}

/// The target of a request (`GET /path`, optionally followed by CRLF).
pub fn parse_request(request: &[u8]) -> Result<String, HqError> {
    let text = std::str::from_utf8(request).map_err(|_| HqError::BadRequest("not UTF-8".into()))?;
    let line = text.lines().next().unwrap_or_default().trim_end();
    let mut parts = line.split_whitespace();
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(target.to_owned()),
        _ => Err(HqError::BadRequest(format!(
            "expected 'GET /path', got {:?}",
            line.chars().take(80).collect::<String>()
        ))),
    }
}

/// The path below the served directory that `target` names, without touching the file system:
/// query and fragment dropped, percent-decoded, `.` and empty segments skipped. Refuses `..`,
/// absolute or prefixed components, backslashes and NUL; the result has only normal
/// components. Pure, so the request fuzzer can check that property on any input.
pub fn relative_path(target: &str) -> Result<PathBuf, HqError> {
    let path = target.split(['?', '#']).next().unwrap_or_default();
    let decoded = percent_decode(path)
        .ok_or_else(|| HqError::BadRequest(format!("bad percent-encoding in {target:?}")))?;
    let mut relative = PathBuf::new();
    for part in decoded.split('/').filter(|p| !p.is_empty() && *p != ".") {
        let mut components = Path::new(part).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(c)), None) if !part.contains(['\\', '\0']) => relative.push(c),
            _ => return Err(HqError::Forbidden(target.to_owned())),
        }
    }
    if relative.as_os_str().is_empty() {
        return Err(HqError::NotFound(target.to_owned()));
    }
    Ok(relative)
}

/// The file under `root` (already canonical) that `target` names. Refuses `..`, absolute
/// components and symbolic links leading outside `root`.
pub fn resolve(root: &Path, target: &str) -> Result<PathBuf, HqError> {
    let relative = relative_path(target)?;
    let full = root
        .join(&relative)
        .canonicalize()
        .map_err(|_| HqError::NotFound(target.to_owned()))?;
    if !full.starts_with(root) {
        return Err(HqError::Forbidden(target.to_owned()));
    }
    if !full.is_file() {
        return Err(HqError::NotFound(target.to_owned()));
    }
    Ok(full)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // RFC 3986 §2.1: '%' and exactly two hex digits (from_str_radix alone would also
            // take a sign, as in "%+f").
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Serve every request stream of `conn` from `root` until the connection ends; returns why it
/// ended. `root` must be canonical (see [`std::fs::canonicalize`]).
pub async fn serve_connection(conn: Connection, root: Arc<PathBuf>) -> ConnectionError {
    loop {
        match conn.accept_bi().await {
            Ok((send, recv)) => {
                let root = root.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve_stream(send, recv, &root).await {
                        tracing::info!("request failed: {e}");
                    }
                });
            }
            Err(e) => return e,
        }
    }
}

/// Answer one request: read it, send the file and finish, or reset the stream with the error's
/// [`HqError::reset_code`]. Returns the bytes sent.
pub async fn serve_stream(
    mut send: SendStream,
    mut recv: RecvStream,
    root: &Path,
) -> Result<u64, HqError> {
    let result = respond(&mut send, &mut recv, root).await;
    if let Err(e) = &result {
        let _ = send.reset(e.reset_code());
    }
    result
}

async fn respond(
    send: &mut SendStream,
    recv: &mut RecvStream,
    root: &Path,
) -> Result<u64, HqError> {
    let request = recv.read_to_end(MAX_REQUEST).await?;
    let target = parse_request(&request)?;
    let path = resolve(root, &target)?;
    tracing::debug!("GET {target} -> {}", path.display());
    let mut file = tokio::fs::File::open(&path)
        .await
        .map_err(|_| HqError::NotFound(target.clone()))?;
    // Each chunk read from the file goes into the stream as it is (no copy into the send
    // buffer); the stream drops it once the peer has acknowledged its bytes.
    let mut sent = 0u64;
    let mut end = false;
    while !end {
        // Filled before it is handed over: the stream keeps the whole allocation alive until
        // the peer acknowledges the chunk, so a short read must not pin 256 kB for a few bytes.
        let mut chunk = BytesMut::with_capacity(FILE_CHUNK);
        while chunk.len() < FILE_CHUNK {
            if file.read_buf(&mut chunk).await? == 0 {
                end = true;
                break;
            }
        }
        if !chunk.is_empty() {
            sent += chunk.len() as u64;
            send.write_chunk(chunk.freeze()).await?;
        }
    }
    send.finish()?;
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!(parse_request(b"GET /a/b.txt\r\n").unwrap(), "/a/b.txt");
        assert_eq!(parse_request(b"GET /x").unwrap(), "/x");
        assert!(parse_request(b"POST /x\r\n").is_err());
        assert!(parse_request(b"GET x\r\n").is_err());
        assert!(parse_request(b"\xff\xfe").is_err());
    }

    #[test]
    fn percent_escapes_are_two_hex_digits() {
        assert_eq!(relative_path("/a%2Fb").unwrap(), PathBuf::from("a/b"));
        assert_eq!(relative_path("/%61%62").unwrap(), PathBuf::from("ab"));
        for bad in ["/%+f", "/%-1", "/%g0", "/%4", "/%"] {
            assert!(
                matches!(relative_path(bad), Err(HqError::BadRequest(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn resolves_inside_root_only() {
        let dir = std::env::temp_dir().join(format!("mpquic-hq-test-{}", std::process::id()));
        let root = dir.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/file.bin"), b"x").unwrap();
        std::fs::write(dir.join("secret"), b"s").unwrap();
        let root = root.canonicalize().unwrap();
        assert_eq!(
            resolve(&root, "/sub/file.bin").unwrap(),
            root.join("sub/file.bin")
        );
        assert_eq!(
            resolve(&root, "/sub/./file.bin?x=1").unwrap(),
            root.join("sub/file.bin")
        );
        assert!(matches!(
            resolve(&root, "/../secret"),
            Err(HqError::Forbidden(_))
        ));
        assert!(matches!(
            resolve(&root, "/sub/%2e%2e/%2e%2e/secret"),
            Err(HqError::Forbidden(_))
        ));
        assert!(matches!(
            resolve(&root, "/missing"),
            Err(HqError::NotFound(_))
        ));
        assert!(matches!(resolve(&root, "/sub"), Err(HqError::NotFound(_))));
        assert!(matches!(resolve(&root, "/"), Err(HqError::NotFound(_))));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("secret"), root.join("link")).unwrap();
            assert!(matches!(
                resolve(&root, "/link"),
                Err(HqError::Forbidden(_))
            ));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
