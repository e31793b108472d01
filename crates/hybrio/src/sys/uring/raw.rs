//! The ring's memory and its two system calls: `io_uring_setup`, the SQ and
//! CQ rings and the SQE array mapped into this process, `io_uring_enter` and
//! `io_uring_register`.
//!
//! Hybrio's own rather than the io-uring crate's `IoUring` for one reason: a
//! ring that stays on one thread can give its descriptor back. Registered
//! with itself (`IORING_REGISTER_RING_FDS`, Linux 5.18) and named from then
//! on by its index among the thread's registered rings (which every
//! `io_uring_register` call also accepts from Linux 6.3,
//! `IORING_FEAT_REG_REG_RING`), its descriptor can be closed, as liburing's
//! `io_uring_close_ring_fd` does, and an engine holds no descriptor beyond
//! its files (seeds/001: hundreds of jobs, each with a ring, under
//! `RLIMIT_NOFILE`). The crate's ring owns its descriptor and closes it when
//! dropped, so it cannot. The entries themselves are still the crate's
//! (`opcode` builders, `squeue::Entry`, `cqueue::Entry`), and the kernel's
//! structures are rustix's.
//!
//! The index is the registering thread's: another thread's index of the same
//! number names another ring, or none. So the ring remembers its thread, and
//! once its descriptor is closed, a call from any other thread fails with
//! `EEXIST` (what the kernel answers a `SINGLE_ISSUER` ring's other threads)
//! without reaching the kernel.

use std::cell::Cell;
use std::ffi::c_void;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use io_uring::{cqueue, squeue};
use rustix::io_uring::{self as kernel, IoringRegisterOp as Op};

/// A ring set up by [`RawRing::setup`]. Dropping it unregisters it from its
/// thread (when its descriptor was closed) and unmaps its memory; the caller
/// must have settled every request the kernel held first.
pub(crate) struct RawRing {
    /// The ring's descriptor, until [`RawRing::close_descriptor`] closes it.
    fd: Option<OwnedFd>,
    /// What the system calls are given to name the ring.
    target: Target,
    params: kernel::io_uring_params,
    sq: Sq,
    cq: Cq,
    // Unmapped last: the queues above point into them.
    _sq_ring: Mapping,
    _cq_ring: Option<Mapping>,
    _sqes: Mapping,
}

/// How the system calls name the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Descriptor(RawFd),
    /// Index `index` among the registered rings of thread `owner` (see
    /// [`this_thread`]).
    Registered {
        index: u32,
        owner: u64,
    },
}

/// The submission queue as mapped: the kernel reads entries from `head` to
/// `tail`; this process writes them and moves `tail`.
struct Sq {
    head: *const AtomicU32,
    tail: *const AtomicU32,
    flags: *const AtomicU32,
    mask: u32,
    entries: u32,
    sqes: *mut squeue::Entry,
    /// The tail as this process has written it (published at each push).
    tail_here: u32,
}

/// The completion queue as mapped: the kernel posts entries up to `tail`;
/// this process reads them and moves `head`.
struct Cq {
    head: *const AtomicU32,
    tail: *const AtomicU32,
    mask: u32,
    cqes: *const cqueue::Entry,
}

impl Cq {
    /// Where this process has read to (only it moves the head).
    #[inline]
    fn head(&self) -> u32 {
        // SAFETY: `head` points into the CQ ring's mapping for the ring's life.
        unsafe { &*self.head }.load(Ordering::Relaxed)
    }

    /// Where the kernel has posted to; acquire: the entries before it are
    /// written.
    #[inline]
    fn tail(&self) -> u32 {
        // SAFETY: `tail` points into the CQ ring's mapping for the ring's life.
        unsafe { &*self.tail }.load(Ordering::Acquire)
    }
}

/// One `mmap` of the ring's memory.
struct Mapping {
    base: NonNull<c_void>,
    len: usize,
}

/// The kernel's SQE and CQE sizes (no `SQE128`, no `CQE32`), which the
/// crate's entries are: its own queue writes and reads them in place in the
/// kernel's arrays.
const SQE_SIZE: usize = 64;
const CQE_SIZE: usize = 16;
const _: () = assert!(std::mem::size_of::<squeue::Entry>() == SQE_SIZE);
const _: () = assert!(std::mem::size_of::<cqueue::Entry>() == CQE_SIZE);

