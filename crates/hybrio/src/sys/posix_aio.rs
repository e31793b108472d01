//! POSIX AIO as the C library does it (`aio_read`, `aio_write`, `aio_fsync`,
//! `aio_error`, `aio_return`, `aio_suspend`, `aio_cancel`), together with the
//! requests it has in flight.
//!
//! glibc runs POSIX AIO in user space: its own threads make `pread`/`pwrite`
//! calls, and the requests on one descriptor run one after another, in the
//! order they were given (glibc queues them per descriptor): a file gains no
//! overlap from depth, only several files do. That is what fio's `posixaio`
//! engine measures, and what a program using `aio_*` gets.
//!
//! glibc keeps a pointer to a request's `aiocb` from the call that takes it
//! until the request is done: the `aiocb`, and the buffer it names, must not
//! move or be freed before then. [`PosixAioQueue`] keeps each `aiocb` in a
//! slot of its own allocation, made at the slot's first use and freed only
//! with the queue, so that it never moves; the request (and
//! so its [`Buf`](crate::buf::Buf)) stays in its slot until `aio_error` says
//! it is done, or until `Drop` has seen it done. `Drop` cancels what glibc has
//! not started, waits (10 s at most) for the rest, and leaks the slots of
//! whatever is still running then rather than free them under glibc's threads.

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use super::slot_book::{HoldsRequest, SlotBook};
use crate::request::{Completion, Op, Request, Verdict};

/// How long `Drop` waits for requests glibc could not cancel.
const DROP_WAIT: Duration = Duration::from_secs(10);

/// One request's place: its control block and the request it describes.
struct Slot {
    /// glibc's pointer to it stays valid: the slots never move.
    cb: libc::aiocb,
    /// The request, from `push` until it is handed out.
    request: Option<Request>,
    /// The file's descriptor.
    fd: RawFd,
}

impl Slot {
    fn empty() -> Slot {
        Slot {
            cb: blank_aiocb(),
            request: None,
            fd: -1,
        }
    }
}

impl HoldsRequest for Slot {
    fn request(&mut self) -> &mut Option<Request> {
        &mut self.request
    }
}

/// An `aiocb` with nothing in it, whose completion notifies nobody (the
/// caller asks `aio_error`).
fn blank_aiocb() -> libc::aiocb {
    // SAFETY: `aiocb` is a plain C structure of integers and pointers, for
    // which all-zero bytes are a valid value (glibc's own examples memset it).
    let mut cb: libc::aiocb = unsafe { std::mem::zeroed() };
    // Zero would be SIGEV_SIGNAL with signal 0.
    cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
    cb
}

/// The requests handed to glibc's POSIX AIO, and those waiting to be.
pub(crate) struct PosixAioQueue {
    /// Each boxed, so that it stays where glibc's pointer to it points
    /// however the list grows; made as requests come, up to `capacity`.
    #[allow(clippy::vec_box)]
    slots: Vec<Box<Slot>>,
    capacity: usize,
    /// Free, queued and answered slots.
    book: SlotBook,
    /// Slots glibc has, in the order they were given.
    running: Vec<u32>,
    /// `aio_suspend`'s list, rebuilt at each wait.
    waitlist: Vec<*const libc::aiocb>,
}

// SAFETY: the raw pointers (in each `aiocb` and in `waitlist`) point into the
// boxed slots and the requests' buffers, which do not move when the queue
// moves to another thread; glibc's threads use them whichever thread owns the
// queue, and only a call through `&mut self` (or `Drop`) reads them here.
unsafe impl Send for PosixAioQueue {}

