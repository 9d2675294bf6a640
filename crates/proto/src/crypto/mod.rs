//! Packet protection and the TLS handshake through rustls' QUIC module (RFC 9001).
