//! 0-RTT (RFC 9000 §7.4.1, §12.3, §17.2.3; RFC 9001 §4.6): a client resuming a TLS session
//! sends stream data in 0-RTT packets before its handshake completes, within the transport
//! parameters remembered with the ticket; a server that accepted early data reads them.
//!
//! - **Client.** rustls keeps the server's transport parameters with each ticket
//!   (`Tls13ClientSessionValue::quic_params`, stored behind rustls' `ClientSessionStore`) and
//!   reports them as the peer's parameters from the moment it writes a ClientHello offering the
//!   ticket. [`Connection::start_zero_rtt`] reads them then, applies the flow-control and stream
//!   limits of §7.4.1 and installs the 0-RTT keys. 0-RTT packets share the application-data
//!   packet number space with 1-RTT (RFC 9000 §12.3) and carry only STREAM frames (§12.4 allows
//!   more, this stack needs no more). When the handshake completes,
//!   [`Connection::on_zero_rtt_outcome`] checks the server's new limits against the remembered
//!   ones if rustls says early data was accepted (§7.4.1), or, if rejected, takes every 0-RTT
//!   packet out of flight and queues its data again for 1-RTT (RFC 9001 §4.6.2, RFC 9002 §6.4).
//! - **Server.** Once TLS has read the ClientHello, [`Connection::check_zero_rtt_accepted`]
//!   installs the 0-RTT keys if rustls accepted early data (`ServerConfig::max_early_data_size`
//!   must be 0xffffffff for QUIC, RFC 9001 §4.6.1). 0-RTT packets are opened in the
//!   application-data space and acknowledged in 1-RTT packets (RFC 9000 §12.3); the keys are
//!   dropped at the first 1-RTT packet (RFC 9001 §4.9.3).
//!
//! Multipath parameters are not taken from the remembered set: RFC 10069 §2.1 says
//! initial_max_path_id "MUST NOT be remembered", so multipath is negotiated from the new
//! parameters and all 0-RTT packets travel on path 0.

use mpquic_wire::header::{Header, PacketKind, QUIC_V1};
use mpquic_wire::stream_id::Side;
use mpquic_wire::transport_params::TransportParameters;

use super::send::TAG_LEN;
use super::{Connection, Transmit};
use crate::crypto::{DirectionalKeys, Epoch};
use crate::error::TransportError;
use crate::path::PathId;
use crate::sent_frames::SentFrames;
use crate::time::Timestamp;

/// The 0-RTT state of one connection.
#[derive(Debug, Default)]
pub(crate) struct ZeroRttState {
    /// Client: keys to seal 0-RTT packets; server: keys to open them. Dropped when no longer
    /// needed (RFC 9001 §4.9.3).
    pub(crate) keys: Option<DirectionalKeys>,
    /// Client: the server parameters remembered with the ticket (RFC 9000 §7.4.1).
    /// Boxed: 0.3 kB that only 0-RTT connections use (issue 19, memory per connection).
    pub(crate) remembered: Option<Box<TransportParameters>>,
    /// Client: 0-RTT was attempted (keys were available); server: it was accepted.
    pub(crate) attempted: bool,
    /// Server: TLS was asked whether early data was accepted.
    pub(crate) decided: bool,
    /// The outcome, once known: `Some(true)` accepted, `Some(false)` rejected.
    pub(crate) accepted: Option<bool>,
}