impl PosixAioQueue {
    /// A queue holding at most `capacity` requests, with room made up front
    /// for `preallocated` of them (a depth is a limit, not a promise of use).
    pub(crate) fn new(capacity: u32, preallocated: usize) -> PosixAioQueue {
        let capacity = capacity.max(1) as usize;
        let slots = capacity.min(preallocated);
        PosixAioQueue {
            slots: Vec::with_capacity(slots),
            capacity,
            book: SlotBook::with_capacity(slots),
            running: Vec::with_capacity(slots),
            waitlist: Vec::with_capacity(slots),
        }
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

    /// Takes `request` into a slot, to be handed to glibc at the next
    /// [`submit_all`](Self::submit_all); hands it back when every slot is
    /// taken. `fd` must stay open until the request is handed out.
    #[inline]
    pub(crate) fn push(&mut self, request: Request, fd: RawFd) -> Result<(), Request> {
        let index = match self.book.free.pop() {
            Some(index) => index,
            None if self.slots.len() < self.capacity => {
                self.slots.push(Box::new(Slot::empty()));
                (self.slots.len() - 1) as u32
            }
            None => return Err(request),
        };
        let slot = &mut self.slots[index as usize];
        slot.request = Some(request);
        slot.fd = fd;
        self.book.occupied += 1;
        self.book.queued.push(index);
        Ok(())
    }

    /// Hands every queued request to glibc, one call each (`aio_read`,
    /// `aio_write`, `aio_fsync`); returns how many were handed over. A
    /// request glibc refuses completes with the errno it gave (`EAGAIN` when
    /// it is short of resources), at the next reap.
    pub(crate) fn submit_all(&mut self) -> usize {
        self.book.again = 0;
        let queued = std::mem::take(&mut self.book.queued);
        for &index in &queued {
            match self.start(index) {
                Ok(()) => self.running.push(index),
                Err(result) => self.book.arrived.push_back((index, result)),
            }
        }
        let handed_over = queued.len();
        // Keep the allocation for the next commit.
        self.book.queued = queued;
        self.book.queued.clear();
        handed_over
    }

    /// Fills slot `index`'s control block for its request and gives it to glibc.
    fn start(&mut self, index: u32) -> Result<(), i64> {
        let slot = &mut self.slots[index as usize];
        let Some(request) = slot.request.as_mut() else {
            debug_assert!(false, "queued slot {index} is empty");
            return Err(-i64::from(libc::EINVAL));
        };
        let op = request.op;
        let (addr, len) = match (op, request.buffer_mut()) {
            (Op::Read | Op::Recv, Some(buf)) => (buf.as_mut_ptr().cast(), buf.len()),
            (_, Some(buf)) => (buf.as_ptr().cast_mut().cast(), buf.len()),
            (_, None) => (std::ptr::null_mut(), 0),
        };
        let cb = &mut slot.cb;
        *cb = blank_aiocb();
        cb.aio_fildes = slot.fd;
        cb.aio_buf = addr;
        cb.aio_nbytes = len;
        // Past i64::MAX the offset is negative: pread says EINVAL.
        cb.aio_offset = i64::try_from(request.offset).unwrap_or(-1);
        let cb: *mut libc::aiocb = cb;
        // Why each call below is sound: `cb` points into a boxed slot, which
        // never moves (the queue frees it only in `Drop`), and the slot gives
        // up neither its control block nor its request until `collect` has
        // seen glibc done with it (or `Drop` has, or leaks the slots). The
        // buffer it names lives in the pool's arena, kept alive by the
        // request's `Buf`, or in the caller's memory, valid until the `Buf`
        // drops (the promise of `Buf::from_raw_parts`'s caller); it does not
        // move when the request moves.
        let started = match op {
            // A receive or send on a file is a read or write (the engine
            // refuses sockets).
            // SAFETY: see above.
            Op::Read | Op::Recv => unsafe { libc::aio_read(cb) },
            // SAFETY: see above.
            Op::Write | Op::Send => unsafe { libc::aio_write(cb) },
            // SAFETY: see above (a sync names no buffer).
            Op::Fsync => unsafe { libc::aio_fsync(libc::O_SYNC, cb) },
            // SAFETY: see above (a sync names no buffer).
            Op::Fdatasync => unsafe { libc::aio_fsync(libc::O_DSYNC, cb) },
            // The engine runs these itself before they come here.
            Op::Trim | Op::Allocate | Op::AllocateKeepSize | Op::Truncate => {
                return Err(-i64::from(libc::EINVAL));
            }
        };
        if started == 0 {
            Ok(())
        } else {
            Err(-i64::from(
                io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            ))
        }
    }

    /// Moves the answers of the requests glibc finished from `running` to
    /// `arrived`, in the order they were given; returns how many.
    fn collect(&mut self) -> usize {
        let mut kept = 0;
        let mut finished = 0;
        for at in 0..self.running.len() {
            let index = self.running[at];
            let cb: *mut libc::aiocb = &mut self.slots[index as usize].cb;
            // SAFETY: `cb` is a control block glibc took and has not been
            // asked about since it finished: `aio_error` only reads it.
            let status = unsafe { libc::aio_error(cb) };
            if status == libc::EINPROGRESS {
                self.running[kept] = index;
                kept += 1;
                continue;
            }
            // SAFETY: as above; the request is done (`aio_error` is no longer
            // EINPROGRESS), so `aio_return` may be called, once.
            let returned = unsafe { libc::aio_return(cb) };
            let result = if status == 0 {
                returned as i64
            } else {
                -i64::from(status)
            };
            self.book.arrived.push_back((index, result));
            finished += 1;
        }
        self.running.truncate(kept);
        finished
    }

    /// Waits, at most `timeout` (`None`: as long as it takes), until glibc
    /// finishes one of the running requests.
    fn suspend(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.waitlist.clear();
        for &index in &self.running {
            self.waitlist.push(&self.slots[index as usize].cb);
        }
        let timespec = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs() as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let timeout = timespec
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `waitlist` holds `len` pointers to control blocks glibc has,
        // in the boxed slots; it lives through the call, and so does `timeout`
        // when not null.
        let ret = unsafe {
            libc::aio_suspend(
                self.waitlist.as_ptr(),
                self.waitlist.len() as libc::c_int,
                timeout,
            )
        };
        if ret == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            // A signal, or the timeout: the caller looks again.
            Some(libc::EINTR | libc::EAGAIN) => Ok(()),
            _ => Err(err),
        }
    }

