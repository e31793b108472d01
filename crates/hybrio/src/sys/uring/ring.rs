//! The ring itself: its slots, pushing requests into the SQ, submitting,
//! waiting and draining.

use std::collections::VecDeque;
use std::io;

use io_uring::{opcode, squeue, types};
use rustix::io_uring as kernel;

use super::entry::build_entry;
use super::raw::RawRing;
use super::receivers::Receivers;
use super::types::{CANCEL_TAG, FileRef, MAX_STALLS, Push, is_transient};
use crate::buf::{Buf, BufPool};
use crate::request::{Completion, Request, Verdict};

/// Largest single registered buffer the kernel accepts.
const MAX_REGISTERED_IOVEC: usize = 1 << 30;

/// Waits for room in a full SQ before [`Ring::push`] gives up on a request.
const MAX_SQ_WAITS: u32 = 16;

/// A buffer pool registered with the ring.
#[derive(Debug)]
struct FixedBuffers {
    /// Held so the arena outlives the registration.
    pool: BufPool,
    /// Buffers covered by each registered iovec (the last may cover fewer).
    bufs_per_iovec: u32,
}

/// A ring and the requests it owns until they complete.
pub(crate) struct Ring {
    // Declared first so the ring closes before the slab and the registered
    // pool are dropped (after `Drop::drop` has waited for every request).
    pub(super) ring: RawRing,
    /// The requests' slots: as many as the engine's depth.
    pub(super) slots: Vec<Option<Request>>,
    free: Vec<u32>,
    /// Slots past the requests', one for each listening socket's standing
    /// receive, that are free: a standing receive never takes a request's
    /// room (a ring of depth 1 receives on any number of sockets).
    pub(super) arm_free: Vec<u32>,
    /// Slots pushed, requests' and standing receives'.
    pub(super) occupied: usize,
    /// Slots pushed and not yet handed to the kernel, in SQ order; a slot
    /// is in it exactly when `awaiting_submit[slot]` is set.
    pub(super) unsubmitted: VecDeque<u32>,
    /// Per slot, requests' and standing receives' alike.
    pub(super) awaiting_submit: Vec<bool>,
    pub(super) enabled: bool,
    defer_taskrun: bool,
    pub(super) sqpoll: bool,
    iopoll: bool,
    fixed: Option<FixedBuffers>,
    /// `RWF_*` flags for every read and write (`RWF_NOWAIT`).
    rw_flags: i32,
    /// Emulated device: per slot, the result a timeout request completes
    /// with (the data moved at submission), and the deadline its SQE points
    /// at. Empty until the first [`push_timed`](Ring::push_timed); a boxed
    /// slice, so the deadlines never move while the kernel may read them.
    timed_results: Vec<Option<i64>>,
    deadlines: Box<[types::Timespec]>,
    /// Tests: behave as a kernel without `IORING_REGISTER_SYNC_CANCEL` (before 6.0).
    #[cfg(test)]
    pub(crate) without_sync_cancel: bool,
    /// Tests: an SQPOLL thread that publishes its SQ head late.
    #[cfg(test)]
    pub(crate) unpublished: Option<UnpublishedHead>,
    /// Tests: the next this many requests' answers are "try again"
    /// (`EAGAIN`), as a kernel short of resources gives, whatever the
    /// kernel did with them (a read is done again).
    #[cfg(test)]
    pub(crate) answer_eagain: u32,
    /// How many times a drain moved the CQ head and published it to the
    /// kernel (one store, with release ordering, when its view of the CQ ends).
    pub(crate) cq_head_commits: u64,
    /// Slots whose answer [`Ring::drain_with`] found to be sent again: their
    /// requests stay in them until [`Ring::push_again`] or [`Ring::finish`].
    again: Vec<u32>,
    /// Sockets that receive through a standing multishot receive, and the
    /// requests waiting on them. Declared after `ring`: their buffers are
    /// freed only once the ring is closed.
    pub(super) receivers: Receivers,
}

