//! `io_uring`: batched submission and reaping through one ring per engine,
//! as fio's `io_uring` engine.
//!
//! The ring is built with the best task-running mode the kernel accepts
//! (`SINGLE_ISSUER|DEFER_TASKRUN`, else `COOP_TASKRUN|TASKRUN_FLAG`, else the
//! default) and disabled (`R_DISABLED`): it is enabled at the first commit, by
//! the thread that commits, which is the thread a `SINGLE_ISSUER` ring then
//! belongs to. An engine may therefore be built on one thread and driven from
//! another, but must then stay on that one, unless it was built for
//! [`any_thread`](super::EngineConfig::any_thread) (no `SINGLE_ISSUER`).
//!
//! Once bound so, the ring registers itself with its thread and closes its
//! descriptor, named from then on by its index there (Linux 6.3; see
//! [`probe::ring_gives_descriptor_back`](crate::probe::ring_gives_descriptor_back)):
//! the engine holds no descriptor beyond its files. A commit with nothing
//! queued binds it too, so a program that makes hundreds of engines
//! (seeds/001) commits each once before it makes the next.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use super::alias::SharesFiles;
use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, QueueOutcome, RingCounts};
use super::inject::{self, Faults, FaultsFirst};
use super::retry::Retry;
use crate::Error;
use crate::blocking;
use crate::buf::BufPool;
use crate::device::EmulatedDevice;
use crate::file::{Caching, FileEntry, FileHandle, FileTable};
use crate::request::{Completion, Op, Request, Verdict};
use crate::sys::uring::{FileRef, Messages, Push, Receive, Ring};

mod completions;
mod error;
mod setup;
mod state;

pub use state::IoUringEngine;

use error::{engine_error, enter_op};
use setup::{Setup, TaskRun, build_ring};

/// Size of the registered-file table at first; it doubles when outgrown.
const INITIAL_REGISTERED_FILES: u32 = 64;

impl IoUringEngine {
    /// Builds a ring for `config.depth` requests. With `config.fixed_buffers`,
    /// `pool` (if given) is registered and requests carrying its buffers use
    /// `READ_FIXED`/`WRITE_FIXED`; other buffers still work, unregistered.
    ///
    /// Fails with [`Error::Unavailable`] when the system refuses io_uring, and
    /// with [`Error::Engine`] naming the step (setup, buffer or file
    /// registration) otherwise.
    pub fn new(config: &EngineConfig, pool: Option<&BufPool>) -> Result<Self, Error> {
        Self::with_ladder(config, pool, Setup::ladder(config))
    }

    /// An engine whose ring setup starts at rung `rung` of the ladder, to test
    /// the fallbacks a kernel accepting everything would never take.
    #[cfg(test)]
    pub(crate) fn starting_at_rung(
        config: &EngineConfig,
        pool: Option<&BufPool>,
        rung: usize,
    ) -> Result<Self, Error> {
        Self::with_ladder(config, pool, &Setup::ladder(config)[rung..])
    }