    /// Waits until at least `min` answers are in (fewer only if fewer were
    /// submitted), appends at most `max` completions to `out`, and returns how
    /// many, asking `decide(slot, request, result)` what each answer means
    /// while the request is still in its slot: [`Verdict::Done`] hands it out
    /// with that result, [`Verdict::Again`] keeps it in its slot, edited for
    /// what it asks for next, queued for the next
    /// [`submit_all`](Self::submit_all) ([`Self::again`] counts them).
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
        while got < max && !self.running.is_empty() && self.book.again == 0 {
            if self.collect() == 0 {
                if got >= want {
                    break;
                }
                self.suspend(None)?;
                continue;
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
}

impl Drop for PosixAioQueue {
    /// Cancels what glibc has not started and waits for the rest, so that no
    /// buffer is freed while glibc's threads may still use it.
    fn drop(&mut self) {
        for &index in &self.running {
            let slot = &mut self.slots[index as usize];
            // SAFETY: the control block is one glibc has, in the boxed slots;
            // a request already running is left to finish (AIO_NOTCANCELED).
            unsafe { libc::aio_cancel(slot.fd, &mut slot.cb) };
        }
        let deadline = Instant::now() + DROP_WAIT;
        loop {
            self.collect();
            let now = Instant::now();
            if self.running.is_empty() || now >= deadline {
                break;
            }
            if self.suspend(Some(deadline - now)).is_err() {
                break;
            }
        }
        if !self.running.is_empty() {
            // glibc's threads may still write into these buffers, through
            // these control blocks: never free them.
            std::mem::forget(std::mem::take(&mut self.slots));
        }
    }
}

impl std::fmt::Debug for PosixAioQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PosixAioQueue")
            .field("capacity", &self.capacity)
            .field("slots", &self.slots.len())
            .field("occupied", &self.book.occupied)
            .field("queued", &self.book.queued.len())
            .field("running", &self.running.len())
            .field("arrived", &self.book.arrived.len())
            .field("again", &self.book.again)
            .finish()
    }
}