/// Tests: emulates what an SQPOLL kernel thread does now and then, at its
/// own pace: it posts the completions of a batch before it moves the SQ head
/// past the batch, so the entries of requests already reaped still fill the
/// SQ. Here every completion drained since the last entry into the kernel
/// keeps its SQ entry filled, up to one batch (the ring's capacity).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct UnpublishedHead {
    pub(crate) entries: usize,
}

impl Ring {
    /// Wraps a freshly built ring that will hold at most `capacity` requests.
    ///
    /// `enabled` is false for a ring built with `IORING_SETUP_R_DISABLED`;
    /// `defer_taskrun` says whether it was built with `IORING_SETUP_DEFER_TASKRUN`.
    /// `capacity` must not exceed the SQ size, nor the CQ size: with one CQE
    /// per request, the CQ then never overflows.
    pub(crate) fn new(ring: RawRing, capacity: usize, enabled: bool, defer_taskrun: bool) -> Ring {
        debug_assert!(capacity <= ring.params().sq_entries as usize);
        debug_assert!(capacity <= ring.params().cq_entries as usize);
        let sqpoll = ring.is_setup(kernel::IoringSetupFlags::SQPOLL);
        let iopoll = ring.is_setup(kernel::IoringSetupFlags::IOPOLL);
        let slot_count = u32::try_from(capacity).expect("ring capacity fits in u32");
        Ring {
            ring,
            slots: std::iter::repeat_with(|| None).take(capacity).collect(),
            free: (0..slot_count).rev().collect(),
            arm_free: Vec::new(),
            occupied: 0,
            unsubmitted: VecDeque::with_capacity(capacity),
            awaiting_submit: vec![false; capacity],
            enabled,
            defer_taskrun,
            sqpoll,
            iopoll,
            fixed: None,
            rw_flags: 0,
            timed_results: Vec::new(),
            deadlines: Box::default(),
            #[cfg(test)]
            without_sync_cancel: false,
            #[cfg(test)]
            unpublished: None,
            #[cfg(test)]
            answer_eagain: 0,
            cq_head_commits: 0,
            again: Vec::new(),
            receivers: Receivers::default(),
        }
    }

    /// Sets the `RWF_*` flags of every read and write pushed from now on.
    pub(crate) fn set_rw_flags(&mut self, flags: i32) {
        self.rw_flags = flags;
    }

    /// For registering files and other resources.
    pub(crate) fn raw(&self) -> &RawRing {
        &self.ring
    }

    /// Requests pushed (or waiting on a standing receive) and not yet drained.
    #[inline]
    pub(crate) fn in_flight(&self) -> usize {
        self.occupied - self.receivers.arms + self.receivers.waiting
    }

    /// CQEs in the CQ, not yet drained.
    #[inline]
    pub(crate) fn cq_len(&mut self) -> usize {
        self.ring.cq_len()
    }

    /// True when requests wait on standing receives.
    #[inline]
    pub(crate) fn has_waiting_receives(&self) -> bool {
        self.receivers.waiting > 0
    }

    /// True when the SQ holds entries not yet handed to the kernel
    /// (requests, or standing receives).
    #[inline]
    pub(crate) fn has_unsubmitted_entries(&self) -> bool {
        !self.unsubmitted.is_empty()
    }

    /// Requests pushed since the last submit.
    #[inline]
    pub(crate) fn unsubmitted(&self) -> usize {
        if self.receivers.arms == 0 {
            return self.unsubmitted.len();
        }
        let (unsubmitted_arms, _) = self.receivers.census(&self.awaiting_submit);
        self.unsubmitted.len() - unsubmitted_arms
    }

    /// Requests handed to the kernel whose completions have not been
    /// drained yet, counting those waiting on a standing receive the kernel has.
    #[inline]
    pub(crate) fn in_kernel(&self) -> usize {
        if self.receivers.arms == 0 {
            // Requests waiting without a standing receive are not in the kernel.
            return self.slots_in_kernel();
        }
        let (unsubmitted_arms, waiting_in_kernel) = self.receivers.census(&self.awaiting_submit);
        let submitted_arms = self.receivers.arms - unsubmitted_arms;
        self.slots_in_kernel() - submitted_arms + waiting_in_kernel
    }

