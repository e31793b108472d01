//! A network job's socket: bound or resolved before the run starts, then
//! accepted or connected once it does.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::path::PathBuf;

use socket2::{Domain, SockAddr, Socket, Type};

use super::guard::Guard;
use super::link;
use super::setup::{NetError, check, listens};
use crate::options::{JobOptions, NetOptions, Protocol};

/// Where the job's socket goes.
#[derive(Debug, Clone)]
enum Target {
    Inet(SocketAddr),
    Unix(PathBuf),
}

/// A network job ready to start: its socket made, and bound when it listens.
#[derive(Debug)]
pub struct Endpoint {
    protocol: Protocol,
    net: NetOptions,
    target: Target,
    /// The job waits for its peer.
    listens: bool,
    /// Bound (and, for TCP and Unix, listening) when the job listens;
    /// unconnected otherwise.
    socket: Socket,
    /// A ping-pong sender to a multicast group: the socket its replies come
    /// to (see [`Connection::replies`]).
    replies: Option<Socket>,
}

/// The job's socket once its peer is there.
#[derive(Debug)]
pub struct Connection {
    /// The connected socket (for UDP, connected to the peer's address).
    pub socket: Socket,
    /// How the job names it in reports: address, port and protocol.
    pub name: String,
    /// A ping-pong sender to a multicast group receives its replies here:
    /// they come from each reader's own address, which the sending socket,
    /// connected to the group, does not take. Bound to the same port, so
    /// that the readers reply to where the datagrams came from.
    pub replies: Option<Socket>,
    /// Its protocol.
    pub protocol: Protocol,
}

impl Endpoint {
    /// Checks the options, resolves the address, makes the socket and, when
    /// the job listens, binds it: before the run starts, so that a peer
    /// starting with it finds the port open.
    pub fn prepare(options: &JobOptions, protocol: Protocol) -> Result<Endpoint, NetError> {
        check(options, protocol)?;
        let net = options.net.clone();
        let listens = listens(options, protocol);
        let target = target(&net, protocol, listens)?;
        let name = describe(&target, protocol);
        let socket_error = |op, source| NetError::Socket {
            op,
            target: name.clone(),
            source,
        };
        let (domain, kind) = match (&target, protocol) {
            (Target::Unix(_), _) => (Domain::UNIX, Type::STREAM),
            (Target::Inet(address), protocol) => (
                Domain::for_address(*address),
                if protocol.is_udp() {
                    Type::DGRAM
                } else {
                    Type::STREAM
                },
            ),
        };
        let socket =
            Socket::new(domain, kind, None).map_err(|e| socket_error("make a socket for", e))?;
        socket
            .set_cloexec(true)
            .map_err(|e| socket_error("set close-on-exec on", e))?;
        if net.window_size > 0 {
            let size = net.window_size as usize;
            // As fio: the side that receives sizes its receive buffer, the
            // one that sends its send buffer, a ping-pong both.
            if listens || net.pingpong {
                socket
                    .set_recv_buffer_size(size)
                    .map_err(|e| socket_error("set SO_RCVBUF (window_size) on", e))?;
            }
            if !listens || net.pingpong {
                socket
                    .set_send_buffer_size(size)
                    .map_err(|e| socket_error("set SO_SNDBUF (window_size) on", e))?;
            }
        }
        if protocol.is_tcp() {
            if net.mss > 0 {
                socket
                    .set_tcp_mss(net.mss)
                    .map_err(|e| socket_error("set TCP_MAXSEG (mss) on", e))?;
            }
            if net.nodelay {
                socket
                    .set_tcp_nodelay(true)
                    .map_err(|e| socket_error("set TCP_NODELAY (nodelay) on", e))?;
            }
        }
        let bs = options.max_block_size();
        if net.datagram_size > 0 && u64::from(net.datagram_size) < bs {
            use std::os::fd::AsFd;
            let datagram = u16::try_from(net.datagram_size).unwrap_or(u16::MAX);
            if listens || net.pingpong {
                hybrio::socket::set_udp_gro(socket.as_fd(), true).map_err(|e| {
                    socket_error("set UDP_GRO (datagram_size, Linux 5.0 and later) on", e)
                })?;
            }
            if !listens || net.pingpong {
                hybrio::socket::set_udp_segment(socket.as_fd(), datagram).map_err(|e| {
                    socket_error(
                        "set UDP_SEGMENT (datagram_size, Linux 4.18 and later) on",
                        e,
                    )
                })?;
            }
        }
        if listens {
            bind(&socket, &target, protocol, &net).map_err(|(op, e)| socket_error(op, e))?;
        }
        let mut replies = None;
        if !listens
            && let Target::Inet(SocketAddr::V4(address)) = &target
            && address.ip().is_multicast()
        {
            let interface = interface(&net)?;
            socket
                .set_multicast_if_v4(&interface)
                .map_err(|e| socket_error("send multicast through the interface of", e))?;
            socket
                .set_multicast_ttl_v4(net.ttl)
                .map_err(|e| socket_error("set the multicast ttl of", e))?;
            if net.pingpong {
                replies = Some(reply_socket(&socket).map_err(|(op, e)| socket_error(op, e))?);
            }
        }
        Ok(Endpoint {
            protocol,
            net,
            target,
            listens,
            socket,
            replies,
        })
    }

