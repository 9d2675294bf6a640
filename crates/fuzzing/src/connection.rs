//! Harnesses that reach a connection: frames into an established connection, datagrams into a
//! client, datagrams and forged Initials into a server.

use std::net::SocketAddr;

use bytes::BytesMut;
use mpquic_proto::wire::header::PartialDecode;
use mpquic_proto::wire::stream_id::Side;
use mpquic_proto::{
    ConnectionHandle, Duration, Endpoint, Event, MultipathMode, PathEvent, Timestamp,
};

use crate::net::{
    addr, client_config, client_endpoint, consume, first_handle, server_endpoint, Net, CLIENT_ADDR,
    CLIENT_ADDR_2, OTHER_CLIENT_ADDR, OTHER_SERVER_ADDR, SERVER_ADDR,
};
use crate::packets::{sealed_initial, CLIENT_DCID, CLIENT_SCID, SERVER_SCID};

/// Frame bytes per injected packet: room is left for the header, an ACK and the AEAD tag
/// within the sender's 1350-byte datagrams.
const MAX_INJECTED: usize = 1100;
/// Steps the pair runs after the input went in: enough for the answer, its acknowledgement,
/// a loss-detection timer and a close to cross the link.
const STEPS_AFTER: usize = 48;
/// Virtual time for the pair after the input went in: a few RTTs (10 ms) and PTOs, far from
/// the idle timeout.
const TIME_AFTER: Duration = Duration::from_millis(1500);
/// Steps a handshake (plus path validation) may take before the harness gives up.
const SETUP_STEPS: usize = 200;
/// Virtual time for each setup phase (handshake, request, second path).
const SETUP_TIME: Duration = Duration::from_secs(2);

/// The multipath design from the two low bits of a configuration byte.
fn design(bits: u8) -> MultipathMode {
    match bits & 3 {
        0 => MultipathMode::Single,
        1 => MultipathMode::Spns,
        2 => MultipathMode::Mpns,
        _ => MultipathMode::Auto,
    }
}

/// What the first input byte of `established_frames` selects.
#[derive(Debug, Clone, Copy)]
pub struct FrameSetup {
    /// The multipath design both endpoints are configured with (bits 0-1).
    pub mode: MultipathMode,
    /// Frames go to the client (sent by the server) instead of to the server.
    pub into_client: bool,
    /// Open and validate a second path first (multipath designs only).
    pub second_path: bool,
    /// The packet carrying the frames arrives from another source address: a peer that moved,
    /// a NAT rebinding, a probe or a rewritten source (RFC 9000 §9.3, §8.2).
    pub from_elsewhere: bool,
}

impl FrameSetup {
    /// Decodes the first input byte: bits 0-1 the design (single path, SPNS, MPNS, auto), bit 2
    /// [`FrameSetup::into_client`], bit 3 [`FrameSetup::second_path`], bit 4
    /// [`FrameSetup::from_elsewhere`]; higher bits are ignored.
    pub fn from_byte(b: u8) -> Self {
        Self {
            mode: design(b),
            into_client: b & 4 != 0,
            second_path: b & 8 != 0,
            from_elsewhere: b & 16 != 0,
        }
    }

    /// The byte [`FrameSetup::from_byte`] reads back as `self`: seeds are written with it.
    pub fn to_byte(self) -> u8 {
        let mode = match self.mode {
            MultipathMode::Single => 0,
            MultipathMode::Spns => 1,
            MultipathMode::Mpns => 2,
            MultipathMode::Auto => 3,
        };
        mode | u8::from(self.into_client) << 2
            | u8::from(self.second_path) << 3
            | u8::from(self.from_elsewhere) << 4
    }
}

/// An established connection between the two endpoints of a [`Net`], with one bidirectional
/// stream carrying data both ways, so that stream frames meet existing state.
pub(crate) struct Established {
    pub net: Net,
    pub client: ConnectionHandle,
    pub server: ConnectionHandle,
}