    /// Requests the kernel has that complete without anything coming from
    /// outside: not the standing receives nor the requests waiting on them.
    #[inline]
    pub(super) fn requests_in_kernel(&self) -> usize {
        if self.receivers.arms == 0 {
            return self.slots_in_kernel();
        }
        let (unsubmitted_arms, _) = self.receivers.census(&self.awaiting_submit);
        self.slots_in_kernel() - (self.receivers.arms - unsubmitted_arms)
    }

    /// Slots the kernel has, standing receives included.
    #[inline]
    pub(super) fn slots_in_kernel(&self) -> usize {
        self.occupied - self.unsubmitted.len()
    }

    /// True for a ring built with `IORING_SETUP_SQPOLL`.
    pub(crate) fn is_sqpoll(&self) -> bool {
        self.sqpoll
    }

    /// True for a ring built with `IORING_SETUP_IOPOLL`.
    pub(crate) fn is_iopoll(&self) -> bool {
        self.iopoll
    }

    /// True when a buffer pool is registered.
    pub(crate) fn has_fixed_buffers(&self) -> bool {
        self.fixed.is_some()
    }

    /// True when completions reach the CQ only inside `io_uring_enter(GETEVENTS)`:
    /// `DEFER_TASKRUN` runs task work only there, and `IOPOLL` polls the device only there.
    #[inline]
    pub(crate) fn completes_only_on_enter(&self) -> bool {
        self.defer_taskrun || self.iopoll
    }

    /// Enables a ring built disabled; no-op otherwise. Enabling binds a
    /// `SINGLE_ISSUER` ring to the calling thread.
    #[inline]
    pub(crate) fn enable(&mut self) -> io::Result<()> {
        if self.enabled {
            return Ok(());
        }
        self.enable_now()
    }

    #[cold]
    fn enable_now(&mut self) -> io::Result<()> {
        self.ring.enable_rings()?;
        self.enabled = true;
        if self.defer_taskrun {
            // A SINGLE_ISSUER ring is this thread's from now on: it can be
            // named by its index here, and give its descriptor back.
            self.ring.close_descriptor();
        }
        Ok(())
    }

