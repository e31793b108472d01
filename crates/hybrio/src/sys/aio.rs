//! Linux native AIO (`io_setup`, `io_submit`, `io_getevents`, `io_destroy`)
//! through raw system calls, together with the requests a context has in flight.
//!
//! The structures are our own `#[repr(C)]` copies of `linux/aio_abi.h`; no C
//! library is involved.
//!
//! The kernel reads and writes a request's buffer from the `io_submit` that
//! accepts its iocb until its `io_event` is posted. [`AioContext`] makes that
//! safe the way [`Ring`](super::uring::Ring) does for io_uring: the request
//! (and so its [`Buf`]) moves into a slot of a slab whose index is the iocb's
//! `aio_data`, and moves out only when the event carrying that index is
//! reaped, or when `Drop` has waited for it. Regular-file AIO cannot be
//! cancelled (`io_cancel` answers `EINVAL`), so `Drop` waits; if it cannot,
//! `io_destroy` (which waits for every request itself) stands in, and if that
//! fails too the requests are leaked rather than freed under the kernel.
//!
//! The iocbs themselves matter only during `io_submit`: the kernel copies
//! them (and writes `aio_key` into them) before it returns.
//!
//! With an [`EmulatedDevice`], data moves at commit and each request's
//! completion is an `IOCB_CMD_POLL` on a timerfd armed at the device's
//! deadline, so that it still arrives through AIO.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use super::slot_book::{HoldsRequest, SlotBook};
use crate::buf::Buf;
use crate::device::EmulatedDevice;
use crate::request::{Completion, Op, Request, Verdict};
use crate::sys::{host, negative_errno, time};

/// `aio_context_t`: the kernel's name for a context (the address of its
/// completion ring in our address space).
type AioContextId = libc::c_ulong;

/// `IOCB_CMD_PREAD`.
const IOCB_CMD_PREAD: u16 = 0;
/// `IOCB_CMD_PWRITE`.
const IOCB_CMD_PWRITE: u16 = 1;
/// `IOCB_CMD_FSYNC`.
const IOCB_CMD_FSYNC: u16 = 2;
/// `IOCB_CMD_FDSYNC`.
const IOCB_CMD_FDSYNC: u16 = 3;
/// `IOCB_CMD_POLL` (Linux 4.18): completes when the file is ready for the
/// events in `aio_buf`.
const IOCB_CMD_POLL: u16 = 5;

/// Longest single transfer, the kernel's `MAX_RW_COUNT`: longer requests
/// complete short, as `read(2)` and `write(2)` would.
const MAX_RW_COUNT: usize = 0x7fff_f000;

/// Consecutive `EAGAIN` answers of `io_submit` after which a commit gives up.
const MAX_STALLS: u32 = 1000;

/// `struct iocb` of `linux/aio_abi.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    /// Returned untouched in the event's `data`: our slot index.
    aio_data: u64,
    // The kernel orders these two by endianness (its PADDED macro).
    #[cfg(target_endian = "little")]
    aio_key: u32,
    /// `RWF_*` flags for reads and writes (`__kernel_rwf_t`).
    aio_rw_flags: libc::c_int,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    /// The buffer's address; for `IOCB_CMD_POLL`, the poll events.
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    /// `IOCB_FLAG_*`.
    aio_flags: u32,
    /// The eventfd to signal with `IOCB_FLAG_RESFD`.
    aio_resfd: u32,
}

/// `struct io_event` of `linux/aio_abi.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    /// The iocb's `aio_data`.
    data: u64,
    /// The iocb's address at submission.
    obj: u64,
    /// Bytes transferred or a negative errno; for a poll, the ready events.
    res: i64,
    /// Secondary result, always 0 for files.
    res2: i64,
}

const _: () = {
    assert!(size_of::<Iocb>() == 64);
    assert!(size_of::<IoEvent>() == 32);
    assert!(std::mem::offset_of!(Iocb, aio_lio_opcode) == 16);
    assert!(std::mem::offset_of!(Iocb, aio_fildes) == 20);
    assert!(std::mem::offset_of!(Iocb, aio_buf) == 24);
    assert!(std::mem::offset_of!(Iocb, aio_offset) == 40);
    assert!(std::mem::offset_of!(Iocb, aio_flags) == 56);
    assert!(std::mem::offset_of!(IoEvent, res) == 16);
};

