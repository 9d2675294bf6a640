//! The `mpquic` binary: errors are one readable line with a non-zero exit code, never a panic
//! or a hang; the demo and a server/client pair work end to end.

mod common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::{port_of, run, start, Process};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The first line of stderr is an error message, and nothing panicked.
fn assert_readable_error(out: &Output, needle: &str) {
    let err = stderr(out);
    assert!(!out.status.success(), "expected failure, stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains(needle),
        "unexpected stderr: {err}"
    );
}

#[test]
fn unreachable_server_fails_within_the_timeout() {
    // Bind a UDP port and keep it silent: nothing answers the handshake.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "https://127.0.0.1:{}/file",
        silent.local_addr().expect("addr").port()
    );
    let started = Instant::now();
    let out = run(&["client", &url, "--insecure", "--timeout", "1s", "--quiet"]);
    let elapsed = started.elapsed();
    assert_readable_error(&out, "no answer within 1s");
    assert_eq!(
        stderr(&out).lines().count(),
        1,
        "one line: {}",
        stderr(&out)
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[test]
fn bad_url_is_a_readable_error() {
    for (url, needle) in [
        ("ftp://host/x", "scheme must be https"),
        ("not a url", "invalid URL"),
        ("https://[::1/x", "invalid URL"),
    ] {
        let out = run(&["client", url, "--insecure"]);
        assert_readable_error(&out, needle);
    }
}

#[test]
fn bad_sizes_and_durations_are_readable_errors() {
    assert_readable_error(&run(&["demo", "--size", "ten"]), "invalid size `ten`");
    assert_readable_error(&run(&["demo", "--size", "10XB"]), "invalid size `10XB`");
    // One grammar everywhere: `sim --download` takes what `demo --size` takes.
    assert_readable_error(&run(&["sim", "--download", "10XB"]), "invalid size `10XB`");
    assert_readable_error(
        &run(&["client", "https://localhost/x", "--timeout", "5 parsecs"]),
        "invalid duration",
    );
    assert_readable_error(
        &run(&["client", "https://localhost/x", "--multipath", "both"]),
        "unknown multipath mode",
    );
    assert_readable_error(
        &run(&["client", "https://localhost/x", "--cc", "bbr9"]),
        "unknown congestion controller",
    );
}

#[test]
fn client_without_trust_anchor_is_refused() {
    assert_readable_error(&run(&["client", "https://127.0.0.1:1/x"]), "--insecure");
}

#[test]
fn server_with_missing_root_is_a_readable_error() {
    let out = run(&[
        "server",
        "--listen",
        "127.0.0.1:0",
        "--root",
        "/nonexistent/mpquic-root",
    ]);
    assert_readable_error(&out, "root directory /nonexistent/mpquic-root");
}

#[test]
fn demo_downloads_and_verifies() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("summary.json");
    let out = run(&[
        "demo",
        "--size",
        "2MB",
        "--paths",
        "2",
        "--multipath",
        "spns",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        stderr(&out)
    );
    assert!(stdout.contains("verified"), "{stdout}");
    assert!(stdout.contains("path 1 127.0.0.2:"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid json");
    assert_eq!(summary["bytes"], 2_000_000);
    assert_eq!(summary["design"], "spns");
    assert_eq!(summary["protocol"], "h3");
    assert_eq!(summary["status"], 200);
    assert_eq!(summary["paths"].as_array().map(Vec::len), Some(2));
}

/// Start `mpquic server ARGS` and read its port from "listening on ADDR".
fn start_server(args: &[&str]) -> (Process, u16) {
    let args: Vec<&str> = std::iter::once("server")
        .chain(args.iter().copied())
        .collect();
    let (server, addr) = start(&args, "listening on ");
    (server, port_of(&addr))
}

#[test]
fn server_and_client_processes_transfer_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(root.join("data.bin"), &data).expect("file");
    let cert = dir.path().join("cert.pem");
    let (server, port) = start_server(&[
        "--listen",
        "127.0.0.1:0",
        "--root",
        root.to_str().expect("utf-8"),
        "--cert-out",
        cert.to_str().expect("utf-8"),
    ]);
    // The server offers both protocols: HTTP/3 by default, HTTP/0.9 on request.
    for (alpn, host, status) in [
        (None, "127.0.0.1", Some(200)),
        (Some("hq-interop"), "localhost", None),
    ] {
        let protocol = alpn.unwrap_or("h3");
        let output = dir.path().join(format!("out-{protocol}.bin"));
        let json = dir.path().join(format!("summary-{protocol}.json"));
        let url = format!("https://{host}:{port}/data.bin");
        let mut args = vec![
            "client",
            &url,
            "--ca",
            cert.to_str().expect("utf-8"),
            "-o",
            output.to_str().expect("utf-8"),
            "--json",
            json.to_str().expect("utf-8"),
            "--timeout",
            "5s",
            "--path",
            "127.0.0.1:0",
        ];
        args.extend(alpn.iter().flat_map(|a| ["--alpn", a]));
        let out = run(&args);
        assert!(out.status.success(), "{protocol}: stderr: {}", stderr(&out));
        assert!(
            std::fs::read(&output).expect("output") == data,
            "{protocol}: downloaded file differs"
        );
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json"))
                .expect("valid json");
        assert_eq!(summary["bytes"], 3_000_000);
        assert_eq!(summary["protocol"], protocol);
        assert_eq!(summary["status"].as_u64(), status);
        // A missing file is a readable error (a 404 status, or a stream reset with 404).
        let missing = format!("https://{host}:{port}/missing");
        let mut args = vec![
            "client",
            &missing,
            "--ca",
            cert.to_str().expect("utf-8"),
            "--timeout",
            "5s",
        ];
        args.extend(alpn.iter().flat_map(|a| ["--alpn", a]));
        let out = run(&args);
        assert_readable_error(&out, "not found");
        if alpn.is_none() {
            assert_readable_error(&out, "404 Not Found");
        }
    }
    drop(server);
}

#[test]
fn lab_run_traces_flag_is_documented_and_checked() {
    let help = run(&["lab", "run", "--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("--traces <DIR>") && text.contains("Mahimahi"),
        "{text}"
    );
    let tmp = std::env::temp_dir().join(format!("mpquic-cli-no-traces-{}", std::process::id()));
    let missing = tmp.join("missing");
    let out = run(&[
        "lab",
        "run",
        "spns-vs-mpns",
        "--quick",
        "--out",
        tmp.join("out").to_str().expect("utf-8 path"),
        "--traces",
        missing.to_str().expect("utf-8 path"),
    ]);
    assert_readable_error(&out, "trace directory");
    assert!(
        !tmp.join("out").exists(),
        "nothing is written before the traces are checked"
    );
}

/// Exactly one line on stderr, an error containing `needle`, and exit code `code`.
fn assert_one_line_error(out: &Output, code: i32, needle: &str) {
    assert_readable_error(out, needle);
    assert_eq!(stderr(out).lines().count(), 1, "one line: {}", stderr(out));
    assert_eq!(out.status.code(), Some(code), "stderr: {}", stderr(out));
}

/// Transport values out of range are refused by `TransportConfig::validate` before any
/// packet is sent, as one line naming the flag, with exit code 2; the simulator refuses the
/// same values with the same message under the scenario key.
#[test]
fn bad_transport_flags_are_one_line_and_exit_code_2() {
    let url = "https://localhost:1/x";
    let cases: [(&[&str], &str); 5] = [
        (
            &["client", url, "--insecure", "--ack-range-limit", "100"],
            "--ack-range-limit: 100 is out of range: expected 1..=64",
        ),
        (
            &["client", url, "--insecure", "--ack-range-limit", "0"],
            "--ack-range-limit: 0 is out of range",
        ),
        (
            &["demo", "--mtu-ceiling", "1000"],
            "--mtu-ceiling: 1000 is out of range: expected 1200..=65527",
        ),
        (
            &[
                "server",
                "--listen",
                "127.0.0.1:0",
                "--root",
                ".",
                "--ack-range-limit",
                "65",
            ],
            "--ack-range-limit: 65 is out of range",
        ),
        (
            &[
                "sim",
                "--path",
                "rate=10mbit,rtt=20ms",
                "--ack-range-limit",
                "65",
            ],
            "transport.ack_range_limit: 65 is out of range: expected 1..=64",
        ),
    ];
    for (args, needle) in cases {
        assert_one_line_error(&run(args), 2, needle);
    }
}

/// A `--transport` file holds the keys of a scenario's `[transport]` table (the core's
/// schema): a bad value in it is one line naming the file, the position and the key, a value
/// out of range names the file and the key, and a flag overrides the file.
#[test]
fn transport_files_share_the_scenario_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let url = "https://localhost:1/x";
    let bad_name = file("bad-name.toml", "pacing = true\ncc = \"vegas\"\n");
    assert_one_line_error(
        &run(&["client", url, "--insecure", "--transport", &bad_name]),
        2,
        "bad-name.toml:2:6: cc: unknown congestion controller 'vegas'",
    );
    let out_of_range = file(
        "range.toml",
        "[streams]\nmax_streams_bidi = 2000000000000000000\n",
    );
    assert_one_line_error(
        &run(&["demo", "--transport", &out_of_range]),
        2,
        "range.toml: streams.max_streams_bidi: 2000000000000000000 is out of range",
    );
    let limit = file("limit.toml", "[ack]\ndefault_range_limit = 65\n");
    assert_one_line_error(
        &run(&["demo", "--transport", &limit]),
        2,
        "limit.toml: ack.default_range_limit: 65 is out of range",
    );
    assert_one_line_error(
        &run(&["demo", "--transport", &limit, "--ack-range-limit", "100"]),
        2,
        "--ack-range-limit: 100 is out of range",
    );
}

#[test]
fn bad_key_files_are_one_line_and_exit_code_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let short = dir.path().join("short.key");
    std::fs::write(&short, "00112233").expect("write");
    let not_hex = dir.path().join("not-hex.key");
    std::fs::write(&not_hex, format!("{}zz\n", "ab".repeat(31))).expect("write");
    let missing = dir.path().join("missing.key");
    for (option, file, needle) in [
        ("--reset-key", &short, "found 8 bytes"),
        ("--token-key", &not_hex, "64 hexadecimal characters"),
        ("--reset-key", &missing, "No such file"),
    ] {
        let out = run(&[
            "server",
            "--listen",
            "127.0.0.1:0",
            "--root",
            dir.path().to_str().expect("utf-8"),
            option,
            file.to_str().expect("utf-8"),
        ]);
        let name = format!("key file {}", file.display());
        assert_one_line_error(&out, 2, &name);
        assert!(stderr(&out).contains(needle), "{}", stderr(&out));
    }
}

#[test]
fn keygen_writes_a_private_hex_key_and_never_overwrites() {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = dir.path().join("k.hex");
    let out = run(&["keygen", key.to_str().expect("utf-8")]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = std::fs::read_to_string(&key).expect("key file");
    assert_eq!(text.len(), 65, "{text:?}");
    assert!(text.ends_with('\n') && text[..64].bytes().all(|b| b.is_ascii_hexdigit()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
    }
    let again = run(&["keygen", key.to_str().expect("utf-8")]);
    assert_one_line_error(&again, 2, "cannot create key file");
    assert_eq!(std::fs::read_to_string(&key).expect("key"), text);
    let other = dir.path().join("k2.hex");
    assert!(run(&["keygen", other.to_str().expect("utf-8")])
        .status
        .success());
    assert_ne!(std::fs::read_to_string(&other).expect("key"), text);
}

/// What a client of a server killed (no CONNECTION_CLOSE) and restarted on the same port with
/// `second_life` arguments sees when it next sends on its old connection: the first life ran
/// with `--reset-key KEY`. The client's idle timeout is `idle`.
fn client_of_restarted_server(second_life: &[&str], idle: Duration) -> (String, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("small"), [7u8; 1000]).expect("file");
    let key = dir.path().join("reset.key");
    assert!(run(&["keygen", key.to_str().expect("utf-8")])
        .status
        .success());
    let root = dir.path().to_str().expect("utf-8");
    let key = key.to_str().expect("utf-8");
    let (first, port) = start_server(&[
        "--listen",
        "127.0.0.1:0",
        "--root",
        root,
        "--reset-key",
        key,
    ]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        use mpquic::{config, hq, tls, Endpoint, TransportConfig};
        let server: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
        let client = Endpoint::client(&[([127, 0, 0, 1], 0).into()]).expect("client");
        let tls = tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("tls");
        let transport = TransportConfig::default().idle_timeout(idle);
        let conn = tokio::time::timeout(
            Duration::from_secs(10),
            client
                .connect_with(config::client(tls, transport), server, "localhost")
                .expect("connect"),
        )
        .await
        .expect("handshake in time")
        .expect("handshake");
        let mut body = hq::request(&conn, "/small").await.expect("request");
        assert_eq!(body.read_to_end(10_000).await.expect("body").len(), 1000);
        // A crash, not a shutdown: SIGKILL sends no CONNECTION_CLOSE.
        drop(first);
        let listen = format!("127.0.0.1:{port}");
        let mut args = vec!["--listen", listen.as_str(), "--root", root];
        args.extend(
            second_life
                .iter()
                .map(|a| if *a == "KEY" { key } else { *a }),
        );
        let (_second, _) = start_server(&args);
        let sent = Instant::now();
        // The next request's packets reach the new server, which knows no such connection.
        let _ = hq::request(&conn, "/small").await;
        let why = tokio::time::timeout(idle + Duration::from_secs(10), conn.closed())
            .await
            .expect("the connection ends by its idle timeout at the latest");
        (why.to_string(), sent.elapsed())
    })
}

#[test]
fn restarted_server_with_the_same_reset_key_resets_old_connections() {
    let idle = Duration::from_secs(30);
    let (why, after) = client_of_restarted_server(&["--reset-key", "KEY"], idle);
    assert!(why.contains("stateless reset"), "{why}");
    assert!(after < Duration::from_secs(5), "reset after {after:?}");
}

#[test]
fn restarted_server_with_another_reset_key_leaves_clients_to_time_out() {
    // The control of the test above: the new server's resets carry tokens the client does not
    // know, so only the idle timeout ends the connection.
    let idle = Duration::from_secs(3);
    let (why, after) = client_of_restarted_server(&[], idle);
    assert!(why.contains("idle timeout"), "{why}");
    assert!(after >= Duration::from_secs(2), "ended after {after:?}");
}

const SIM_OK: &str = "paths = [\"rate=20mbit,rtt=20ms\"]\n[workload]\ndownload = \"100KB\"\n";

fn scenario_file(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("s.toml");
    std::fs::write(&path, text).expect("scenario");
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn sim_exit_codes_follow_the_outcome() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ok = run(&["sim", &scenario_file(dir.path(), SIM_OK), "--quiet"]);
    assert!(ok.status.success(), "stderr: {}", stderr(&ok));
    // 100 KB cannot arrive within 10 ms of virtual time: the run fails, the command too.
    let json = dir.path().join("r.json");
    let failed = run(&[
        "sim",
        &scenario_file(dir.path(), &format!("time_limit = \"10ms\"\n{SIM_OK}")),
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    assert_one_line_error(&failed, 1, "the run did not complete (time_limit)");
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(
        stdout.contains("NOT COMPLETED"),
        "the summary still shows: {stdout}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid");
    assert_eq!(result["completed"], false, "the JSON is still written");
}

/// `--crypto sim` (issue 19): the simulator's stand-in packet protection gives the same result
/// as real crypto and is recorded in the JSON; it cannot be combined with `--real`.
#[test]
fn sim_crypto_option_is_recorded_and_not_for_real_sockets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = scenario_file(dir.path(), SIM_OK);
    let mut results = Vec::new();
    for crypto in ["real", "sim"] {
        let json = dir.path().join(format!("{crypto}.json"));
        let out = run(&[
            "sim",
            &file,
            "--quiet",
            "--crypto",
            crypto,
            "--json",
            json.to_str().expect("utf-8"),
        ]);
        assert!(out.status.success(), "stderr: {}", stderr(&out));
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid");
        assert_eq!(v["scenario"]["transport"]["crypto"], crypto);
        let obj = v.as_object_mut().expect("object");
        obj.remove("sim_wall_time_s");
        obj["scenario"]["transport"]
            .as_object_mut()
            .expect("transport")
            .remove("crypto");
        results.push(v);
    }
    assert_eq!(results[0], results[1], "same results with both");
    let refused = run(&["sim", &file, "--crypto", "sim", "--real"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--crypto"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn sim_rejects_invalid_values_when_the_file_loads() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (extra, needle) in [
        (
            "[transport.ack]\nack_delay_exponent = 21\n",
            "transport.ack.ack_delay_exponent: 21 is out of range",
        ),
        (
            "[transport.ack]\ndefault_range_limit = 0\n",
            "transport.ack.default_range_limit: 0 is out of range",
        ),
        (
            "[transport]\nmax_datagram_size = 1100\n",
            "transport.max_datagram_size",
        ),
        (
            "[transport]\nidle_timeout = \"500us\"\n",
            "transport.idle_timeout",
        ),
        ("[transport]\npace = true\n", "unknown field `pace`"),
        (
            "[transport]\ncc = \"vegas\"\n",
            "transport.cc: unknown congestion controller",
        ),
    ] {
        let file = scenario_file(dir.path(), &format!("{SIM_OK}{extra}"));
        let started = Instant::now();
        let out = run(&["sim", &file]);
        assert_one_line_error(&out, 2, needle);
        assert!(
            out.stdout.is_empty(),
            "nothing ran: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn output_paths_are_checked_before_the_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no/such/dir/r.json");
    let missing = missing.to_str().expect("utf-8");
    // A run long enough (10 MB at 1 Mbit/s: 80 s virtual) that doing it first would show.
    let slow = "paths = [\"rate=1mbit,rtt=20ms\"]\n[workload]\ndownload = \"10MB\"\n";
    let out = run(&["sim", &scenario_file(dir.path(), slow), "--json", missing]);
    assert_one_line_error(&out, 2, "--json");
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "no summary: nothing ran");
    let out = run(&["demo", "--size", "1MB", "--json", missing]);
    assert_one_line_error(&out, 2, "--json");
    assert!(out.stdout.is_empty(), "no transfer summary");
    let out = run(&[
        "client",
        "https://127.0.0.1:1/x",
        "--insecure",
        "-o",
        dir.path().to_str().expect("utf-8"),
    ]);
    assert_one_line_error(&out, 2, "is a directory");
}

/// `mpquic client URL --path 127.0.0.1 --path SECOND --json JSON`, which must succeed without
/// a warning; its JSON summary.
fn client_over_two_paths(url: &str, second: &str, json: &std::path::Path) -> serde_json::Value {
    let out = run(&[
        "client",
        url,
        "--insecure",
        "--quiet",
        "--timeout",
        "5s",
        "--path",
        "127.0.0.1",
        "--path",
        second,
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(!err.contains("warning"), "stderr: {err}");
    serde_json::from_str(&std::fs::read_to_string(json).expect("json")).expect("json")
}

/// Issue 16: `--path LOCAL=REMOTE` chooses each path's remote. The second path leaves from
/// 127.0.0.2 (any port) to the server's address given explicitly; both paths are validated.
/// A path to a remote that never answers fails with a readable warning, and the transfer
/// still succeeds on the other path.
#[test]
fn client_paths_choose_their_remote_and_report_failures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("data.bin"), vec![7u8; 500_000]).expect("file");
    let (server, port) = start_server(&[
        "--listen",
        "127.0.0.1:0",
        "--root",
        root.to_str().expect("utf-8"),
    ]);
    let url = format!("https://localhost:{port}/data.bin");
    let json = dir.path().join("summary.json");
    let second = format!("127.0.0.2=127.0.0.1:{port}");
    let summary = client_over_two_paths(&url, &second, &json);
    let paths = summary["paths"].as_array().expect("paths");
    assert_eq!(paths.len(), 2, "{summary}");
    assert_eq!(
        paths[1]["local"]
            .as_str()
            .map(|l| l.starts_with("127.0.0.2:")),
        Some(true)
    );
    assert_eq!(paths[1]["remote"], format!("127.0.0.1:{port}"));

    // A silent remote: path validation fails (RFC 9000 §8.2.4) and the client says so.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let unreachable = format!("127.0.0.2={}", silent.local_addr().expect("silent address"));
    let out = run(&[
        "client",
        &url,
        "--insecure",
        "--quiet",
        "--timeout",
        "15s",
        "--path",
        "127.0.0.1",
        "--path",
        &unreachable,
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    let warning = err
        .lines()
        .find(|l| l.contains("failed validation"))
        .unwrap_or_else(|| panic!("no readable failure line: {err}"));
    assert!(
        warning.starts_with("warning: path from 127.0.0.2:"),
        "{warning}"
    );
    drop(server);
}

#[test]
fn bad_path_values_are_one_readable_line() {
    for (value, needle) in [
        ("127.0.0.2=nowhere", "invalid address `nowhere`"),
        ("127.0.0.2=127.0.0.1", "needs a port"),
        ("::1=127.0.0.1:4433", "different families"),
    ] {
        let out = run(&[
            "client",
            "https://localhost:4433/x",
            "--insecure",
            "--path",
            "127.0.0.1",
            "--path",
            value,
        ]);
        assert_one_line_error(&out, 2, needle);
    }
    let url = "https://localhost:4433/x";
    let one = run(&["client", url, "--insecure", "--race", "--path", "127.0.0.1"]);
    assert_one_line_error(&one, 2, "--race needs two --path or more");
    let with_0rtt = run(&["client", url, "--insecure", "--race", "--0rtt"]);
    assert_readable_error(&with_0rtt, "--race");
    assert_eq!(with_0rtt.status.code(), Some(2));
}

/// A free UDP port on `ip` (bound and released: another process could take it in between,
/// which these tests accept).
fn free_port(ip: &str) -> Option<u16> {
    let socket = std::net::UdpSocket::bind((ip, 0)).ok()?;
    Some(socket.local_addr().ok()?.port())
}

/// Issue 16: `mpquic server --advertise` puts its other address in preferred_address (RFC 9000
/// §18.2), and `mpquic client --path ::1` (no remote) beside an IPv4 path 0 goes there, although
/// the URL names an IPv4 address only.
#[test]
fn client_path_without_remote_goes_to_the_advertised_address() {
    let (Some(p4), Some(p6)) = (free_port("127.0.0.1"), free_port("::1")) else {
        eprintln!("skipped: no IPv6 loopback");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("data.bin"), vec![7u8; 300_000]).expect("file");
    let (listen4, listen6) = (format!("127.0.0.1:{p4}"), format!("[::1]:{p6}"));
    let (server, port) = start_server(&[
        "--listen",
        &listen4,
        "--listen",
        &listen6,
        // An IP alone: the port of the --listen address with that IP.
        "--advertise",
        "::1",
        "--root",
        root.to_str().expect("utf-8"),
    ]);
    assert_eq!(port, p4);
    let url = format!("https://127.0.0.1:{p4}/data.bin");
    let json = dir.path().join("summary.json");
    let summary = client_over_two_paths(&url, "::1", &json);
    let paths = summary["paths"].as_array().expect("paths");
    assert_eq!(paths.len(), 2, "{summary}");
    assert_eq!(paths[0]["remote"], listen4);
    assert_eq!(paths[1]["remote"], listen6, "{summary}");
    drop(server);
}

#[test]
fn bad_advertise_values_are_one_readable_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_str().expect("utf-8");
    for (values, needle) in [
        (
            &["127.0.0.2:1", "127.0.0.3:2"][..],
            "at most one IPv4 address",
        ),
        (&["0.0.0.0:4433"][..], "unspecified"),
        (&["127.0.0.9"][..], "give a port"),
        (&["nowhere"][..], "invalid address `nowhere`"),
    ] {
        let mut args = vec!["server", "--listen", "127.0.0.1:0", "--root", root];
        for v in values {
            args.extend(["--advertise", v]);
        }
        let out = run(&args);
        assert_one_line_error(&out, 2, needle);
    }
}

#[test]
fn a_server_without_certificate_compression_still_serves() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), b"hello").expect("file");
    let cert = dir.path().join("cert.pem");
    let (server, port) = start_server(&[
        "--listen",
        "127.0.0.1:0",
        "--root",
        dir.path().to_str().expect("utf-8"),
        "--cert-out",
        cert.to_str().expect("utf-8"),
        "--no-cert-compression",
    ]);
    let output = dir.path().join("out.txt");
    let url = format!("https://localhost:{port}/a.txt");
    let out = run(&[
        "client",
        &url,
        "--ca",
        cert.to_str().expect("utf-8"),
        "-o",
        output.to_str().expect("utf-8"),
        "--timeout",
        "5s",
        "--alpn",
        "hq-interop",
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(std::fs::read(&output).expect("output"), b"hello");
    drop(server);
}
