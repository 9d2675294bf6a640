//! Streams and flow control (RFC 9000 §2–4).