    fn with_ladder(
        config: &EngineConfig,
        pool: Option<&BufPool>,
        ladder: &[Setup],
    ) -> Result<Self, Error> {
        let requested = config.depth.max(1);
        // A socket's standing receive takes an SQ entry beside the requests
        // (and a slot of its own, past theirs): with multishot receive, the
        // SQ has room for as many.
        let sq_slots = if config.recv_multishot {
            requested.saturating_mul(2)
        } else {
            requested
        };
        let mut sq_entries = sq_slots.checked_next_power_of_two().unwrap_or(1 << 31);
        if config.sq_thread_poll {
            // The SQPOLL thread moves the SQ head past a batch (at most
            // `depth` entries) only after posting its completions: twice the
            // depth leaves room for a full batch more while it does.
            sq_entries = sq_entries.saturating_mul(2).min(1 << 15);
        }
        let (ring, setup) = build_ring(config, sq_entries, ladder)?;
        let params = ring.params();
        // The kernel may clamp the rings; one CQE per request in flight must always fit.
        let depth = requested.min(params.sq_entries).min(params.cq_entries) as usize;
        let capacity = depth;
        let mut ring = Ring::new(
            ring,
            capacity,
            !setup.disabled,
            setup.taskrun == TaskRun::Deferred,
        );
        if config.fixed_buffers
            && let Some(pool) = pool
        {
            ring.register_buffers(pool)
                .map_err(|e| engine_error("register buffers", e))?;
        }
        let registered_files = if config.register_files {
            ring.raw()
                .register_files_sparse(INITIAL_REGISTERED_FILES)
                .map_err(|e| engine_error("register files", e))?;
            INITIAL_REGISTERED_FILES
        } else {
            0
        };
        if config.nowait {
            ring.set_rw_flags(libc::RWF_NOWAIT);
        }
        Ok(IoUringEngine {
            ring,
            files: FileTable::new(),
            registered_files,
            depth,
            asked_depth: requested as usize,
            setup,
            device: config.completion_latency.map(EmulatedDevice::new),
            device_queue: Vec::new(),
            reaps: 0,
            reaped: 0,
            multishot: config.recv_multishot,
            retry: Retry::new(config.nowait),
            tracks: vec![None; capacity],
            early: 0,
            faults: Faults::of(config),
            room: depth,
        })
    }

    /// Makes the file just added at `handle` (descriptor `fd`) the ring's:
    /// registered, and listened to if it is a socket with standing
    /// receives; refused (taken out again) where that fails.
    fn adopt(&mut self, handle: FileHandle, fd: RawFd) -> Result<FileHandle, Error> {
        let in_flight = self.ring.in_flight();
        if self.registered_files > 0 && handle.0 >= self.registered_files && in_flight > 0 {
            // Growing the table unregisters it for a moment: a request in
            // flight could then miss its file (SQPOLL), or the unregister
            // could wait for every request that uses it (older kernels).
            return Err(self.files.refuse(handle, |_| Error::FileBusy {
                handle: handle.0,
                in_flight,
            }));
        }
        if self.registered_files > 0
            && let Err(e) = self.register_file(handle, fd)
        {
            return Err(self
                .files
                .refuse(handle, |path| Error::io("register file", path, e)));
        }
        if self.multishot
            && self.files.get(handle).is_some_and(FileEntry::is_socket)
            && let Err(e) = self.listen(handle, fd)
        {
            return Err(self.files.refuse(handle, |path| e.into_error(path)));
        }
        Ok(handle)
    }

