//! The seed corpora checked in under `fuzz/seeds/<target>/`: small meaningful inputs per target
//! (every frame type, real handshake packets, valid traces, scenarios, specs and requests), from
//! which the fuzzer mutates. `tests/seeds.rs` writes them (`MPQUIC_WRITE_SEEDS=1`) and checks
//! that none is missing.

use bytes::BytesMut;
use mpquic_proto::wire::header::PartialDecode;
use mpquic_proto::wire::stream_id::Side;
use mpquic_proto::wire::TransportParameters;
use mpquic_proto::MultipathMode;

use crate::connection::FrameSetup;
use crate::net::{addr, client_config, Net, CLIENT_ADDR, SERVER_ADDR};
use crate::packets::{open_initial, CLIENT_SCID};

/// One seed file: target, file name, contents.
pub type Seed = (&'static str, String, Vec<u8>);

/// One frame of each type, as a peer could send it in a 1-RTT packet of an established
/// connection whose client has opened stream 0 (17 bytes sent, 700 received).
pub(crate) fn frames() -> Vec<(&'static str, Vec<u8>)> {
    let cid = [0x11u8; 8];
    let token = [0x22u8; 16];
    let mut new_cid = vec![0x18, 0x05, 0x00, 0x08];
    new_cid.extend_from_slice(&cid);
    new_cid.extend_from_slice(&token);
    let mut path_new_cid = vec![0x7e, 0x78, 0x01, 0x05, 0x00, 0x08];
    path_new_cid.extend_from_slice(&cid);
    path_new_cid.extend_from_slice(&token);
    vec![
        ("padding", vec![0x00, 0x00, 0x00]),
        ("ping", vec![0x01]),
        ("ack", vec![0x02, 0x03, 0x00, 0x00, 0x03]),
        ("ack_ranges", vec![0x02, 0x06, 0x10, 0x01, 0x01, 0x00, 0x02]),
        (
            "ack_ecn",
            vec![0x03, 0x02, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00],
        ),
        ("reset_stream", vec![0x04, 0x00, 0x05, 0x11]),
        ("stop_sending", vec![0x05, 0x00, 0x07]),
        ("crypto", vec![0x06, 0x00, 0x03, 0x16, 0x03, 0x03]),
        ("crypto_empty", vec![0x06, 0x00, 0x00]),
        ("new_token", vec![0x07, 0x04, 0xaa, 0xbb, 0xcc, 0xdd]),
        (
            "stream",
            vec![0x0a, 0x00, 0x05, b'h', b'e', b'l', b'l', b'o'],
        ),
        (
            "stream_off_fin",
            vec![0x0f, 0x00, 0x11, 0x03, b'a', b'b', b'c'],
        ),
        ("stream_new", vec![0x0b, 0x04, 0x03, b'a', b'b', b'c']),
        ("stream_uni", vec![0x0b, 0x02, 0x03, b'x', b'y', b'z']),
        ("max_data", vec![0x10, 0x80, 0x10, 0x00, 0x00]),
        ("max_stream_data", vec![0x11, 0x00, 0x80, 0x10, 0x00, 0x00]),
        ("max_streams_bidi", vec![0x12, 0x42, 0x00]),
        ("max_streams_uni", vec![0x13, 0x42, 0x00]),
        ("data_blocked", vec![0x14, 0x40, 0x64]),
        ("stream_data_blocked", vec![0x15, 0x00, 0x40, 0x64]),
        ("streams_blocked_bidi", vec![0x16, 0x0a]),
        ("streams_blocked_uni", vec![0x17, 0x0a]),
        ("new_connection_id", new_cid),
        ("retire_connection_id", vec![0x19, 0x01]),
        ("path_challenge", vec![0x1a, 1, 2, 3, 4, 5, 6, 7, 8]),
        ("path_response", vec![0x1b, 1, 2, 3, 4, 5, 6, 7, 8]),
        (
            "connection_close",
            vec![0x1c, 0x0a, 0x00, 0x03, b'a', b'b', b'c'],
        ),
        (
            "application_close",
            vec![0x1d, 0x2a, 0x03, b'b', b'y', b'e'],
        ),
        ("handshake_done", vec![0x1e]),
        ("immediate_ack", vec![0x1f]),
        (
            "ack_frequency",
            vec![0x40, 0xaf, 0x01, 0x0a, 0x44, 0x00, 0x01],
        ),
        ("path_ack", vec![0x3e, 0x00, 0x03, 0x00, 0x00, 0x03]),
        ("path_ack_path1", vec![0x3e, 0x01, 0x01, 0x00, 0x00, 0x01]),
        (
            "path_ack_ecn",
            vec![0x3f, 0x00, 0x02, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00],
        ),
        ("path_abandon", vec![0x7e, 0x75, 0x01, 0x00]),
        ("path_status_backup", vec![0x7e, 0x76, 0x01, 0x01]),
        ("path_status_available", vec![0x7e, 0x77, 0x00, 0x02]),
        ("path_new_connection_id", path_new_cid),
        ("path_retire_connection_id", vec![0x7e, 0x79, 0x00, 0x00]),
        ("max_path_id", vec![0x7e, 0x7a, 0x0a]),
        ("paths_blocked", vec![0x7e, 0x7b, 0x07]),
        ("path_cids_blocked", vec![0x7e, 0x7c, 0x01, 0x02]),
        (
            "qoe_control_signal",
            vec![0x80, 0x3f, 0x51, 0x53, 0x01, 0x02, 0x03],
        ),
        (
            "combo",
            vec![
                0x01, 0x0b, 0x04, 0x03, b'a', b'b', b'c', 0x11, 0x04, 0x44, 0x00, 0x05, 0x00, 0x07,
                0x12, 0x42, 0x00,
            ],
        ),
    ]
}

fn is_multipath_frame(name: &str) -> bool {
    name.starts_with("path_") || name == "max_path_id" || name == "paths_blocked"
}

/// Frames also seeded as arriving from another address: probing ones and a few others.
const MOVED_FRAMES: [&str; 6] = [
    "padding",
    "ping",
    "stream",
    "new_connection_id",
    "path_challenge",
    "path_response",
];

fn established_seeds(out: &mut Vec<Seed>) {
    let single = |into_client| FrameSetup {
        mode: MultipathMode::Single,
        into_client,
        second_path: false,
        from_elsewhere: false,
    };
    let multi = |mode, into_client| FrameSetup {
        mode,
        into_client,
        second_path: true,
        from_elsewhere: false,
    };
    // Probing and non-probing frames from a new address (RFC 9000 §9.1, §9.3), both ways.
    let moved = |mode, into_client| FrameSetup {
        mode,
        into_client,
        second_path: false,
        from_elsewhere: true,
    };
    for (name, frame) in frames() {
        let setups = if is_multipath_frame(name) {
            vec![
                multi(MultipathMode::Mpns, false),
                multi(MultipathMode::Spns, true),
            ]
        } else {
            vec![single(false), single(true)]
        };
        let mut setups = setups;
        if MOVED_FRAMES.contains(&name) {
            setups.push(moved(MultipathMode::Single, false));
            setups.push(moved(MultipathMode::Mpns, true));
        }
        for s in setups {
            let mut data = vec![s.to_byte()];
            data.extend_from_slice(&frame);
            let side = if s.into_client { "client" } else { "server" };
            let moved = if s.from_elsewhere { "-moved" } else { "" };
            let file = format!("{side}-{:?}{moved}-{name}", s.mode).to_lowercase();
            out.push(("established_frames", file, data));
        }
    }
}

/// The first datagram each side sends in a real handshake between the harness endpoints:
/// (client's first datagram, server's first datagram).
fn handshake_datagrams() -> (Vec<u8>, Vec<u8>) {
    let mut net = Net::new(MultipathMode::Auto);
    let config = client_config(MultipathMode::Auto);
    let (local, remote) = (addr(CLIENT_ADDR), addr(SERVER_ADDR));
    net.client
        .connect(net.now, &config, local, remote, "localhost")
        .expect("connect");
    net.flush();
    let client = net.queue.pop_front().expect("a client Initial");
    net.deliver(client.clone());
    net.flush();
    let server = net
        .queue
        .iter()
        .find(|p| !p.to_server)
        .expect("a server Initial");
    (client.data, server.data.clone())
}

fn connection_seeds(out: &mut Vec<Seed>) {
    let (client_dgram, server_dgram) = handshake_datagrams();
    let (first, _) = PartialDecode::new(BytesMut::from(&client_dgram[..]), 8).expect("header");
    let (odcid, scid) = (first.dcid(), first.scid().expect("long header"));
    let mut hello = open_initial(Side::Client, odcid.as_slice(), &client_dgram).expect("open");
    // The ClientHello's initial_source_connection_id must match the forged packet's SCID.
    replace_all(&mut hello, scid.as_slice(), &CLIENT_SCID);
    let hello = trim_padding(hello);
    let server_frames = open_initial(Side::Server, odcid.as_slice(), &server_dgram).expect("open");
    let server_frames = trim_padding(server_frames);
    let mut push = |target: &'static str, name: &str, mode: u8, body: &[u8]| {
        let mut d = vec![mode];
        d.extend_from_slice(body);
        out.push((target, name.to_owned(), d));
    };
    push("server_datagram", "raw-client-initial", 0, &client_dgram);
    push("server_datagram", "raw-short-header", 0, &[0x40; 64]);
    let mut unknown_version = vec![0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 0x08];
    unknown_version.extend_from_slice(&[1; 8]);
    unknown_version.push(0x08);
    unknown_version.extend_from_slice(&[2; 8]);
    unknown_version.resize(1200, 0);
    push(
        "server_datagram",
        "raw-unknown-version",
        0,
        &unknown_version,
    );
    push("server_datagram", "sealed-client-hello", 1, &hello);
    push("server_datagram", "sealed-client-hello-retry", 3, &hello);
    push(
        "server_datagram",
        "sealed-client-hello-mpns",
        1 | 2 << 2,
        &hello,
    );
    push(
        "server_datagram",
        "sealed-crypto-empty",
        1,
        &[0x06, 0x00, 0x00],
    );
    push(
        "server_datagram",
        "sealed-ping-ack",
        1,
        &[0x01, 0x02, 0x00, 0x00, 0x00, 0x00],
    );
    push(
        "server_datagram",
        "sealed-close",
        1,
        &[0x1c, 0x0a, 0x00, 0x00],
    );
    push(
        "client_datagram",
        "progress-raw-server-initial",
        0,
        &server_dgram,
    );
    push(
        "client_datagram",
        "progress-sealed-server-hello",
        1,
        &server_frames,
    );
    push(
        "client_datagram",
        "progress-sealed-close",
        1,
        &[0x1c, 0x0a, 0x00, 0x00],
    );
    push("client_datagram", "established-raw", 2, &[0x41; 48]);
    push("client_datagram", "established-short", 3, &[0x01; 48]);
    out.push(("wire_decode", "client-initial".into(), client_dgram));
}

