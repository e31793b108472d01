//! The options of fio's `net` engine: a job whose file is a socket.

/// fio's `protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// TCP over IPv4.
    Tcp,
    /// TCP over IPv6.
    TcpV6,
    /// UDP over IPv4.
    Udp,
    /// UDP over IPv6.
    UdpV6,
    /// A Unix stream socket; `hostname` is its path.
    Unix,
}

impl Protocol {
    /// The words `protocol=` takes.
    pub const WORDS: &'static [&'static str] = &["tcp", "tcpv6", "udp", "udpv6", "unix"];

    /// fio's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::TcpV6 => "tcpv6",
            Protocol::Udp => "udp",
            Protocol::UdpV6 => "udpv6",
            Protocol::Unix => "unix",
        }
    }

    /// Reads one of [`Protocol::WORDS`].
    pub fn from_word(word: &str) -> Option<Protocol> {
        Some(match word {
            "tcp" => Protocol::Tcp,
            "tcpv6" => Protocol::TcpV6,
            "udp" => Protocol::Udp,
            "udpv6" => Protocol::UdpV6,
            "unix" => Protocol::Unix,
            _ => return None,
        })
    }

    /// Datagrams: UDP over either IP.
    pub fn is_udp(self) -> bool {
        matches!(self, Protocol::Udp | Protocol::UdpV6)
    }

    /// TCP over either IP.
    pub fn is_tcp(self) -> bool {
        matches!(self, Protocol::Tcp | Protocol::TcpV6)
    }

    /// IPv6.
    pub fn is_v6(self) -> bool {
        matches!(self, Protocol::TcpV6 | Protocol::UdpV6)
    }
}

/// The `net` engine's options, as fio names them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetOptions {
    /// `protocol` (alias `proto`); `None` when not given: TCP for
    /// `ioengine=net`, and a job that is not a network job otherwise.
    pub protocol: Option<Protocol>,
    /// `hostname`: whom a sender connects to, the multicast group a
    /// receiver joins, or a Unix socket's path.
    pub hostname: Option<String>,
    /// `port` (each `numjobs` clone takes the next one); 0 when not given.
    pub port: u16,
    /// `listen`: a TCP job waits for the connection instead of making it.
    pub listen: bool,
    /// `pingpong`: every send waits for the same bytes back (and every
    /// receive sends them back): an I/O is a round trip.
    pub pingpong: bool,
    /// `nodelay`: `TCP_NODELAY`.
    pub nodelay: bool,
    /// `window_size`: the socket buffers' size, 0 for the system's.
    pub window_size: u32,
    /// `mss`: `TCP_MAXSEG`, 0 for the system's.
    pub mss: u32,
    /// `interface`: the address of the interface multicast goes through.
    pub interface: Option<String>,
    /// `ttl`: multicast time to live.
    pub ttl: u32,
    /// hybrio's `datagram_size`: UDP datagrams of this size, `bs` of them
    /// per request (GSO on the sender, GRO on the receiver); 0: one
    /// datagram of `bs` per request, as fio.
    pub datagram_size: u32,
    /// hybrio's `peer`: under `hybrio compare`, this job is the other end
    /// of the cell's network jobs (a sender feeding the receivers compared):
    /// it keeps its engine, and its figures are not the cell's.
    pub peer: bool,
}

impl NetOptions {
    /// fio's defaults (`ttl=1`).
    pub fn new() -> Self {
        NetOptions {
            ttl: 1,
            ..NetOptions::default()
        }
    }
}
