//! fio's `net` engine: a job whose file is a socket, run through any of
//! hybrio's engines (fio's own is synchronous: `ioengine=net` here is the
//! `psync` engine's `recv`/`send`).
//!
//! A job is prepared before the run's gate opens ([`Endpoint::prepare`]:
//! options checked, the address resolved, a listening socket bound, so that
//! a sender starting with the run finds it), and opened once it starts
//! ([`Endpoint::open`]: accept or connect, and for UDP fio's link messages),
//! under a [`Guard`] that shuts the sockets down when the job's time is up or
//! the run is interrupted, so that no accept, receive or send outlives it.
//! What goes on the wire is fio's ([`link`]), so hybrio and fio talk to each
//! other.
//!
//! Everything here talks to the address the job names; hybrio's own tests
//! and scenarios name loopback only. A multicast sender goes through the
//! interface `interface` names, and through loopback (127.0.0.1) when none is
//! named, never out of the machine unasked.

mod endpoint;
mod guard;
pub mod link;
mod session;

pub use endpoint::{Connection, Endpoint};
pub use guard::Guard;
pub use session::{Session, Verdict};

use crate::options::{JobOptions, Protocol};

/// Why a network job could not start, in one line.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The job's options do not make a network job.
    #[error("{0}")]
    Options(String),
    /// A socket call failed.
    #[error("{op} {target}: {source}")]
    Socket {
        /// What was being done ("bind", "connect to", "accept on").
        op: &'static str,
        /// The address or path, and protocol.
        target: String,
        /// What the kernel said.
        #[source]
        source: std::io::Error,
    },
    /// The job's time ran out (or the run was interrupted) before its peer came.
    #[error("{0}")]
    NoPeer(String),
}

/// Checks that the job's network options fit together, as fio checks them
/// (with its words where it has some).
pub fn check(options: &JobOptions, protocol: Protocol) -> Result<(), NetError> {
    let net = &options.net;
    let refuse = |why: &str| Err(NetError::Options(why.to_string()));
    if options.rw.is_random() {
        return refuse(&format!(
            "network I/O cannot be random (rw={})",
            options.rw.name()
        ));
    }
    if protocol == Protocol::Unix && net.port != 0 {
        return refuse("port is not valid with protocol=unix (hostname= is the socket's path)");
    }
    if protocol != Protocol::Unix && net.port == 0 {
        return refuse(&format!(
            "protocol={} needs port= (1 to 65535)",
            protocol.name()
        ));
    }
    if !protocol.is_tcp() {
        if net.listen {
            return refuse(&format!(
                "listen is only valid for TCP (with protocol={}, the job that reads listens)",
                protocol.name()
            ));
        }
        if options.rw.reads() && options.rw.writes() {
            return refuse(&format!(
                "a protocol={} job reads or writes, not both (rw={})",
                protocol.name(),
                options.rw.name()
            ));
        }
        if protocol == Protocol::Unix && net.hostname.is_none() {
            return refuse("protocol=unix needs hostname= (the socket's path)");
        }
    }
    let datagram = u64::from(options.net.datagram_size);
    if datagram > 0 {
        if !protocol.is_udp() {
            return refuse("datagram_size is for protocol=udp or udpv6");
        }
        let bs = options.max_block_size();
        if !bs.is_multiple_of(datagram) || options.bs_max.is_some() {
            return refuse(&format!(
                "bs={bs} is not a whole number of datagram_size={datagram} (each request carries bs/datagram_size datagrams)"
            ));
        }
    }
    if options.size.is_none() && !options.time_based {
        return refuse(
            "a network job needs size= (the bytes to move), or time_based with runtime=",
        );
    }
    if options.completion_latency.is_some() {
        return refuse("completion_latency emulates a disk: a network job's socket is not one");
    }
    Ok(())
}

/// True when the job waits for its peer (binds and accepts, or for UDP and
/// Unix sockets, the job that reads), as fio decides it.
pub fn listens(options: &JobOptions, protocol: Protocol) -> bool {
    if protocol.is_tcp() {
        options.net.listen
    } else {
        options.rw.reads()
    }
}

#[cfg(test)]
mod tests;
