//! Socket settings an I/O engine's user needs for datagrams at packet rates
//! (seeds/004): many datagrams per system call, each still its own datagram.
//!
//! * [`set_udp_segment`] (GSO, Linux 4.18): a send of more than `size`
//!   bytes leaves as datagrams of `size` bytes, segmented by the kernel
//!   (the last one may be shorter). On loopback this halves the sender's
//!   cost per datagram.
//! * [`set_udp_gro`] (Linux 5.0): a receive may return several datagrams
//!   of one sender back to back, each of the same size (the last may be
//!   shorter), when they came as one segmented send. A receiver that
//!   knows the size splits them.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use crate::sys;

/// Sets `UDP_SEGMENT` on a UDP socket: sends larger than `size` bytes leave
/// as datagrams of `size` bytes; 0 turns it off.
pub fn set_udp_segment(socket: BorrowedFd<'_>, size: u16) -> io::Result<()> {
    sys::set_int_option(
        socket.as_raw_fd(),
        libc::IPPROTO_UDP,
        sys::UDP_SEGMENT,
        i32::from(size),
    )
}

/// Sets `UDP_GRO` on a UDP socket: receives may return several datagrams
/// back to back.
pub fn set_udp_gro(socket: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    sys::set_int_option(
        socket.as_raw_fd(),
        libc::IPPROTO_UDP,
        sys::UDP_GRO,
        i32::from(on),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsFd;

    #[test]
    fn a_segmented_send_arrives_as_datagrams_or_coalesced_with_gro() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.connect(receiver.local_addr().unwrap()).unwrap();
        if let Err(e) = set_udp_segment(sender.as_fd(), 64) {
            eprintln!("skipping: UDP_SEGMENT refused here: {e}");
            return;
        }
        let payload: Vec<u8> = (0..640u32).map(|i| i as u8).collect();
        assert_eq!(sender.send(&payload).unwrap(), 640);
        let mut buf = [0u8; 4096];
        // Without GRO: ten datagrams of 64 bytes.
        for n in 0..10 {
            let got = receiver.recv(&mut buf).unwrap();
            assert_eq!(got, 64, "datagram {n}");
            assert_eq!(&buf[..64], &payload[n * 64..(n + 1) * 64]);
        }
        if let Err(e) = set_udp_gro(receiver.as_fd(), true) {
            eprintln!("skipping the GRO half: UDP_GRO refused here: {e}");
            return;
        }
        assert_eq!(sender.send(&payload).unwrap(), 640);
        // With GRO: the ten back to back, in fewer receives.
        let mut got = Vec::new();
        let mut receives = 0;
        while got.len() < 640 {
            let n = receiver.recv(&mut buf).unwrap();
            assert_eq!(n % 64, 0);
            got.extend_from_slice(&buf[..n]);
            receives += 1;
        }
        assert_eq!(got, payload);
        assert!(
            receives < 10,
            "{receives} receives for 10 datagrams with GRO"
        );
    }
}
