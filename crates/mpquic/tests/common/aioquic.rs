//! aioquic (Python) as a third interop peer: `interop/aioquic/peer.py` run from the virtual
//! environment that `interop/aioquic/setup.sh` creates (once) under `target/`.
//!
//! `MPQUIC_SKIP_AIOQUIC=1` skips the tests that need it (a machine without Python 3 or without
//! access to PyPI); otherwise a failed set-up fails those tests with the installer's message.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::{addr, within};

/// How long the Python client may run (its own limit, under the tests' [`super::TEST_TIMEOUT`]).
const CLIENT_TIMEOUT_S: &str = "15";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script() -> PathBuf {
    workspace().join("interop/aioquic/peer.py")
}

/// The interpreter of the peer's virtual environment, installed on first use; None when
/// `MPQUIC_SKIP_AIOQUIC` is set (the caller returns early).
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    if std::env::var_os("MPQUIC_SKIP_AIOQUIC").is_some_and(|v| v == "1") {
        eprintln!("MPQUIC_SKIP_AIOQUIC=1: aioquic interop test skipped");
        return None;
    }
    let python = PYTHON.get_or_init(|| {
        let out = std::process::Command::new("bash")
            .arg(workspace().join("interop/aioquic/setup.sh"))
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run interop/aioquic/setup.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "interop/aioquic/setup.sh failed ({}); set MPQUIC_SKIP_AIOQUIC=1 to skip",
                out.status
            ));
        }
        Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    });
    Some(python.clone().expect("aioquic peer set-up"))
}

/// An aioquic server on 127.0.0.1 serving the files of a directory (hq-interop), answering
/// other requests with their length and echoing DATAGRAM frames. Killed on drop.
pub struct Server {
    pub addr: SocketAddr,
    _child: Child,
}

impl Server {
    /// Start it with the extra `peer.py server` options `args` (`--retry`, ...).
    pub async fn start(python: &Path, root: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(python)
            .arg(script())
            .args(["server", "--root"])
            .arg(root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the aioquic server");
        let stdout = child.stdout.take().expect("server stdout");
        let line = within("aioquic server start", async {
            BufReader::new(stdout).lines().next_line().await
        })
        .await
        .expect("read the server's first line")
        .expect("the aioquic server exited before listening");
        let port = line
            .strip_prefix("listening ")
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("unexpected first line from the aioquic server: {line}"));
        Self {
            addr: addr(&format!("127.0.0.1:{port}")),
            _child: child,
        }
    }
}

/// What one run of the aioquic client reported, and the bodies it downloaded (in the order of
/// its `--get` options).
#[derive(Debug)]
pub struct ClientRun {
    pub report: serde_json::Value,
    pub bodies: Vec<Vec<u8>>,
}

impl ClientRun {
    pub fn flag(&self, key: &str) -> bool {
        self.report[key]
            .as_bool()
            .unwrap_or_else(|| panic!("no {key} in {}", self.report))
    }

    pub fn number(&self, key: &str) -> f64 {
        self.report[key]
            .as_f64()
            .unwrap_or_else(|| panic!("no {key} in {}", self.report))
    }

    /// The address-validation tokens (NEW_TOKEN frames) the client received, hex-encoded.
    pub fn tokens(&self) -> Vec<String> {
        self.report["tokens"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Run the aioquic client against `server` with `peer.py client` options `args` (`--get PATH`
/// once per download, ...); panics with the client's error line when it fails.
pub async fn run_client(python: &Path, server: SocketAddr, args: &[&str]) -> ClientRun {
    let out_dir = tempfile::tempdir().expect("output dir");
    let output = within(
        "aioquic client",
        Command::new(python)
            .arg(script())
            .args(["client", "--host", &server.ip().to_string(), "--port"])
            .arg(server.port().to_string())
            .args(["--timeout", CLIENT_TIMEOUT_S, "--out"])
            .arg(out_dir.path())
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("run the aioquic client");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "aioquic client {args:?} failed ({}): {stderr}",
        output.status
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let report: serde_json::Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("aioquic client report {last:?}: {e}"));
    let count = report["lengths"].as_array().map_or(0, Vec::len);
    let bodies = (0..count)
        .map(|i| std::fs::read(out_dir.path().join(format!("body-{i}"))).expect("body file"))
        .collect();
    ClientRun { report, bodies }
}
