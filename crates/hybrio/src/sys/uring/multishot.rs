//! Multishot receive: one standing `IORING_OP_RECV` per socket that keeps
//! receiving into buffers the ring provides (a provided-buffer ring, Linux
//! 5.19; multishot receive, 6.0). A datagram then costs a CQE and a copy
//! instead of an SQE, a CQE and a trip through the kernel's submission path.
//!
//! Receive requests wait in their socket's queue and take what arrives in
//! arrival order; what arrives before any request waits in its buffer, so
//! a request that finds data waiting completes at once. The kernel writes
//! only the provided buffers, never a request's: a waiting request can be
//! dropped at any time. The standing receive ends when the kernel runs out
//! of buffers (`ENOBUFS`), on an error, or at the end of a stream; it is
//! started again as soon as a request waits for it.

use std::io;
use std::os::fd::RawFd;

use super::receivers::{Messages, Receiver};
use super::ring::Ring;
use super::types::{FileRef, SETTLE_LIMIT, WAIT_SLICE};
use crate::request::{Completion, Request};

/// With requests waiting on standing receives, how long a wait lasts before
/// it looks for sockets shut down (see [`Ring::end_shut_receives`]).
const SHUTDOWN_LOOK: std::time::Duration = std::time::Duration::from_millis(10);

/// What [`Ring::receive`] did with a receive request.
#[derive(Debug)]
pub(crate) enum Receive {
    /// Something had arrived: the request took it.
    Done(Completion),
    /// The request waits for what arrives next.
    Waiting,
    /// The standing receive could not be started (the kernel refused it):
    /// the request is handed back with the reason.
    Refused(Request, io::Error),
}

impl Ring {
    /// Receives on socket `handle` (named by `file` in SQEs) through a
    /// standing multishot receive from now on: registers its provided-buffer
    /// ring. `messages` says what one receive takes.
    pub(crate) fn listen(
        &mut self,
        handle: u32,
        fd: RawFd,
        file: FileRef,
        messages: Messages,
    ) -> io::Result<()> {
        // Buffer groups are 16 bits: the handle names the socket's group.
        let group =
            u16::try_from(handle).map_err(|_| io::Error::from_raw_os_error(libc::EMFILE))?;
        let receiver = Receiver::register(&self.ring, fd, file, group, messages)?;
        let receivers = &mut self.receivers;
        let index = handle as usize;
        if receivers.by_handle.len() <= index {
            receivers.by_handle.resize_with(index + 1, || None);
        }
        receivers.by_handle[index] = Some(Box::new(receiver));
        receivers.listening.push(handle);
        // A slot of its own for its standing receive, past the requests'
        // (one forgotten socket's is taken again).
        let arm_slots = self.awaiting_submit.len() - self.slots.len();
        if arm_slots < receivers.listening.len() {
            let slot = u32::try_from(self.awaiting_submit.len())
                .map_err(|_| io::Error::from_raw_os_error(libc::EMFILE))?;
            self.awaiting_submit.push(false);
            self.arm_free.push(slot);
        }
        receivers.arm_of.resize(self.awaiting_submit.len(), None);
        Ok(())
    }

    /// [`Ring::wait`] while requests wait on standing receives: until
    /// `min_complete` CQEs are in the CQ, but never for long (a shutdown does
    /// not end a standing receive: see [`Ring::end_shut_receives`]).
    ///
    /// A standing receive's arrivals reach the CQ through one task-work item
    /// per wake-up of its socket, which wakes a waiter (under DEFER_TASKRUN)
    /// only when it waits for at most that many CQEs: waiting for 8 at once
    /// received 0.61-0.71 M datagrams/s, one at a time 1.5 M. So the wait
    /// goes one CQE at a time, and the caller drains the CQ once, at the end
    /// (one CQ head store a reap). A datagram's CQE completes one waiting
    /// request; a stream's may complete several, so for a stream the wait
    /// ends at the first; and once the CQ holds as many arrivals as the
    /// kernel had buffers, the next CQE would end the standing receive (out
    /// of buffers), which only a drain starts again.
    pub(super) fn wait_for_arrivals(&mut self, min_complete: usize) -> io::Result<()> {
        let mut queued = self.ring.cq_len();
        let min_complete = if self.receivers.stream_waits() {
            min_complete.min(self.requests_in_kernel() + 1)
        } else {
            min_complete
        };
        if min_complete == 0 {
            return self.wait_at_most(0, SHUTDOWN_LOOK);
        }
        let buffers = self.receivers.buffers_in_kernel() + self.requests_in_kernel();
        while queued < min_complete && queued < buffers {
            self.wait_at_most(queued + 1, SHUTDOWN_LOOK)?;
            let now = self.ring.cq_len();
            if now <= queued {
                // Nothing came in the time: the socket may have been shut down.
                self.end_shut_receives();
                return Ok(());
            }
            queued = now;
        }
        Ok(())
    }

