//! A network job's state while it runs: its guard, fio's sequence trailers,
//! ping-pong halves, and whether the peer is done.

use socket2::Socket;

use super::guard::Guard;
use super::link::{self, SequenceCheck};
use crate::options::Protocol;

/// How long a UDP job says goodbye, and how often.
const GOODBYE_FOR: std::time::Duration = std::time::Duration::from_millis(200);
const GOODBYE_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

/// What a completed receive or send means for the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// An I/O of the job.
    Io,
    /// Not an I/O: the peer said it is done (fio's close message, or the
    /// end of a stream), or the job's time was up and its socket shut down.
    Ended,
    /// The first half of a ping-pong: the other half goes next.
    FirstHalf,
}

/// A network job's socket while the job runs.
#[derive(Debug)]
pub struct Session {
    protocol: Protocol,
    pingpong: bool,
    guard: Guard,
    /// A second descriptor of the socket: for the goodbye after the engine
    /// is done with it.
    socket: Socket,
    /// The number the next datagram sent carries.
    next_sequence: u64,
    sequence: SequenceCheck,
    peer_done: bool,
    /// Bytes of one datagram when a request carries several (`datagram_size`); 0: one a request.
    datagram: usize,
}

impl Session {
    /// The session of `socket` (a second descriptor of the one the engine
    /// has), guarded by `guard`.
    pub fn new(
        protocol: Protocol,
        pingpong: bool,
        datagram: usize,
        guard: Guard,
        socket: Socket,
    ) -> Session {
        Session {
            datagram,
            protocol,
            pingpong,
            guard,
            socket,
            next_sequence: 0,
            sequence: SequenceCheck::default(),
            peer_done: false,
        }
    }

    /// Every I/O is a round trip.
    pub fn pingpong(&self) -> bool {
        self.pingpong
    }

    /// The peer is done: the job ends.
    pub fn peer_done(&self) -> bool {
        self.peer_done
    }

    /// The job's guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Prepares the bytes of a datagram about to be sent: fio's trailer.
    pub fn stamp(&mut self, datagrams: &mut [u8]) {
        if !self.protocol.is_udp() {
            return;
        }
        let size = self.datagram_size(datagrams.len());
        for datagram in datagrams.chunks_mut(size) {
            link::stamp(datagram, self.next_sequence);
            self.next_sequence += 1;
        }
    }

    /// The size of the datagrams in a buffer of `len` bytes.
    fn datagram_size(&self, len: usize) -> usize {
        if self.datagram == 0 {
            len.max(1)
        } else {
            self.datagram
        }
    }

    /// What a completion of a receive (`received`: its bytes) or a send
    /// with `result` means; `first_half` when it is the first half of a
    /// ping-pong.
    pub fn settle(&mut self, result: i64, received: Option<&[u8]>, first_half: bool) -> Verdict {
        if result < 0 {
            // Shut down at the job's end: what was cut is not an I/O.
            if self.guard.fired() {
                return Verdict::Ended;
            }
            // A stream's send fails once the receiver closed the connection
            // it had accepted: its time was up first (it started earlier),
            // which ends this job too, as the end of the stream ends a
            // receiver's. A receiver that never came fails the connect.
            if received.is_none() && !self.protocol.is_udp() && closed_by_peer(result) {
                self.peer_done = true;
                self.guard.release_now();
                return Verdict::Ended;
            }
            return Verdict::Io;
        }
        if let Some(bytes) = received {
            if bytes.is_empty() || (self.protocol.is_udp() && link::is_close(bytes)) {
                // The end of the stream, fio's close message, or a socket
                // shut down: outstanding receives must end too.
                self.peer_done = true;
                self.guard.release_now();
                return Verdict::Ended;
            }
            if self.protocol.is_udp() {
                let size = self.datagram_size(bytes.len());
                for datagram in bytes.chunks(size) {
                    self.sequence.note(datagram);
                }
            }
        }
        if self.pingpong && first_half {
            return Verdict::FirstHalf;
        }
        Verdict::Io
    }

    /// Datagrams the sender numbered and this job never received (up to
    /// the highest it received).
    pub fn datagrams_lost(&self) -> u64 {
        self.sequence.lost()
    }

    /// Ends whatever still waits on the socket (the job stopped issuing).
    pub fn release(&self) {
        self.guard.release_now();
    }

    /// The job is over: a UDP job sends fio's close message; a stream is
    /// shut down for writing, so that the peer reads its end.
    ///
    /// A receiver that is behind has a full queue, and loopback drops what
    /// does not fit: the last datagrams, the close message among them. So
    /// the message goes again every few milliseconds, for at most
    /// 200 ms, until the kernel says the receiver's socket is gone
    /// (ECONNREFUSED: it ended, fio's too).
    pub fn goodbye(&self) {
        if !self.protocol.is_udp() {
            let _ = self.socket.shutdown(std::net::Shutdown::Write);
            return;
        }
        let until = std::time::Instant::now() + GOODBYE_FOR;
        while self.socket.send(&link::close_message()).is_ok() && std::time::Instant::now() < until
        {
            std::thread::sleep(GOODBYE_EVERY);
        }
    }
}

/// True when a send's result says the peer closed the connection.
fn closed_by_peer(result: i64) -> bool {
    let errno = i32::try_from(-result).unwrap_or(0);
    matches!(
        std::io::Error::from_raw_os_error(errno).kind(),
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream, UdpSocket};

    use super::*;

    fn session(protocol: Protocol, socket: Socket) -> Session {
        let guard = Guard::start(Vec::new(), None);
        Session::new(protocol, false, 0, guard, socket)
    }

    const EPIPE: i64 = 32;
    const ECONNREFUSED: i64 = 111;

    #[test]
    fn a_stream_whose_receiver_closed_ends_and_a_datagram_error_counts() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let mut tcp = session(Protocol::Tcp, Socket::from(stream));
        assert_eq!(tcp.settle(-EPIPE, None, true), Verdict::Ended);
        assert!(tcp.peer_done());
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut udp = session(Protocol::Udp, Socket::from(udp));
        assert_eq!(udp.settle(-ECONNREFUSED, None, true), Verdict::Io);
        assert_eq!(udp.settle(-EPIPE, None, true), Verdict::Io);
        assert!(!udp.peer_done());
    }
}
