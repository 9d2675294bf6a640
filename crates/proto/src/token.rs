//! Address-validation tokens (RFC 9000 §8.1.2–8.1.4).
//!
//! A server hands out two kinds of token: one in a Retry packet, which proves on the next
//! Initial that the client received the Retry at its address, and one in a NEW_TOKEN frame,
//! which a client presents in a later connection to skip the round trip. Both are opaque to
//! the client and carry everything the server needs to check them, sealed with AES-256-GCM
//! under the operator's [`TokenKeys`], so the server keeps no state per token (§8.1.3: "a
//! token ... MUST be difficult to guess"; §8.1.4: integrity protected, bound to the address).
//!
//! Layout: `kind (1) | nonce (12) | AEAD(plaintext) | tag (16)`, the kind byte authenticated
//! as associated data. Plaintext: issue time (8, the endpoint's clock in ns), the client's IP
//! (1 + 4 or 16), the port for Retry tokens (2, §8.1.4 "SHOULD ... verify that the source IP
//! address and port in client packets remain constant"), and for Retry tokens the client's
//! original Destination CID and the Source CID of our Retry (each length-prefixed), which the
//! server must echo in its transport parameters (§7.3).

use std::net::{IpAddr, SocketAddr};

use mpquic_wire::cid::ConnectionId;
use rand_core::RngCore;
use ring::aead;

use crate::config::TokenKeys;
use crate::time::{Duration, Timestamp};

const KIND_RETRY: u8 = 1;
const KIND_NEW_TOKEN: u8 = 2;
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// What a valid token says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValidToken {
    /// From our Retry: the client's first Destination CID and our Retry's Source CID.
    Retry {
        original_dcid: ConnectionId,
        retry_scid: ConnectionId,
    },
    /// From a NEW_TOKEN frame of an earlier connection.
    NewToken,
}

/// The outcome of checking a client Initial's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenCheck {
    /// No token at all.
    Absent,
    /// Authentic, unexpired, for this address.
    Valid(ValidToken),
    /// Looks like one of our Retry tokens but fails a check: §8.1.3 lets the server close with
    /// INVALID_TOKEN, since a client only follows one Retry per attempt.
    InvalidRetry,
    /// Anything else (forged, expired, another address, a key rotated away): treat the client
    /// as unvalidated (§8.1.3 "SHOULD proceed as if the client did not have a validated address").
    Invalid,
}

/// Seal a Retry token for `client` answering an Initial sent to `original_dcid`, our Retry
/// carrying `retry_scid` as its Source CID.
pub(crate) fn seal_retry(
    keys: &TokenKeys,
    rng: &mut dyn RngCore,
    now: Timestamp,
    client: SocketAddr,
    original_dcid: &ConnectionId,
    retry_scid: &ConnectionId,
) -> Vec<u8> {
    let mut plain = plaintext_head(now, client.ip());
    plain.extend_from_slice(&client.port().to_be_bytes());
    for cid in [original_dcid, retry_scid] {
        plain.push(cid.len() as u8);
        plain.extend_from_slice(cid.as_slice());
    }
    seal(keys, rng, KIND_RETRY, plain)
}

/// Seal a NEW_TOKEN token for a client at `client_ip` (§8.1.3: bound to the address, not the
/// port, which NATs change between connections).
pub(crate) fn seal_new_token(
    keys: &TokenKeys,
    rng: &mut dyn RngCore,
    now: Timestamp,
    client_ip: IpAddr,
) -> Vec<u8> {
    seal(keys, rng, KIND_NEW_TOKEN, plaintext_head(now, client_ip))
}

/// Lifetimes of the two kinds of token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lifetimes {
    pub(crate) retry: Duration,
    pub(crate) new_token: Duration,
}

/// Check a token from a client Initial received from `client` at `now`.
pub(crate) fn check(
    keys: &TokenKeys,
    token: &[u8],
    now: Timestamp,
    client: SocketAddr,
    lifetimes: Lifetimes,
) -> TokenCheck {
    let Some((&kind, _)) = token.split_first() else {
        return TokenCheck::Absent;
    };
    let invalid = if kind == KIND_RETRY {
        TokenCheck::InvalidRetry
    } else {
        TokenCheck::Invalid
    };
    let Some(plain) = open(keys, token) else {
        return invalid;
    };
    let mut r = Reader(&plain);
    let (Some(issued), Some(ip)) = (r.u64(), r.ip()) else {
        return invalid;
    };
    let lifetime = match kind {
        KIND_RETRY => lifetimes.retry,
        _ => lifetimes.new_token,
    };
    // A token "from the future" comes from another clock epoch (a restarted server): reject.
    let lifetime = u64::try_from(lifetime.as_nanos()).unwrap_or(u64::MAX);
    let fresh = issued <= now.as_nanos() && now.as_nanos() - issued <= lifetime;
    if !fresh || ip != client.ip() {
        return invalid;
    }
    if kind == KIND_NEW_TOKEN {
        return TokenCheck::Valid(ValidToken::NewToken);
    }
    let parsed = (|| {
        let port = r.u16()?;
        let original_dcid = r.cid()?;
        let retry_scid = r.cid()?;
        (port == client.port() && r.0.is_empty()).then_some(ValidToken::Retry {
            original_dcid,
            retry_scid,
        })
    })();
    parsed.map_or(invalid, TokenCheck::Valid)
}