    /// Standing receives started so far, on any socket: one per socket, and
    /// one more each time the kernel ended one (out of buffers, an error).
    #[cfg(test)]
    pub(crate) fn standing_receives_started(&self) -> u64 {
        self.receivers.started
    }

    /// True when socket `handle` receives through a standing receive.
    #[inline]
    pub(crate) fn is_listening(&self, handle: u32) -> bool {
        self.receivers
            .by_handle
            .get(handle as usize)
            .is_some_and(Option::is_some)
    }

    /// Offers a receive on a listening socket: it takes what arrived, if
    /// anything did, or waits for what arrives next (starting the socket's
    /// standing receive if none stands).
    ///
    /// A datagram socket's buffers are as large as its first receive, or as
    /// its protocol's largest datagram (UDP's) if larger. A later receive
    /// longer than them, on a socket whose datagrams may be as long (a Unix
    /// socket's), could get a datagram cut short of its length, which a
    /// `recv` of that length would not: it completes with `EMSGSIZE` at
    /// once, and nothing is taken from the socket.
    pub(crate) fn receive(&mut self, request: Request) -> Receive {
        let handle = request.file.0;
        let receiver = self.receivers.receiver(handle);
        let len = request.buffer().map_or(0, |buf| buf.len());
        if receiver.datagram
            && receiver.largest.is_none()
            && receiver.buffers.is_some()
            && len > receiver.size as usize
        {
            return Receive::Done(request.complete(-i64::from(libc::EMSGSIZE)));
        }
        if receiver.waiting.is_empty() && receiver.has_arrivals() {
            return Receive::Done(receiver.take(request));
        }
        let size = request.buffer().map_or(0, |buf| buf.len());
        if let Err(error) = receiver.provide_buffers(size) {
            return Receive::Done(
                request.complete(-i64::from(error.raw_os_error().unwrap_or(libc::ENOMEM))),
            );
        }
        receiver.waiting.push_back(request);
        let stands = receiver.arm.is_some();
        self.receivers.waiting += 1;
        match self.arm_unless(stands, handle) {
            Ok(()) => {}
            // The SQ is full of requests not yet committed: the standing
            // receive goes in after them, at the commit.
            Err(error) if error.raw_os_error() == Some(libc::EAGAIN) => {
                self.receivers.rearm = true;
            }
            Err(error) => {
                let receiver = self.receivers.receiver(handle);
                let request = receiver.waiting.pop_back().expect("just queued");
                self.receivers.waiting -= 1;
                return Receive::Refused(request, error);
            }
        }
        Receive::Waiting
    }

    /// [`Ring::arm`] unless a receive `stands` already.
    fn arm_unless(&mut self, stands: bool, handle: u32) -> io::Result<()> {
        if stands { Ok(()) } else { self.arm(handle) }
    }

    /// Puts socket `handle`'s standing receive into the SQ: `EAGAIN` when
    /// the SQ has no room for it (requests not yet committed fill it).
    fn arm(&mut self, handle: u32) -> io::Result<()> {
        let slot = self
            .arm_free
            .pop()
            .expect("each listening socket has a slot for its standing receive");
        let entry = self.receivers.receiver(handle).entry(slot);
        // SAFETY: a standing receive points at no memory of ours but its
        // buffer group's, which the receiver registered and keeps until the
        // group is unregistered, which `forget` does only after the receive
        // has ended; a ring dropped with one still out closes first, or
        // leaks the receivers when it cannot wait for the kernel.
        if let Err(error) = unsafe { self.push_entry(&entry) } {
            self.arm_free.push(slot);
            return Err(error);
        }
        self.receivers.arm_of[slot as usize] = Some(handle);
        self.receivers.arms += 1;
        self.receivers.started += 1;
        self.receivers.receiver(handle).arm = Some(slot);
        self.pushed(slot);
        Ok(())
    }

