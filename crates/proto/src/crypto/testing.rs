//! Test hooks (feature `testing`): packet helpers that let tests reshape or inspect Initial
//! packets the way other stacks send them, and a session store that counts resumptions. The
//! fixed certificate and configurations of [`super::identity`] are re-exported for tests.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use mpquic_wire::frame::Frame;
use mpquic_wire::header::PartialDecode;
use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::NamedGroup;
use rustls_pki_types::ServerName;

pub use super::identity::{fixed_tls_configs as test_tls_configs, *};
pub use super::initial::{open_initial as open_initial_packet, seal_initial};
pub use super::keys::{initial_keys, DirectionalKeys, KeyPair};
pub use super::protect::{open_payload, remove_header_protection, seal_packet};
pub use mpquic_wire::stream_id::Side;

/// The Initial packet at the start of `datagram`, opened with `keys` (e.g. the `remote` half of
/// [`initial_keys`] for the DCID of the client's first Initial): its packet number and frames.
/// None if the datagram does not start with an Initial packet these keys open.
pub fn open_initial(datagram: &[u8], keys: &DirectionalKeys) -> Option<(u64, Vec<Frame>)> {
    let (first, _) = PartialDecode::new(BytesMut::from(datagram), 8).ok()?;
    let (pn, plain) = super::open_initial(keys, &first)?;
    Frame::iter(Bytes::from(plain))
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .map(|frames| (pn, frames))
}

/// A client's first datagram reshaped the way picoquic sends it: an Initial packet of exactly
/// `packet_len` bytes carrying the same CRYPTO frames (same packet number and connection IDs,
/// PADDING frames inside up to the size, sealed again with the client Initial keys of RFC 9001
/// §5.2), then zero bytes after the packet up to `datagram_len`.
///
/// Panics if `datagram` is not a client Initial or its ClientHello does not fit (test helper).
pub fn reshape_client_initial(datagram: &[u8], packet_len: usize, datagram_len: usize) -> Vec<u8> {
    let (first, _) = PartialDecode::new(BytesMut::from(datagram), 8).expect("a long header");
    let (dcid, scid) = (first.dcid(), first.scid().expect("a long header"));
    // The server's view of the Initial keys opens what the client sealed.
    let opener = initial_keys(dcid.as_slice(), Side::Server);
    let (pn, frames) = open_initial(datagram, &opener.remote).expect("a client Initial");
    let mut crypto = Vec::with_capacity(packet_len);
    for frame in frames.iter().filter(|f| matches!(f, Frame::Crypto { .. })) {
        frame.encode(&mut crypto);
    }
    let sealer = initial_keys(dcid.as_slice(), Side::Client);
    let mut packet = seal_initial(
        &sealer.local,
        (dcid, scid),
        Bytes::new(),
        pn,
        &crypto,
        packet_len,
    )
    .expect("sealing an Initial packet");
    assert_eq!(
        packet.len(),
        packet_len,
        "the ClientHello needs a larger packet"
    );
    packet.resize(datagram_len.max(packet.len()), 0);
    packet
}

/// A client session store (rustls' in-memory cache) that counts the TLS 1.3 tickets it hands
/// out, i.e. the connections that offered resumption.
#[derive(Debug)]
pub struct CountingSessionStore {
    inner: ClientSessionMemoryCache,
    taken: AtomicUsize,
}

impl CountingSessionStore {
    /// A store keeping up to `size` sessions.
    pub fn new(size: usize) -> Self {
        Self {
            inner: ClientSessionMemoryCache::new(size),
            taken: AtomicUsize::new(0),
        }
    }

    /// How many tickets were handed out for resumption.
    pub fn tickets_taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }
}

impl ClientSessionStore for CountingSessionStore {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(name, group)
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(name)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.inner.set_tls12_session(name, value)
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.inner.remove_tls12_session(name)
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.inner.insert_tls13_ticket(name, value)
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        let ticket = self.inner.take_tls13_ticket(name);
        if ticket.is_some() {
            self.taken.fetch_add(1, Ordering::Relaxed);
        }
        ticket
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_are_deterministic() {
        let (a, _) = self_signed_ed25519(&["localhost"]);
        let (b, _) = self_signed_ed25519(&["localhost"]);
        assert_eq!(a, b);
        let (c, _) = self_signed_ed25519_with_seed(&["localhost"], [7; 32]);
        assert_ne!(a, c);
        assert_eq!(a.len(), c.len());
    }
}