/// A raw syscall's `-1`-on-error return as `io::Result`.
#[inline]
fn check(ret: libc::c_long) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        // Non-negative and at most a count the kernel was given.
        Ok(ret as usize)
    }
}

/// `io_setup(nr_events)`: a new context for at least `nr_events` requests in flight.
fn io_setup(nr_events: u32) -> io::Result<AioContextId> {
    let mut ctx: AioContextId = 0;
    // SAFETY: the kernel writes one aio_context_t to `ctx`, a live local; it
    // requires the value there to be 0 on entry, which it is.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_io_setup,
            libc::c_long::from(nr_events),
            &mut ctx as *mut AioContextId,
        )
    };
    check(ret).map(|_| ctx)
}

/// `io_destroy(ctx)`: cancels what can be cancelled, waits for every other
/// request of the context, and frees it.
fn io_destroy(ctx: AioContextId) -> io::Result<()> {
    // SAFETY: io_destroy takes the context id only; an id that names no
    // context of ours is EINVAL.
    check(unsafe { libc::syscall(libc::SYS_io_destroy, ctx) }).map(drop)
}

/// `io_submit(ctx, iocbs.len(), iocbs)`: returns how many iocbs, from the
/// first, the kernel accepted. When it accepts none, the error belongs to
/// the first iocb (or to the call as a whole).
///
/// # Safety
///
/// Every pointer in `iocbs` points at a live, writable [`Iocb`]. Every buffer
/// an accepted iocb names (`aio_buf`, `aio_nbytes` for reads and writes)
/// stays valid, and untouched by us, until its event has been reaped.
unsafe fn io_submit(ctx: AioContextId, iocbs: &mut [*mut Iocb]) -> io::Result<usize> {
    let nr = libc::c_long::try_from(iocbs.len()).unwrap_or(libc::c_long::MAX);
    // SAFETY: `iocbs` is a live array of `nr` pointers, each to a live iocb
    // (the caller's promise); the kernel reads them and writes aio_key into
    // each. The buffers they name stay valid until reaped (the caller's
    // promise again).
    check(unsafe { libc::syscall(libc::SYS_io_submit, ctx, nr, iocbs.as_mut_ptr()) })
}

/// `io_getevents(ctx, min_nr, events.len(), events, timeout)`: waits until
/// `min_nr` events are there (never, with `min_nr == 0`) and copies up to
/// `events.len()` of them; returns how many.
fn io_getevents(ctx: AioContextId, min_nr: usize, events: &mut [IoEvent]) -> io::Result<usize> {
    debug_assert!(min_nr <= events.len());
    let min_nr = libc::c_long::try_from(min_nr).unwrap_or(libc::c_long::MAX);
    let nr = libc::c_long::try_from(events.len()).unwrap_or(libc::c_long::MAX);
    // A zero timeout makes "do not wait" explicit; without one the call
    // returns as soon as `min_nr` events are there.
    let mut zero = time::timespec(0);
    let timeout: *mut libc::timespec = if min_nr == 0 {
        &mut zero
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: the kernel writes at most `nr` events into `events`, a live,
    // exclusively borrowed slice of that length, and reads the timeout, a
    // live local or null.
    check(unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min_nr,
            nr,
            events.as_mut_ptr(),
            timeout,
        )
    })
}

/// Makes and destroys a one-event context: whether this system lets us use AIO.
pub(crate) fn probe() -> io::Result<()> {
    let ctx = io_setup(1)?;
    io_destroy(ctx)
}

/// The cached result of probing native AIO (`io_setup(1)` and `io_destroy`):
/// `Err` holds the reason it is unusable. Here, not in `host` with the
/// other facts: probing takes this module's `io_setup`, and this module sits
/// above the file table, which reads `host`.
pub(crate) fn status() -> &'static Result<(), String> {
    static STATUS: OnceLock<Result<(), String>> = OnceLock::new();
    STATUS.get_or_init(|| probe().map_err(|e| host::explain_aio_setup_error(&e)))
}

