//! Parsing of human-friendly sizes (`10MB`, `512KiB`, `1.5G`) and durations (`5s`, `250ms`).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Parse a byte size (`10MB`, `512KiB`, `1.5GB`, `10m`, a bare number of bytes): the grammar of
/// scenario files and path specs (`mpquic_lab::units`), so every command accepts the same.
pub fn parse_size(s: &str) -> Result<u64, String> {
    s.parse::<mpquic_lab::units::ByteSize>().map(|b| b.bytes())
}

/// Parse a duration (`5s`, `250ms`, `2min`, `1h`): the grammar of scenario files and path specs.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    s.parse::<mpquic_lab::units::SimDuration>()
        .map(|d| Duration::from_nanos(d.nanos()))
}

/// Parse a socket address: `IP:PORT`, `[IPv6]:PORT`, an IP alone (any port: `127.0.0.2`), or
/// `HOST:PORT` resolved through the system resolver (`localhost:4433`; the first address).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let t = s.trim();
    if let Ok(addr) = t.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bare = t.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    let shape = "expected IP:PORT, [IPv6]:PORT, an IP address alone or HOST:PORT";
    if !t.contains(':') {
        return Err(format!("invalid address `{s}`: {shape}"));
    }
    match t.to_socket_addrs() {
        Ok(mut addrs) => addrs
            .next()
            .ok_or_else(|| format!("invalid address `{s}`: the name has no address")),
        Err(e) => Err(format!("invalid address `{s}`: {e} ({shape})")),
    }
}

/// A size for humans: `10.0 MB`, `512 B`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("10m"), Ok(10_000_000));
        assert_eq!(parse_size("512KiB"), Ok(524_288));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("42"), Ok(42));
        assert_eq!(parse_size("3 mib"), Ok(3 << 20));
        assert!(parse_size("ten")
            .unwrap_err()
            .contains("invalid size `ten`"));
        assert!(parse_size("10XB")
            .unwrap_err()
            .contains("expected a number"));
        assert!(parse_size("").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5min"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("10")
            .unwrap_err()
            .contains("ms, s, min or h"));
        assert!(parse_duration("5 parsecs")
            .unwrap_err()
            .contains("invalid duration"));
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("127.0.0.2"), Ok("127.0.0.2:0".parse().unwrap()));
        assert_eq!(parse_addr("[::1]"), Ok("[::1]:0".parse().unwrap()));
        assert_eq!(parse_addr("[::1]:443"), Ok("[::1]:443".parse().unwrap()));
        let local = parse_addr("localhost:4433").expect("localhost resolves");
        assert!(local.ip().is_loopback() && local.port() == 4433, "{local}");
        assert!(parse_addr("nonsense")
            .unwrap_err()
            .contains("invalid address"));
        assert!(parse_addr("127.0.0.1:99999").is_err());
    }

    #[test]
    fn one_grammar_for_every_command() {
        for text in ["10m", "512KiB", "1.5GB", "7b"] {
            assert_eq!(
                parse_size(text).ok(),
                mpquic_lab::units::parse_size(text),
                "{text}"
            );
        }
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(10_000_000), "10.00 MB");
    }
}
