//! A static file server over HTTP/3: `GET` and `HEAD` of the files below a root directory, the
//! same files and path rules as the `hq-interop` server ([`mpquic::hq::resolve`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use h3::error::{Code, ConnectionError, StreamError};
use h3::server::RequestStream;
use http::{header, Method, Request, Response, StatusCode};
use mpquic::hq::{self, HqError};
use tokio::io::AsyncReadExt;

use crate::quic::{BidiStream, Connection};

/// Bytes of the file read, and sent as one DATA frame (RFC 9114 §7.2.1), at a time.
const CHUNK: usize = 256 * 1024;

/// How long the server waits, after its response, for the end of the request stream.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Request body bytes the server reads and ignores before it stops reading.
const MAX_IGNORED_BODY: usize = 64 * 1024;

type Stream = RequestStream<BidiStream<Bytes>, Bytes>;

/// Why serving a request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The HTTP/3 layer failed: the request stream or the connection under it (h3's error).
    #[error(transparent)]
    Stream(#[from] StreamError),
    /// The requested file could not be read after it was found.
    #[error("reading the file: {0}")]
    Io(#[from] std::io::Error),
}

/// Serve the requests of an HTTP/3 connection (ALPN [`crate::ALPN`]) from `root` (canonical,
/// see [`std::fs::canonicalize`]) until it ends. Returns `Ok` when the connection ended
/// gracefully (H3_NO_ERROR from either side, RFC 9114 §5.2), else the error.
pub async fn serve_connection(
    conn: mpquic::Connection,
    root: Arc<PathBuf>,
) -> Result<(), ConnectionError> {
    let mut h3 = h3::server::Connection::<_, Bytes>::new(Connection::new(conn)).await?;
    loop {
        match h3.accept().await {
            Ok(Some(resolver)) => {
                let root = root.clone();
                tokio::spawn(async move {
                    match resolver.resolve_request().await {
                        Ok((request, stream)) => {
                            if let Err(e) = serve_request(request, stream, &root).await {
                                tracing::info!("request failed: {e}");
                            }
                        }
                        Err(e) => tracing::info!("bad request stream: {e}"),
                    }
                });
            }
            // The client sent GOAWAY or closed: no more requests (RFC 9114 §5.2).
            Ok(None) => return Ok(()),
            Err(e) if e.is_h3_no_error() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// The status answering a path that [`hq::resolve`] refused.
fn status_of(error: &HqError) -> StatusCode {
    match error {
        HqError::BadRequest(_) => StatusCode::BAD_REQUEST,
        HqError::Forbidden(_) => StatusCode::FORBIDDEN,
        HqError::NotFound(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Answer one request: the file with a content-length, or an error status with a one-line
/// text body. Returns the body bytes sent.
pub async fn serve_request(
    request: Request<()>,
    mut stream: Stream,
    root: &Path,
) -> Result<u64, ServeError> {
    let method = request.method().clone();
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let sent = if method != Method::GET && method != Method::HEAD {
        let response = Response::builder()
            .status(StatusCode::METHOD_NOT_ALLOWED)
            .header(header::ALLOW, "GET, HEAD");
        send_text(&mut stream, response, "method not allowed\n").await?
    } else {
        match open(root, target).await {
            Ok((file, len)) => send_file(&mut stream, file, len, method == Method::HEAD).await?,
            Err(e) => {
                let status = status_of(&e);
                tracing::debug!("{method} {target} -> {status}: {e}");
                let response = Response::builder().status(status);
                send_text(&mut stream, response, &format!("{e}\n")).await?
            }
        }
    };
    stream.finish().await?;
    drain_request(&mut stream).await;
    Ok(sent)
}

/// Read the rest of the request stream (a GET's FIN usually comes in a packet after its
/// HEADERS), so that the client can close it normally; if it carries more than
/// [`MAX_IGNORED_BODY`] bytes or does not end within [`DRAIN_WAIT`], stop reading with
/// H3_NO_ERROR (RFC 9114 §4.1: the response does not depend on a request body). Stopping at once
/// would race with well-behaved clients, whose FIN may still be on its way.
async fn drain_request(stream: &mut Stream) {
    let drained = tokio::time::timeout(DRAIN_WAIT, async {
        let mut ignored = 0usize;
        while let Ok(Some(data)) = stream.recv_data().await {
            ignored += bytes::Buf::remaining(&data);
            if ignored > MAX_IGNORED_BODY {
                return false;
            }
        }
        true
    })
    .await;
    if drained != Ok(true) {
        stream.stop_sending(Code::H3_NO_ERROR);
    }
}

/// The file `target` names below `root`, and its length.
async fn open(root: &Path, target: &str) -> Result<(tokio::fs::File, u64), HqError> {
    let path = hq::resolve(root, target)?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|_| HqError::NotFound(target.to_owned()))?;
    let len = file.metadata().await?.len();
    Ok((file, len))
}

async fn send_file(
    stream: &mut Stream,
    mut file: tokio::fs::File,
    len: u64,
    head_only: bool,
) -> Result<u64, ServeError> {
    let response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_LENGTH, len)
        .body(())
        .expect("a valid response head");
    stream.send_response(response).await?;
    if head_only {
        return Ok(0);
    }
    let mut sent = 0u64;
    let mut buf = BytesMut::with_capacity(CHUNK);
    loop {
        buf.reserve(CHUNK);
        if file.read_buf(&mut buf).await? == 0 {
            break;
        }
        let chunk = buf.split().freeze();
        sent += chunk.len() as u64;
        stream.send_data(chunk).await?;
    }
    if sent != len {
        // The file changed while it was sent: the content-length would lie. Abort the
        // response instead of finishing it (RFC 9114 §4.1.2: a mismatch is malformed).
        stream.stop_stream(Code::H3_INTERNAL_ERROR);
        return Err(ServeError::Io(std::io::Error::other(format!(
            "file length changed while sending: {sent} bytes instead of {len}"
        ))));
    }
    Ok(sent)
}

async fn send_text(
    stream: &mut Stream,
    response: http::response::Builder,
    text: &str,
) -> Result<u64, ServeError> {
    let body = Bytes::copy_from_slice(text.as_bytes());
    let response = response
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::CONTENT_LENGTH, body.len())
        .body(())
        .expect("a valid response head");
    stream.send_response(response).await?;
    let len = body.len() as u64;
    stream.send_data(body).await?;
    Ok(len)
}
