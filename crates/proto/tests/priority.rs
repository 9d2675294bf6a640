//! Stream send priorities (`Connection::set_priority`): packets take data from the highest
//! priority first, streams of equal priority take turns, a change applies to data already
//! queued, and every byte still arrives, with loss too.

mod common;

use common::{payload, NetConfig, Pair};
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::{ConnectionHandle, Duration, MultipathMode, TransportConfig, WriteError};

/// One client stream of a run: its data, its priority, and what the server read of it.
struct Flow {
    data: Vec<u8>,
    priority: i32,
    client_id: Option<StreamId>,
    written: usize,
    finished: bool,
    received: Vec<u8>,
    done: bool,
}

impl Flow {
    fn new(len: usize, priority: i32, salt: u8) -> Self {
        Self {
            data: payload(len, salt),
            priority,
            client_id: None,
            written: 0,
            finished: false,
            received: Vec::new(),
            done: false,
        }
    }
}

/// Bytes the server had read of every flow when flow `i` completed.
type Snapshot = Vec<usize>;

/// Opens one client stream per flow, sets its priority, writes and finishes it, and reads
/// everything at the server. `at_step` may change priorities on the way (given the bytes read
/// of each flow so far). Returns, per flow, the read counts of all flows when it completed.
fn run(
    net: NetConfig,
    flows: &mut [Flow],
    mut at_step: impl FnMut(&mut mpquic_proto::Connection, &[StreamId], &[usize]),
) -> Vec<Snapshot> {
    let transport = || TransportConfig::default().multipath(MultipathMode::Mpns);
    let (mut pair, ch, sh): (Pair, ConnectionHandle, ConnectionHandle) =
        Pair::established(3, transport(), transport(), net);
    let client = pair.client.connection_mut(ch).unwrap();
    for f in flows.iter_mut() {
        let id = client.open_uni().expect("stream credit");
        client.set_priority(id, f.priority).unwrap();
        f.client_id = Some(id);
    }
    let ids: Vec<StreamId> = flows.iter().map(|f| f.client_id.unwrap()).collect();
    let mut snapshots = vec![Vec::new(); flows.len()];
    let mut server_ids: Vec<StreamId> = Vec::new();
    let mut buf = vec![0u8; 65536];
    pair.run_until(Duration::from_secs(60), |p| {
        let c = p.client.connection_mut(ch).unwrap();
        let counts: Vec<usize> = flows.iter().map(|f| f.received.len()).collect();
        at_step(c, &ids, &counts);
        for f in flows.iter_mut() {
            let id = f.client_id.unwrap();
            while f.written < f.data.len() {
                match c.write(id, &f.data[f.written..]) {
                    Ok(n) if n > 0 => f.written += n,
                    _ => break,
                }
            }
            if f.written == f.data.len() && !f.finished {
                c.finish(id).unwrap();
                f.finished = true;
            }
        }
        let s = p.server.connection_mut(sh).unwrap();
        while let Some(id) = s.accept(Dir::Uni) {
            server_ids.push(id);
        }
        for (i, &id) in server_ids.iter().enumerate() {
            let f = &mut flows[i];
            while !f.done {
                match s.read(id, &mut buf) {
                    Ok(Some(n)) => f.received.extend_from_slice(&buf[..n]),
                    Ok(None) => f.done = true,
                    Err(_) => break,
                }
            }
        }
        for i in 0..flows.len() {
            if flows[i].done && snapshots[i].is_empty() {
                snapshots[i] = flows.iter().map(|f| f.received.len()).collect();
            }
        }
        flows.iter().all(|f| f.done)
    });
    for (i, f) in flows.iter().enumerate() {
        assert!(f.received == f.data, "flow {i}: data differs");
    }
    snapshots
}

#[test]
fn a_higher_priority_stream_goes_first() {
    // The large stream is opened and written first; the small one outranks it.
    let mut flows = [Flow::new(1_000_000, 0, 1), Flow::new(256_000, 5, 2)];
    let at = run(NetConfig::default(), &mut flows, |_, _, _| {});
    let large_when_small_done = at[1][0];
    assert!(
        large_when_small_done < 16_000,
        "the low-priority stream got {large_when_small_done} bytes before the other finished"
    );
}

#[test]
fn equal_priorities_take_turns() {
    // The control for the test above: without priorities both streams move together.
    let mut flows = [Flow::new(1_000_000, 0, 1), Flow::new(256_000, 0, 2)];
    let at = run(NetConfig::default(), &mut flows, |_, _, _| {});
    let large_when_small_done = at[1][0];
    assert!(
        large_when_small_done > 200_000,
        "round robin gave the first stream only {large_when_small_done} bytes"
    );
}

#[test]
fn a_raised_priority_applies_to_data_already_queued() {
    // Both streams start level; once the server has 100 kB of each, the second is raised.
    let mut flows = [Flow::new(800_000, 0, 1), Flow::new(800_000, 0, 2)];
    let mut raised_at: Option<Vec<usize>> = None;
    let at = run(NetConfig::default(), &mut flows, |c, ids, counts| {
        if raised_at.is_none() && counts.iter().all(|&n| n >= 100_000) {
            c.set_priority(ids[1], 10).unwrap();
            assert_eq!(c.priority(ids[1]), Ok(10));
            raised_at = Some(counts.to_vec());
        }
    });
    let raised_at = raised_at.expect("the priority was raised");
    let first_gain = at[1][0] - raised_at[0];
    let second_gain = at[1][1] - raised_at[1];
    assert!(
        first_gain * 4 < second_gain,
        "after the raise the first stream gained {first_gain} bytes, the raised one {second_gain}"
    );
}

#[test]
fn priorities_keep_every_byte_under_loss_and_reordering() {
    let net = NetConfig {
        loss: 0.03,
        jitter: Duration::from_millis(5),
        ..NetConfig::default()
    };
    let mut flows = [
        Flow::new(300_000, -1, 1),
        Flow::new(300_000, 3, 2),
        Flow::new(300_000, 0, 3),
        Flow::new(300_000, 3, 4),
    ];
    let at = run(net, &mut flows, |_, _, _| {});
    // The two streams of priority 3 finish before anything of the lowest has been sent in
    // bulk (retransmissions of other streams may still go first, as documented).
    let lowest_when_high_done = at[1][0].max(at[3][0]);
    assert!(
        lowest_when_high_done < 30_000,
        "the priority -1 stream got {lowest_when_high_done} bytes before the priority 3 ones finished"
    );
}

#[test]
fn priority_of_a_stream_without_a_sending_part_is_an_error() {
    let transport = || TransportConfig::default();
    let (mut pair, ch, _) = Pair::established(4, transport(), transport(), NetConfig::default());
    let c = pair.client.connection_mut(ch).unwrap();
    // A stream ID the client never opened, and a receive-only one of the server.
    let unopened = StreamId::new(mpquic_proto::wire::stream_id::Side::Client, Dir::Bi, 7);
    assert_eq!(c.set_priority(unopened, 1), Err(WriteError::UnknownStream));
    let server_uni = StreamId::new(mpquic_proto::wire::stream_id::Side::Server, Dir::Uni, 0);
    assert_eq!(c.priority(server_uni), Err(WriteError::UnknownStream));
    let id = c.open_bi().unwrap();
    assert_eq!(c.priority(id), Ok(0));
    c.finish(id).unwrap();
    pair.run_for(Duration::from_millis(200));
    // Once the FIN is acknowledged the sending part is gone.
    let c = pair.client.connection_mut(ch).unwrap();
    assert_eq!(c.set_priority(id, 2), Err(WriteError::ClosedStream));
}
