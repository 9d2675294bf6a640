//! Loss recovery per path (RFC 9002 §5–6), kept apart from congestion control.

pub mod rtt;