/// The limits of RFC 9000 §7.4.1 that a server accepting 0-RTT "MUST NOT set ... smaller than
/// the remembered values", with their names for the error message.
fn limits(p: &TransportParameters) -> [(&'static str, u64); 7] {
    [
        ("active_connection_id_limit", p.active_connection_id_limit),
        ("initial_max_data", p.initial_max_data),
        (
            "initial_max_stream_data_bidi_local",
            p.initial_max_stream_data_bidi_local,
        ),
        (
            "initial_max_stream_data_bidi_remote",
            p.initial_max_stream_data_bidi_remote,
        ),
        ("initial_max_stream_data_uni", p.initial_max_stream_data_uni),
        ("initial_max_streams_bidi", p.initial_max_streams_bidi),
        ("initial_max_streams_uni", p.initial_max_streams_uni),
    ]
}

/// The values a client remembers with a ticket from a server configured with `config` and
/// that a server accepting 0-RTT must not lower (RFC 9000 §7.4.1, RFC 9221 §3), in a fixed
/// order: the §7.4.1 limits, then max_datagram_frame_size.
pub(crate) fn remembered_limits(config: &crate::TransportConfig) -> [u64; REMEMBERED_LIMITS] {
    let params = super::handshake::server_params_for(config);
    let mut out = [0; REMEMBERED_LIMITS];
    for (slot, (_, value)) in out.iter_mut().zip(limits(&params)) {
        *slot = value;
    }
    out[REMEMBERED_LIMITS - 1] = params.max_datagram_frame_size;
    out
}

/// How many values [`remembered_limits`] gives.
pub(crate) const REMEMBERED_LIMITS: usize = 8;

/// RFC 9000 §7.4.1: after accepting 0-RTT the server's new values must not be below the
/// remembered ones. The RFC names no error code for the client; quinn and this stack use
/// PROTOCOL_VIOLATION (§20.1: a protocol error not covered by a more specific code).
pub(crate) fn check_not_reduced(
    remembered: &TransportParameters,
    new: &TransportParameters,
) -> Result<(), TransportError> {
    for ((name, old), (_, now)) in limits(remembered).into_iter().zip(limits(new)) {
        if now < old {
            return Err(TransportError::protocol_violation(format!(
                "0-RTT accepted but {name} was reduced from {old} to {now} (RFC 9000 §7.4.1)"
            )));
        }
    }
    // RFC 9221 §3: a server accepting 0-RTT must not lower max_datagram_frame_size either (we
    // send no DATAGRAM in 0-RTT, but the rule is the peer's to keep).
    if new.max_datagram_frame_size < remembered.max_datagram_frame_size {
        return Err(TransportError::protocol_violation(
            "0-RTT accepted but max_datagram_frame_size was reduced (RFC 9221 §3)",
        ));
    }
    Ok(())
}

impl Connection {
    /// Client, right after the ClientHello: if rustls offered a ticket with early data, take
    /// the parameters remembered with it and the 0-RTT keys (RFC 9001 §4.6.1).
    pub(crate) fn start_zero_rtt(&mut self) {
        if self.side != Side::Client {
            return;
        }
        let Some(keys) = self.tls.zero_rtt_keys() else {
            return;
        };
        // While the handshake has not passed the ClientHello, these are the remembered ones.
        let Some(raw) = self.tls.peer_transport_params() else {
            return;
        };
        let Ok(remembered) = TransportParameters::decode(raw, Side::Server) else {
            // Nothing usable was remembered: plain 1-RTT (the handshake still resumes).
            return;
        };
        // §7.4.1: flow control and stream limits apply to 0-RTT; ack_delay_exponent,
        // max_ack_delay, CIDs and the reset token are never taken from remembered values
        // (`peer_params` stays empty until the server's own arrive).
        self.streams.set_peer_params(&remembered);
        self.zero_rtt.remembered = Some(Box::new(remembered));
        self.zero_rtt.keys = Some(keys);
        self.zero_rtt.attempted = true;
    }

    /// Server, after TLS read handshake data: once it has decided on the ClientHello, install
    /// the 0-RTT keys if it accepted early data (rustls clears them when it rejects).
    pub(crate) fn check_zero_rtt_accepted(&mut self) {
        if self.side != Side::Server || self.zero_rtt.decided || !self.keys.has(Epoch::Handshake) {
            return;
        }
        self.zero_rtt.decided = true;
        self.zero_rtt.keys = self.tls.zero_rtt_keys();
        self.zero_rtt.attempted = self.zero_rtt.keys.is_some();
        // rustls does not tell a rejection from a ClientHello without early data: only an
        // acceptance is reported.
        self.zero_rtt.accepted = self.zero_rtt.attempted.then_some(true);
        self.stats.zero_rtt_accepted = self.zero_rtt.accepted;
    }

    /// Client, handshake complete: apply the server's decision on 0-RTT.
    pub(crate) fn on_zero_rtt_outcome(&mut self) -> Result<(), TransportError> {
        if self.side != Side::Client || !self.zero_rtt.attempted || self.zero_rtt.accepted.is_some()
        {
            return Ok(());
        }
        // RFC 9001 §4.9.3: a client SHOULD discard 0-RTT keys once it has 1-RTT keys.
        self.zero_rtt.keys = None;
        let accepted = self.tls.early_data_accepted().unwrap_or(false);
        self.zero_rtt.accepted = Some(accepted);
        self.stats.zero_rtt_accepted = Some(accepted);
        if accepted {
            if let (Some(old), Some(new)) = (&self.zero_rtt.remembered, &self.peer_params) {
                check_not_reduced(old, new)?;
            }
            return Ok(());
        }
        self.requeue_zero_rtt();
        // The application wrote under the remembered limits; if the rejecting server's new
        // ones are lower, resending would break its flow control (RFC 9000 §4.1): fail loudly
        // instead (buffered data cannot be taken back; see docs/ARCHITECTURE.md).
        if let Some(new) = &self.peer_params {
            if self.streams.exceeds_peer_params(new) {
                return Err(TransportError::internal(
                    "0-RTT rejected and the data written under the remembered limits exceeds the \
                     server's new limits (RFC 9001 §4.6.2)",
                ));
            }
        }
        Ok(())
    }

    /// RFC 9001 §4.6.2 and RFC 9002 §6.4: 0-RTT was rejected (or answered with a Retry), so
    /// none of it was processed. Every packet sent so far in the application space is a 0-RTT
    /// packet (1-RTT keys come with the completion): take them out of flight without a
    /// congestion signal and queue their data again (in 1-RTT after a rejection, in 0-RTT after
    /// a Retry). The stream layer resends from the same offsets, so the application's streams
    /// stay as they are and nothing is lost. Client only; a no-op without 0-RTT packets.
    pub(crate) fn requeue_zero_rtt(&mut self) {
        if self.side != Side::Client || !self.zero_rtt.attempted {
            return;
        }
        let Some(path) = self.paths.get_mut(&PathId::ZERO) else {
            return;
        };
        let packets = path.ledger(Epoch::Data).drain();
        for p in &packets {
            self.send_space(p.space).forget(p.pn);
            self.requeue_frames(Epoch::Data, &p.frames);
        }
        self.stats.zero_rtt_packets_requeued += packets.len() as u64;
    }

    /// Server: the first 1-RTT packet means the client has 1-RTT keys; it sends no more 0-RTT
    /// (RFC 9001 §4.9.3: the server MAY discard 0-RTT keys then).
    pub(crate) fn on_one_rtt_received(&mut self) {
        if self.side == Side::Server && self.zero_rtt.keys.is_some() {
            self.zero_rtt.keys = None;
        }
    }

    /// Whether a received 0-RTT packet can be opened (server with accepted early data).
    pub(crate) fn can_open_zero_rtt(&self) -> bool {
        self.side == Side::Server && self.zero_rtt.keys.is_some()
    }

    /// The 0-RTT outcome: `None` while unknown or when 0-RTT was not attempted (client) or not
    /// offered (server); `Some(true)` accepted, `Some(false)` rejected by the server.
    pub fn zero_rtt_accepted(&self) -> Option<bool> {
        self.zero_rtt.accepted
    }

    /// Client: 0-RTT keys are available, so stream data written now goes out in 0-RTT
    /// packets (before the handshake completes), within the remembered limits.
    pub fn is_zero_rtt_available(&self) -> bool {
        self.side == Side::Client && self.zero_rtt.keys.is_some()
    }

    /// Client without 1-RTT keys: one datagram with a 0-RTT packet of stream data, if any is
    /// waiting and the congestion window allows it (RFC 9002 §7 applies to 0-RTT too).
    pub(crate) fn send_zero_rtt_datagram(
        &mut self,
        now: Timestamp,
        buf: &mut Vec<u8>,
    ) -> Option<Transmit> {
        if self.zero_rtt.keys.is_none() || !self.streams.has_pending_data() {
            return None;
        }
        // The congestion window applies, pacing does not: before any RTT sample the pacer
        // spreads a window over the initial RTT (333 ms), which would hold most of the first
        // flight until after the handshake; RFC 9002 §7.7 allows bursts up to the initial
        // window.
        let mtu = u64::from(self.config.max_datagram_size);
        if !self.paths.get(&PathId::ZERO)?.cwnd_allows(mtu) {
            return None;
        }
        let max = self.send_budget(PathId::ZERO)?;
        buf.clear();
        self.build_zero_rtt_packet(now, buf, max)?;
        self.finish_datagram(PathId::ZERO, buf)
    }

    /// A 0-RTT packet (long header type 0x1, RFC 9000 §17.2.3) with STREAM frames, sealed with
    /// the 0-RTT keys (RFC 9001 §5.3: no path ID in the nonce) and recorded in the
    /// application-data space of path 0 (RFC 9000 §12.3).
    fn build_zero_rtt_packet(
        &mut self,
        now: Timestamp,
        packet: &mut Vec<u8>,
        max_len: usize,
    ) -> Option<()> {
        let space = self.layout.space_for(PathId::ZERO);
        let dcid = self.remote_cids.get(&PathId::ZERO)?.current()?;
        let scid = *self.local_cids.get(&PathId::ZERO)?.all().next()?;
        let header = Header::Long {
            kind: PacketKind::ZeroRtt,
            version: QUIC_V1,
            dcid,
            scid,
        };
        let pn = self.send_space(space).peek_pn();
        let pn_len = self.packet_number_len(now, space, PathId::ZERO, pn);
        let enc = header.encode_with_pn_len(pn, pn_len, packet);
        let limit = max_len.checked_sub(TAG_LEN)?;
        if packet.len() + 8 > limit {
            return None;
        }
        let mut sent = SentFrames::default();
        let room = limit - packet.len();
        self.streams
            .write_stream_frames(packet, room, &mut sent.streams);
        if packet.len() == enc.header_len {
            packet.clear();
            return None;
        }
        self.pad_packet(packet, &enc, None, limit);
        let length = packet.len() - enc.pn_offset + TAG_LEN;
        enc.set_length(packet, length);
        let qlog = self.qlog_frames(&header, &enc, packet);
        let keys = self.zero_rtt.keys.as_ref()?;
        if let Err(e) = super::send::seal_long(keys, pn, packet, &enc) {
            tracing::warn!("failed to seal a 0-RTT packet: {e}");
            return None;
        }
        self.qlog_packet_sent(now, (PathId::ZERO, Epoch::Data, pn), packet.len(), qlog);
        self.send_space(space).next_pn();
        self.stats.zero_rtt_packets_sent += 1;
        self.stats.zero_rtt_stream_bytes += sent.streams.stream.iter().map(|c| c.len).sum::<u64>();
        let size = packet.len();
        self.record_sent(
            now,
            PathId::ZERO,
            Epoch::Data,
            space,
            pn,
            size,
            true,
            true,
            sent,
        );
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduced_limits_are_a_protocol_violation() {
        let old = TransportParameters {
            initial_max_data: 1000,
            initial_max_streams_bidi: 4,
            ..TransportParameters::default()
        };
        let mut new = old.clone();
        assert!(check_not_reduced(&old, &new).is_ok());
        new.initial_max_data = 2000;
        assert!(check_not_reduced(&old, &new).is_ok());
        new.initial_max_streams_bidi = 3;
        let err = check_not_reduced(&old, &new).unwrap_err();
        assert!(
            err.to_string().contains("initial_max_streams_bidi"),
            "{err}"
        );
    }
}
