//! What an emulator is asked to do: the addresses, and one [`EmulatedPath`]
//! per client source address, each a `--path` spec of `mpquic sim` plus
//! `from=IP`.

use std::io;
use std::net::{IpAddr, SocketAddr};

use mpquic_netsim::{PathSpec, ResolvedPath};

/// Why an emulator could not start. Every variant but [`EmulateError::Io`]
/// is about the input (a bad spec, an address that cannot be used).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulateError {
    /// A path argument does not parse or resolve.
    #[error("--path #{index} `{arg}`: {message}")]
    Path {
        /// 1-based position of the path.
        index: usize,
        /// The argument as given.
        arg: String,
        /// What is wrong.
        message: String,
    },
    /// The configuration as a whole is inconsistent.
    #[error("{0}")]
    Config(String),
    /// A socket could not be bound.
    #[error("cannot {what} {addr}: {}", bind_reason(.source, *.addr))]
    Bind {
        /// `listen on`, `relay to`...
        what: &'static str,
        /// The address.
        addr: SocketAddr,
        /// The system's error.
        source: io::Error,
    },
    /// Something else failed (a thread could not start).
    #[error("{0}")]
    Io(String),
}

impl EmulateError {
    /// Whether the error comes from the input rather than from the system.
    pub fn is_input(&self) -> bool {
        !matches!(self, EmulateError::Io(_))
    }
}