/// One request's place in the slab.
#[derive(Debug, Default)]
struct Slot {
    /// The request, from `push` until its event is reaped.
    request: Option<Request>,
    /// The file's descriptor.
    fd: RawFd,
    /// Whether the file was opened `O_DIRECT` (the emulated device keeps its rules).
    direct: bool,
    /// The `RWF_*` flags the file gives the request (`RWF_ATOMIC` on a write).
    file_flags: libc::c_int,
    /// Emulated device: the transfer's result, delivered when the timer fires.
    transferred: Option<i64>,
    /// Emulated device: this slot's timerfd, made at first use and reused.
    timer: Option<OwnedFd>,
}

impl HoldsRequest for Slot {
    fn request(&mut self) -> &mut Option<Request> {
        &mut self.request
    }

    /// The emulated device's transfer is redone when the request is sent again.
    fn forget_transfer(&mut self) {
        self.transferred = None;
    }
}

/// The iocbs of one commit and the pointer array `io_submit` takes.
#[derive(Debug, Default)]
struct Batch {
    iocbs: Vec<Iocb>,
    /// Points into `iocbs`; rebuilt after every change to it.
    ptrs: Vec<*mut Iocb>,
    /// The slot each iocb is for.
    slots: Vec<u32>,
}

// SAFETY: the raw pointers only ever point into the batch's own `iocbs`, which
// move with it; they are dereferenced by the kernel alone, during an
// `io_submit` made through `&mut` access to the context that owns the batch.
unsafe impl Send for Batch {}

impl Batch {
    fn clear(&mut self) {
        self.iocbs.clear();
        self.ptrs.clear();
        self.slots.clear();
    }

    fn push(&mut self, slot: u32, iocb: Iocb) {
        self.iocbs.push(iocb);
        self.slots.push(slot);
    }

    /// Points `ptrs` at `iocbs`, which no longer change until the next `clear`.
    fn seal(&mut self) {
        let base = self.iocbs.as_mut_ptr();
        self.ptrs.clear();
        self.ptrs
            .extend((0..self.iocbs.len()).map(|i| base.wrapping_add(i)));
    }
}

/// An AIO context and the requests it owns until they complete.
pub(crate) struct AioContext {
    ctx: AioContextId,
    slots: Vec<Slot>,
    /// Free, queued and answered slots. Answers arrive from events reaped
    /// while a commit waited for room, iocbs `io_submit` refused, and events
    /// past what the last reap could take; their requests stay in their
    /// slots, out of the kernel, until a reap decides what each answer means.
    book: SlotBook,
    /// Requests the kernel accepted whose events have not been reaped.
    in_kernel: usize,
    /// Tests: the next this many answers are "try again" (`EAGAIN`), as a
    /// kernel short of resources gives, whatever the kernel did.
    #[cfg(test)]
    pub(crate) answer_eagain: u32,
    events: Vec<IoEvent>,
    batch: Batch,
    /// `RWF_*` flags for every read and write.
    rw_flags: libc::c_int,
    device: Option<EmulatedDevice>,
    submit_calls: u64,
    retries: u64,
}

impl AioContext {
    /// A context (`io_setup(capacity)`) holding at most `capacity` requests.
    /// With `nowait`, reads and writes carry `RWF_NOWAIT`; with a `device`,
    /// requests go to the emulated device instead of the file.
    pub(crate) fn new(
        capacity: u32,
        nowait: bool,
        device: Option<EmulatedDevice>,
    ) -> io::Result<AioContext> {
        let capacity = capacity.max(1);
        let ctx = io_setup(capacity)?;
        let slots = capacity as usize;
        Ok(AioContext {
            ctx,
            slots: std::iter::repeat_with(Slot::default).take(slots).collect(),
            book: SlotBook {
                free: (0..capacity).rev().collect(),
                ..SlotBook::with_capacity(slots)
            },
            in_kernel: 0,
            #[cfg(test)]
            answer_eagain: 0,
            events: vec![IoEvent::default(); slots],
            batch: Batch {
                iocbs: Vec::with_capacity(slots),
                ptrs: Vec::with_capacity(slots),
                slots: Vec::with_capacity(slots),
            },
            rw_flags: if nowait { libc::RWF_NOWAIT } else { 0 },
            device,
            submit_calls: 0,
            retries: 0,
        })
    }

