//! A minimal HTTP/3 client: one `GET` on an established mpquic connection, the body read chunk
//! by chunk.

use bytes::{Buf, Bytes};
use h3::client::{RequestStream, SendRequest};
use h3::error::{Code, ConnectionError, StreamError};
use http::{Request, StatusCode, Uri};
use tokio::task::JoinHandle;

use crate::quic::{BidiStream, Connection, OpenStreams};

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GetError {
    /// The request could not be built (a bad authority or path).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// HTTP/3 could not be set up on the connection.
    #[error("HTTP/3 connection: {0}")]
    Connection(#[from] ConnectionError),
    /// The request stream failed (reset, connection lost, malformed response).
    #[error("HTTP/3 request: {0}")]
    Stream(#[from] StreamError),
    /// The body is longer than the limit given to [`Response::read_to_end`].
    #[error("the body is longer than {0} bytes")]
    TooLong(usize),
}

/// The response to [`get`]: its head, and the body still to be read.
///
/// While it lives, the HTTP/3 connection stays open; dropping it closes the connection with
/// H3_NO_ERROR (RFC 9114 §5.2), as this client makes no other request.
pub struct Response {
    head: http::Response<()>,
    stream: RequestStream<BidiStream<Bytes>, Bytes>,
    _sender: SendRequest<OpenStreams, Bytes>,
    /// Runs the connection's control stream (SETTINGS, GOAWAY) while the body is read.
    driver: JoinHandle<()>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

impl Drop for Response {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Send `GET uri` on `conn` (whose negotiated ALPN must be [`crate::ALPN`]) and wait for the
/// response head. `uri` needs a scheme and an authority: they become the `:scheme` and
/// `:authority` pseudo-header fields (RFC 9114 §4.3.1).
pub async fn get(conn: &mpquic::Connection, uri: Uri) -> Result<Response, GetError> {
    let request = Request::get(uri)
        .body(())
        .map_err(|e| GetError::InvalidRequest(e.to_string()))?;
    let (mut driver, mut sender) = h3::client::new(Connection::new(conn.clone())).await?;
    let driver = tokio::spawn(async move {
        let why = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
        if !why.is_h3_no_error() {
            tracing::debug!("HTTP/3 connection ended: {why}");
        }
    });
    let mut stream = sender.send_request(request).await?;
    // The request has no content: close the stream for sending (RFC 9114 §4.1). A server that
    // answered at once may already have stopped reading with H3_NO_ERROR: its response stands
    // (clients MUST NOT discard it, same section).
    match stream.finish().await {
        Err(StreamError::RemoteTerminate { code, .. }) if code == Code::H3_NO_ERROR => {}
        other => other?,
    }
    let head = stream.recv_response().await?;
    Ok(Response {
        head,
        stream,
        _sender: sender,
        driver,
    })
}

impl Response {
    /// The response's status.
    pub fn status(&self) -> StatusCode {
        self.head.status()
    }

    /// The response head (status and header fields).
    pub fn head(&self) -> &http::Response<()> {
        &self.head
    }

    /// The next piece of the body (the content of DATA frames, RFC 9114 §7.2.1), `None` at its
    /// end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, GetError> {
        match self.stream.recv_data().await? {
            Some(mut data) => Ok(Some(data.copy_to_bytes(data.remaining()))),
            None => Ok(None),
        }
    }

    /// The rest of the body, failing if it is longer than `limit` bytes.
    pub async fn read_to_end(&mut self, limit: usize) -> Result<Vec<u8>, GetError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            if body.len() + chunk.len() > limit {
                return Err(GetError::TooLong(limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}