/// This thread's number among those that touched a ring: a registered
/// ring's index means something only on the thread that registered it.
/// Numbers are never reused, unlike thread-local addresses.
#[inline]
fn this_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: Cell<u64> = const { Cell::new(0) };
    }
    let number = NUMBER.get();
    if number != 0 {
        return number;
    }
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    NUMBER.set(number);
    number
}

impl Mapping {
    /// Maps `len` bytes of the ring `fd` at `offset` (one of the
    /// `IORING_OFF_*` regions).
    fn new(fd: RawFd, len: usize, offset: u64) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of the kernel's ring memory; no
        // existing memory is touched, and `Drop` unmaps exactly it.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset as libc::off_t,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(base).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(Mapping { base, len })
    }

    /// The address `offset` bytes in, as a `T`.
    fn at<T>(&self, offset: u32) -> *mut T {
        debug_assert!((offset as usize) < self.len);
        self.base
            .as_ptr()
            .cast::<u8>()
            .wrapping_add(offset as usize)
            .cast()
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are exactly what `mmap` returned, and the
        // ring that points into it is being dropped with it.
        unsafe { libc::munmap(self.base.as_ptr(), self.len) };
    }
}

impl RawRing {
    /// `io_uring_setup(entries, params)`, and the ring's memory mapped. The
    /// kernel fills in `params` (sizes, features, offsets).
    pub(crate) fn setup(entries: u32, mut params: kernel::io_uring_params) -> io::Result<RawRing> {
        // SAFETY: `params` is a whole `io_uring_params` the kernel reads and
        // fills in; the call keeps no pointer to it.
        let fd = unsafe { kernel::io_uring_setup(entries, &mut params) }?;
        let raw = fd.as_raw_fd();
        let sq_len = params.sq_off.array as usize + params.sq_entries as usize * 4;
        let cq_len = params.cq_off.cqes as usize + params.cq_entries as usize * CQE_SIZE;
        let single = params
            .features
            .contains(kernel::IoringFeatureFlags::SINGLE_MMAP);
        let sq_ring = Mapping::new(
            raw,
            if single { sq_len.max(cq_len) } else { sq_len },
            kernel::IORING_OFF_SQ_RING,
        )?;
        let cq_ring = if single {
            None
        } else {
            Some(Mapping::new(raw, cq_len, kernel::IORING_OFF_CQ_RING)?)
        };
        let sqes = Mapping::new(
            raw,
            params.sq_entries as usize * SQE_SIZE,
            kernel::IORING_OFF_SQES,
        )?;
        let cq_map = cq_ring.as_ref().unwrap_or(&sq_ring);
        let (s, c) = (params.sq_off, params.cq_off);
        // SAFETY: the offsets are the kernel's for this ring, inside the
        // mappings just made; the masks never change.
        let sq_mask = unsafe { sq_ring.at::<u32>(s.ring_mask).read() };
        // SAFETY: as above.
        let cq_mask = unsafe { cq_map.at::<u32>(c.ring_mask).read() };
        // SAFETY: as above; the tail is an atomic the kernel reads.
        let tail = unsafe { &*sq_ring.at::<AtomicU32>(s.tail) }.load(Ordering::Acquire);
        // Entry i of the SQE array is SQ slot i, once and for all.
        let array = sq_ring.at::<u32>(s.array);
        for i in 0..params.sq_entries {
            // SAFETY: `array` has `sq_entries` slots in the SQ ring's mapping,
            // which nothing else writes before the first submission.
            unsafe { array.wrapping_add(i as usize).write(i) };
        }
        let sq = Sq {
            head: sq_ring.at(s.head),
            tail: sq_ring.at(s.tail),
            flags: sq_ring.at(s.flags),
            mask: sq_mask,
            entries: params.sq_entries,
            sqes: sqes.at(0),
            tail_here: tail,
        };
        let cq = Cq {
            head: cq_map.at(c.head),
            tail: cq_map.at(c.tail),
            mask: cq_mask,
            cqes: cq_map.at(c.cqes),
        };
        Ok(RawRing {
            target: Target::Descriptor(raw),
            fd: Some(fd),
            params,
            sq,
            cq,
            _sq_ring: sq_ring,
            _cq_ring: cq_ring,
            _sqes: sqes,
        })
    }

