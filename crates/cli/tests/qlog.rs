//! `mpquic client --qlog DIR` and a server logging through `QLOGDIR` (issue 17): one JSON-SEQ
//! file per connection, named by the original destination CID, whose records all parse, the
//! header first, and whose events validate against tests/data/qlog-events.schema.json; the
//! client's packets travel on both paths.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use common::{mpquic, port_of, start_command, Process};

/// `mpquic server` with QLOGDIR set, and its port (from "listening on ADDR").
fn start_server(root: &Path, cert: &Path, qlog_dir: &Path) -> (Process, u16) {
    let mut cmd = mpquic();
    cmd.args(["server", "--listen", "127.0.0.1:0", "--root"])
        .arg(root)
        .arg("--cert-out")
        .arg(cert)
        .env("QLOGDIR", qlog_dir);
    let (server, addr) = start_command(cmd, "listening on ");
    (server, port_of(&addr))
}

fn sqlog_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("qlog dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sqlog"))
        .collect();
    files.sort();
    files
}

/// Every record of a JSON-SEQ file: RS first, a line feed last, JSON in between.
fn records(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).expect("read qlog");
    assert_eq!(
        bytes.first(),
        Some(&0x1e),
        "{}: starts with RS",
        path.display()
    );
    bytes
        .split(|&b| b == 0x1e)
        .skip(1)
        .map(|r| {
            assert_eq!(r.last(), Some(&b'\n'), "record ends with a line feed");
            serde_json::from_slice(r)
                .unwrap_or_else(|e| panic!("{}: bad record {e}", path.display()))
        })
        .collect()
}

/// The event schema (JSON Schema draft 2020-12), compiled once per test.
struct EventSchema {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

fn schema() -> EventSchema {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qlog-events.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
    let location = "https://mpquic.invalid/qlog-events.schema.json";
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource(location, schema)
        .expect("the schema's own location");
    let mut schemas = boon::Schemas::new();
    let index = compiler
        .compile(location, &mut schemas)
        .unwrap_or_else(|e| panic!("a valid schema: {e:#}"));
    EventSchema { schemas, index }
}

impl EventSchema {
    fn is_valid(&self, event: &Value) -> bool {
        self.schemas.validate(event, self.index).is_ok()
    }
}

/// The header record (draft-ietf-quic-qlog-main-schema §"QlogFileSeq schema").
fn check_header(header: &Value, side: &str, odcid: &str) {
    assert_eq!(header["qlog_format"], "JSON-SEQ");
    assert_eq!(
        header["file_schema"],
        "urn:ietf:params:qlog:file:sequential"
    );
    assert_eq!(header["serialization_format"], "application/qlog+json-seq");
    assert!(header["qlog_version"].is_string());
    let trace = &header["trace"];
    assert_eq!(trace["vantage_point"]["type"], side);
    assert_eq!(trace["common_fields"]["group_id"], odcid);
    assert_eq!(trace["common_fields"]["time_format"], "relative_to_epoch");
    assert!(trace["common_fields"]["reference_time"]["wall_clock_time"].is_string());
    assert!(trace["event_schemas"][0]
        .as_str()
        .is_some_and(|s| s.starts_with("urn:ietf:params:qlog:events:quic")));
}

/// Validates a trace's events; returns the path IDs of its packet events.
fn check_events(schema: &EventSchema, events: &[Value]) -> BTreeSet<u64> {
    let mut paths = BTreeSet::new();
    for event in events {
        if let Err(e) = schema.schemas.validate(event, schema.index) {
            panic!("{event}: {e:#}");
        }
        if matches!(
            event["name"].as_str(),
            Some("quic:packet_sent" | "quic:packet_received")
        ) {
            paths.insert(event["data"]["path_id"].as_u64().expect("path_id"));
        }
    }
    let names: BTreeSet<&str> = events.iter().filter_map(|e| e["name"].as_str()).collect();
    for needed in [
        "quic:connection_started",
        "quic:parameters_set",
        "quic:connection_state_updated",
        "quic:recovery_metrics_updated",
        "quic:key_updated",
        "quic:stream_data_moved",
    ] {
        assert!(names.contains(needed), "no {needed} in {names:?}");
    }
    paths
}

#[test]
fn client_and_server_write_schema_valid_qlogs_over_two_paths() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("data.bin"), vec![7u8; 2_000_000]).expect("file");
    let cert = dir.path().join("cert.pem");
    let (client_qlog, server_qlog) = (dir.path().join("qc"), dir.path().join("qs"));
    let (server, port) = start_server(&root, &cert, &server_qlog);
    let out = mpquic()
        .arg("client")
        .arg(format!("https://localhost:{port}/data.bin"))
        .arg("--ca")
        .arg(&cert)
        .arg("-o")
        .arg(dir.path().join("out.bin"))
        .args([
            "--timeout",
            "5s",
            "--path",
            "127.0.0.1:0",
            "--path",
            "127.0.0.1:0",
        ])
        .arg("--qlog")
        .arg(&client_qlog)
        .env_remove("QLOGDIR")
        .stdin(Stdio::null())
        .output()
        .expect("run client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(server);

    let validator = schema();
    let client_files = sqlog_files(&client_qlog);
    assert_eq!(client_files.len(), 1, "{client_files:?}");
    let name = client_files[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let odcid = name
        .strip_suffix("_client.sqlog")
        .expect("<odcid>_client.sqlog");
    assert!(
        odcid.len() >= 16 && odcid.bytes().all(|b| b.is_ascii_hexdigit()),
        "{name}"
    );
    let client = records(&client_files[0]);
    check_header(&client[0], "client", odcid);
    let paths = check_events(&validator, &client[1..]);
    assert!(
        paths.contains(&0) && paths.contains(&1),
        "client packets on paths {paths:?}"
    );

    // The server names its file by the same original destination CID.
    let server_file = server_qlog.join(format!("{odcid}_server.sqlog"));
    let server = records(&server_file);
    check_header(&server[0], "server", odcid);
    let paths = check_events(&validator, &server[1..]);
    assert!(
        paths.contains(&0) && paths.contains(&1),
        "server packets on paths {paths:?}"
    );
}

#[test]
fn the_schema_rejects_events_missing_required_fields() {
    let validator = schema();
    let good = serde_json::json!({"time": 1.5, "name": "quic:packet_lost",
        "data": {"header": {"packet_type": "1RTT", "packet_number": 3}, "path_id": 1}});
    assert!(validator.is_valid(&good));
    let mut no_path = good.clone();
    no_path["data"].as_object_mut().unwrap().remove("path_id");
    assert!(!validator.is_valid(&no_path), "path_id is required");
    let bad_frame = serde_json::json!({"time": 0, "name": "quic:packet_sent", "data": {
        "header": {"packet_type": "1RTT", "packet_number": 0}, "path_id": 0,
        "frames": [{"frame_type": "path_abandon", "error_code": 0}]}});
    assert!(
        !validator.is_valid(&bad_frame),
        "path_abandon needs its path_id"
    );
    let unknown = serde_json::json!({"time": 0, "name": "transport:packet_sent", "data": {}});
    assert!(!validator.is_valid(&unknown), "only the quic: namespace");
}
