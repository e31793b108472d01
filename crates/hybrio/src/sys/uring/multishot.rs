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

use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::{cqueue, opcode, squeue, types};

use super::settle::{SETTLE_LIMIT, WAIT_SLICE};
use super::{FileRef, Ring, SHUTDOWN_LOOK};
use crate::request::{Completion, Request};

/// Entries of each socket's provided-buffer ring (a power of two, at most
/// 32768); the socket uses [`buffer_count`] of them.
const RING_ENTRIES: u16 = 1024;

/// Memory a socket's buffers take in all when what arrives is as long as
/// its first receive (the count of buffers is set by it).
const BUFFER_MEMORY: usize = 4 << 20;

/// Fewest buffers a socket gets, however large its receives.
const MIN_BUFFERS: usize = 8;

/// Layout of `struct io_uring_buf`, which the crate's `BufRingEntry` wraps:
/// `addr` at 0, `len` at 8, `bid` at 12, and `resv` at 14 (in entry 0,
/// the ring's tail, which the kernel reads while entries are written).
const ENTRY_SIZE: usize = 16;
const _: () = assert!(std::mem::size_of::<BufRingEntry>() == ENTRY_SIZE);

/// How many buffers of `size` bytes a socket gets: as many as fit in
/// [`BUFFER_MEMORY`], between [`MIN_BUFFERS`] and the ring's entries, a power of two.
fn buffer_count(size: usize) -> usize {
    let fit = (BUFFER_MEMORY / size.max(1)).clamp(MIN_BUFFERS, usize::from(RING_ENTRIES));
    // Round down to a power of two: never more memory than allowed.
    1 << fit.ilog2()
}

/// Zeroed, page-aligned memory mapped for the ring: a page is backed only
/// once written, so buffers sized for the largest datagram cost what the
/// datagrams that arrive fill.
struct Region {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: `Region` owns its mapping; the pointer is only a handle to it,
// and the memory moves with the owner (the ring), used by one thread at a time.
unsafe impl Send for Region {}

impl Region {
    fn new(len: usize) -> io::Result<Region> {
        let len = len.max(1);
        // SAFETY: an anonymous private mapping at an address of the kernel's
        // choosing: it touches no memory of ours, and is unmapped once, in
        // `drop`.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base =
            NonNull::new(base.cast()).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(Region { base, len })
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are the mapping `new` made, unmapped once;
        // the ring keeps a region until the kernel is done with it (see the
        // receivers' registration), and no slice of it outlives `self`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// What one receive of a socket takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Messages {
    /// A stream's next bytes.
    Stream,
    /// One datagram (or message) of at most this many bytes (UDP's).
    Bounded(u32),
    /// One datagram (or message) of any size (a Unix socket's).
    Unbounded,
}

/// What a socket received that no request has taken yet.
#[derive(Debug, Clone, Copy)]
enum Arrival {
    /// `len` bytes in buffer `bid`, of which a stream's requests took `taken`.
    Data { bid: u16, len: u32, taken: u32 },
    /// The end of a stream or a shut-down socket (0, given to every request
    /// from now on), or an error (a negative errno, given to one request).
    End(i64),
}

/// One socket's standing receive, its buffers, and its waiting requests.
pub(super) struct Receiver {
    file: FileRef,
    /// The socket's descriptor, to ask whether it was shut down.
    fd: RawFd,
    /// It was shut down for reading: its standing receive was cancelled,
    /// and every request after what arrived completes with 0.
    shut: bool,
    group: u16,
    datagram: bool,
    /// The largest datagram it can receive, where its protocol bounds it.
    largest: Option<u32>,
    /// `RING_ENTRIES` entries, registered with the kernel as `group`.
    entries: Region,
    /// `count` buffers of `size` bytes, made for the first request (whose
    /// length sets their size) and handed to the kernel then.
    buffers: Option<Region>,
    size: u32,
    /// The ring's tail as this side wrote it; published to the kernel by
    /// [`Receiver::publish`].
    tail: u16,
    /// The slot of the standing receive, while there is one.
    pub(super) arm: Option<u32>,
    pub(super) waiting: VecDeque<Request>,
    arrived: VecDeque<Arrival>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("group", &self.group)
            .field("datagram", &self.datagram)
            .field("size", &self.size)
            .field("arm", &self.arm)
            .field("waiting", &self.waiting.len())
            .field("arrived", &self.arrived.len())
            .finish()
    }
}

impl Receiver {
    /// Registers an empty provided-buffer ring for the socket `file` as
    /// buffer group `group`.
    pub(super) fn register(
        submitter: &io_uring::Submitter<'_>,
        fd: RawFd,
        file: FileRef,
        group: u16,
        messages: Messages,
    ) -> io::Result<Receiver> {
        let entries = Region::new(usize::from(RING_ENTRIES) * ENTRY_SIZE)?;
        // SAFETY: `entries` is a page-aligned allocation of RING_ENTRIES
        // entries, owned by this receiver. The ring keeps every receiver
        // until its group is unregistered, or the ring is closed, or (when
        // the kernel may still use it) for ever: the memory outlives the
        // registration.
        unsafe {
            submitter.register_buf_ring_with_flags(
                entries.base.as_ptr() as u64,
                RING_ENTRIES,
                group,
                0,
            )?;
        }
        Ok(Receiver {
            file,
            fd,
            shut: false,
            group,
            datagram: messages != Messages::Stream,
            largest: match messages {
                Messages::Bounded(largest) => Some(largest),
                _ => None,
            },
            entries,
            buffers: None,
            size: 0,
            tail: 0,
            arm: None,
            waiting: VecDeque::new(),
            arrived: VecDeque::new(),
        })
    }