    /// Takes the file at `handle` out of the ring and the table, unless
    /// requests are in flight.
    fn release(&mut self, handle: FileHandle) -> Result<FileEntry, Error> {
        let in_flight = self.in_flight();
        if in_flight > 0 {
            // An unsubmitted SQE names the descriptor by number: closing it now
            // could redirect the request to whatever file reuses the number.
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight,
            });
        }
        let Some(entry) = self.files.get(handle) else {
            return Err(Error::BadHandle(handle.0));
        };
        self.ring
            .forget(handle.0)
            .map_err(|e| Error::io("stop the multishot receive of", entry.path(), e))?;
        if handle.0 < self.registered_files {
            self.ring
                .raw()
                .register_files_update(handle.0, &[-1])
                .map_err(|e| Error::io("unregister file", entry.path(), e))?;
        }
        self.files.remove(handle).ok_or(Error::BadHandle(handle.0))
    }

    /// Puts `fd` into the registered-file table at `handle`, growing the table if needed.
    fn register_file(&mut self, handle: FileHandle, fd: RawFd) -> io::Result<()> {
        if handle.0 < self.registered_files {
            self.ring.raw().register_files_update(handle.0, &[fd])?;
            return Ok(());
        }
        // Outgrown: replace the table by one twice as big, every open file at its handle.
        let size = (handle.0 + 1)
            .next_power_of_two()
            .max(self.registered_files.saturating_mul(2));
        let fds: Vec<RawFd> = (0..size)
            .map(|i| self.files.get(FileHandle(i)).map_or(-1, FileEntry::fd))
            .collect();
        let raw = self.ring.raw();
        raw.unregister_files()?;
        if let Err(e) = raw.register_files(&fds) {
            // No table is left: fall back to plain descriptors, which always work.
            self.registered_files = 0;
            return Err(e);
        }
        self.registered_files = size;
        Ok(())
    }

    /// `io_uring_enter(GETEVENTS)` waiting for `min_complete` CQEs; interruptions
    /// and transient refusals are not errors (the caller drains and asks again).
    fn enter(&mut self, min_complete: usize) -> Result<(), Error> {
        match self.ring.wait(min_complete) {
            Ok(()) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(engine_error(enter_op(&e, "io_uring_enter (wait)"), e)),
        }
    }

    /// Starts socket `handle` receiving through a standing multishot receive.
    fn listen(&mut self, handle: FileHandle, fd: RawFd) -> Result<(), Refusal> {
        let datagram = crate::sys::keeps_message_boundaries(fd).map_err(Refusal::Io)?;
        let largest = crate::sys::largest_datagram(fd).map_err(Refusal::Io)?;
        let file = if self.registered_files > 0 {
            FileRef::Fixed(handle.0)
        } else {
            FileRef::Fd(fd)
        };
        let kind = match (datagram, largest) {
            (false, _) => Messages::Stream,
            (true, Some(largest)) => Messages::Bounded(largest),
            (true, None) => Messages::Unbounded,
        };
        self.ring.listen(handle.0, fd, file, kind).map_err(|e| {
            if e.raw_os_error() == Some(libc::EINVAL) {
                Refusal::Unsupported
            } else {
                Refusal::Io(e)
            }
        })
    }

    /// How an SQE names `entry`'s file `handle`.
    #[inline]
    fn file_ref(&self, handle: FileHandle, entry: &FileEntry) -> FileRef {
        if self.registered_files > 0 {
            FileRef::Fixed(handle.0)
        } else {
            FileRef::Fd(entry.fd())
        }
    }

    /// A completion [`queue`](Engine::queue) made at once: the caller's,
    /// unless it is "try again" and this engine applies the rule.
    #[inline]
    fn answer_now<const RETRYING: bool>(&mut self, completion: Completion) -> QueueOutcome {
        if RETRYING || completion.result >= 0 {
            QueueOutcome::Completed(completion)
        } else {
            self.finish_now(completion)
        }
    }

    /// A completion [`queue`](Engine::queue) made at once that is "try
    /// again" (the SQ had no room): the request is offered again, after the
    /// rule's pauses, until it is taken or its retries run out.
    #[cold]
    fn finish_now(&mut self, mut completion: Completion) -> QueueOutcome {
        let mut track = None;
        loop {
            match self.retry.settle_completion(&mut completion, &mut track) {
                Verdict::Done(_) => return QueueOutcome::Completed(completion),
                Verdict::Again => {
                    self.retry.take_pause();
                    match self.queue_once::<true>(completion.into_request()) {
                        QueueOutcome::Completed(next) => completion = next,
                        // Nothing moved before (only errors come back at
                        // once), so the slot needs no record.
                        taken @ (QueueOutcome::Queued | QueueOutcome::Busy(_)) => return taken,
                    }
                }
            }
        }
    }

    /// [`Engine::queue`]; `RETRYING`: offered again by
    /// [`finish_now`](Self::finish_now), which takes what completes at once
    /// as it is.
    #[inline(always)]
    fn queue_once<const RETRYING: bool>(&mut self, request: Request) -> QueueOutcome {
        let entry = match request.entry_in(&self.files) {
            Ok(entry) => entry,
            Err(errno) => return QueueOutcome::Completed(request.complete(errno)),
        };
        if self.below() >= self.room {
            return QueueOutcome::Busy(request);
        }
        if self.device.is_some() {
            self.device_queue.push(request);
            return QueueOutcome::Queued;
        }
        if request.op == Op::Trim && entry.is_block_device() {
            // io_uring's fallocate on a block device writes zeros instead of
            // discarding: run BLKDISCARD here, as fio's io_uring engine does.
            let result = match blocking::change_space(entry.fd(), true, &request) {
                Ok(n) => n as i64,
                Err(e) => crate::sys::negative_errno(&e),
            };
            return self.answer_now::<RETRYING>(request.complete(result));
        }
        if self.multishot && request.op == Op::Recv && self.ring.is_listening(request.file.0) {
            return match self.ring.receive(request) {
                Receive::Done(completion) => QueueOutcome::Completed(completion),
                Receive::Waiting => QueueOutcome::Queued,
                Receive::Refused(request, error) => QueueOutcome::Completed(
                    request.complete(-i64::from(error.raw_os_error().unwrap_or(libc::EAGAIN))),
                ),
            };
        }
        let file = self.file_ref(request.file, entry);
        let flags = entry.rw_flags(request.op) | request.rw_flags();
        match self.ring.push(request, file, flags) {
            Push::Queued => QueueOutcome::Queued,
            // queue() checked the depth above, so this is not expected.
            Push::Full(request) => QueueOutcome::Busy(request),
            // Never `Busy` below the depth: the caller would reap nothing.
            Push::Refused(request, error) => self.answer_now::<RETRYING>(
                request.complete(-i64::from(error.raw_os_error().unwrap_or(libc::EAGAIN))),
            ),
        }
    }

    /// [`Engine::commit`] of what the caller queued; returns how many
    /// requests it handed to the kernel.
    fn commit_callers(&mut self) -> Result<usize, Error> {
        if let Some(device) = self.device {
            // The device takes the batch now: data moves, the clock starts.
            // The list's memory is kept for the next batch (no allocation
            // per commit).
            let mut batch = std::mem::take(&mut self.device_queue);
            let mut refused = None;
            let mut queued = batch.drain(..);
            for mut request in queued.by_ref() {
                let deadline = device.deadline();
                let result = match self.files.get(request.file) {
                    Some(entry) => {
                        EmulatedDevice::transfer(entry.fd(), entry.is_direct(), &mut request)
                    }
                    None => -i64::from(libc::EBADF),
                };
                match self.ring.push_timed(request, result, deadline) {
                    Push::Queued => {}
                    // queue() keeps in_flight <= depth <= the ring's size, so
                    // this is not expected; if it happens, nothing is lost.
                    Push::Full(request) => {
                        self.device_queue.push(request);
                        break;
                    }
                    Push::Refused(request, error) => {
                        self.device_queue.push(request);
                        refused = Some(error);
                        break;
                    }
                }
            }
            // What the SQ did not take waits for the next commit.
            self.device_queue.extend(queued);
            if let Some(error) = refused {
                return Err(engine_error("io_uring (wait for room in the SQ)", error));
            }
            if self.device_queue.is_empty() {
                self.device_queue = batch;
            }
        }
        // A commit binds the ring to its thread even with nothing to hand
        // over: a caller that commits once before its work begins holds no
        // ring descriptor from then on (see `Ring::enable`).
        self.ring
            .enable()
            .map_err(|e| engine_error("register enable rings", e))?;
        self.ring.rearm();
        if !self.ring.has_unsubmitted_entries() {
            return Ok(0);
        }
        // Requests waiting on a standing receive reach the kernel with it.
        let before = self.ring.in_kernel();
        self.ring
            .submit_all()
            .map_err(|e| engine_error(enter_op(&e, "io_uring_enter (submit)"), e))?;
        // A standing receive the full SQ had no room for goes in now (and
        // down at once, with nothing else left in the SQ).
        self.ring.rearm();
        Ok(self.ring.in_kernel().saturating_sub(before))
    }

    /// Requests in the ring or waiting for the emulated device: in flight,
    /// but for the completions injected delays hold back.
    #[inline(always)]
    fn below(&self) -> usize {
        self.ring.in_flight() + self.device_queue.len()
    }
}