    /// A second descriptor of the job's socket, for its guard.
    pub fn guard_handle(&self) -> std::io::Result<Socket> {
        self.socket.try_clone()
    }

    /// The socket's name in reports.
    pub fn name(&self) -> String {
        describe(&self.target, self.protocol)
    }

    /// Waits for the peer (accepts a connection, or for UDP the sender's
    /// open message), or connects to it (for UDP: sends the open message),
    /// under `guard`, which ends the wait when the job's time is up.
    pub fn open(self, guard: &Guard) -> Result<Connection, NetError> {
        let name = self.name();
        let socket_error = |op, source| NetError::Socket {
            op,
            target: name.clone(),
            source,
        };
        let no_peer = |what: &str| {
            NetError::NoPeer(format!(
                "{what} {name}: none came before the job's time ran out"
            ))
        };
        let socket = match (self.listens, self.protocol.is_udp()) {
            (true, false) => {
                let (accepted, _) = self.socket.accept().map_err(|e| {
                    if guard.fired() {
                        no_peer("waited for a connection on")
                    } else {
                        socket_error("accept on", e)
                    }
                })?;
                if self.net.nodelay && self.protocol.is_tcp() {
                    accepted
                        .set_tcp_nodelay(true)
                        .map_err(|e| socket_error("set TCP_NODELAY (nodelay) on", e))?;
                }
                accepted
            }
            (true, true) => {
                let udp: UdpSocket = self.socket.into();
                let sender = wait_for_open(&udp, guard).map_err(|e| match e {
                    Some(e) => socket_error("receive the open message on", e),
                    None => no_peer("waited for a sender's open message on"),
                })?;
                // Connected to its sender: replies (pingpong) go to it, and
                // nothing from anyone else comes in.
                udp.connect(sender)
                    .map_err(|e| socket_error("connect to the sender of", e))?;
                Socket::from(udp)
            }
            (false, _) => {
                let address = match &self.target {
                    Target::Inet(address) => SockAddr::from(*address),
                    Target::Unix(path) => {
                        SockAddr::unix(path).map_err(|e| socket_error("name the Unix socket", e))?
                    }
                };
                // A UDP socket connected to its receiver can send through
                // every engine (send, not sendto); the kernel says so when
                // nothing listens there (ECONNREFUSED on a later send).
                self.socket.connect(&address).map_err(|e| {
                    if guard.fired() {
                        no_peer("connected to")
                    } else {
                        socket_error("connect to", e)
                    }
                })?;
                if self.protocol.is_udp() {
                    self.socket
                        .send(&link::open_message())
                        .map_err(|e| socket_error("send the open message to", e))?;
                }
                self.socket
            }
        };
        Ok(Connection {
            socket,
            name,
            protocol: self.protocol,
            replies: self.replies,
        })
    }
}

/// A second UDP socket on the port of `sender` (bound here, to any port),
/// which the sender's replies reach: the sender, once connected to its
/// multicast group, takes datagrams from the group's address only.
fn reply_socket(sender: &Socket) -> Result<Socket, (&'static str, std::io::Error)> {
    let any = SockAddr::from(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0));
    sender
        .set_reuse_address(true)
        .map_err(|e| ("set SO_REUSEADDR on", e))?;
    sender.bind(&any).map_err(|e| ("bind", e))?;
    let port = sender
        .local_addr()
        .map_err(|e| ("read the address of", e))?
        .as_socket()
        .map_or(0, |a| a.port());
    let replies = Socket::new(Domain::IPV4, Type::DGRAM, None)
        .map_err(|e| ("make the reply socket of", e))?;
    replies
        .set_cloexec(true)
        .map_err(|e| ("set close-on-exec on", e))?;
    replies
        .set_reuse_address(true)
        .map_err(|e| ("set SO_REUSEADDR on", e))?;
    replies
        .bind(&SockAddr::from(SocketAddr::new(
            Ipv4Addr::UNSPECIFIED.into(),
            port,
        )))
        .map_err(|e| ("bind the reply socket of", e))?;
    Ok(replies)
}

/// Receives until the open message comes; returns its sender. `Err(None)`
/// when the guard ended the wait.
fn wait_for_open(udp: &UdpSocket, guard: &Guard) -> Result<SocketAddr, Option<std::io::Error>> {
    let mut message = [0u8; 64];
    loop {
        match udp.recv_from(&mut message) {
            Ok((len, from)) if link::is_open(&message[..len]) => return Ok(from),
            // A shut-down socket reads 0 bytes at once.
            Ok(_) | Err(_) if guard.fired() => return Err(None),
            // Something else (a datagram of an earlier run): not the start.
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Some(e)),
        }
    }
}