    /// Starts the standing receive again wherever requests wait without one,
    /// and hands it to the kernel unless requests not yet committed are in
    /// the SQ before it (the next commit takes it with them then).
    #[inline]
    pub(crate) fn rearm(&mut self) {
        // Every commit and drain asks: one test when no receive stands.
        if self.receivers.rearm {
            self.rearm_receives();
        }
    }

    #[inline(never)]
    fn rearm_receives(&mut self) {
        if !std::mem::take(&mut self.receivers.rearm) || self.receivers.closing {
            return;
        }
        // More sockets may wait than the SQ has room for: what fits goes
        // down, then the rest, a round for each SQ-full.
        for _ in 0..=self.receivers.listening.len() {
            let mut left = false;
            for index in 0..self.receivers.listening.len() {
                let handle = self.receivers.listening[index];
                let receiver = self.receivers.receiver(handle);
                if receiver.arm.is_none()
                    && !receiver.waiting.is_empty()
                    && !receiver.has_ended()
                    && self.arm(handle).is_err()
                {
                    left = true;
                }
            }
            // Down at once unless requests not yet committed are in the SQ
            // before them (the next commit takes them with those).
            let (unsubmitted_arms, _) = self.receivers.census(&self.awaiting_submit);
            let only_arms = unsubmitted_arms > 0 && unsubmitted_arms == self.unsubmitted.len();
            if only_arms && self.submit_all().is_err() {
                left = true;
            }
            if !left {
                return;
            }
            if !only_arms {
                break;
            }
        }
        // Tried again at the next drain or commit.
        self.receivers.rearm = true;
    }

    /// Ends the standing receives of sockets shut down for reading, whose
    /// requests would otherwise wait for ever: the kernel's receive finds
    /// nothing there without blocking (`EAGAIN`; a datagram socket returns
    /// 0 only to a receive that blocks), and a standing receive never
    /// blocks. Cancelled, each ends, and its requests complete with 0 after
    /// what had arrived.
    pub(crate) fn end_shut_receives(&mut self) {
        for index in 0..self.receivers.listening.len() {
            let handle = self.receivers.listening[index];
            let receiver = self.receivers.receiver(handle);
            let Some(slot) = receiver.arm else { continue };
            if receiver.shut
                || receiver.waiting.is_empty()
                || !crate::sys::is_shut_for_reading(receiver.fd).unwrap_or(false)
            {
                continue;
            }
            receiver.shut = true;
            // Its end comes as a CQE (-ECANCELED) to the next drain; should
            // the cancel fail, the next look tries again.
            if self
                .sync_cancel_slot(slot)
                .is_err_and(|e| e.raw_os_error() != Some(libc::ENOENT))
            {
                self.receivers.receiver(handle).shut = false;
            }
        }
    }

    /// Stops receiving on socket `handle`: cancels its standing receive,
    /// waits for it to end, and unregisters its buffers. What arrived and
    /// no request took is dropped, as closing a socket drops what it holds.
    /// No request may wait on it.
    pub(crate) fn forget(&mut self, handle: u32) -> io::Result<()> {
        if !self.is_listening(handle) {
            return Ok(());
        }
        if let Some(slot) = self.receivers.receiver(handle).arm {
            if self.awaiting_submit[slot as usize] {
                self.submit_all()?;
            }
            match self.sync_cancel_slot(slot) {
                Err(e)
                    if e.raw_os_error() != Some(libc::ENOENT)
                        && e.raw_os_error() != Some(libc::ETIME) =>
                {
                    return Err(e);
                }
                _ => {}
            }
            let deadline = std::time::Instant::now() + SETTLE_LIMIT;
            let mut dropped = Vec::new();
            while self.receivers.receiver(handle).arm.is_some() {
                self.drain(usize::MAX, &mut dropped);
                dropped.clear();
                if self.receivers.receiver(handle).arm.is_none() {
                    break;
                }
                if std::time::Instant::now() >= deadline {
                    return Err(io::Error::from_raw_os_error(libc::ETIME));
                }
                self.wait_at_most(1, WAIT_SLICE)?;
            }
        }
        let group = self.receivers.receiver(handle).group();
        let receiver = self.receivers.by_handle[handle as usize].take();
        self.receivers.listening.retain(|&h| h != handle);
        if let Err(e) = self.ring.unregister_buf_ring(group) {
            // The kernel may still hold the buffers: never free them.
            std::mem::forget(receiver);
            return Err(e);
        }
        Ok(())
    }
}