/// Why a socket could not receive through a multishot receive.
enum Refusal {
    /// The kernel has no provided-buffer rings.
    Unsupported,
    Io(io::Error),
}

impl Refusal {
    fn into_error(self, path: &std::path::Path) -> Error {
        match self {
            Refusal::Unsupported => Error::Unsupported {
                what: "io_uring's multishot receive (recv_multishot)",
                path: path.to_owned(),
                reason: "this kernel has no provided-buffer rings (Linux 5.19) or no multishot receive (6.0); leave recv_multishot off",
            },
            Refusal::Io(e) => Error::io("register the provided buffers of", path, e),
        }
    }
}

impl IoUringEngine {
    /// The setup flags the kernel accepted, e.g. `SQPOLL|SINGLE_ISSUER|DEFER_TASKRUN|R_DISABLED`
    /// (`R_DISABLED`: set up disabled, enabled at the first commit).
    pub fn setup_flags(&self) -> String {
        let mut flags: Vec<&str> = Vec::new();
        if self.ring.is_sqpoll() {
            flags.push("SQPOLL");
        }
        if self.ring.is_iopoll() {
            flags.push("IOPOLL");
        }
        match self.setup.taskrun {
            TaskRun::Deferred => flags.extend(["SINGLE_ISSUER", "DEFER_TASKRUN"]),
            TaskRun::Cooperative => flags.extend(["COOP_TASKRUN", "TASKRUN_FLAG"]),
            TaskRun::Interrupting => {}
        }
        if self.setup.disabled {
            flags.push("R_DISABLED");
        }
        flags.join("|")
    }

