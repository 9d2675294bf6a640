//! The `mpquic` binary: errors are one readable line with a non-zero exit code, never a panic
//! or a hang; the demo and a server/client pair work end to end.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn mpquic() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpquic"))
}

fn run(args: &[&str]) -> Output {
    mpquic()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mpquic")
}

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
    assert_readable_error(&run(&["demo", "--size", "ten"]), "invalid size 'ten'");
    assert_readable_error(&run(&["demo", "--size", "10XB"]), "unknown unit");
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
    assert_eq!(summary["paths"].as_array().map(Vec::len), Some(2));
}

/// A server process, killed on drop.
struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
    let mut child = mpquic()
        .args([
            "server",
            "--listen",
            "127.0.0.1:0",
            "--root",
            root.to_str().expect("utf-8"),
            "--cert-out",
            cert.to_str().expect("utf-8"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start server");
    let stdout = child.stdout.take().expect("stdout");
    let server = ServerProcess(child);
    let first = BufReader::new(stdout)
        .lines()
        .next()
        .expect("a line")
        .expect("read");
    let addr = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
    let port = addr.rsplit(':').next().expect("port");
    let output = dir.path().join("out.bin");
    let json = dir.path().join("summary.json");
    let url = format!("https://localhost:{port}/data.bin");
    let out = run(&[
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
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        std::fs::read(&output).expect("output") == data,
        "downloaded file differs"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid json");
    assert_eq!(summary["bytes"], 3_000_000);
    // A missing file is a readable error.
    let out = run(&[
        "client",
        &format!("https://localhost:{port}/missing"),
        "--ca",
        cert.to_str().expect("utf-8"),
        "--timeout",
        "5s",
    ]);
    assert_readable_error(&out, "not found");
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