impl Established {
    /// Panics if the handshake does not complete: the harness itself would be broken, and a
    /// fuzzer that only sees failed handshakes finds nothing.
    pub(crate) fn new(mode: MultipathMode, second_path: bool) -> Self {
        let mut net = Net::new(mode);
        let client = net
            .client
            .connect(
                net.now,
                &client_config(mode),
                addr(CLIENT_ADDR),
                addr(SERVER_ADDR),
                "localhost",
            )
            .expect("client connect");
        let up = net.run_until(SETUP_STEPS, |n| {
            let server = first_handle(&n.server).and_then(|h| n.server.connection(h));
            server.is_some_and(|c| c.is_established())
                && n.client
                    .connection(client)
                    .is_some_and(|c| c.is_established())
        });
        assert!(up, "fuzz harness: the handshake did not complete");
        let server = first_handle(&net.server).expect("server connection");
        let mut est = Self {
            net,
            client,
            server,
        };
        est.net.allow(SETUP_TIME);
        est.exchange_data();
        if second_path && mode != MultipathMode::Single {
            est.open_second_path();
        }
        est
    }

    fn exchange_data(&mut self) {
        let c = self.net.client.connection_mut(self.client).expect("client");
        let sid = c.open_bi().expect("a bidirectional stream");
        c.write(sid, b"GET /index.html\r\n").expect("write");
        self.net.client.after_connection_call(self.client);
        let server = self.server;
        let answered = self.net.run_until(SETUP_STEPS, |n| {
            let Some(s) = n.server.connection_mut(server) else {
                return false;
            };
            let Some(id) = s.accept(mpquic_proto::wire::stream_id::Dir::Bi) else {
                return false;
            };
            let _ = s.write(id, &[0x5a; 700]);
            true
        });
        assert!(answered, "fuzz harness: the request did not arrive");
        self.net.run_with_apps(8);
    }

    fn open_second_path(&mut self) {
        self.net.allow(SETUP_TIME);
        let (client, local, remote) = (self.client, addr(CLIENT_ADDR_2), addr(SERVER_ADDR));
        let mut last_error = None;
        let opened = self.net.run_until(SETUP_STEPS, |n| {
            let now = n.now;
            let Some(c) = n.client.connection_mut(client) else {
                return false;
            };
            let result = c.open_path(now, local, remote);
            n.client.after_connection_call(client);
            last_error = result.err();
            last_error.is_none()
        });
        assert!(opened, "fuzz harness: no second path: {last_error:?}");
        let validated = self.net.run_until(SETUP_STEPS, |n| {
            let Some(c) = n.client.connection_mut(client) else {
                return false;
            };
            while let Some(e) = c.poll_event() {
                if matches!(e, Event::Path(PathEvent::Validated { .. })) {
                    return true;
                }
            }
            false
        });
        assert!(validated, "fuzz harness: the second path was not validated");
    }
}

/// Frames into an established connection, as if received in a 1-RTT packet.
///
/// Input: one configuration byte ([`FrameSetup::from_byte`]: design, direction, second path),
/// then the frame bytes. The peer of the target sends them in its next 1-RTT packet (through
/// the connection's raw-frame test hook), so they go through packet protection, the receive
/// path and frame dispatch; then the pair runs for a few rounds with both applications reading.
pub fn established_frames(data: &[u8]) {
    run_established_frames(data);
}

fn run_established_frames(data: &[u8]) -> Option<Established> {
    let (&config, frames) = data.split_first()?;
    let setup = FrameSetup::from_byte(config);
    let mut est = Established::new(setup.mode, setup.second_path);
    let frames = frames[..frames.len().min(MAX_INJECTED)].to_vec();
    let (ep, handle) = if setup.into_client {
        (&mut est.net.server, est.server)
    } else {
        (&mut est.net.client, est.client)
    };
    if let Some(conn) = ep.connection_mut(handle) {
        conn.inject_raw_frame(frames);
    }
    if setup.from_elsewhere {
        // The injecting side's next datagram, which carries the frames.
        let (to_server, other) = match setup.into_client {
            false => (true, OTHER_CLIENT_ADDR),
            true => (false, OTHER_SERVER_ADDR),
        };
        est.net.rewrite_next_source = Some((to_server, addr(other)));
    }
    est.net.allow(TIME_AFTER);
    est.net.run_with_apps(STEPS_AFTER);
    Some(est)
}