    /// Whether the caller asked for injected faults.
    #[inline(always)]
    pub(crate) fn has_faults(&self) -> bool {
        self.faults.is_some()
    }
}

impl FaultsFirst for IoUringEngine {
    fn faults_mut(&mut self) -> Option<&mut Faults> {
        self.faults.as_deref_mut()
    }

    #[inline(always)]
    fn queue_plain(&mut self, request: Request) -> QueueOutcome {
        self.queue_once::<false>(request)
    }
}

impl Engine for IoUringEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUring
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        let fd = file.as_raw_fd();
        let handle = if self.device.is_some() {
            EmulatedDevice::insert(&mut self.files, file, path)?
        } else {
            self.files.insert(file, path)
        };
        self.adopt(handle, fd)
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        self.files
            .set_caching(handle, caching, self.device.is_some())
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        self.files
            .set_atomic_writes(handle, atomic, self.device.is_some())
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        if self.depth > self.room {
            // Completions held back may be this file's.
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight: self.in_flight(),
            });
        }
        if self.files.get(handle).is_some_and(FileEntry::is_alias) {
            return Err(Error::BadHandle(handle.0));
        }
        self.release(handle)?
            .into_file()
            .ok_or(Error::BadHandle(handle.0))
    }

    #[inline(always)]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.queue_faults_first(request)
    }

    fn commit(&mut self) -> Result<usize, Error> {
        Ok(self.commit_callers()? + std::mem::take(&mut self.early))
    }

    /// One `io_uring_enter` submits what is queued and waits, where nothing
    /// else needs the kernel's attention first (an emulated device's batch,
    /// SQPOLL's thread, multishot receives): otherwise commit, then reap.
    fn commit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        self.ring.rearm();
        // Standing receives' CQEs are not requests': a wait counted in
        // requests must not meet them.
        let plain = self.device.is_none()
            && self.faults.is_none()
            && !self.multishot
            && !self.ring.is_sqpoll()
            && !self.ring.has_waiting_receives()
            && !self.ring.has_again()
            && self.ring.has_unsubmitted_entries();
        if !plain || min == 0 || max == 0 {
            self.commit()?;
            return self.reap(min, max, out);
        }
        self.ring
            .enable()
            .map_err(|e| engine_error("register enable rings", e))?;
        // At most one more than already in the kernel: the submission hands
        // over at least one, so the wait cannot outlast what is there.
        let want = min.min(max).min(self.ring.in_kernel() + 1);
        self.ring
            .submit_all_and_wait(want)
            .map_err(|e| engine_error(enter_op(&e, "io_uring_enter (submit and wait)"), e))?;
        // The enter ran the task work and waited: what it waited for is in
        // the CQ, and one drain is the whole reap (at depth 1, every one).
        let got = self.drain(None, max, out)?;
        if got >= min.min(max) {
            self.reaps += 1;
            self.reaped += got as u64;
            return Ok(got);
        }
        Ok(got + self.reap(min - got, max - got, out)?)
    }

    /// Requests queued but not committed are not waited for: `min` counts
    /// only committed ones.
    #[inline]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if self.faults.is_some() {
            return inject::HoldsBack::reap_holding_back(self, min, max, out);
        }
        self.reap_ring(None, min, max, out)
    }

    fn in_flight(&self) -> usize {
        self.below() + (self.depth - self.room)
    }

    fn completion_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        // Other rings finish some completions only when the submitting
        // thread enters the kernel (DEFER_TASKRUN: only in its own waits):
        // another thread polling for them could wait for ever.
        if self.setup.taskrun == setup::TaskRun::Interrupting {
            self.ring.descriptor()
        } else {
            None
        }
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn counters(&self) -> EngineCounters {
        let mut counters = EngineCounters {
            ring: Some(RingCounts {
                reaps: self.reaps,
                completions: self.reaped,
                cq_head_commits: self.ring.cq_head_commits,
            }),
            ..self.retry.counters()
        };
        if let Some(faults) = &self.faults {
            faults.add_to(&mut counters);
        }
        counters
    }

    fn state(&self) -> String {
        let mut state = format!(
            "io_uring: {} in flight, {} not yet submitted, {} in the kernel",
            self.in_flight(),
            self.ring.unsubmitted(),
            self.ring.in_kernel()
        );
        if !self.device_queue.is_empty() {
            state.push_str(&format!(
                ", {} for the emulated device at the next commit",
                self.device_queue.len()
            ));
        }
        if self.depth > self.room {
            state.push_str(&format!(
                ", {} held back by injected delays",
                self.depth - self.room
            ));
        }
        state
    }

    fn description(&self) -> String {
        // R_DISABLED would read as a ring that is off: it was set up so and
        // enabled at its first commit, which a report says in words.
        let flags = self.setup_flags();
        let flags: Vec<&str> = flags.split('|').filter(|f| *f != "R_DISABLED").collect();
        let mut parts = vec![flags.join("|")];
        if self.setup.disabled {
            parts.push("enabled at first commit".to_owned());
        }
        if let Some(device) = &self.device {
            parts.push(format!("emulated device, {:?}", device.latency()));
        }
        if self.registered_files > 0 {
            parts.push("registered files".to_owned());
        }
        if self.ring.has_fixed_buffers() {
            parts.push("fixed buffers".to_owned());
        }
        if self.multishot {
            parts.push("multishot receive".to_owned());
        }
        if self.asked_depth > self.depth {
            parts.push(format!(
                "depth {} ({} asked: the most the kernel's ring takes)",
                self.depth, self.asked_depth
            ));
        } else {
            parts.push(format!("depth {}", self.depth));
        }
        parts.retain(|part| !part.is_empty());
        inject::described(
            format!("io_uring ({})", parts.join(", ")),
            self.faults.as_deref(),
        )
    }
}