    /// Its slots' bookkeeping: requests in flight, queued, kept to be sent again.
    #[inline]
    pub(crate) fn book(&self) -> &SlotBook {
        &self.book
    }

    /// Slots made so far.
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// `io_submit` calls so far.
    #[cfg(test)]
    pub(crate) fn submit_calls(&self) -> u64 {
        self.submit_calls
    }

    /// `io_submit` calls repeated after `EINTR` or `EAGAIN`.
    pub(crate) fn retries(&self) -> u64 {
        self.retries
    }

    /// Reads and writes carry `RWF_NOWAIT`.
    pub(crate) fn nowait(&self) -> bool {
        self.rw_flags & libc::RWF_NOWAIT != 0
    }

    /// The emulated device requests go to, if any.
    pub(crate) fn device(&self) -> Option<&EmulatedDevice> {
        self.device.as_ref()
    }

    /// Takes `request` into the slab, to be handed to the kernel at the next
    /// [`submit_all`](Self::submit_all); hands it back when the slab is full.
    ///
    /// `fd` is its file's descriptor, which must stay open until the commit;
    /// `file_flags` the `RWF_*` flags its file gives it. The caller vets the request: an offset past `i64::MAX` is `EINVAL`
    /// from the kernel, and a read or write without a buffer moves nothing.
    #[inline]
    pub(crate) fn push(
        &mut self,
        request: Request,
        fd: RawFd,
        direct: bool,
        file_flags: libc::c_int,
    ) -> Result<(), Request> {
        if self.book.occupied >= self.slots.len() {
            return Err(request);
        }
        let Some(index) = self.book.free.pop() else {
            return Err(request);
        };
        let slot = &mut self.slots[index as usize];
        slot.request = Some(request);
        slot.fd = fd;
        slot.direct = direct;
        slot.file_flags = file_flags;
        slot.transferred = None;
        self.book.occupied += 1;
        self.book.queued.push(index);
        Ok(())
    }

    /// Hands every queued request to the kernel, all in one `io_submit` when
    /// it takes them all. Returns how many were handed over.
    ///
    /// An iocb the kernel refuses completes with the errno it gave (reaped
    /// like any completion), and the rest go on. `EINTR` is retried, and so is
    /// `EAGAIN` (the kernel is short of resources) after reaping a completion
    /// or yielding, at most [`MAX_STALLS`] times in a row; but an `EAGAIN` for
    /// an `RWF_NOWAIT` iocb is its answer, not retried. When the stalls run
    /// out, the error is returned and the requests not handed over stay queued.
    pub(crate) fn submit_all(&mut self) -> io::Result<usize> {
        let pending = self.book.queued.len();
        self.book.again = 0;
        if pending == 0 {
            return Ok(0);
        }
        self.prepare();
        let outcome = self.submit_batch();
        let handed_over = pending - self.book.queued.len();
        outcome.map(|()| handed_over)
    }

    /// Builds the batch from the queued slots; with the emulated device,
    /// moves their data and arms their timers first.
    fn prepare(&mut self) {
        self.batch.clear();
        let deadline = self.device.as_ref().map(EmulatedDevice::deadline);
        let queued = std::mem::take(&mut self.book.queued);
        for &index in &queued {
            let iocb = match deadline {
                None => self.io_iocb(index),
                Some(deadline) => self.device_iocb(index, deadline),
            };
            match iocb {
                Ok(iocb) => self.batch.push(index, iocb),
                Err(result) => self.settle(index, result),
            }
        }
        // Keep the allocation for the next commit.
        self.book.queued = queued;
        self.book.queued.clear();
        self.batch.seal();
    }

    /// The read, write or sync iocb for the request in slot `index`.
    fn io_iocb(&mut self, index: u32) -> Result<Iocb, i64> {
        let slot = &mut self.slots[index as usize];
        let rw_flags = self.rw_flags | slot.file_flags;
        let fd = slot.fd;
        let Some(request) = slot.request.as_mut() else {
            debug_assert!(false, "queued slot {index} is empty");
            return Err(-i64::from(libc::EINVAL));
        };
        Ok(build_iocb(index, request, fd, rw_flags))
    }