/// A readable reason for the common bind failures.
fn bind_reason(e: &io::Error, addr: SocketAddr) -> String {
    match e.kind() {
        io::ErrorKind::AddrInUse => "address already in use".to_owned(),
        io::ErrorKind::AddrNotAvailable => {
            format!("{} is not an address of this machine", addr.ip())
        }
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}

/// UDP payload an emulated path carries when its spec names no `mtu`: a 1500-byte IPv4
/// packet less its IP (20) and UDP (8) headers, as an Ethernet path would. Larger datagrams
/// (a same-host path's MTU probes) are dropped as such a network would drop them.
pub const DEFAULT_MTU: u64 = 1472;

/// One emulated path: which client datagrams take it and its two links.
#[derive(Debug, Clone, PartialEq)]
pub struct EmulatedPath {
    /// Client source IP whose datagrams take this path; `None` takes every
    /// source no other path names.
    pub from: Option<IpAddr>,
    /// `up` carries client-to-server datagrams, `down` the replies.
    pub links: ResolvedPath,
    /// The spec as given (for reports).
    pub spec: String,
}

impl EmulatedPath {
    /// A path for datagrams from `from` over the links of a resolved spec.
    pub fn new(from: Option<IpAddr>, links: ResolvedPath, spec: impl Into<String>) -> Self {
        Self {
            from,
            links,
            spec: spec.into(),
        }
    }

    /// Parses `from=IP,SPEC` (SPEC in the grammar of `mpquic sim --path`,
    /// `from=` anywhere among its items) and loads its traces. `index` is
    /// the 1-based position for messages.
    pub fn parse(arg: &str, index: usize) -> Result<Self, EmulateError> {
        let err = |message: String| EmulateError::Path {
            index,
            arg: arg.to_owned(),
            message,
        };
        let (from, spec) = split_from(arg).map_err(err)?;
        let mut parsed = PathSpec::parse(&spec).map_err(|e| err(e.to_string()))?;
        // A network between hosts carries 1500-byte IP packets unless the spec says otherwise
        // (`mtu=inf` lifts it); the simulator's default is no limit.
        parsed.shared.mtu.get_or_insert(Some(DEFAULT_MTU));
        let links = parsed.resolve().map_err(|e| err(e.to_string()))?;
        Ok(Self::new(from, links, arg))
    }
}

/// Takes the `from=IP` item out of a path argument: `(IP, rest of the spec)`.
fn split_from(arg: &str) -> Result<(Option<IpAddr>, String), String> {
    let mut from = None;
    let mut rest = Vec::new();
    for item in arg.split(',') {
        match item.split_once('=') {
            Some((k, v)) if k.trim() == "from" => {
                if from.is_some() {
                    return Err("from is given more than once".to_owned());
                }
                let ip = v.trim().parse::<IpAddr>().map_err(|_| {
                    format!(
                        "from: invalid value `{}`: expected an IP address such as 127.0.0.2",
                        v.trim()
                    )
                })?;
                from = Some(ip.to_canonical());
            }
            _ => rest.push(item),
        }
    }
    Ok((from, rest.join(",")))
}

/// Everything an [`Emulator`](crate::Emulator) needs.
#[derive(Debug, Clone, PartialEq)]
pub struct EmulatorConfig {
    /// Where clients send (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Where datagrams are relayed to.
    pub server: SocketAddr,
    /// The paths; datagrams of a source no path takes are dropped.
    pub paths: Vec<EmulatedPath>,
    /// Seed of the links' loss and jitter streams: path `i`'s up link
    /// draws the streams of simulator link `2i`, its down link those of
    /// `2i + 1`, as in `mpquic sim` and the lab.
    pub seed: u64,
}

impl EmulatorConfig {
    /// Checks what can be checked without sockets.
    pub fn validate(&self) -> Result<(), EmulateError> {
        if self.paths.is_empty() {
            return Err(EmulateError::Config("give at least one --path".to_owned()));
        }
        if self.server.ip().is_unspecified() || self.server.port() == 0 {
            return Err(EmulateError::Config(format!(
                "--server {}: give a concrete address and port",
                self.server
            )));
        }
        let defaults = self.paths.iter().filter(|p| p.from.is_none()).count();
        if defaults > 1 {
            return Err(EmulateError::Config(
                "only one --path may omit from=IP (it takes every other source)".to_owned(),
            ));
        }
        for (i, p) in self.paths.iter().enumerate() {
            let Some(ip) = p.from else { continue };
            if self.paths[..i].iter().any(|q| q.from == Some(ip)) {
                return Err(EmulateError::Config(format!(
                    "from={ip} is given to more than one path"
                )));
            }
            // A dual-stack wildcard socket receives IPv4 clients as mapped addresses.
            let reachable = match (ip, self.listen.ip()) {
                (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => true,
                (IpAddr::V4(_), IpAddr::V6(l)) => l.is_unspecified(),
                (IpAddr::V6(_), IpAddr::V4(_)) => false,
            };
            if !reachable {
                return Err(EmulateError::Config(format!(
                    "from={ip}: a client of that family cannot reach --listen {}",
                    self.listen
                )));
            }
        }
        Ok(())
    }

    /// The path a datagram from `source` takes: the one naming its IP, else
    /// the one without `from=`.
    pub fn path_of(&self, source: IpAddr) -> Option<usize> {
        let ip = source.to_canonical();
        self.paths
            .iter()
            .position(|p| p.from == Some(ip))
            .or_else(|| self.paths.iter().position(|p| p.from.is_none()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(paths: &[&str]) -> EmulatorConfig {
        EmulatorConfig {
            listen: "127.0.0.1:0".parse().expect("addr"),
            server: "127.0.0.1:4433".parse().expect("addr"),
            paths: paths
                .iter()
                .enumerate()
                .map(|(i, p)| EmulatedPath::parse(p, i + 1).expect("path"))
                .collect(),
            seed: 1,
        }
    }

    #[test]
    fn from_is_taken_out_of_the_spec() {
        let p = EmulatedPath::parse("rate=20mbit,from=127.0.0.2,delay=10ms", 1).expect("parse");
        assert_eq!(p.from, Some("127.0.0.2".parse().expect("ip")));
        assert_eq!(p.links.up.delay, 10_000_000);
        let p = EmulatedPath::parse("from=127.0.0.3,rate=1mbit,loss=ge:1%,10%", 1).expect("ge");
        assert_eq!(p.from, Some("127.0.0.3".parse().expect("ip")));
    }

    #[test]
    fn paths_carry_an_ethernet_mtu_unless_the_spec_names_one() {
        let mtu = |spec: &str| {
            let p = EmulatedPath::parse(spec, 1).expect("parse");
            (p.links.up.mtu, p.links.down.mtu)
        };
        assert_eq!(mtu("rate=20mbit"), (Some(1472), Some(1472)));
        assert_eq!(mtu("rate=20mbit,mtu=9000"), (Some(9000), Some(9000)));
        assert_eq!(mtu("rate=20mbit,mtu=inf"), (None, None));
        assert_eq!(mtu("rate=20mbit,down.mtu=1280"), (Some(1472), Some(1280)));
    }

    #[test]
    fn bad_arguments_name_the_path_and_the_problem() {
        let e = EmulatedPath::parse("from=127.0.0.2,rate=fast", 2).unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("--path #2 `from=127.0.0.2,rate=fast`: rate"),
            "{m}"
        );
        assert!(e.is_input());
        let m = EmulatedPath::parse("from=localhost,rate=1mbit", 1)
            .unwrap_err()
            .to_string();
        assert!(m.contains("from: invalid value `localhost`"), "{m}");
        let m = EmulatedPath::parse("from=127.0.0.2,from=127.0.0.3,rate=1mbit", 1)
            .unwrap_err()
            .to_string();
        assert!(m.contains("more than once"), "{m}");
        let m = EmulatedPath::parse("from=127.0.0.2,trace=/no/such/file", 1)
            .unwrap_err()
            .to_string();
        assert!(m.contains("/no/such/file"), "{m}");
    }

    #[test]
    fn paths_are_chosen_by_source_ip() {
        let c = cfg(&["from=127.0.0.2,rate=1mbit", "rate=2mbit"]);
        c.validate().expect("valid");
        assert_eq!(c.path_of("127.0.0.2".parse().expect("ip")), Some(0));
        assert_eq!(c.path_of("127.0.0.9".parse().expect("ip")), Some(1));
        assert_eq!(c.path_of("::ffff:127.0.0.2".parse().expect("ip")), Some(0));
        let c = cfg(&["from=127.0.0.2,rate=1mbit"]);
        assert_eq!(c.path_of("127.0.0.3".parse().expect("ip")), None);
    }

    #[test]
    fn inconsistent_configurations_are_refused() {
        assert!(cfg(&["rate=1mbit", "rate=2mbit"]).validate().is_err());
        assert!(
            cfg(&["from=127.0.0.2,rate=1mbit", "from=127.0.0.2,rate=2mbit"])
                .validate()
                .is_err()
        );
        assert!(cfg(&[]).validate().is_err());
        let mut c = cfg(&["rate=1mbit"]);
        c.server = "0.0.0.0:4433".parse().expect("addr");
        assert!(c.validate().is_err());
        let c = cfg(&["from=::1,rate=1mbit"]);
        assert!(c.validate().is_err());
    }
}