    /// Registers the ring with the calling thread and closes its
    /// descriptor, where the kernel allows every call to name it by its
    /// index (Linux 6.3); from then on only this thread can use it. A kernel
    /// without the feature, or a thread with its 16 registered rings taken,
    /// leaves the descriptor open, which works as well.
    pub(crate) fn close_descriptor(&mut self) {
        let Some(fd) = self.fd.as_ref() else {
            return;
        };
        if !self
            .params
            .features
            .contains(kernel::IoringFeatureFlags::REG_REG_RING)
        {
            return;
        }
        let mut update = kernel::io_uring_rsrc_update::default();
        // Any free index: the kernel writes back which.
        update.offset = u32::MAX;
        update.data = kernel::io_uring_ptr::new(fd.as_raw_fd() as usize as *mut c_void);
        // SAFETY: one `io_uring_rsrc_update`, alive for the call, which the
        // kernel reads and writes the index into.
        let registered = unsafe { self.register(Op::RegisterRingFds, (&raw mut update).cast(), 1) };
        if matches!(registered, Ok(1)) {
            self.target = Target::Registered {
                index: update.offset,
                owner: this_thread(),
            };
            self.fd = None;
        }
    }

    /// The ring's descriptor, unless it gave it back.
    pub(crate) fn descriptor(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.fd.as_ref().map(OwnedFd::as_fd)
    }

    /// Whether the ring still holds a descriptor.
    #[cfg(test)]
    pub(crate) fn has_descriptor(&self) -> bool {
        self.fd.is_some()
    }

    /// The file descriptor (or registered index) the system calls take, and
    /// the flag that says which; `EEXIST` on a thread the registered index
    /// is not this ring's.
    #[inline]
    fn name(&self, registered: u32) -> io::Result<(libc::c_int, u32)> {
        match self.target {
            Target::Descriptor(fd) => Ok((fd, 0)),
            Target::Registered { index, owner } if owner == this_thread() => {
                Ok((index as libc::c_int, registered))
            }
            Target::Registered { .. } => Err(io::Error::from_raw_os_error(libc::EEXIST)),
        }
    }