    /// The ring's descriptor, unless it gave it back (see [`Ring::enable`]).
    pub(crate) fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.ring.descriptor()
    }

    /// Whether the ring still holds a descriptor of its own.
    #[cfg(test)]
    pub(crate) fn holds_descriptor(&self) -> bool {
        self.ring.has_descriptor()
    }

    /// Registers `pool`'s arena as fixed buffers; requests whose buffer comes
    /// from it then use `READ_FIXED`/`WRITE_FIXED`.
    ///
    /// The arena is one iovec unless it exceeds the kernel's 1 GiB limit per
    /// registered buffer, in which case it is split at buffer boundaries.
    pub(crate) fn register_buffers(&mut self, pool: &BufPool) -> io::Result<()> {
        if self.fixed.is_some() {
            return Err(io::Error::from_raw_os_error(libc::EBUSY));
        }
        let size = pool.buffer_size();
        let count = pool.count();
        let per_iovec = (MAX_REGISTERED_IOVEC / size).clamp(1, count);
        let base = pool.arena_ptr();
        let iovecs: Vec<libc::iovec> = (0..count)
            .step_by(per_iovec)
            .map(|first| libc::iovec {
                iov_base: base.wrapping_add(first * size).cast(),
                iov_len: per_iovec.min(count - first) * size,
            })
            .collect();
        debug_assert_eq!(
            iovecs.iter().map(|iov| iov.iov_len).sum::<usize>(),
            pool.arena_len()
        );
        // SAFETY: every iovec lies inside `pool`'s arena, and `self.fixed`
        // keeps a handle to that arena for as long as this ring exists, so the
        // registered memory outlives the registration. The kernel writes to it
        // only for requests, whose buffers the slab owns until they complete.
        unsafe { self.ring.register_buffers(&iovecs)? };
        let bufs_per_iovec =
            u32::try_from(per_iovec).expect("per_iovec <= count, which fits in u32");
        self.fixed = Some(FixedBuffers {
            pool: pool.clone(),
            bufs_per_iovec,
        });
        Ok(())
    }

    /// The registered-buffer index covering `buf`, if its pool is registered.
    #[inline]
    fn fixed_index(&self, buf: &Buf) -> Option<u16> {
        let fixed = self
            .fixed
            .as_ref()
            .filter(|f| f.pool.id() == buf.pool_id())?;
        u16::try_from(buf.index() / fixed.bufs_per_iovec).ok()
    }

    /// Puts `request` into the SQ, to be handed to the kernel at the next
    /// [`submit_all`](Self::submit_all) (or at once, with SQPOLL on an enabled
    /// ring). Hands the request back as [`Push::Full`] only when every slot is
    /// taken: a free slot always finds room in the SQ, waiting for it if an
    /// SQPOLL thread has not yet published how far it read.
    ///
    /// The caller vets the request: `offset` must not exceed `i64::MAX` (io_uring
    /// reads `-1` as "the current position"). A read or write without a buffer
    /// transfers nothing. `rw_flags` (the file's `RWF_*` flags) go with a read
    /// or a write, beside the ring's own.
    #[inline]
    pub(crate) fn push(&mut self, request: Request, file: FileRef, rw_flags: i32) -> Push {
        let Some(slot) = self.free.pop() else {
            return Push::Full(request);
        };
        let index = slot as usize;
        let buf_index = request.buffer().and_then(|buf| self.fixed_index(buf));
        let request = self.slots[index].insert(request);
        let rw_flags = self.rw_flags | rw_flags;
        let entry = build_entry(request, file, buf_index, rw_flags).user_data(u64::from(slot));
        // SAFETY: the entry points at the buffer of the request now stored in
        // `self.slots[index]`, and names that slot in its user_data. The slot
        // gives the request up only when `drain` sees the CQE with that
        // user_data (the kernel is done with the buffer), or in `Drop` after
        // waiting for it, or never (leaked) if waiting fails. The buffer's
        // memory does not move when the request moves: it lives in the pool's
        // arena, kept alive by the `Buf`, or in the caller's memory, which
        // `Buf::from_raw_parts`'s caller promised valid until the `Buf` drops.
        // If the push fails, the kernel never saw the entry and the request
        // goes back to the caller.
        if let Err(error) = unsafe { self.push_entry(&entry) } {
            let request = self.slots[index].take().expect("slot was just filled");
            self.free.push(slot);
            return Push::Refused(request, error);
        }
        self.pushed(slot);
        Push::Queued
    }

    /// Puts `entry` into the SQ; when the SQ has no room (only an SQPOLL
    /// ring's can, see [`Ring::wait_for_sq_room`]), waits for room and tries
    /// again, at most [`MAX_SQ_WAITS`] times.
    ///
    /// # Safety
    ///
    /// Whatever `entry` points at must stay valid, and unmoved, until the
    /// kernel posts its CQE (as for `io_uring::squeue::SubmissionQueue::push`).
    #[inline(always)]
    pub(super) unsafe fn push_entry(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        let mut waits = 0;
        loop {
            #[cfg(test)]
            let emulated_full = self.emulated_sq_full();
            #[cfg(not(test))]
            let emulated_full = false;
            // SAFETY: the caller's promise, passed on.
            if !emulated_full && unsafe { self.ring.push(entry) } {
                return Ok(());
            }
            if waits == MAX_SQ_WAITS {
                return Err(io::Error::from_raw_os_error(libc::EAGAIN));
            }
            waits += 1;
            self.wait_for_sq_room()?;
        }
    }

    /// A slot's entry is in the SQ: the request is in flight, not yet submitted.
    #[inline]
    pub(super) fn pushed(&mut self, slot: u32) {
        self.occupied += 1;
        self.unsubmitted.push_back(slot);
        self.awaiting_submit[slot as usize] = true;
    }

    /// The SQ is full although a slot is free. Without SQPOLL that cannot
    /// happen (every entry in the SQ holds a slot until submitted); with it,
    /// the kernel thread posts a batch's completions before it publishes the
    /// SQ head past the batch, so entries already done still fill the SQ.
    /// The SQ holds twice the slots, which covers that batch; should it
    /// still be full, `IORING_ENTER_SQ_WAIT` waits (woken, in case the thread
    /// sleeps) until the thread has made room.
    #[cold]
    fn wait_for_sq_room(&mut self) -> io::Result<()> {
        if !self.sqpoll {
            return Err(io::Error::from_raw_os_error(libc::EAGAIN));
        }
        #[cfg(test)]
        self.entered_kernel();
        let flags = kernel::IoringEnterFlags::SQ_WAIT | kernel::IoringEnterFlags::SQ_WAKEUP;
        // SAFETY: to_submit is 0 and no argument is passed, so the kernel
        // reads no SQE and no user memory; it only waits on the SQ thread.
        match unsafe { self.ring.enter(0, 0, flags, std::ptr::null(), 0) } {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted || is_transient(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Puts a timeout request into the SQ that completes `request` with
    /// `result` when `CLOCK_MONOTONIC` reaches `deadline_ns`: how an emulated
    /// device's completion arrives through the ring. Answers as [`Ring::push`].
    pub(crate) fn push_timed(&mut self, request: Request, result: i64, deadline_ns: u64) -> Push {
        let Some(slot) = self.free.pop() else {
            return Push::Full(request);
        };
        let index = slot as usize;
        if self.deadlines.is_empty() {
            self.deadlines = std::iter::repeat_with(types::Timespec::new)
                .take(self.slots.len())
                .collect();
            self.timed_results = vec![None; self.slots.len()];
        }
        self.slots[index] = Some(request);
        let entry = self.timed_entry(slot, result, deadline_ns);
        // SAFETY: the entry points at `self.deadlines[index]`, in a boxed
        // slice that is neither moved nor freed while the ring lives (it is
        // replaced only while empty, before any timed push), and that slot's
        // deadline is rewritten only after its CQE frees the slot. The kernel
        // reads the timespec when it takes the SQE. No buffer is involved.
        if let Err(error) = unsafe { self.push_entry(&entry) } {
            let request = self.slots[index].take().expect("slot was just filled");
            self.timed_results[index] = None;
            self.free.push(slot);
            return Push::Refused(request, error);
        }
        self.pushed(slot);
        Push::Queued
    }

    /// The timeout entry completing `slot` with `result` at `deadline_ns`
    /// (`CLOCK_MONOTONIC`), its deadline and result stored in the slot's place.
    fn timed_entry(&mut self, slot: u32, result: i64, deadline_ns: u64) -> squeue::Entry {
        let index = slot as usize;
        self.deadlines[index] = types::Timespec::new()
            .sec(deadline_ns / 1_000_000_000)
            .nsec((deadline_ns % 1_000_000_000) as u32);
        self.timed_results[index] = Some(result);
        opcode::Timeout::new(&self.deadlines[index])
            .flags(types::TimeoutFlags::ABS)
            .build()
            .user_data(u64::from(slot))
    }

    /// Hands every pushed SQE to the kernel, retrying `EINTR`, `EAGAIN` and
    /// `EBUSY` (waiting for a completion in between when any is due). On error
    /// the unsubmitted requests stay queued: nothing is lost.
    pub(crate) fn submit_all(&mut self) -> io::Result<()> {
        #[cfg(test)]
        self.entered_kernel();
        let mut stalls = 0;
        while !self.unsubmitted.is_empty() {
            let before = self.unsubmitted.len();
            match self.ring.submit() {
                Ok(_) => {
                    // With SQPOLL the kernel thread consumes the SQ on its own
                    // schedule; once woken, everything counts as handed over.
                    // Otherwise the kernel took the SQ's oldest entries.
                    let left = if self.sqpoll { 0 } else { self.ring.sq_len() };
                    while self.unsubmitted.len() > left {
                        let slot = self.unsubmitted.pop_front().expect("longer than left");
                        self.awaiting_submit[slot as usize] = false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if is_transient(&e) => {
                    self.back_off(&mut stalls, e)?;
                    continue;
                }
                Err(e) => return Err(e),
            }
            if self.unsubmitted.len() < before {
                stalls = 0;
            } else if !self.unsubmitted.is_empty() {
                self.back_off(&mut stalls, io::Error::from_raw_os_error(libc::EAGAIN))?;
            }
        }
        Ok(())
    }

    /// Hands every pushed SQE to the kernel and waits for `min_complete`
    /// completions in one `io_uring_enter` (liburing's `submit_and_wait`):
    /// one system call a request at depth 1 instead of two. The caller keeps
    /// `min_complete` at most one more than the requests already in the
    /// kernel, so the wait cannot outlast what was submitted. When the
    /// kernel takes only part of the SQ, or says "try again", the rest goes
    /// through [`Ring::submit_all`] and the caller's wait follows.
    pub(crate) fn submit_all_and_wait(&mut self, min_complete: usize) -> io::Result<()> {
        #[cfg(test)]
        self.entered_kernel();
        match self.ring.submit_and_wait(min_complete) {
            Ok(_) => {
                let left = self.ring.sq_len();
                while self.unsubmitted.len() > left {
                    let slot = self.unsubmitted.pop_front().expect("longer than left");
                    self.awaiting_submit[slot as usize] = false;
                }
                if self.unsubmitted.is_empty() {
                    return Ok(());
                }
                self.submit_all()
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted || is_transient(&e) => {
                self.submit_all()
            }
            Err(e) => Err(e),
        }
    }

    /// After a submission that made no progress: lets a completion (or task
    /// work) happen, or gives up with `err` after too many stalls in a row.
    fn back_off(&mut self, stalls: &mut u32, err: io::Error) -> io::Result<()> {
        *stalls += 1;
        if *stalls > MAX_STALLS {
            return Err(err);
        }
        if self.requests_in_kernel() > 0 {
            match self.wait(1) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted || is_transient(&e) => {}
                Err(e) => return Err(e),
            }
        } else {
            std::thread::yield_now();
        }
        Ok(())
    }

    /// `io_uring_enter(0, min_complete, GETEVENTS)`: runs pending task work,
    /// flushes overflowed CQEs, and waits until `min_complete` CQEs are in the
    /// CQ (0: does not wait).
    pub(crate) fn wait(&mut self, min_complete: usize) -> io::Result<()> {
        #[cfg(test)]
        self.entered_kernel();
        if self.receivers.waiting > 0 {
            return self.wait_for_arrivals(min_complete);
        }
        // A wait for more completions than there are requests to bring
        // them never ends: a caller's miscount must fail its test, not hang it.
        debug_assert!(
            min_complete <= self.in_kernel(),
            "a wait for {min_complete} completions with {} requests in the kernel",
            self.in_kernel()
        );
        if self.sqpoll {
            // The kernel thread takes the SQ on its own; the crate's submit
            // path wakes it if it fell asleep (a waiter that did not would
            // wait for requests nobody picks up), then waits.
            return self.ring.submit_and_wait(min_complete).map(drop);
        }
        let min_complete = u32::try_from(min_complete).unwrap_or(u32::MAX);
        let flags = kernel::IoringEnterFlags::GETEVENTS;
        // SAFETY: to_submit is 0, so the kernel reads no SQE; without
        // IORING_ENTER_EXT_ARG and with no argument the kernel reads no other
        // user memory. Completions it posts land in the CQ, which the ring
        // maps for its whole life.
        unsafe { self.ring.enter(0, min_complete, flags, std::ptr::null(), 0) }.map(drop)
    }

    /// True when the kernel holds completions back until the next
    /// `io_uring_enter(GETEVENTS)`: task work flagged by
    /// `IORING_SETUP_TASKRUN_FLAG`, or CQEs parked on the overflow list.
    #[inline]
    pub(crate) fn kernel_holds_completions(&mut self) -> bool {
        self.ring
            .sq_flags()
            .intersects(kernel::IoringSqFlags::TASKRUN | kernel::IoringSqFlags::CQ_OVERFLOW)
    }

    /// Moves up to `max` completions from the CQ to `out` (one CQ head update
    /// for the batch); returns how many. Every answer is final.
    #[inline]
    pub(crate) fn drain(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        self.drain_with(max, |_, _, result| Verdict::Done(result), out)
    }

    /// [`Ring::drain`], asking `decide(slot, request, result)` what each
    /// request's answer means while the request is still in its slot:
    /// [`Verdict::Done`] moves it out with that result, [`Verdict::Again`]
    /// keeps it in its slot, edited for what it asks for next, to be sent
    /// again ([`Ring::push_again`]) or ended ([`Ring::finish`]) by the
    /// caller before it next waits. Those are listed by [`Ring::take_again`].
    #[inline]
    pub(crate) fn drain_with<F>(
        &mut self,
        max: usize,
        mut decide: F,
        out: &mut Vec<Completion>,
    ) -> usize
    where
        F: FnMut(u32, &mut Request, i64) -> Verdict,
    {
        // The view of the CQ stores the head back when it is dropped,
        // at the end of this function: once for the whole batch.
        let mut drained = self.receivers.deliver_backlog(max, out);
        let mut cq = self.ring.completions();
        while drained < max {
            let Some(cqe) = cq.next() else { break };
            let slot = cqe.user_data();
            if slot == CANCEL_TAG {
                continue;
            }
            if let Some(handle) = self.receivers.arm_of(slot) {
                let (delivered, ended) =
                    self.receivers
                        .arrive(handle, slot, &cqe, max - drained, out);
                drained += delivered;
                if ended {
                    if std::mem::take(&mut self.awaiting_submit[slot as usize]) {
                        self.unsubmitted.retain(|&s| u64::from(s) != slot);
                    }
                    self.arm_free.push(slot as u32);
                    self.occupied -= 1;
                }
                continue;
            }
            let Some(held) = usize::try_from(slot)
                .ok()
                .and_then(|i| self.slots.get_mut(i))
            else {
                debug_assert!(false, "CQE for unknown slot {slot}");
                continue;
            };
            let Some(request) = held.as_mut() else {
                debug_assert!(false, "CQE for empty slot {slot}");
                continue;
            };
            // A timeout's own result (-ETIME) is not the request's.
            let result = self
                .timed_results
                .get_mut(slot as usize)
                .and_then(Option::take)
                .unwrap_or_else(|| i64::from(cqe.result()));
            if std::mem::take(&mut self.awaiting_submit[slot as usize]) {
                // An SQPOLL thread took it before it was committed.
                self.unsubmitted.retain(|&s| u64::from(s) != slot);
            }
            let result = request.result_of(result);
            #[cfg(test)]
            let result = if self.answer_eagain > 0 {
                self.answer_eagain -= 1;
                -i64::from(libc::EAGAIN)
            } else {
                result
            };
            // Slots are < capacity, which fits in u32 (checked in `new`).
            match decide(slot as u32, request, result) {
                Verdict::Done(result) => {
                    let request = held.take().expect("held a request");
                    self.free.push(slot as u32);
                    self.occupied -= 1;
                    out.push(request.complete(result));
                    drained += 1;
                }
                Verdict::Again => self.again.push(slot as u32),
            }
        }
        drop(cq);
        self.cq_head_commits += u64::from(drained > 0);
        self.rearm();
        #[cfg(test)]
        if self.sqpoll
            && let Some(unpublished) = &mut self.unpublished
        {
            unpublished.entries = (unpublished.entries + drained).min(self.slots.len());
        }
        drained
    }

    /// The slots the last drains kept for sending again, oldest first.
    #[inline]
    pub(crate) fn take_again(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.again)
    }

    /// Keeps `slot` (taken by [`Ring::take_again`]) for the next drain's caller.
    pub(crate) fn keep_again(&mut self, slot: u32) {
        self.again.push(slot);
    }

    /// True when a drain kept slots to send again.
    #[inline]
    pub(crate) fn has_again(&self) -> bool {
        !self.again.is_empty()
    }

    /// The request held in `slot`, kept there by a drain to be sent again.
    pub(crate) fn kept(&mut self, slot: u32) -> &mut Request {
        self.slots[slot as usize]
            .as_mut()
            .expect("a slot kept to be sent again holds its request")
    }

    /// Puts the request a drain kept in `slot` into the SQ again, as it is
    /// now, under the same slot: handed to the kernel at the next submit. On
    /// error the request stays in its slot, for [`Ring::finish`].
    pub(crate) fn push_again(&mut self, slot: u32, file: FileRef, rw_flags: i32) -> io::Result<()> {
        let index = slot as usize;
        let request = self.slots[index]
            .as_ref()
            .expect("a slot kept to be sent again holds its request");
        let buf_index = request.buffer().and_then(|buf| self.fixed_index(buf));
        let rw_flags = self.rw_flags | rw_flags;
        let request = self.slots[index].as_mut().expect("checked above");
        let entry = build_entry(request, file, buf_index, rw_flags).user_data(u64::from(slot));
        // SAFETY: as in `push`: the entry points at the buffer of the request
        // held in `self.slots[index]` (its window moved on, inside the same
        // memory), names that slot, and the slot gives the request up only
        // when `drain_with` sees the CQE with that user_data and it is done,
        // or in `Drop` after waiting for it. The kernel posted this slot's
        // previous CQE, so it holds no other entry for it.
        unsafe { self.push_entry(&entry) }?;
        self.unsubmitted.push_back(slot);
        self.awaiting_submit[index] = true;
        Ok(())
    }

    /// [`Ring::push_again`] for an emulated device's request: a timeout
    /// entry completing it with `result` at `deadline_ns`, as
    /// [`Ring::push_timed`].
    pub(crate) fn push_timed_again(
        &mut self,
        slot: u32,
        result: i64,
        deadline_ns: u64,
    ) -> io::Result<()> {
        let index = slot as usize;
        let entry = self.timed_entry(slot, result, deadline_ns);
        // SAFETY: as in `push_timed`: the entry points at the slot's deadline
        // in a boxed slice that never moves while the ring lives, rewritten
        // only after the slot's previous CQE was drained.
        if let Err(error) = unsafe { self.push_entry(&entry) } {
            self.timed_results[index] = None;
            return Err(error);
        }
        self.unsubmitted.push_back(slot);
        self.awaiting_submit[index] = true;
        Ok(())
    }

    /// Ends the request a drain kept in `slot` with `result`, and frees the slot.
    pub(crate) fn finish(&mut self, slot: u32, result: i64) -> Completion {
        let request = self.slots[slot as usize]
            .take()
            .expect("a slot kept to be sent again holds its request");
        self.free.push(slot);
        self.occupied -= 1;
        request.complete(result)
    }
}

#[cfg(test)]
impl Ring {
    /// True when the emulated late SQ head leaves no room in the SQ.
    fn emulated_sq_full(&mut self) -> bool {
        let Some(unpublished) = &self.unpublished else {
            return false;
        };
        let entries = unpublished.entries;
        self.ring.sq_len() + entries >= self.ring.sq_capacity()
    }

    /// The emulated SQPOLL thread publishes its head whenever the caller
    /// enters the kernel.
    pub(super) fn entered_kernel(&mut self) {
        if let Some(unpublished) = &mut self.unpublished {
            unpublished.entries = 0;
        }
    }
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let params = self.ring.params();
        f.debug_struct("Ring")
            .field("sq_entries", &params.sq_entries)
            .field("cq_entries", &params.cq_entries)
            .field("sqpoll", &self.sqpoll)
            .field("iopoll", &self.iopoll)
            .field("defer_taskrun", &self.defer_taskrun)
            .field("enabled", &self.enabled)
            .field("fixed_buffers", &self.fixed.as_ref().map(|f| f.pool.id()))
            .field("in_flight", &self.occupied)
            .field("unsubmitted", &self.unsubmitted.len())
            .finish()
    }
}