fn replace_all(hay: &mut [u8], from: &[u8], to: &[u8]) {
    if from.is_empty() || from.len() != to.len() {
        return;
    }
    let mut i = 0;
    while i + from.len() <= hay.len() {
        if &hay[i..i + from.len()] == from {
            hay[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
}

/// Drop trailing PADDING: the harness pads again, and short seeds mutate better.
fn trim_padding(mut frames: Vec<u8>) -> Vec<u8> {
    while frames.last() == Some(&0) {
        frames.pop();
    }
    frames
}

fn text_seeds(out: &mut Vec<Seed>) {
    let mut text = |target: &'static str, name: &str, body: &str| {
        out.push((target, name.to_owned(), body.as_bytes().to_vec()));
    };
    text("mahimahi_trace", "one-line", "1\n");
    text("mahimahi_trace", "bursty", "1\n1\n1\n3\n7\n7\n12\n");
    text("mahimahi_trace", "blank-lines", "\n5\n 5 \n\n10\n");
    let generated = mpquic_netsim::generate::lte_like(1, 300).expect("generate");
    text("mahimahi_trace", "generated-lte", &generated.to_text());
    let scenarios = [
        ("example", include_str!("../../lab/scenarios/example.toml")),
        (
            "handover",
            include_str!("../../lab/scenarios/handover.toml"),
        ),
        (
            "conext2017",
            include_str!("../../lab/scenarios/conext2017.toml"),
        ),
        (
            "short-connections",
            include_str!("../../lab/scenarios/short-connections.toml"),
        ),
    ];
    for (name, body) in scenarios {
        text("scenario_toml", name, body);
    }
    text(
        "unit_parsers",
        "specs",
        "rate=20mbit,rtt=40ms,queue=1.5bdp,loss=1%\n\
         rate=10mbit,up.loss=ge:1%,10%,0.8,0,down.trace=gen:lte:7:3s,rtt=50ms\n\
         rate=1mbit,down_at=1s,up_at=2s,jitter=2ms,reorder=true,queue=100pkt\n",
    );
    text(
        "unit_parsers",
        "sizes-durations",
        "10MB\n512KiB\n1.5GB\n42\n250ms\n1.5s\n2min\n0\n500us\n",
    );
    text(
        "unit_parsers",
        "cli-units",
        "10MB\n3 mib\n1.5m\n5 parsecs\n-1s\n1e3\n",
    );
    text("hq_request", "get", "GET /index.html\r\n");
    text("hq_request", "get-query", "GET /sub/./file.bin?x=1#y\r\n");
    text(
        "hq_request",
        "traversal",
        "GET /sub/%2e%2e/%2e%2e/secret\r\n",
    );
    text("hq_request", "post", "POST /x\r\n");
}

fn wire_seeds(out: &mut Vec<Seed>) {
    for (name, frame) in frames() {
        out.push(("wire_decode", format!("frame-{name}"), frame));
    }
    let mut params = Vec::new();
    TransportParameters::default().encode(&mut params);
    out.push(("wire_decode", "transport-parameters".into(), params));
}

/// Every seed of every target.
pub fn all() -> Vec<Seed> {
    let mut out = Vec::new();
    established_seeds(&mut out);
    connection_seeds(&mut out);
    text_seeds(&mut out);
    wire_seeds(&mut out);
    out
}