    /// The buffer group this receiver's buffers are registered as.
    pub(super) fn group(&self) -> u16 {
        self.group
    }

    /// Makes the buffers and hands them all to the kernel; done once, for
    /// the first request, whose length `len` sets how many there are (see
    /// [`buffer_count`]) and their size: `len` bytes, or for a datagram
    /// socket whose protocol bounds its datagrams, the largest datagram, so
    /// that none is ever cut below what a request asks (their pages cost
    /// only once a datagram fills them).
    pub(super) fn provide_buffers(&mut self, len: usize) -> io::Result<()> {
        if self.buffers.is_some() {
            return Ok(());
        }
        let count = buffer_count(len);
        let size = len
            .max(self.largest.unwrap_or(0) as usize)
            .clamp(1, u32::MAX as usize);
        let bytes = count
            .checked_mul(size)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        self.buffers = Some(Region::new(bytes)?);
        self.size = size as u32;
        for bid in 0..count {
            // count <= RING_ENTRIES, which fits in u16.
            self.provide(bid as u16);
        }
        self.publish();
        Ok(())
    }

    /// Writes buffer `bid` into the next free entry; the kernel sees it
    /// after [`publish`](Self::publish).
    fn provide(&mut self, bid: u16) {
        let buffers = self
            .buffers
            .as_ref()
            .expect("buffers exist before any is provided");
        let addr = buffers.base.as_ptr() as u64 + u64::from(bid) * u64::from(self.size);
        let index = usize::from(self.tail & (RING_ENTRIES - 1));
        let mut fields = [0u8; 14];
        fields[..8].copy_from_slice(&addr.to_ne_bytes());
        fields[8..12].copy_from_slice(&self.size.to_ne_bytes());
        fields[12..].copy_from_slice(&bid.to_ne_bytes());
        let entry = self.entries.base.as_ptr().wrapping_add(index * ENTRY_SIZE);
        // SAFETY: `index` < RING_ENTRIES, so the entry lies inside
        // `entries`. The kernel reads an entry only once the published tail
        // covers it, and this one is past the tail until `publish`. The
        // write covers the entry's `addr`, `len` and `bid` fields only (its
        // first 14 bytes), never `resv` (entry 0's is the tail, which the
        // kernel may be reading).
        unsafe { std::ptr::copy_nonoverlapping(fields.as_ptr(), entry, fields.len()) };
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publishes the tail: the entries written so far become the kernel's.
    fn publish(&self) {
        let tail = self.entries.base.as_ptr().wrapping_add(14).cast::<u16>();
        // SAFETY: entry 0's `resv` field, at byte 14 of `entries`, is the
        // ring's tail: a u16, aligned, inside the allocation, and shared with
        // the kernel, which reads it with acquire ordering; the release store
        // orders the entries' writes before it.
        let tail = unsafe { AtomicU16::from_ptr(tail) };
        tail.store(self.tail, Ordering::Release);
    }

    /// Bytes `from..from + len` of buffer `bid`.
    fn data(&self, bid: u16, from: u32, len: u32) -> &[u8] {
        let buffers = self.buffers.as_ref().expect("data arrives only in buffers");
        let start = usize::from(bid) * self.size as usize + from as usize;
        let end = start + len as usize;
        assert!(
            end <= buffers.len(),
            "the kernel filled buffer {bid} within its size"
        );
        let first = buffers.base.as_ptr().wrapping_add(start);
        // SAFETY: the range lies inside `buffers` (checked above). The kernel
        // wrote buffer `bid` before posting the CQE that named it (the CQ's
        // tail is read with acquire ordering), and will not write it again
        // until `provide` hands it back, which happens only after this slice
        // is gone (`deliver` copies out first).
        unsafe { std::slice::from_raw_parts(first, end - start) }
    }

    /// The SQE of the standing receive, tagged with `slot`.
    pub(super) fn entry(&self, slot: u32) -> squeue::Entry {
        let entry = match self.file {
            FileRef::Fd(fd) => opcode::RecvMulti::new(types::Fd(fd), self.group).build(),
            FileRef::Fixed(index) => {
                opcode::RecvMulti::new(types::Fixed(index), self.group).build()
            }
        };
        entry.user_data(u64::from(slot))
    }

    /// Takes in one CQE of the standing receive; returns true when it ended
    /// it (no `IORING_CQE_F_MORE`).
    pub(super) fn arrive(&mut self, result: i32, flags: u32) -> bool {
        match cqueue::buffer_select(flags) {
            Some(bid) if result > 0 || (result == 0 && self.datagram) => {
                self.arrived.push_back(Arrival::Data {
                    bid,
                    len: result as u32,
                    taken: 0,
                });
            }
            Some(bid) => {
                // A stream's empty receive is its end; the buffer goes back.
                self.provide(bid);
                self.publish();
                self.end_of_stream();
            }
            // A stream's end, or a datagram socket shut down: every receive
            // from now on returns 0, as `recv` would.
            None if result == 0 => self.end_of_stream(),
            // Out of buffers, or cancelled: no data, and nothing to report;
            // the receive is started again when a request waits for it.
            None if result == -libc::ENOBUFS || result == -libc::ECANCELED => {}
            None if result < 0 => self.arrived.push_back(Arrival::End(i64::from(result))),
            None => {}
        }
        let ended = !cqueue::more(flags);
        if ended {
            self.arm = None;
            if self.shut {
                self.end_of_stream();
            }
        }
        ended
    }

    fn end_of_stream(&mut self) {
        if !matches!(self.arrived.back(), Some(Arrival::End(0))) {
            self.arrived.push_back(Arrival::End(0));
        }
    }

    /// True when the stream has ended: requests complete with 0 at once, and
    /// no receive needs to stand.
    pub(super) fn has_ended(&self) -> bool {
        matches!(self.arrived.back(), Some(Arrival::End(0)))
    }

    /// Buffers provided to the kernel and not yet drained back as arrivals.
    fn buffers_in_kernel(&self) -> usize {
        if self.buffers.is_none() {
            return 0;
        }
        let held = self
            .arrived
            .iter()
            .filter(|a| matches!(a, Arrival::Data { .. }))
            .count();
        buffer_count(self.size as usize).saturating_sub(held)
    }

    /// True when something arrived that no request has taken.
    pub(super) fn has_arrivals(&self) -> bool {
        !self.arrived.is_empty()
    }

    /// Hands what arrived to the waiting requests, oldest first, completing
    /// at most `budget` of them into `out`; returns how many.
    pub(super) fn deliver(&mut self, budget: usize, out: &mut Vec<Completion>) -> usize {
        let mut delivered = 0;
        while delivered < budget && self.has_arrivals() {
            let Some(request) = self.waiting.pop_front() else {
                break;
            };
            out.push(self.take(request));
            delivered += 1;
        }
        delivered
    }

    /// Completes `request` with the oldest arrival; there must be one.
    pub(super) fn take(&mut self, mut request: Request) -> Completion {
        let arrival = *self
            .arrived
            .front()
            .expect("taken only when something arrived");
        let result = match arrival {
            Arrival::End(result) => {
                // The end of a stream stays, for every request after this one.
                if result != 0 {
                    self.arrived.pop_front();
                }
                result
            }
            Arrival::Data { bid, len, taken } => {
                let room = request.buffer().map_or(0, |buf| buf.len());
                let n = (len - taken).min(u32::try_from(room).unwrap_or(u32::MAX));
                if let Some(buf) = request.buffer_mut() {
                    buf.as_mut_slice()[..n as usize].copy_from_slice(self.data(bid, taken, n));
                }
                // A datagram is received whole or cut, never in parts.
                if self.datagram || taken + n == len {
                    self.arrived.pop_front();
                    self.provide(bid);
                    self.publish();
                } else if let Some(Arrival::Data { taken, .. }) = self.arrived.front_mut() {
                    *taken += n;
                }
                i64::from(n)
            }
        };
        request.complete(result)
    }
}

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

/// The receivers of a ring, by file handle, and what they hold of it.
#[derive(Debug, Default)]
pub(super) struct Receivers {
    by_handle: Vec<Option<Box<Receiver>>>,
    /// Handles that have a receiver.
    listening: Vec<u32>,
    /// Per slot: the socket whose standing receive holds it.
    arm_of: Vec<Option<u32>>,
    /// Slots held by standing receives.
    pub(super) arms: usize,
    /// Requests waiting in receivers.
    pub(super) waiting: usize,
    /// Some receiver has arrivals and waiting requests that a drain's budget
    /// left unpaired.
    backlog: bool,
    /// Some receiver has waiting requests and no standing receive.
    rearm: bool,
    /// The ring is being dropped: standing receives are not started again.
    pub(super) closing: bool,
    /// Standing receives started, on any socket.
    pub(super) started: u64,
}

impl Receivers {
    /// The socket whose standing receive holds `slot`, if one does.
    #[inline]
    pub(super) fn arm_of(&self, slot: u64) -> Option<u32> {
        if self.arms == 0 {
            return None;
        }
        usize::try_from(slot)
            .ok()
            .and_then(|slot| self.arm_of.get(slot).copied().flatten())
    }

