//! Running the `mpquic` binary from the CLI tests: one-shot commands and long-running
//! processes (servers, the emulator) that are killed when the test drops them.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

/// `mpquic` with no arguments yet.
pub fn mpquic() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpquic"))
}

/// Runs `mpquic ARGS` to completion, stdin closed.
pub fn run(args: &[&str]) -> Output {
    mpquic()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mpquic")
}

/// A child process, killed on drop.
pub struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `mpquic ARGS` and returns the address after `marker` on the first stdout line that
/// contains it (e.g. "listening on ").
pub fn start(args: &[&str], marker: &str) -> (Process, String) {
    let mut cmd = mpquic();
    cmd.args(args);
    start_command(cmd, marker)
}

/// [`start`] for a prepared command (extra environment, paths as arguments). Stdout keeps
/// being drained so the child never blocks on a full pipe.
pub fn start_command(mut cmd: Command, marker: &str) -> (Process, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start mpquic");
    let stdout = child.stdout.take().expect("stdout");
    let process = Process(child);
    let mut lines = BufReader::new(stdout).lines();
    let line = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?} from {cmd:?}"));
    std::thread::spawn(move || lines.for_each(drop));
    let rest = &line[line.find(marker).expect("marker") + marker.len()..];
    let addr = rest.split([' ', ',']).next().expect("address").to_owned();
    (process, addr)
}

/// The port of "HOST:PORT".
pub fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {addr:?}"))
}

/// A directory `root` under `dir` holding `name`: `len` bytes of a fixed pseudo-random pattern.
/// Returns the root's path (as an argument) and the file's contents.
pub fn served_file(dir: &std::path::Path, name: &str, len: u32) -> (String, Vec<u8>) {
    let root = dir.join("root");
    std::fs::create_dir_all(&root).expect("root");
    let data: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(root.join(name), &data).expect("file");
    (root.to_str().expect("utf-8").to_owned(), data)
}

/// `mpquic server --listen 127.0.0.1:0 --root ROOT --multipath MODE`: the process and the
/// address it listens on.
pub fn start_file_server(root: &str, multipath: &str) -> (Process, String) {
    start(
        &[
            "server",
            "--listen",
            "127.0.0.1:0",
            "--root",
            root,
            "--multipath",
            multipath,
        ],
        "listening on ",
    )
}