    /// `io_uring_enter(ring, to_submit, min_complete, flags, arg, size)`.
    ///
    /// # Safety
    ///
    /// The `to_submit` entries published in the SQ, and whatever `arg`
    /// points at (`size` bytes, with the flags that say what it is), must be
    /// valid as the kernel reads them (see `io_uring_enter(2)`).
    #[inline]
    pub(crate) unsafe fn enter(
        &self,
        to_submit: u32,
        min_complete: u32,
        flags: kernel::IoringEnterFlags,
        arg: *const c_void,
        size: usize,
    ) -> io::Result<usize> {
        let (ring, registered) = self.name(kernel::IoringEnterFlags::REGISTERED_RING.bits())?;
        // SAFETY: the caller's promise for the entries and `arg`; `ring`
        // names this ring on this thread.
        let done = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                ring,
                to_submit,
                min_complete,
                flags.bits() | registered,
                arg,
                size,
            )
        };
        if done < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(done as usize)
        }
    }

    /// `io_uring_register(ring, op, arg, count)`.
    ///
    /// # Safety
    ///
    /// `arg` must point at what `op` reads (and writes) for `count` items
    /// (see `io_uring_register(2)`), and memory registered must outlive its
    /// registration.
    pub(crate) unsafe fn register(
        &self,
        op: Op,
        arg: *const c_void,
        count: u32,
    ) -> io::Result<u32> {
        let (ring, registered) =
            self.name(kernel::IoringRegisterFlags::USE_REGISTERED_RING.bits())?;
        // SAFETY: the caller's promise for `arg`; `ring` names this ring on
        // this thread.
        let done = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                ring,
                op as u32 | registered,
                arg,
                count,
            )
        };
        if done < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(done as u32)
        }
    }

    /// The sizes and features the kernel set the ring up with.
    pub(crate) fn params(&self) -> &kernel::io_uring_params {
        &self.params
    }

    /// Whether the ring was set up with `flag`.
    pub(crate) fn is_setup(&self, flag: kernel::IoringSetupFlags) -> bool {
        self.params.flags.contains(flag)
    }

    /// Writes `entry` into the SQ and publishes it; `false` when the SQ is
    /// full.
    ///
    /// # Safety
    ///
    /// Whatever `entry` points at must stay valid, and unmoved, until the
    /// kernel posts its CQE.
    #[inline]
    pub(crate) unsafe fn push(&mut self, entry: &squeue::Entry) -> bool {
        // SAFETY: `head` points into the SQ ring's mapping for the ring's life.
        let head = unsafe { (*self.sq.head).load(Ordering::Acquire) };
        if self.sq.tail_here.wrapping_sub(head) >= self.sq.entries {
            return false;
        }
        let slot = (self.sq.tail_here & self.sq.mask) as usize;
        // SAFETY: `slot` is below `sq_entries`, so inside the SQE array, and
        // the kernel reads no slot from the tail on; the crate's entry is the
        // kernel's SQE (its own queue writes it so). What it points at is the
        // caller's promise.
        unsafe { self.sq.sqes.wrapping_add(slot).write(entry.clone()) };
        self.sq.tail_here = self.sq.tail_here.wrapping_add(1);
        // SAFETY: as for `head`; the release store makes the entry visible
        // before the tail that hands it over.
        unsafe { (*self.sq.tail).store(self.sq.tail_here, Ordering::Release) };
        true
    }

    /// Entries in the SQ the kernel has not taken yet.
    #[inline]
    pub(crate) fn sq_len(&self) -> usize {
        // SAFETY: `head` points into the SQ ring's mapping for the ring's life.
        let head = unsafe { (*self.sq.head).load(Ordering::Acquire) };
        self.sq.tail_here.wrapping_sub(head) as usize
    }

    /// How many entries the SQ holds.
    #[cfg(test)]
    pub(crate) fn sq_capacity(&self) -> usize {
        self.sq.entries as usize
    }

    /// The flags the kernel publishes in the SQ ring.
    #[inline]
    pub(crate) fn sq_flags(&self) -> kernel::IoringSqFlags {
        // SAFETY: `flags` points into the SQ ring's mapping for the ring's life.
        let bits = unsafe { (*self.sq.flags).load(Ordering::Acquire) };
        kernel::IoringSqFlags::from_bits_retain(bits)
    }

    /// CQEs posted and not yet read.
    #[inline]
    pub(crate) fn cq_len(&self) -> usize {
        self.cq.tail().wrapping_sub(self.cq.head()) as usize
    }

    /// The CQEs posted so far, oldest first; the head moves past those read
    /// when the view is dropped (one store for the batch).
    #[inline]
    pub(crate) fn completions(&mut self) -> Completions<'_> {
        Completions {
            head: self.cq.head(),
            tail: self.cq.tail(),
            ring: self,
        }
    }

    /// Hands what is in the SQ to the kernel and waits for `want` CQEs, as
    /// the io-uring crate's `submit_and_wait` (and liburing's) does: enters
    /// the kernel only when there is something to hand over, to wait for,
    /// or to flush (an overflowed CQ, task work), and with SQPOLL only to
    /// wake a sleeping thread or wait.
    pub(crate) fn submit_and_wait(&self, want: usize) -> io::Result<usize> {
        let len = self.sq_len();
        let sq_flags = self.sq_flags();
        let overflow = sq_flags.contains(kernel::IoringSqFlags::CQ_OVERFLOW);
        let taskrun = sq_flags.contains(kernel::IoringSqFlags::TASKRUN);
        let nodrop = self
            .params
            .features
            .contains(kernel::IoringFeatureFlags::NODROP);
        let mut flags = kernel::IoringEnterFlags::empty();
        if want > 0 || self.is_setup(kernel::IoringSetupFlags::IOPOLL) || overflow || taskrun {
            flags |= kernel::IoringEnterFlags::GETEVENTS;
        }
        if self.is_setup(kernel::IoringSetupFlags::SQPOLL) {
            // The thread's NEED_WAKEUP is read after the tail's store.
            fence(Ordering::SeqCst);
            if self.sq_flags().contains(kernel::IoringSqFlags::NEED_WAKEUP) {
                flags |= kernel::IoringEnterFlags::SQ_WAKEUP;
            } else if want == 0 && !((overflow && nodrop) || taskrun) {
                return Ok(len);
            }
        }
        // SAFETY: the entries in the SQ were written by `push`, whose callers
        // keep what they point at valid; no argument is passed.
        unsafe {
            self.enter(
                len as u32,
                u32::try_from(want).unwrap_or(u32::MAX),
                flags,
                ptr::null(),
                0,
            )
        }
    }

    /// [`submit_and_wait`](Self::submit_and_wait) waiting for nothing.
    #[inline]
    pub(crate) fn submit(&self) -> io::Result<usize> {
        self.submit_and_wait(0)
    }
}