/// Binds a listening job's socket: any address at the port (or the
/// multicast group, joined), or the Unix path; TCP and Unix listen.
fn bind(
    socket: &Socket,
    target: &Target,
    protocol: Protocol,
    net: &NetOptions,
) -> Result<(), (&'static str, std::io::Error)> {
    match target {
        Target::Unix(path) => {
            // As fio: a socket file left by an earlier run is replaced.
            if std::fs::symlink_metadata(path)
                .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
            {
                let _ = std::fs::remove_file(path);
            }
            let address = SockAddr::unix(path).map_err(|e| ("name the Unix socket", e))?;
            socket.bind(&address).map_err(|e| ("bind", e))?;
        }
        Target::Inet(address) => {
            socket
                .set_reuse_address(true)
                .map_err(|e| ("set SO_REUSEADDR on", e))?;
            socket
                .set_reuse_port(true)
                .map_err(|e| ("set SO_REUSEPORT on", e))?;
            if let SocketAddr::V4(group) = address
                && group.ip().is_multicast()
            {
                let interface = interface(net).map_err(|e| {
                    (
                        "join the multicast group",
                        std::io::Error::other(e.to_string()),
                    )
                })?;
                socket
                    .join_multicast_v4(group.ip(), &interface)
                    .map_err(|e| ("join the multicast group", e))?;
            }
            socket
                .bind(&SockAddr::from(*address))
                .map_err(|e| ("bind", e))?;
        }
    }
    if !protocol.is_udp() {
        socket.listen(10).map_err(|e| ("listen on", e))?;
    }
    Ok(())
}

/// The address the job binds (listening) or connects to.
fn target(net: &NetOptions, protocol: Protocol, listens: bool) -> Result<Target, NetError> {
    if protocol == Protocol::Unix {
        // Checked: a Unix job names its path.
        return Ok(Target::Unix(PathBuf::from(
            net.hostname.clone().unwrap_or_default(),
        )));
    }
    let any: IpAddr = if protocol.is_v6() {
        Ipv6Addr::UNSPECIFIED.into()
    } else {
        Ipv4Addr::UNSPECIFIED.into()
    };
    let Some(host) = &net.hostname else {
        return if listens {
            Ok(Target::Inet(SocketAddr::new(any, net.port)))
        } else {
            Err(NetError::Options(format!(
                "a protocol={} job that connects needs hostname={}",
                protocol.name(),
                if protocol.is_tcp() {
                    " (or listen, for the side that waits)"
                } else {
                    ""
                }
            )))
        };
    };
    let address = resolve(host, net.port, protocol)?;
    if listens {
        // As fio: a receiver binds any address, and names a host only to
        // join a multicast group.
        if !(protocol.is_udp() && address.ip().is_multicast()) {
            return Err(NetError::Options(format!(
                "hostname={host} is not valid for a job that listens (only a UDP multicast group is)"
            )));
        }
        if protocol.is_v6() {
            return Err(NetError::Options(
                "IPv6 multicast is not supported (as in fio)".into(),
            ));
        }
    } else if protocol.is_v6() && address.ip().is_multicast() {
        return Err(NetError::Options(
            "IPv6 multicast is not supported (as in fio)".into(),
        ));
    }
    Ok(Target::Inet(address))
}

/// `host` (a name or an address) at `port`, in the protocol's family.
fn resolve(host: &str, port: u16, protocol: Protocol) -> Result<SocketAddr, NetError> {
    let family = if protocol.is_v6() { "IPv6" } else { "IPv4" };
    let addresses = (host, port)
        .to_socket_addrs()
        .map_err(|e| NetError::Options(format!("hostname={host} does not resolve: {e}")))?;
    addresses
        .into_iter()
        .find(|a| a.is_ipv6() == protocol.is_v6())
        .ok_or_else(|| {
            NetError::Options(format!(
                "hostname={host} has no {family} address (protocol={})",
                protocol.name()
            ))
        })
}

/// The interface multicast goes through: `interface`, or loopback.
fn interface(net: &NetOptions) -> Result<Ipv4Addr, NetError> {
    match &net.interface {
        None => Ok(Ipv4Addr::LOCALHOST),
        Some(text) => text.parse().map_err(|_| {
            NetError::Options(format!(
                "interface={text} is not an IPv4 address (the interface's address, e.g. 127.0.0.1)"
            ))
        }),
    }
}

/// `127.0.0.1:8890/udp`, `[::1]:8890/tcpv6`, `/tmp/fio.sock/unix`.
fn describe(target: &Target, protocol: Protocol) -> String {
    match target {
        Target::Inet(address) => format!("{address}/{}", protocol.name()),
        Target::Unix(path) => format!("{}/unix", path.display()),
    }
}
