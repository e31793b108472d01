//! The receivers of a ring's standing multishot receives: each socket's
//! provided-buffer ring, its buffers, what arrived, and its waiting requests.

use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::{cqueue, opcode, squeue, types};

use super::types::FileRef;
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
pub(super) struct Region {
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
    pub(super) fd: RawFd,
    /// It was shut down for reading: its standing receive was cancelled,
    /// and every request after what arrived completes with 0.
    pub(super) shut: bool,
    group: u16,
    pub(super) datagram: bool,
    /// The largest datagram it can receive, where its protocol bounds it.
    pub(super) largest: Option<u32>,
    /// `RING_ENTRIES` entries, registered with the kernel as `group`.
    entries: Region,
    /// `count` buffers of `size` bytes, made for the first request (whose
    /// length sets their size) and handed to the kernel then.
    pub(super) buffers: Option<Region>,
    pub(super) size: u32,
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
        ring: &super::raw::RawRing,
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
            ring.register_buf_ring(entries.base.as_ptr().cast(), u32::from(RING_ENTRIES), group)?;
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
    fn arrive(&mut self, result: i32, flags: u32) -> bool {
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
    fn deliver(&mut self, budget: usize, out: &mut Vec<Completion>) -> usize {
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

/// The receivers of a ring, by file handle, and what they hold of it.
#[derive(Debug, Default)]
pub(super) struct Receivers {
    pub(super) by_handle: Vec<Option<Box<Receiver>>>,
    /// Handles that have a receiver.
    pub(super) listening: Vec<u32>,
    /// Per slot: the socket whose standing receive holds it.
    pub(super) arm_of: Vec<Option<u32>>,
    /// Slots held by standing receives.
    pub(super) arms: usize,
    /// Requests waiting in receivers.
    pub(super) waiting: usize,
    /// Some receiver has arrivals and waiting requests that a drain's budget
    /// left unpaired.
    backlog: bool,
    /// Some receiver has waiting requests and no standing receive.
    pub(super) rearm: bool,
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

    pub(super) fn receiver(&mut self, handle: u32) -> &mut Receiver {
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
    pub(super) fn buffers_in_kernel(&self) -> usize {
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
