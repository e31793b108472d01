//! What the adaptive engine learns of a socket: whether trying a receive
//! (or a send) inline finds data waiting (or room). A try that finds some
//! does the request in one system call, without the asynchronous engine's
//! round trip; one that finds none costs a system call that does nothing,
//! and the request goes asynchronous. The two are of one order (a system
//! call each), so trying pays while at least half the tries find data.
//! When fewer do, the lane stops trying for a while, longer each time it
//! is still so, and tries again: a stream that starts to flow is noticed
//! within a few thousand requests, and a quiet one costs one try in
//! thousands.

use std::fs::File;
use std::os::fd::AsRawFd;

use crate::request::Op;

/// How long a try on a datagram socket that finds nothing waits for data
/// (or room) when the engine has nothing else in flight, before the request
/// goes asynchronous: its caller has nothing else from this engine to wait
/// for, and a wait on the socket itself wakes sooner than one on io_uring's
/// completion (coalesced datagrams at depth 1: p99 0.86x psync's with it,
/// 1.53x without, where io_uring's was 1.58x). Not on a stream: there a
/// `ppoll` wake-up came later than a blocking `recv`'s, or io_uring's (TCP
/// ping-pong at 0.81x psync with it, 0.96x without). Long enough for a
/// round trip on loopback here (60-130 us), short enough not to hold up a
/// caller whose socket is quiet.
pub(super) const LINGER_NS: u64 = 200_000;

/// Tries in one window.
const WINDOW: u32 = 32;
/// Requests sent asynchronous without a try after a window that found too
/// little, at first and at most (doubling in between).
const FIRST_PAUSE: u32 = 32;
const LONGEST_PAUSE: u32 = 4096;

/// One direction of a socket.
#[derive(Debug, Clone, Copy)]
pub(super) struct SocketLane {
    tries: u32,
    found: u32,
    /// Requests still to send without a try.
    paused: u32,
    /// The next pause.
    next_pause: u32,
}

impl Default for SocketLane {
    fn default() -> Self {
        SocketLane {
            tries: 0,
            found: 0,
            paused: 0,
            next_pause: FIRST_PAUSE,
        }
    }
}

impl SocketLane {
    /// Whether to try this request inline.
    #[inline]
    pub(super) fn try_now(&mut self) -> bool {
        if self.paused > 0 {
            self.paused -= 1;
            return false;
        }
        true
    }

    /// Records a try: it found data (or room), or not.
    #[inline]
    pub(super) fn record(&mut self, found: bool) {
        self.tries += 1;
        self.found += u32::from(found);
        if self.tries < WINDOW {
            return;
        }
        if self.found * 2 < self.tries {
            self.paused = self.next_pause;
            self.next_pause = (self.next_pause * 2).min(LONGEST_PAUSE);
        } else {
            self.next_pause = FIRST_PAUSE;
        }
        self.tries = 0;
        self.found = 0;
    }
}

/// A socket's two lanes, and its kind.
#[derive(Debug, Clone, Copy)]
pub(super) struct SocketRoute {
    /// A datagram socket: its receives have no order among themselves.
    pub(super) datagram: bool,
    receive: SocketLane,
    send: SocketLane,
}

impl SocketRoute {
    /// The route of `file` if it is a socket.
    pub(super) fn of(file: &File) -> Option<SocketRoute> {
        let fd = file.as_raw_fd();
        if !crate::sys::is_socket(fd).unwrap_or(false) {
            return None;
        }
        Some(SocketRoute {
            // One that cannot say is taken as a stream: order is kept.
            datagram: crate::sys::is_datagram_socket(fd).unwrap_or(false),
            receive: SocketLane::default(),
            send: SocketLane::default(),
        })
    }

    /// The lane of `op` (a receive or a send).
    #[inline]
    pub(super) fn lane(&mut self, op: Op) -> &mut SocketLane {
        if op == Op::Recv {
            &mut self.receive
        } else {
            &mut self.send
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_stops_trying_when_most_tries_find_nothing_and_tries_again_later() {
        let mut lane = SocketLane::default();
        // Every try finds data: it never stops trying.
        for _ in 0..1000 {
            assert!(lane.try_now());
            lane.record(true);
        }
        // Half find nothing: still worth it.
        for i in 0..WINDOW {
            assert!(lane.try_now());
            lane.record(i % 2 == 0);
        }
        assert!(lane.try_now());
        // Nothing found for a window: a pause of FIRST_PAUSE requests, then
        // a window of tries, then a pause twice as long.
        let mut tried = 0;
        let mut skipped = 0;
        for _ in 0..(WINDOW + FIRST_PAUSE + WINDOW + 2 * FIRST_PAUSE) {
            if lane.try_now() {
                tried += 1;
                lane.record(false);
            } else {
                skipped += 1;
            }
        }
        assert_eq!(skipped, 3 * FIRST_PAUSE, "tried {tried}");
        // Data again: one window of tries finding it ends the pauses' growth.
        while !lane.try_now() {}
        for _ in 0..WINDOW {
            lane.record(true);
            assert!(lane.try_now());
        }
        assert_eq!(lane.next_pause, FIRST_PAUSE);
    }
}