/// The registrations the engine makes, each one `io_uring_register` call.
impl RawRing {
    /// `register(op, arg, count)` whose answer is only success or failure.
    ///
    /// # Safety
    ///
    /// As [`register`](Self::register).
    unsafe fn register_op<T>(&self, op: Op, arg: *const T, count: u32) -> io::Result<()> {
        // SAFETY: the caller's promise.
        unsafe { self.register(op, arg.cast(), count) }.map(drop)
    }

    /// Enables a ring set up disabled (`IORING_REGISTER_ENABLE_RINGS`); a
    /// `SINGLE_ISSUER` ring then belongs to the calling thread.
    pub(crate) fn enable_rings(&self) -> io::Result<()> {
        // SAFETY: the call takes no argument.
        unsafe { self.register_op(Op::RegisterEnableRings, ptr::null::<()>(), 0) }
    }

    /// Registers `iovecs` as the ring's fixed buffers.
    ///
    /// # Safety
    ///
    /// The memory the iovecs describe must outlive the registration (the
    /// ring), and be written by the kernel only for requests that own it.
    pub(crate) unsafe fn register_buffers(&self, iovecs: &[libc::iovec]) -> io::Result<()> {
        let count = u32::try_from(iovecs.len()).map_err(|_| einval())?;
        // SAFETY: `count` iovecs, alive for the call; the memory they name
        // is the caller's promise.
        unsafe { self.register_op(Op::RegisterBuffers, iovecs.as_ptr(), count) }
    }

    /// A registered-file table of `count` empty entries (Linux 5.19).
    pub(crate) fn register_files_sparse(&self, count: u32) -> io::Result<()> {
        let mut table = kernel::io_uring_rsrc_register::default();
        table.nr = count;
        table.flags = kernel::IoringRsrcFlags::REGISTER_SPARSE;
        let size = std::mem::size_of_val(&table) as u32;
        // SAFETY: one `io_uring_rsrc_register`, alive for the call, whose
        // size is the count the operation takes; it points at nothing.
        unsafe { self.register_op(Op::RegisterFiles2, &raw const table, size) }
    }

    /// A registered-file table of `fds` (`-1`: an empty entry).
    pub(crate) fn register_files(&self, fds: &[RawFd]) -> io::Result<()> {
        let count = u32::try_from(fds.len()).map_err(|_| einval())?;
        // SAFETY: `count` descriptors, alive for the call; the kernel takes
        // its own references to the files.
        unsafe { self.register_op(Op::RegisterFiles, fds.as_ptr(), count) }
    }

    /// Removes the registered-file table.
    pub(crate) fn unregister_files(&self) -> io::Result<()> {
        // SAFETY: the call takes no argument.
        unsafe { self.register_op(Op::UnregisterFiles, ptr::null::<()>(), 0) }
    }

    /// Sets the registered-file table's entries from `offset` on to `fds`.
    pub(crate) fn register_files_update(&self, offset: u32, fds: &[RawFd]) -> io::Result<()> {
        let count = u32::try_from(fds.len()).map_err(|_| einval())?;
        let mut update = kernel::io_uring_rsrc_update::default();
        update.offset = offset;
        update.data = kernel::io_uring_ptr::new(fds.as_ptr().cast_mut().cast());
        // SAFETY: one update pointing at `count` descriptors, all alive for
        // the call.
        unsafe { self.register_op(Op::RegisterFilesUpdate, &raw const update, count) }
    }