/// Run a lone endpoint's transmissions and timers for a while (its peer is silent).
fn drive_alone(ep: &mut Endpoint, mut now: Timestamp) {
    let mut buf = Vec::with_capacity(1500);
    for _ in 0..16 {
        for n in 0.. {
            if ep.poll_transmit(now, &mut buf).is_none() {
                break;
            }
            assert!(n < 2_000, "endpoint sent 2000 datagrams at once");
        }
        for h in ep.handles() {
            if let Some(conn) = ep.connection_mut(h) {
                consume(conn);
            }
            ep.after_connection_call(h);
        }
        let Some(next) = ep.poll_timeout() else {
            break;
        };
        now = now.max(next);
        ep.handle_timeout(now);
    }
}

fn deliver(ep: &mut Endpoint, now: Timestamp, local: SocketAddr, remote: SocketAddr, d: &[u8]) {
    ep.handle_datagram(now, local, remote, BytesMut::from(d));
}

/// Datagrams into a client. Input: one mode byte, then the payload.
///
/// - mode & 3 == 0: a raw datagram to a client whose handshake is in progress;
/// - 1: the payload as frames of a server Initial sealed with the keys of the client's DCID
///   (so it reaches the client's Initial frame processing: ServerHello, ACK, CLOSE, ...);
/// - 2: a raw datagram to a client with an established connection;
/// - 3: a short-header packet with the established client's connection ID and the payload
///   as the rest (routed to the connection: header protection, decryption failure, reset).
pub fn client_datagram(data: &[u8]) {
    let Some((&mode, payload)) = data.split_first() else {
        return;
    };
    let (client, server) = (addr(CLIENT_ADDR), addr(SERVER_ADDR));
    if mode & 2 == 0 {
        let mut ep = client_endpoint();
        let now = Timestamp::ZERO;
        let config = client_config(MultipathMode::Auto);
        ep.connect(now, &config, client, server, "localhost")
            .expect("client connect");
        let mut buf = Vec::with_capacity(1500);
        let Some(t) = ep.poll_transmit(now, &mut buf) else {
            return;
        };
        let Ok((first, _)) = PartialDecode::new(BytesMut::from(&buf[..t.size]), 8) else {
            return;
        };
        let (odcid, Some(scid)) = (first.dcid(), first.scid()) else {
            return;
        };
        let datagram = if mode & 1 == 0 {
            Some(payload.to_vec())
        } else {
            let (k, d) = (odcid.as_slice(), scid.as_slice());
            sealed_initial(Side::Server, k, d, &SERVER_SCID, 0, payload)
        };
        if let Some(d) = datagram {
            deliver(&mut ep, now, client, server, &d);
        }
        drive_alone(&mut ep, now);
        return;
    }
    let mut est = Established::new(design(mode >> 2), false);
    let datagram = if mode & 1 == 0 {
        payload.to_vec()
    } else {
        let Some(cid) = est.net.client_cid.clone() else {
            return;
        };
        // Short header (RFC 9000 §17.3.1): form 0, fixed bit 1, then the DCID.
        let mut d = vec![0x40 | (payload.first().copied().unwrap_or(0) & 0x3f)];
        d.extend_from_slice(&cid);
        d.extend_from_slice(payload.get(1..).unwrap_or_default());
        d
    };
    let now = est.net.now;
    deliver(&mut est.net.client, now, client, server, &datagram);
    est.net.allow(TIME_AFTER);
    est.net.run_with_apps(STEPS_AFTER);
}

/// Datagrams into a server. Input: one mode byte, then the payload.
///
/// - mode & 1 == 0: the payload is a raw datagram;
/// - 1: the payload is the frames of a client Initial sealed with the public Initial keys
///   (RFC 9001 §5.2) of a fixed DCID, padded to 1200 bytes: it reaches frame processing.
///
/// mode & 2 makes the server require address validation (Retry) first; (mode >> 2) & 3 is the
/// multipath design it offers.
pub fn server_datagram(data: &[u8]) {
    run_server_datagram(data);
}