fn plaintext_head(now: Timestamp, ip: IpAddr) -> Vec<u8> {
    let mut plain = Vec::with_capacity(64);
    plain.extend_from_slice(&now.as_nanos().to_be_bytes());
    match ip {
        IpAddr::V4(v4) => {
            plain.push(4);
            plain.extend_from_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            plain.push(6);
            plain.extend_from_slice(&v6.octets());
        }
    }
    plain
}

fn aead_key(key: &[u8; 32]) -> aead::LessSafeKey {
    let unbound = aead::UnboundKey::new(&aead::AES_256_GCM, key)
        .expect("a 32-byte key is valid for AES-256-GCM");
    aead::LessSafeKey::new(unbound)
}

fn seal(keys: &TokenKeys, rng: &mut dyn RngCore, kind: u8, mut plain: Vec<u8>) -> Vec<u8> {
    let mut nonce = [0u8; NONCE_LEN];
    rng.fill_bytes(&mut nonce);
    aead_key(&keys.current)
        .seal_in_place_append_tag(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from([kind]),
            &mut plain,
        )
        .expect("a token is far below the AEAD's size limit");
    let mut token = Vec::with_capacity(1 + NONCE_LEN + plain.len());
    token.push(kind);
    token.extend_from_slice(&nonce);
    token.extend_from_slice(&plain);
    token
}

/// The plaintext of a token sealed under the current or one of the previous keys.
fn open(keys: &TokenKeys, token: &[u8]) -> Option<Vec<u8>> {
    let kind = *token.first()?;
    if token.len() < 1 + NONCE_LEN + TAG_LEN {
        return None;
    }
    let nonce: [u8; NONCE_LEN] = token[1..1 + NONCE_LEN].try_into().ok()?;
    std::iter::once(&keys.current)
        .chain(keys.previous.iter())
        .find_map(|key| {
            let mut sealed = token[1 + NONCE_LEN..].to_vec();
            let plain = aead_key(key)
                .open_in_place(
                    aead::Nonce::assume_unique_for_key(nonce),
                    aead::Aad::from([kind]),
                    &mut sealed,
                )
                .ok()?;
            Some(plain.to_vec())
        })
}

/// Reads the fields of a token's plaintext; every read is bounds-checked.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }
    fn ip(&mut self) -> Option<IpAddr> {
        match self.take(1)?[0] {
            4 => Some(IpAddr::from(<[u8; 4]>::try_from(self.take(4)?).ok()?)),
            6 => Some(IpAddr::from(<[u8; 16]>::try_from(self.take(16)?).ok()?)),
            _ => None,
        }
    }
    fn cid(&mut self) -> Option<ConnectionId> {
        let len = usize::from(self.take(1)?[0]);
        ConnectionId::new(self.take(len)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    const LIFETIMES: Lifetimes = Lifetimes {
        retry: Duration::from_secs(10),
        new_token: Duration::from_secs(3600),
    };

    fn keys(seed: u8) -> TokenKeys {
        TokenKeys {
            current: [seed; 32],
            previous: Vec::new(),
        }
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn cid(b: u8) -> ConnectionId {
        ConnectionId::new(&[b; 8]).unwrap()
    }

    #[test]
    fn retry_token_round_trips_and_binds_address_port_and_time() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let k = keys(7);
        let t0 = Timestamp::from_nanos(5_000_000_000);
        let client = addr("192.0.2.1:4433");
        let token = seal_retry(&k, &mut rng, t0, client, &cid(1), &cid(2));
        let expect = TokenCheck::Valid(ValidToken::Retry {
            original_dcid: cid(1),
            retry_scid: cid(2),
        });
        assert_eq!(check(&k, &token, t0, client, LIFETIMES), expect);
        let other_port = addr("192.0.2.1:4434");
        let other_ip = addr("192.0.2.2:4433");
        assert_eq!(
            check(&k, &token, t0, other_port, LIFETIMES),
            TokenCheck::InvalidRetry
        );
        assert_eq!(
            check(&k, &token, t0, other_ip, LIFETIMES),
            TokenCheck::InvalidRetry
        );
        let late = t0 + Duration::from_secs(11);
        assert_eq!(
            check(&k, &token, late, client, LIFETIMES),
            TokenCheck::InvalidRetry
        );
        let before = Timestamp::from_nanos(1);
        assert_eq!(
            check(&k, &token, before, client, LIFETIMES),
            TokenCheck::InvalidRetry
        );
    }

    #[test]
    fn forged_or_foreign_tokens_are_rejected_and_rotation_keeps_old_tokens() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let now = Timestamp::from_nanos(1_000);
        let client = addr("[2001:db8::1]:443");
        let mut k = keys(1);
        let token = seal_new_token(&k, &mut rng, now, client.ip());
        let valid = TokenCheck::Valid(ValidToken::NewToken);
        assert_eq!(check(&k, &token, now, client, LIFETIMES), valid);
        // Another port is fine for NEW_TOKEN tokens; another key is not.
        assert_eq!(
            check(&k, &token, now, addr("[2001:db8::1]:9"), LIFETIMES),
            valid
        );
        assert_eq!(
            check(&keys(2), &token, now, client, LIFETIMES),
            TokenCheck::Invalid
        );
        let mut flipped = token.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(
            check(&k, &flipped, now, client, LIFETIMES),
            TokenCheck::Invalid
        );
        assert_eq!(check(&k, &[], now, client, LIFETIMES), TokenCheck::Absent);
        assert_eq!(check(&k, &[2], now, client, LIFETIMES), TokenCheck::Invalid);
        k.rotate([9; 32]);
        assert_eq!(check(&k, &token, now, client, LIFETIMES), valid);
    }
}
