//! Tests of [`super::Streams`]: frame-level error handling and a two-endpoint
//! exchange over a lossy, reordering in-memory channel.

mod behavior;
mod errors;
mod pair;

use bytes::Bytes;
use mpquic_wire::frame::{Frame, StreamFrame};
use mpquic_wire::stream_id::{Side, StreamId};
use mpquic_wire::transport_params::TransportParameters;

use super::{SentStreamFrames, Streams, StreamsConfig};
use crate::error::TransportError;
use crate::time::{Duration, Timestamp};

/// Feeds one decoded frame to the matching handler, as the connection does.
fn dispatch(s: &mut Streams, frame: Frame) -> Result<(), TransportError> {
    match frame {
        Frame::Stream(f) => s.on_stream_frame(f),
        Frame::ResetStream {
            id,
            error_code,
            final_size,
        } => s.on_reset_stream(id, error_code, final_size),
        Frame::StopSending { id, error_code } => s.on_stop_sending(id, error_code),
        Frame::MaxData(max) => {
            s.on_max_data(max);
            Ok(())
        }
        Frame::MaxStreamData { id, max } => s.on_max_stream_data(id, max),
        Frame::MaxStreams { dir, count } => s.on_max_streams(dir, count),
        Frame::DataBlocked { limit } => {
            s.on_data_blocked(limit);
            Ok(())
        }
        Frame::StreamDataBlocked { id, limit } => s.on_stream_data_blocked(id, limit),
        Frame::StreamsBlocked { dir, limit } => s.on_streams_blocked(dir, limit),
        other => panic!("unexpected frame {other:?}"),
    }
}

/// Decodes a packet payload written by `Streams`.
fn decode(payload: Vec<u8>) -> Vec<Frame> {
    Frame::iter(Bytes::from(payload))
        .collect::<Result<Vec<_>, _>>()
        .expect("frames written by Streams decode")
}

/// Writes every pending control frame and decodes them.
fn control_frames(s: &mut Streams) -> (Vec<Frame>, SentStreamFrames) {
    let mut out = Vec::new();
    let mut sent = SentStreamFrames::default();
    s.write_control_frames(
        Timestamp::ZERO,
        Duration::from_millis(10),
        &mut out,
        10_000,
        &mut sent,
    );
    (decode(out), sent)
}

/// A client and a server that exchanged transport parameters.
fn connected(client: StreamsConfig, server: StreamsConfig) -> (Streams, Streams) {
    let mut c = Streams::new(Side::Client, client);
    let mut s = Streams::new(Side::Server, server);
    let (mut ctp, mut stp) = (
        TransportParameters::default(),
        TransportParameters::default(),
    );
    c.fill_transport_params(&mut ctp);
    s.fill_transport_params(&mut stp);
    c.set_peer_params(&stp);
    s.set_peer_params(&ctp);
    (c, s)
}

fn stream_frame(id: StreamId, offset: u64, data: &[u8], fin: bool) -> StreamFrame {
    StreamFrame {
        id,
        offset,
        fin,
        data: Bytes::copy_from_slice(data),
    }
}