fn run_server_datagram(data: &[u8]) -> Option<Endpoint> {
    let (&mode, payload) = data.split_first()?;
    let mut ep = server_endpoint(design(mode >> 2), mode & 2 != 0);
    let datagram = if mode & 1 == 0 {
        Some(payload.to_vec())
    } else {
        sealed_initial(
            Side::Client,
            &CLIENT_DCID,
            &CLIENT_DCID,
            &CLIENT_SCID,
            0,
            payload,
        )
    };
    let now = Timestamp::ZERO;
    if let Some(d) = datagram {
        deliver(&mut ep, now, addr(SERVER_ADDR), addr(CLIENT_ADDR), &d);
    }
    drive_alone(&mut ep, now);
    Some(ep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpquic_proto::wire::error::TransportErrorCode;
    use mpquic_proto::ConnectionError;

    /// Valid frames in a packet from another source address (a move, a NAT rebinding, a probe:
    /// RFC 9000 §9) leave both connections open and able to carry data, in every design and
    /// both directions.
    #[test]
    fn valid_frames_from_another_address_keep_the_connection() {
        let ping = [0x01];
        let challenge = [0x1a, 1, 2, 3, 4, 5, 6, 7, 8];
        let padding = [0x00, 0x00];
        for mode in [0u8, 1, 2] {
            for into_client in [false, true] {
                for frames in [&ping[..], &challenge, &padding] {
                    let setup = FrameSetup {
                        mode: design(mode),
                        into_client,
                        second_path: false,
                        from_elsewhere: true,
                    };
                    let mut input = vec![setup.to_byte()];
                    input.extend_from_slice(frames);
                    let mut est = run_established_frames(&input).unwrap();
                    for (ep, h) in [(&est.net.client, est.client), (&est.net.server, est.server)] {
                        let conn = ep.connection(h).unwrap();
                        assert!(
                            conn.error().is_none(),
                            "{setup:?} {frames:?}: {:?}",
                            conn.error()
                        );
                    }
                    // Data still flows both ways.
                    est.exchange_data();
                }
            }
        }
    }

    /// The injected frames reach frame processing in every design and direction: a frame the
    /// receiver must reject closes it with the RFC's error code.
    #[test]
    fn injected_frames_reach_the_connection() {
        for mode in [0u8, 1, 2, 3] {
            for (into_client, second_path) in [(false, false), (true, false), (false, true)] {
                let setup = FrameSetup {
                    mode: design(mode),
                    into_client,
                    second_path,
                    from_elsewhere: mode == 1,
                };
                // RFC 9000 §19.21 (unknown type 0x21) and §12.4: FRAME_ENCODING_ERROR.
                let est = run_established_frames(&[setup.to_byte(), 0x21]).unwrap();
                let (ep, h) = if into_client {
                    (&est.net.client, est.client)
                } else {
                    (&est.net.server, est.server)
                };
                let error = ep.connection(h).unwrap().error().cloned();
                match error {
                    Some(ConnectionError::TransportError(e)) => {
                        assert_eq!(
                            e.code,
                            TransportErrorCode::FRAME_ENCODING_ERROR,
                            "{setup:?}"
                        )
                    }
                    other => panic!("{setup:?}: {other:?}"),
                }
            }
        }
    }

    /// A forged Initial reaches the server's frame processing: a CONNECTION_CLOSE in it ends
    /// the connection it created.
    #[test]
    fn sealed_initials_reach_the_server() {
        let ep = run_server_datagram(&[1, 0x1c, 0x0a, 0x00, 0x00]).unwrap();
        let h = first_handle(&ep).expect("the Initial created a connection");
        assert!(matches!(
            ep.connection(h).unwrap().error(),
            Some(ConnectionError::PeerTransportClose { code: 0x0a, .. })
        ));
    }
}
