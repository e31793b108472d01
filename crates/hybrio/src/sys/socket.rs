//! Socket calls: `recv`/`send` of one buffer, and whether a descriptor is a
//! socket at all.
//!
//! Like the file calls they take a `RawFd` the caller keeps open; a stale
//! descriptor is the kernel's `EBADF` (or `ENOTSOCK`), never memory unsafety.

use std::io;
use std::os::fd::RawFd;

use super::fd::check;

/// `recv(2)` into `buf` with `flags` (`MSG_DONTWAIT` to take only what is
/// waiting). One datagram per call on a datagram socket, however short.
#[inline]
pub(crate) fn recv(fd: RawFd, buf: &mut [u8], flags: i32) -> io::Result<usize> {
    // SAFETY: `buf` is a live, exclusively borrowed slice, so the kernel may
    // write up to `buf.len()` bytes at its start.
    check(unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) })
}

/// `send(2)` of `buf` with `flags`, plus `MSG_NOSIGNAL`: a peer that went
/// away is the request's `EPIPE`, not a signal that kills the process.
#[inline]
pub(crate) fn send(fd: RawFd, buf: &[u8], flags: i32) -> io::Result<usize> {
    // SAFETY: `buf` is a live slice; the kernel reads at most `buf.len()` bytes of it.
    check(unsafe {
        libc::send(
            fd,
            buf.as_ptr().cast(),
            buf.len(),
            flags | libc::MSG_NOSIGNAL,
        )
    })
}

/// `UDP_SEGMENT` and `UDP_GRO` (linux/udp.h; not in every libc's bindings).
pub(crate) const UDP_SEGMENT: i32 = 103;
pub(crate) const UDP_GRO: i32 = 104;

/// `setsockopt(fd, level, name, &value, sizeof(int))`.
pub(crate) fn set_int_option(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: the kernel reads `sizeof(int)` bytes at the pointer, which
    // points at a live `i32` for the whole call.
    let ret = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            std::ptr::from_ref(&value).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// True when `fd` was shut down for reading (`POLLRDHUP`, or `POLLHUP`):
/// asks without waiting.
pub(crate) fn is_shut_for_reading(fd: RawFd) -> io::Result<bool> {
    Ok(poll_one(fd, libc::POLLRDHUP, 0)? & (libc::POLLRDHUP | libc::POLLHUP) != 0)
}

/// Waits at most `timeout_ns` for `fd` to have data to read (`write`: room
/// to write): `ppoll` on the one descriptor. True when it has.
pub(crate) fn wait_ready(fd: RawFd, write: bool, timeout_ns: u64) -> io::Result<bool> {
    let events = if write { libc::POLLOUT } else { libc::POLLIN };
    Ok(poll_one(fd, events, timeout_ns)? != 0)
}

/// `ppoll` on the one descriptor `fd` for `events`, waiting at most
/// `timeout_ns`: the events it reported (0 when none came in the time).
fn poll_one(fd: RawFd, events: i16, timeout_ns: u64) -> io::Result<i16> {
    let mut poll = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let timeout = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `poll` is one live pollfd the kernel may update, `timeout`
    // a live timespec it only reads; no signal mask is passed.
    let ret = unsafe { libc::ppoll(&mut poll, 1, &timeout, std::ptr::null()) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(poll.revents)
}

/// True when `fd` is a datagram socket (`SO_TYPE` is `SOCK_DGRAM`).
pub(crate) fn is_datagram_socket(fd: RawFd) -> io::Result<bool> {
    Ok(socket_type(fd)? == libc::SOCK_DGRAM)
}

/// True when each receive on `fd` takes one message, whole or cut
/// (`SOCK_DGRAM`, `SOCK_SEQPACKET`), not a stream's next bytes.
pub(crate) fn keeps_message_boundaries(fd: RawFd) -> io::Result<bool> {
    Ok(matches!(
        socket_type(fd)?,
        libc::SOCK_DGRAM | libc::SOCK_SEQPACKET
    ))
}

/// The largest datagram socket `fd` can receive, where its protocol sets
/// one: a UDP datagram's payload fits in IP's 16-bit length (65,507 bytes
/// over IPv4, 65,527 over IPv6). `None` for other sockets (a Unix
/// datagram's size is bounded by the sender's buffer only).
pub(crate) fn largest_datagram(fd: RawFd) -> io::Result<Option<u32>> {
    if socket_type(fd)? != libc::SOCK_DGRAM {
        return Ok(None);
    }
    Ok(match socket_option(fd, libc::SO_DOMAIN)? {
        libc::AF_INET => Some(65_507),
        libc::AF_INET6 => Some(65_527),
        _ => None,
    })
}

/// The socket's `SO_TYPE`.
fn socket_type(fd: RawFd) -> io::Result<i32> {
    socket_option(fd, libc::SO_TYPE)
}

/// An integer socket option at `SOL_SOCKET` level.
fn socket_option(fd: RawFd, name: i32) -> io::Result<i32> {
    let mut value: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes (one int) at the
    // pointer, which points at a live `i32`, and updates `len`, a live local.
    let ret = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            std::ptr::from_mut(&mut value).cast(),
            &mut len,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value)
}

/// True when `fd` is a socket (`fstat`'s `S_IFSOCK`).
pub(crate) fn is_socket(fd: RawFd) -> io::Result<bool> {
    super::fd::file_type(fd).map(|kind| kind == libc::S_IFSOCK)
}

/// `shutdown(2)` both ways: a receive or send blocked on the socket in
/// another thread returns (a receive with 0 bytes), and none starts after.
pub(crate) fn shutdown_both(fd: RawFd) -> io::Result<()> {
    // SAFETY: no memory is passed; an fd that is not a socket is ENOTSOCK.
    check(unsafe { libc::shutdown(fd, libc::SHUT_RDWR) } as isize).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixDatagram;

    #[test]
    fn a_datagram_sent_is_received_whole_and_nothing_waiting_is_eagain() {
        let (a, b) = UnixDatagram::pair().unwrap();
        assert!(is_socket(a.as_raw_fd()).unwrap());
        let file = tempfile::tempfile().unwrap();
        assert!(!is_socket(file.as_raw_fd()).unwrap());
        assert_eq!(send(a.as_raw_fd(), b"hello", 0).unwrap(), 5);
        let mut buf = [0u8; 64];
        assert_eq!(recv(b.as_raw_fd(), &mut buf, 0).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        let err = recv(b.as_raw_fd(), &mut buf, libc::MSG_DONTWAIT).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EAGAIN));
    }
}
