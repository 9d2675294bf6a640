//! Stream identifiers (RFC 9000 §2.1).

use std::fmt;

/// Which endpoint: the client or the server.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The endpoint that initiated the connection.
    Client = 0,
    /// The endpoint that accepted the connection.
    Server = 1,
}

impl Side {
    /// Whether this is the client.
    pub fn is_client(self) -> bool {
        self == Side::Client
    }

    /// Whether this is the server.
    pub fn is_server(self) -> bool {
        self == Side::Server
    }

    /// The other side.
    pub fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// Stream directionality.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    /// Bidirectional.
    Bi = 0,
    /// Unidirectional (only the initiator sends).
    Uni = 1,
}

/// A stream ID: a 62-bit integer whose two low bits encode the initiator
/// (bit 0x01: 0 = client, 1 = server) and the direction (bit 0x02: 0 = bidi,
/// 1 = uni), RFC 9000 §2.1.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StreamId(
    /// The stream ID as a number (below 2^62, as every varint).
    pub u64,
);

impl StreamId {
    /// Builds the `index`-th stream of the given initiator and direction.
    ///
    /// `index` must be below 2^60 for the ID to be encodable (RFC 9000 §19.11);
    /// larger indices lose their high bits.
    pub fn new(initiator: Side, dir: Dir, index: u64) -> StreamId {
        StreamId((index << 2) | ((dir as u64) << 1) | initiator as u64)
    }

    /// The endpoint that opened this stream.
    pub fn initiator(self) -> Side {
        if self.0 & 0x1 == 0 {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// The stream's directionality.
    pub fn dir(self) -> Dir {
        if self.0 & 0x2 == 0 {
            Dir::Bi
        } else {
            Dir::Uni
        }
    }

    /// The index of this stream among streams of the same initiator and direction.
    pub fn index(self) -> u64 {
        self.0 >> 2
    }
}

impl fmt::Debug for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = if self.initiator().is_client() {
            "client"
        } else {
            "server"
        };
        let dir = match self.dir() {
            Dir::Bi => "bi",
            Dir::Uni => "uni",
        };
        write!(f, "StreamId({} {who} {dir} #{})", self.0, self.index())
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<StreamId> for u64 {
    fn from(s: StreamId) -> u64 {
        s.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        // RFC 9000 §2.1, Table 1.
        assert_eq!(StreamId::new(Side::Client, Dir::Bi, 0).0, 0x0);
        assert_eq!(StreamId::new(Side::Server, Dir::Bi, 0).0, 0x1);
        assert_eq!(StreamId::new(Side::Client, Dir::Uni, 0).0, 0x2);
        assert_eq!(StreamId::new(Side::Server, Dir::Uni, 0).0, 0x3);
        let s = StreamId::new(Side::Server, Dir::Uni, 7);
        assert_eq!(
            (s.initiator(), s.dir(), s.index()),
            (Side::Server, Dir::Uni, 7)
        );
        assert_eq!(Side::Client.peer(), Side::Server);
        assert!(Side::Client.is_client());
    }
}