    /// Cancels synchronously (Linux 6.0) the request whose `user_data` is
    /// `target`, or every request (`None`), waiting up to `timeout_secs`.
    pub(crate) fn sync_cancel(&self, target: Option<u64>, timeout_secs: i64) -> io::Result<()> {
        let mut cancel = kernel::io_uring_sync_cancel_reg::default();
        match target {
            Some(user_data) => cancel.addr = kernel::io_uring_user_data::from_u64(user_data),
            None => cancel.flags = kernel::IoringAsyncCancelFlags::ANY,
        }
        cancel.fd = -1;
        cancel.timeout = kernel::Timespec {
            tv_sec: timeout_secs,
            tv_nsec: 0,
        };
        // SAFETY: one `io_uring_sync_cancel_reg`, alive for the call; it
        // points at nothing.
        unsafe { self.register_op(Op::RegisterSyncCancel, &raw const cancel, 1) }
    }

    /// Registers the provided-buffer ring of `entries` entries at `address`
    /// as buffer group `group`.
    ///
    /// # Safety
    ///
    /// The ring's memory (page-aligned, `entries` entries) must outlive the
    /// registration.
    pub(crate) unsafe fn register_buf_ring(
        &self,
        address: *mut c_void,
        entries: u32,
        group: u16,
    ) -> io::Result<()> {
        let mut ring = kernel::io_uring_buf_reg::default();
        ring.ring_addr = kernel::io_uring_ptr::new(address);
        ring.ring_entries = entries;
        ring.bgid = group;
        // SAFETY: one `io_uring_buf_reg`, alive for the call; the memory it
        // names is the caller's promise.
        unsafe { self.register_op(Op::RegisterPbufRing, &raw const ring, 1) }
    }

    /// Unregisters buffer group `group`'s provided-buffer ring.
    pub(crate) fn unregister_buf_ring(&self, group: u16) -> io::Result<()> {
        let mut ring = kernel::io_uring_buf_reg::default();
        ring.bgid = group;
        // SAFETY: one `io_uring_buf_reg`, alive for the call.
        unsafe { self.register_op(Op::UnregisterPbufRing, &raw const ring, 1) }
    }
}

/// `EINVAL`: more items than one call takes.
fn einval() -> io::Error {
    io::Error::from_raw_os_error(libc::EINVAL)
}

impl Drop for RawRing {
    fn drop(&mut self) {
        if let Target::Registered { index, owner } = self.target
            && owner == this_thread()
        {
            let mut update = kernel::io_uring_rsrc_update::default();
            update.offset = index;
            // SAFETY: one `io_uring_rsrc_update`, alive for the call. Its
            // failure leaves the registration to the thread's exit.
            let _ = unsafe { self.register(Op::UnregisterRingFds, (&raw const update).cast(), 1) };
        }
        // Dropped from another thread, the registration stays with its
        // thread until that thread ends; the memory goes now, the ring with
        // the registration.
    }
}

/// The CQEs a drain reads; see [`RawRing::completions`].
pub(crate) struct Completions<'a> {
    ring: &'a mut RawRing,
    head: u32,
    tail: u32,
}

impl Iterator for Completions<'_> {
    type Item = cqueue::Entry;

    #[inline]
    fn next(&mut self) -> Option<cqueue::Entry> {
        if self.head == self.tail {
            return None;
        }
        let slot = (self.head & self.ring.cq.mask) as usize;
        // SAFETY: entries from the head to the tail read with acquire
        // ordering are the kernel's posted CQEs, inside the CQ's mapping; the
        // crate's entry is the kernel's CQE.
        let entry = unsafe { self.ring.cq.cqes.wrapping_add(slot).read() };
        self.head = self.head.wrapping_add(1);
        Some(entry)
    }
}

impl Drop for Completions<'_> {
    fn drop(&mut self) {
        // SAFETY: `head` points into the CQ ring's mapping for the ring's
        // life; the release store hands the slots read back to the kernel.
        unsafe { (*self.ring.cq.head).store(self.head, Ordering::Release) };
    }
}

impl std::fmt::Debug for RawRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawRing")
            .field("target", &self.target)
            .field("sq_entries", &self.params.sq_entries)
            .field("cq_entries", &self.params.cq_entries)
            .finish()
    }
}

// SAFETY: the ring's memory is the process's, not a thread's; what binds it
// to a thread (a `SINGLE_ISSUER` ring, a registered index) the kernel and
// `RawRing::name` check at each call.
unsafe impl Send for RawRing {}
