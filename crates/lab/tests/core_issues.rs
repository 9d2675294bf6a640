//! Regression tests for protocol-core (`mpquic-proto`) problems found while
//! building the lab (all fixed in the core: ACKs owed on a path without a
//! destination CID go out on another path; SPNS RTT samples from late ACKs;
//! the receiver fixes of CCR 2022 stalling an SPNS transfer).

mod common;

use common::{describe_paths, download, path, run_completed, CONEXT_A, CONEXT_B};
use mpquic_proto::MultipathMode;
use mpquic_proto::{AckConfig, RangeOrder};

/// The server receives a packet on a new path (the client's PATH_CHALLENGE)
/// before it has a destination CID for that path, because the client's
/// PATH_NEW_CONNECTION_ID frames for path 1 were lost on path 0 (20% loss
/// client -> server). It owes a PATH_ACK on path 1, whose ACK deadline
/// becomes due, but `poll_transmit` cannot send on the path without a CID,
/// and `handle_timeout` does not move the deadline: `poll_timeout` keeps
/// returning a time in the past until the CIDs are retransmitted. A runtime
/// would spin the CPU; the simulator, whose clock cannot advance past a due
/// timer, would hang (the lab adapter detects this, counts it in
/// `timer_stalls` and retries 1 ms later).
#[test]
fn ack_owed_on_path_without_cid_keeps_timer_in_the_past() {
    let seed = 2;
    let s = download(
        &["rate=20mbit,rtt=20ms,up.loss=20%", "rate=10mbit,rtt=50ms"],
        1_000_000,
        MultipathMode::Mpns,
        seed,
    );
    let r = run_completed(&s);
    println!(
        "seed {seed}: server timer stalls {}, client {}",
        r.sender.timer_stalls, r.receiver.timer_stalls
    );
    assert_eq!(
        r.sender.timer_stalls + r.receiver.timer_stalls,
        0,
        "seed {seed}: an endpoint asked to be woken in the past after its timers were handled"
    );
}

/// SPNS, two paths (20 Mbit/s 20 ms, 15 Mbit/s 40 ms). The client ACKs on
/// the receiving path, but every ACK's ranges come from the shared receive
/// record, so the ACKs on the fast path (returning in 10 ms) acknowledge
/// the slow path's packets before the slow path's own ACKs (20 ms) arrive.
/// The sender's rule "sample a path only when an ACK received on that path
/// newly acknowledges its largest packet" then almost never fires for the
/// slow path while it is busy: its srtt stays at the idle-queue value and
/// misses the queueing delay. In addition the "a path without a sample
/// accepts one from any path" exception gives path 1 a first sample of
/// path-1 downlink + path-0 uplink (~31 ms), below its 40 ms propagation
/// RTT, and min RTT never recovers.
#[test]
fn spns_slow_path_gets_its_own_rtt_samples() {
    let seed = 1;
    let spns = run_completed(&download(
        &[CONEXT_A, CONEXT_B],
        10_000_000,
        MultipathMode::Spns,
        seed,
    ));
    let mpns = run_completed(&download(
        &[CONEXT_A, CONEXT_B],
        10_000_000,
        MultipathMode::Mpns,
        seed,
    ));
    println!(
        "seed {seed}\n SPNS:\n  {}\n MPNS:\n  {}",
        describe_paths(&spns),
        describe_paths(&mpns)
    );
    let p1 = path(&spns, 1);
    assert!(
        p1.min_rtt_ms >= 40.0,
        "seed {seed}: SPNS path 1 min RTT {:.2} ms is below its 40 ms propagation RTT",
        p1.min_rtt_ms
    );
    let reference = path(&mpns, 1);
    let spns_rate = p1.rtt_samples as f64 / p1.packets_sent as f64;
    let mpns_rate = reference.rtt_samples as f64 / reference.packets_sent as f64;
    assert!(
        spns_rate >= 0.5 * mpns_rate,
        "seed {seed}: SPNS path 1 took {:.3} RTT samples per packet, MPNS {:.3}",
        spns_rate,
        mpns_rate
    );
}

/// SPNS with both receiver fixes of CCR 2022 (ACK copies on all paths, lowest
/// ranges first) on the `pn-space-debate` heterogeneous point that once
/// stalled (21 Mbit/s 35 ms + 79 Mbit/s 165 ms). Three faults combined:
/// (1) an ACK sent on the fast path cleared the whole space's "newly
/// received" set, so the slow path's packets above it were then left out by
/// the lowest-first selection and declared lost; (2) copies started at the
/// space's largest packet, so under the range limit they left out the copy
/// path's own older packets; (3) once the slow path's packets had left the
/// record (range cap), its owed ACK could not be built but stayed due
/// forever: no ACK ever went on that path, its packets were never
/// acknowledged, and the endpoints exchanged ACK-only packets until the time
/// limit (10 MB never completed in 300 s).
#[test]
fn receiver_fixes_complete_without_spurious_retransmissions() {
    let seed = 2;
    let mut s = download(
        &[
            "rate=20879kbit,queue=1.5bdp,rtt=35ms",
            "rate=79121kbit,queue=1.5bdp,rtt=165ms",
        ],
        10_000_000,
        MultipathMode::Spns,
        seed,
    );
    s.time_limit = "60s".parse().unwrap();
    let mut ack = AckConfig::default();
    ack.default_range_limit = 32;
    ack.range_order = RangeOrder::LowestFirst;
    ack.ack_on_all_paths = true;
    s.transport.config.ack = ack;
    let fixed = run_completed(&s);
    s.transport.config.ack = AckConfig::default();
    let plain = run_completed(&s);
    println!(
        "seed {seed}: with fixes {:.3} s, {} spurious; without {:.3} s, {} spurious",
        fixed.completion_time_s.unwrap(),
        fixed.spurious_retransmissions,
        plain.completion_time_s.unwrap(),
        plain.spurious_retransmissions
    );
    assert!(
        fixed.spurious_retransmissions <= 20,
        "seed {seed}: {} spurious retransmissions with the receiver fixes",
        fixed.spurious_retransmissions
    );
    assert!(
        fixed.completion_time_s.unwrap() < 1.5 * plain.completion_time_s.unwrap(),
        "seed {seed}: the fixes slowed the transfer down"
    );
}
