//! A counter the kernel makes pollable (`eventfd(2)`): how a worker thread
//! tells a thread waiting in `poll(2)` that completions are ready.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::event::{EventfdFlags, eventfd};

/// Readable while raised, until cleared.
#[derive(Debug)]
pub(crate) struct Readiness(OwnedFd);

impl Readiness {
    pub(crate) fn new() -> io::Result<Readiness> {
        Ok(Readiness(eventfd(
            0,
            EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK,
        )?))
    }

    /// Makes the descriptor readable (it stays so until [`clear`](Self::clear)).
    pub(crate) fn raise(&self) {
        // Fails only when the counter would overflow (it is then readable
        // already).
        let _ = rustix::io::write(&self.0, &1u64.to_ne_bytes());
    }

    /// Makes the descriptor unreadable until the next [`raise`](Self::raise).
    pub(crate) fn clear(&self) {
        let mut count = [0u8; 8];
        // EAGAIN: it was not raised.
        let _ = rustix::io::read(&self.0, &mut count);
    }

    pub(crate) fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    fn readable(readiness: &Readiness) -> bool {
        let fd = readiness.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        poll(&mut fds, Some(&Timespec::default())).unwrap() == 1
    }

    #[test]
    fn raised_it_polls_readable_until_cleared() {
        let readiness = Readiness::new().unwrap();
        assert!(!readable(&readiness));
        readiness.raise();
        readiness.raise();
        assert!(readable(&readiness));
        readiness.clear();
        assert!(!readable(&readiness));
        readiness.clear();
        assert!(!readable(&readiness));
    }
}