    /// For the emulated device: moves the data of the request in slot
    /// `index` now, and returns a poll on the slot's timerfd armed at `deadline`.
    fn device_iocb(&mut self, index: u32, deadline: u64) -> Result<Iocb, i64> {
        let slot = &mut self.slots[index as usize];
        let Some(request) = slot.request.as_mut() else {
            debug_assert!(false, "queued slot {index} is empty");
            return Err(-i64::from(libc::EINVAL));
        };
        // A commit retried after a failure must not move the data twice.
        if slot.transferred.is_none() {
            slot.transferred = Some(EmulatedDevice::transfer(slot.fd, slot.direct, request));
        }
        let timer = match &slot.timer {
            Some(timer) => timer,
            None => slot
                .timer
                .insert(time::timerfd().map_err(|e| negative_errno(&e))?),
        };
        // Arming also clears an expiration left from the slot's last request,
        // so the poll cannot see the old one.
        time::arm_timerfd_at(timer.as_fd(), deadline).map_err(|e| negative_errno(&e))?;
        Ok(Iocb {
            aio_data: u64::from(index),
            aio_lio_opcode: IOCB_CMD_POLL,
            aio_fildes: timer.as_raw_fd() as u32,
            aio_buf: libc::POLLIN as u64,
            ..Iocb::default()
        })
    }

