//! What a job's network options make of it: whether they fit together and
//! whether the job listens, and why a network job could not start. Apart
//! from `mod.rs`, which gathers the engine's parts, as the endpoint needs
//! them too.

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
