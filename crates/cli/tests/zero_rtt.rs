//! `mpquic client --0rtt` against `mpquic server`: the second connection's request (h3 and
//! hq-interop) goes out in 0-RTT and is answered; `--no-0rtt` servers fall back to 1-RTT.

mod common;

use common::{port_of, run, start};

fn summary_of(args: &[&str], json: &std::path::Path) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).expect("json")).expect("valid json")
}

#[test]
fn client_0rtt_request_is_answered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("data.bin"), &data).expect("file");
    for (server_flags, accepted) in [(vec![], true), (vec!["--no-0rtt"], false)] {
        let mut args = vec!["server", "--listen", "127.0.0.1:0", "--root"];
        args.push(root.to_str().expect("utf-8"));
        args.extend(server_flags.iter().copied());
        let (server, addr) = start(&args, "listening on ");
        let url = format!("https://127.0.0.1:{}/data.bin", port_of(&addr));
        for alpn in ["h3", "hq-interop"] {
            let output = dir.path().join("out.bin");
            let json = dir.path().join("summary.json");
            let qlog = dir.path().join(format!("qlog-{alpn}-{accepted}"));
            let summary = summary_of(
                &[
                    "client",
                    &url,
                    "--insecure",
                    "--0rtt",
                    "--alpn",
                    alpn,
                    "-o",
                    output.to_str().expect("utf-8"),
                    "--json",
                    json.to_str().expect("utf-8"),
                    "--timeout",
                    "5s",
                    "--qlog",
                    qlog.to_str().expect("utf-8"),
                ],
                &json,
            );
            assert!(std::fs::read(&output).expect("output") == data, "{alpn}");
            if accepted {
                // The server's decision; how many packets went out before the loopback
                // handshake completed depends on scheduling (the emulated tests count them).
                assert_eq!(summary["zero_rtt_accepted"], true, "{alpn}: {summary}");
                if summary["zero_rtt_packets_sent"].as_u64() > Some(0) {
                    let logs: String = std::fs::read_dir(&qlog)
                        .expect("qlog dir")
                        .map(|f| std::fs::read_to_string(f.expect("entry").path()).expect("qlog"))
                        .collect();
                    assert!(logs.contains(r#""packet_type":"0RTT""#), "{alpn}: no 0RTT");
                }
            } else {
                // No ticket from a --no-0rtt server: a plain handshake.
                assert!(summary["zero_rtt_accepted"].is_null(), "{alpn}: {summary}");
                assert_eq!(summary["zero_rtt_packets_sent"], 0);
            }
            assert!(summary["first_byte_ms"].as_f64().is_some());
        }
        drop(server);
    }
}