    fn receiver(&mut self, handle: u32) -> &mut Receiver {
        self.by_handle[handle as usize]
            .as_mut()
            .expect("a listening handle has its receiver")
    }

    /// Takes in a CQE of the standing receive in `slot` (of socket
    /// `handle`) and completes at most `budget` waiting requests into
    /// `out`. Returns how many, and whether the slot is free now.
    pub(super) fn arrive(
        &mut self,
        handle: u32,
        slot: u64,
        cqe: &cqueue::Entry,
        budget: usize,
        out: &mut Vec<Completion>,
    ) -> (usize, bool) {
        let receiver = self.receiver(handle);
        let ended = receiver.arrive(cqe.result(), cqe.flags());
        let delivered = receiver.deliver(budget, out);
        let backlog = receiver.has_arrivals() && !receiver.waiting.is_empty();
        let rearm = ended && !receiver.waiting.is_empty() && !receiver.has_ended();
        self.waiting -= delivered;
        self.backlog |= backlog;
        self.rearm |= rearm;
        if ended {
            self.arm_of[slot as usize] = None;
            self.arms -= 1;
        }
        (delivered, ended)
    }

    /// True when a stream's requests wait on its standing receive: one CQE
    /// of it may complete several of them.
    pub(super) fn stream_waits(&self) -> bool {
        self.listening.iter().any(|&handle| {
            self.by_handle[handle as usize]
                .as_ref()
                .is_some_and(|r| !r.datagram && !r.waiting.is_empty())
        })
    }