    /// Submits the batch, as [`submit_all`](Self::submit_all) describes. On
    /// error, the iocbs not handed over go back to the queue.
    fn submit_batch(&mut self) -> io::Result<()> {
        let total = self.batch.ptrs.len();
        let mut done = 0;
        let mut stalls = 0;
        while done < total {
            self.submit_calls += 1;
            // SAFETY: the pointers point into `self.batch.iocbs`, sealed and
            // live for this call. Each iocb names the buffer of the request in
            // the slot its aio_data names; the slot gives the request up only
            // when `take_events` sees that event, or in `Drop` after waiting
            // for it (or never, leaked, if waiting and io_destroy both fail).
            // The buffer's memory does not move when the request moves: it
            // lives in the pool's arena, kept alive by the `Buf`, or in the
            // caller's memory, valid until the `Buf` drops (the promise of
            // `Buf::from_raw_parts`'s caller).
            let submitted = unsafe { io_submit(self.ctx, &mut self.batch.ptrs[done..]) };
            match submitted {
                Ok(accepted) if accepted > 0 => {
                    let accepted = accepted.min(total - done);
                    done += accepted;
                    self.in_kernel += accepted;
                    stalls = 0;
                }
                Ok(_) => {
                    self.retries += 1;
                    let err = io::Error::from_raw_os_error(libc::EAGAIN);
                    if let Err(e) = self.back_off(&mut stalls, err) {
                        self.requeue(done);
                        return Err(e);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.retries += 1,
                Err(e)
                    if e.raw_os_error() == Some(libc::EAGAIN)
                        && self.batch.iocbs[done].aio_rw_flags & libc::RWF_NOWAIT == 0 =>
                {
                    self.retries += 1;
                    if let Err(e) = self.back_off(&mut stalls, e) {
                        self.requeue(done);
                        return Err(e);
                    }
                }
                Err(e) => {
                    // Refused: the error is this iocb's; the next ones may pass.
                    // (With the emulated device the data has moved, but a
                    // completion the device cannot time is reported as failed.)
                    self.settle(self.batch.slots[done], negative_errno(&e));
                    done += 1;
                }
            }
        }
        Ok(())
    }

    /// Puts the slots of the batch from `done` on back in the queue.
    fn requeue(&mut self, done: usize) {
        self.book
            .queued
            .extend_from_slice(&self.batch.slots[done..]);
    }

    /// After `io_submit` said `EAGAIN`: lets a completion free kernel
    /// resources (keeping it for the next reap), or gives up with `err` after
    /// too many stalls in a row.
    fn back_off(&mut self, stalls: &mut u32, err: io::Error) -> io::Result<()> {
        *stalls += 1;
        if *stalls > MAX_STALLS {
            return Err(err);
        }
        if self.in_kernel > 0 {
            match self.take_events(1, usize::MAX) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        } else {
            std::thread::yield_now();
        }
        Ok(())
    }

    /// Answers the request in slot `index` with `result` without an event:
    /// the next reap hands it out.
    fn settle(&mut self, index: u32, result: i64) {
        self.book.arrived.push_back((index, result));
    }

    /// Waits until at least `min` completions are ready (fewer only if fewer
    /// were committed), appends at most `max` to `out`, and returns how many,
    /// asking `decide(slot, request, result)` what each
    /// answer means while the request is still in its slot: [`Verdict::Done`]
    /// hands it out with that result, [`Verdict::Again`] keeps it in its slot,
    /// edited for what it asks for next, queued for the next
    /// [`submit_all`](Self::submit_all) ([`AioContext::again`] counts them).
    /// Returns early, with fewer than `min`, when it kept some: they must be
    /// submitted before anything waits for them.
    pub(crate) fn reap_with<F>(
        &mut self,
        min: usize,
        max: usize,
        mut decide: F,
        out: &mut Vec<Completion>,
    ) -> io::Result<usize>
    where
        F: FnMut(u32, &mut Request, i64) -> Verdict,
    {
        let want = min.min(max);
        let mut got = self.book.deliver(&mut self.slots, max, &mut decide, out);
        while got < max && self.in_kernel > 0 && self.book.again == 0 {
            let need = want.saturating_sub(got).min(self.in_kernel);
            match self.take_events(need, max - got) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            got += self
                .book
                .deliver(&mut self.slots, max - got, &mut decide, out);
            if got >= want {
                break;
            }
        }
        Ok(got)
    }

    /// One `io_getevents` for at least `min` and at most `max` events; their
    /// answers join those arrived, for the next reap to hand out. Returns how many.
    fn take_events(&mut self, min: usize, max: usize) -> io::Result<usize> {
        let nr = max.min(self.events.len()).min(self.in_kernel).max(min);
        let n = io_getevents(self.ctx, min, &mut self.events[..nr])?;
        for i in 0..n.min(nr) {
            let event = self.events[i];
            let index = u32::try_from(event.data).unwrap_or(u32::MAX);
            let Some(slot) = self.slots.get(index as usize) else {
                debug_assert!(false, "event for unknown slot {}", event.data);
                continue;
            };
            self.in_kernel -= 1;
            let result = match slot.transferred {
                // The device's timer fired: the transfer's result is the answer.
                Some(result) if event.res >= 0 => result,
                _ => event.res,
            };
            #[cfg(test)]
            let result = if self.answer_eagain > 0 {
                self.answer_eagain -= 1;
                -i64::from(libc::EAGAIN)
            } else {
                result
            };
            self.book.arrived.push_back((index, result));
        }
        Ok(n)
    }

    /// Waits for every request the kernel has. Requests queued but never
    /// committed are not performed.
    fn settle_all(&mut self) -> io::Result<()> {
        while self.in_kernel > 0 {
            match self.take_events(self.in_kernel, usize::MAX) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Drop for AioContext {
    /// Waits for every request the kernel has, so that no buffer is freed
    /// while the kernel may still use it, then destroys the context.
    fn drop(&mut self) {
        let waited = self.settle_all();
        // io_destroy also waits for the context's requests (since Linux 3.19,
        // "otherwise kernel keep using user-space buffers"), so when it
        // succeeds nothing of ours is left in the kernel either way.
        let destroyed = io_destroy(self.ctx);
        if waited.is_err() && destroyed.is_err() {
            // Some requests may still be in the kernel: their buffers must
            // never be freed or reused. Leak them, and with them the arena
            // they point into.
            std::mem::forget(std::mem::take(&mut self.slots));
        }
    }
}

impl std::fmt::Debug for AioContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AioContext")
            .field("ctx", &format_args!("{:#x}", self.ctx))
            .field("capacity", &self.slots.len())
            .field("occupied", &self.book.occupied)
            .field("queued", &self.book.queued.len())
            .field("in_kernel", &self.in_kernel)
            .field("arrived", &self.book.arrived.len())
            .field("again", &self.book.again)
            .field("nowait", &(self.rw_flags & libc::RWF_NOWAIT != 0))
            .field("device", &self.device)
            .field("submit_calls", &self.submit_calls)
            .finish()
    }
}

/// The iocb for `request` on `fd`, tagged with slot `index`: PREAD/PWRITE
/// with `rw_flags`, FSYNC or FDSYNC.
#[inline]
fn build_iocb(index: u32, request: &mut Request, fd: RawFd, rw_flags: libc::c_int) -> Iocb {
    let mut iocb = Iocb {
        aio_data: u64::from(index),
        // A negative descriptor cannot be open: the kernel says EBADF.
        aio_fildes: fd as u32,
        ..Iocb::default()
    };
    match request.op {
        Op::Read | Op::Write => {
            let (addr, len) = match (request.op, request.buffer_mut()) {
                (Op::Read, Some(buf)) => (buf.as_mut_ptr() as u64, transfer_len(buf)),
                (_, Some(buf)) => (buf.as_ptr() as u64, transfer_len(buf)),
                (_, None) => (0, 0),
            };
            iocb.aio_lio_opcode = if request.op == Op::Read {
                IOCB_CMD_PREAD
            } else {
                IOCB_CMD_PWRITE
            };
            iocb.aio_buf = addr;
            iocb.aio_nbytes = len;
            // Past i64::MAX the kernel sees a negative offset: EINVAL, as pread says.
            iocb.aio_offset = i64::try_from(request.offset).unwrap_or(-1);
            iocb.aio_rw_flags = rw_flags;
            if request.ioprio != 0 {
                // IOCB_FLAG_IOPRIO: the kernel takes aio_reqprio as the
                // request's priority.
                iocb.aio_flags |= 1 << 1;
                iocb.aio_reqprio = request.ioprio as i16;
            }
        }
        // The kernel wants buf, nbytes, offset and rw_flags all 0 for syncs.
        Op::Fsync => iocb.aio_lio_opcode = IOCB_CMD_FSYNC,
        Op::Fdatasync => iocb.aio_lio_opcode = IOCB_CMD_FDSYNC,
        // Linux AIO has no socket commands: the engine refuses sockets when
        // they are added, and a receive or send on a file is a read or write
        // at no offset the kernel would take (a negative one: EINVAL).
        // Nor commands on a file's space: the engine runs them itself
        // before they come here; one that did would be refused (EINVAL).
        Op::Recv | Op::Send | Op::Trim | Op::Allocate | Op::AllocateKeepSize | Op::Truncate => {
            iocb.aio_lio_opcode = if request.op == Op::Recv {
                IOCB_CMD_PREAD
            } else {
                IOCB_CMD_PWRITE
            };
            iocb.aio_offset = -1;
        }
    }
    iocb
}

/// Bytes one iocb transfers from `buf`, capped like a single `read(2)`.
#[inline]
fn transfer_len(buf: &Buf) -> u64 {
    buf.len().min(MAX_RW_COUNT) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_can_be_made_and_destroyed() {
        probe().unwrap();
        let ctx = io_setup(4).unwrap();
        let mut events = [IoEvent::default(); 4];
        assert_eq!(io_getevents(ctx, 0, &mut events).unwrap(), 0);
        // Not destroyed twice to see it gone: the kernel may give its
        // address to another test's context at once, and that one would go.
        io_destroy(ctx).unwrap();
    }

    #[test]
    fn syncs_carry_no_buffer_offset_or_flags() {
        let mut request = Request::sync(crate::file::FileHandle(0), true, 0);
        let iocb = build_iocb(3, &mut request, 7, libc::RWF_NOWAIT);
        assert_eq!(
            (iocb.aio_data, iocb.aio_lio_opcode, iocb.aio_fildes),
            (3, IOCB_CMD_FDSYNC, 7)
        );
        assert_eq!(
            (
                iocb.aio_buf,
                iocb.aio_nbytes,
                iocb.aio_offset,
                iocb.aio_rw_flags
            ),
            (0, 0, 0, 0)
        );
    }
}