#[cfg(test)]
impl IoUringEngine {
    /// Makes the engine act as on a kernel before 6.0, which has no
    /// `IORING_REGISTER_SYNC_CANCEL`, to test the fallback on this one.
    pub(crate) fn behave_without_sync_cancel(&mut self) {
        self.ring.without_sync_cancel = true;
    }

    /// Makes an SQPOLL ring's thread publish its SQ head late, as the
    /// kernel's does now and then (see [`crate::sys::uring::ring::UnpublishedHead`]).
    pub(crate) fn publish_sq_head_late(&mut self) {
        self.ring.unpublished = Some(Default::default());
    }

    /// Standing multishot receives started so far.
    pub(crate) fn standing_receives_started(&self) -> u64 {
        self.ring.standing_receives_started()
    }

    /// How many times the engine has moved the CQ head and published it.
    pub(crate) fn cq_head_commits(&self) -> u64 {
        self.ring.cq_head_commits
    }
}

#[cfg(test)]
mod multishot_tests;

#[cfg(test)]
pub(super) mod tests;

impl SharesFiles for IoUringEngine {
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        self.files.insert_alias(at, file, path, direct)?;
        self.adopt(at, file.as_raw_fd()).map(drop)
    }

    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        self.release(handle).map(drop)
    }
}