    /// Buffers the kernel still has for arrivals, on every socket (CQEs not
    /// yet drained have taken some of them).
    fn buffers_in_kernel(&self) -> usize {
        self.listening
            .iter()
            .filter_map(|&handle| self.by_handle[handle as usize].as_ref())
            .map(|receiver| receiver.buffers_in_kernel())
            .sum()
    }

    /// Pairs arrivals a drain's budget left with their waiting requests.
    pub(super) fn deliver_backlog(&mut self, budget: usize, out: &mut Vec<Completion>) -> usize {
        if !std::mem::take(&mut self.backlog) {
            return 0;
        }
        let mut delivered = 0;
        for index in 0..self.listening.len() {
            let handle = self.listening[index];
            let receiver = self.receiver(handle);
            delivered += receiver.deliver(budget - delivered, out);
            if receiver.has_arrivals() && !receiver.waiting.is_empty() {
                self.backlog = true;
            }
        }
        self.waiting -= delivered;
        delivered
    }

    /// Standing receives among the SQEs not yet handed to the kernel, and
    /// waiting requests whose standing receive the kernel has.
    pub(super) fn census(&self, awaiting_submit: &[bool]) -> (usize, usize) {
        let mut unsubmitted_arms = 0;
        let mut waiting_in_kernel = 0;
        for &handle in &self.listening {
            let Some(receiver) = self.by_handle[handle as usize].as_ref() else {
                continue;
            };
            match receiver.arm {
                Some(slot) if awaiting_submit[slot as usize] => unsubmitted_arms += 1,
                Some(_) => waiting_in_kernel += receiver.waiting.len(),
                None => {}
            }
        }
        (unsubmitted_arms, waiting_in_kernel)
    }
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
        let receiver = Receiver::register(&self.ring.submitter(), fd, file, group, messages)?;
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
        let mut queued = self.ring.completion().len();
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
            let now = self.ring.completion().len();
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
        if let Err(e) = self.ring.submitter().unregister_buf_ring(group) {
            // The kernel may still hold the buffers: never free them.
            std::mem::forget(receiver);
            return Err(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_counts_keep_within_the_memory_and_the_ring() {
        assert_eq!(buffer_count(64), 1024);
        assert_eq!(buffer_count(4096), 1024);
        assert_eq!(buffer_count(8192), 512);
        assert_eq!(buffer_count(65536), 64);
        assert_eq!(buffer_count(3 << 20), MIN_BUFFERS);
        for size in [1, 100, 1500, 9000, 65507, 1 << 20] {
            let count = buffer_count(size);
            assert!(count.is_power_of_two());
            assert!(count * size <= BUFFER_MEMORY.max(MIN_BUFFERS * size));
        }
    }
}
