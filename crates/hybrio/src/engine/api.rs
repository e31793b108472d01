//! The contract every engine keeps, and what builds and counts one: the
//! [`Engine`] trait, its outcomes, its configuration and its counters. The
//! engines and the adaptive engine around them import it from here, not from the
//! factory above them (`engine/mod.rs`), which names them all.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

use super::inject::plan::{FaultPlan, InjectedCounts};
use crate::Error;
use crate::file::{Caching, FileHandle};
use crate::request::{Completion, Request};

/// What [`Engine::queue`] did with a request.
#[derive(Debug)]
pub enum QueueOutcome {
    /// The engine ran it inline; here is its completion (a synchronous
    /// engine's every request; the adaptive engine's inline ones when
    /// nothing else is out).
    Completed(Completion),
    /// Taken: its completion comes out of a later [`Engine::reap`], after
    /// the next [`Engine::commit`]. (The adaptive engine may already have
    /// run it inline and hold its completion for that reap, behind
    /// asynchronous requests queued before it: [`Engine::held`].)
    Queued,
    /// The engine is full, and nothing else: [`Engine::in_flight`] is at
    /// the engine's depth (requests taken and not yet handed back, held
    /// completions included). Commit and reap, then offer the request,
    /// handed back untouched, again.
    Busy(Request),
}

/// One way of doing I/O.
///
/// # The contract every engine keeps
///
/// Checked on every engine by the conformance suite (`engine/conformance/`):
///
/// * A request's completion comes back exactly once: from
///   [`queue`](Engine::queue) ([`QueueOutcome::Completed`]) or from a later
///   [`reap`](Engine::reap), never both. A loop that takes both arms works
///   on every engine; [`Driver`](crate::driver::Driver) takes them for you
///   and hands completions back from one place.
/// * [`in_flight`](Engine::in_flight) counts the requests the engine took
///   (`Queued`) and has not handed back: the caller's own count.
/// * `Busy` only when `in_flight()` is at the depth: after `Busy` there is
///   always something to reap.
/// * `reap(min >= 1)` with committed requests out returns at least one, or
///   an error; completions appended before an error are the caller's.
/// * A completion carries its request's `user_data`, file, offset and
///   buffer (a [`Buf`](crate::buf::Buf), never an `Option`: a sync's, a trim's, an
///   allocation's or a truncation's is [`Buf::empty`](crate::buf::Buf::empty)); the buffer goes back to its pool when the completion (or the
///   buffer taken out of it, [`Completion::take_buf`]) is dropped, so a
///   caller holding completions holds their buffers.
/// * Dropping an engine cancels what the kernel can cancel and waits (10 s
///   at most) for the rest; what is still out then is leaked with its
///   buffer, never freed while the kernel may write into it.
pub trait Engine: Send + std::fmt::Debug {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// Adds an open file to the engine's table (and, where asked, registers it with the kernel).
    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error>;

    /// Opens `path` as `options` say and adds it ([`add_file`](Engine::add_file)
    /// with the path given once). Errors name the open and the path.
    fn open_file(
        &mut self,
        path: &std::path::Path,
        options: &crate::file::OpenOptions,
    ) -> Result<FileHandle, Error> {
        let file = crate::file::open(path, options)?;
        self.add_file(file, path.to_path_buf())
    }

    /// Removes a file from the table and gives it back. Fails while requests are in flight.
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error>;

    /// Adds a socket (UDP, TCP or Unix; connected, or bound to receive) to
    /// the same table as files, for [`Request::recv`] and [`Request::send`];
    /// `name` stands for its path in errors (an address, say). It comes back
    /// from [`remove_file`](Engine::remove_file) as a `File` holding the
    /// descriptor (`OwnedFd::from(file)` turns it back). A descriptor that is
    /// not a socket is refused with `ENOTSOCK`; Linux AIO refuses sockets
    /// ([`Error::Unsupported`]).
    fn add_socket(&mut self, socket: OwnedFd, name: &str) -> Result<FileHandle, Error> {
        match crate::sys::is_socket(socket.as_raw_fd()) {
            Ok(true) => self.add_file(File::from(socket), PathBuf::from(name)),
            Ok(false) => Err(Error::io(
                "add as a socket",
                name,
                std::io::Error::from_raw_os_error(libc::ENOTSOCK),
            )),
            Err(e) => Err(Error::io("add as a socket", name, e)),
        }
    }

    /// Sets how the file at `handle` goes through the page cache. Uncached
    /// I/O (`RWF_DONTCACHE`, Linux 6.14) needs an engine that passes flags
    /// with each request (pvsync2, io_uring, the pool, adaptive; the others
    /// refuse with [`Error::CachingUnsupported`]) and a filesystem that
    /// takes it, probed here, before any I/O ([`Error::UncachedRefused`]
    /// names the filesystem and the kernel). An `O_DIRECT` file is uncached
    /// already: nothing changes. [`Caching::Auto`] lets the adaptive engine
    /// choose; every engine takes it, and the others keep the file cached.
    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        let _ = handle;
        match caching {
            Caching::Cached | Caching::Auto => Ok(()),
            Caching::Uncached => Err(Error::CachingUnsupported {
                engine: self.kind().name(),
            }),
        }
    }

    /// Makes the writes of the file at `handle` torn-write protected
    /// (`RWF_ATOMIC`, Linux 6.11), or ordinary again: each lands whole or
    /// not at all, across a crash or a power failure. It needs an engine
    /// that passes flags with each write (pvsync2, io_uring, libaio, the
    /// pool, adaptive; the others refuse with [`Error::NotOffered`]) and an
    /// `O_DIRECT` file whose filesystem or device offers them, checked here,
    /// before any I/O ([`Error::AtomicRefused`] names the units the file
    /// takes, or the filesystem and kernel that offer none). Each write must
    /// then fit those units ([`AtomicWriteUnits::fits`](crate::file::AtomicWriteUnits::fits)):
    /// the kernel answers any other with `-EINVAL`, never tearing it.
    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        let _ = handle;
        if !atomic {
            return Ok(());
        }
        Err(atomic_writes_not_offered(self.kind()))
    }

    /// Offers one request. See [`QueueOutcome`].
    fn queue(&mut self, request: Request) -> QueueOutcome;

    /// Hands every queued request to the kernel (or the device) in one call.
    /// Returns how many were handed over.
    fn commit(&mut self) -> Result<usize, Error>;

    /// Waits until at least `min` completions are ready (fewer only if fewer are
    /// in flight), appends at most `max` of them to `out`, and returns how many.
    /// `min == 0` never blocks. Requests queued but not yet committed are not
    /// waited for: commit them first.
    ///
    /// On error, the completions appended to `out` before it are reaped all
    /// the same: they are the caller's, and `in_flight()` no longer counts them.
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error>;

    /// [`commit`](Engine::commit) then [`reap`](Engine::reap), in one system
    /// call where the engine can (io_uring: `io_uring_enter` submits and
    /// waits at once, as liburing's `submit_and_wait`): the loop that
    /// refills and waits pays one kernel entry a round instead of two.
    /// Returns what `reap` returns.
    fn commit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        self.commit()?;
        self.reap(min, max, out)
    }

    /// Requests the engine took and has not handed back: queued, in the
    /// kernel or a worker, or completed and held for the next reap.
    fn in_flight(&self) -> usize;

    /// Requests the engine has already completed and holds for the caller's
    /// next reap: `reap(0, held())` returns them at once, with no wait and
    /// no system call. Only the adaptive engine holds any (an inline
    /// completion, while asynchronous requests queued before it are out, so
    /// that a caller that reaps only when its queue is full still comes back
    /// for those). Such a caller should take them as soon as they appear, as
    /// it takes a completion [`queue`](Engine::queue) returns: otherwise they
    /// wait behind its whole queue, one reap each.
    fn held(&self) -> usize {
        0
    }

    /// True when requests always complete inside [`Engine::queue`] (depth has no effect).
    fn is_synchronous(&self) -> bool;

    /// A descriptor that polls readable (`POLLIN`) while completions wait
    /// to be reaped, for a thread that waits for them with `poll(2)` or an
    /// event loop (an async runtime's) rather than in [`reap`](Engine::reap);
    /// `None` for an engine that has none. io_uring has its ring's, when made
    /// with [`EngineConfig::reaped_elsewhere`] (otherwise some completions
    /// are finished only when the thread that submitted them enters the
    /// kernel); the worker pool an eventfd its workers raise, made at the
    /// first call. It stays readable
    /// while a completion waits: reap, then poll again. It belongs to the
    /// engine and closes with it.
    fn completion_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }

    /// How the engine is set up, in one line for reports: its name, plus
    /// whatever the system chose for it (for io_uring, the ring flags the
    /// kernel accepted).
    fn description(&self) -> String {
        self.kind().name().to_owned()
    }

    /// What the engine holds, in one line for a report of a job that stopped
    /// making progress: its requests by where they wait, and the engines
    /// below it.
    fn state(&self) -> String {
        format!("{} in flight", self.in_flight())
    }

    /// What the engine counted besides completions: resubmissions, retries,
    /// injected faults, and the adaptive engine's choices.
    fn counters(&self) -> EngineCounters {
        EngineCounters::default()
    }
}

/// The refusal of atomic writes by an engine that passes no flags with
/// its writes ([`Engine::set_atomic_writes`]).
pub(crate) fn atomic_writes_not_offered(engine: EngineKind) -> Error {
    Error::NotOffered {
        engine: engine.name(),
        what: "atomic writes (RWF_ATOMIC)",
        reason: "it passes no flags with its writes; pvsync2, io_uring, libaio, the pool and adaptive do",
    }
}

/// A boxed engine is an engine: the tests put their own engines, boxed,
/// inside the adaptive engine.
#[cfg(test)]
impl Engine for Box<dyn Engine> {
    fn kind(&self) -> EngineKind {
        (**self).kind()
    }
    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        (**self).add_file(file, path)
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        (**self).remove_file(handle)
    }
    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        (**self).set_caching(handle, caching)
    }
    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        (**self).set_atomic_writes(handle, atomic)
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        (**self).queue(request)
    }
    fn commit(&mut self) -> Result<usize, Error> {
        (**self).commit()
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        (**self).reap(min, max, out)
    }
    fn commit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        (**self).commit_and_reap(min, max, out)
    }
    fn in_flight(&self) -> usize {
        (**self).in_flight()
    }
    fn held(&self) -> usize {
        (**self).held()
    }
    fn completion_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        (**self).completion_fd()
    }
    fn is_synchronous(&self) -> bool {
        (**self).is_synchronous()
    }
    fn description(&self) -> String {
        (**self).description()
    }
    fn state(&self) -> String {
        (**self).state()
    }
    fn counters(&self) -> EngineCounters {
        (**self).counters()
    }
}

/// Events an engine counts on the way to its completions.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EngineCounters {
    /// Transfers that came back short and were sent again for the rest,
    /// reads and writes (fio's `short_ios`).
    pub short_ios: [u64; 2],
    /// Transfers that moved some bytes and then failed (a write that ran
    /// into `ENOSPC` half way): they complete with the bytes moved, and this
    /// keeps the error that cut them short.
    pub short_errors: ShortErrors,
    /// Requests sent again after the kernel said "try again" (EINTR, EAGAIN).
    pub retries: u64,
    /// Faults the injection wrapper caused, by kind.
    pub injected: InjectedCounts,
    /// The adaptive engine's choices; `None` for the other engines.
    pub paths: Option<PathCounts>,
    /// How io_uring's completions came back; `None` without a ring.
    pub ring: Option<RingCounts>,
}

/// How an io_uring engine took its completions from the completion queue:
/// seeds/004's point is one update of the queue's head (a store the kernel
/// sees, with a barrier) per batch, not one per completion.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RingCounts {
    /// Reaps that took at least one completion.
    pub reaps: u64,
    /// Completions they took.
    pub completions: u64,
    /// Times the head of the completion queue was moved and published to
    /// the kernel: once per reap, twice for a reap that took some
    /// completions before it waited for the rest.
    pub cq_head_commits: u64,
}

impl std::ops::Add for RingCounts {
    type Output = RingCounts;

    fn add(self, other: RingCounts) -> RingCounts {
        RingCounts {
            reaps: self.reaps + other.reaps,
            completions: self.completions + other.completions,
            cq_head_commits: self.cq_head_commits + other.cq_head_commits,
        }
    }
}

impl std::ops::Add for EngineCounters {
    type Output = EngineCounters;

    /// The counts of two engines (or layers) together.
    fn add(self, other: EngineCounters) -> EngineCounters {
        EngineCounters {
            short_ios: [
                self.short_ios[0] + other.short_ios[0],
                self.short_ios[1] + other.short_ios[1],
            ],
            short_errors: self.short_errors + other.short_errors,
            retries: self.retries + other.retries,
            injected: self.injected + other.injected,
            paths: match (self.paths, other.paths) {
                (Some(a), Some(b)) => Some(PathCounts {
                    inline: a.inline + b.inline,
                    asynchronous: a.asynchronous + b.asynchronous,
                    explored: a.explored + b.explored,
                    switches: a.switches + b.switches,
                    learning_ns: a.learning_ns + b.learning_ns,
                    uncached: a.uncached + b.uncached,
                    read_ahead: a.read_ahead + b.read_ahead,
                }),
                (a, b) => a.or(b),
            },
            ring: match (self.ring, other.ring) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            },
        }
    }
}

/// Transfers cut short by an error after moving some bytes, reads and writes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ShortErrors {
    /// How many, reads and writes.
    pub count: [u64; 2],
    /// The errno of the first of each, 0 if none.
    pub first_errno: [i32; 2],
}

impl ShortErrors {
    /// Counts one, of a read (`write` false) or a write, cut short by `errno`.
    pub fn record(&mut self, write: bool, errno: i32) {
        let dir = usize::from(write);
        self.count[dir] += 1;
        if self.first_errno[dir] == 0 {
            self.first_errno[dir] = errno;
        }
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.count == [0, 0]
    }
}

impl std::ops::Add for ShortErrors {
    type Output = ShortErrors;

    /// Both counts; the first errno of each direction, `self`'s first.
    fn add(self, other: ShortErrors) -> ShortErrors {
        let first = |dir: usize| {
            if self.first_errno[dir] != 0 {
                self.first_errno[dir]
            } else {
                other.first_errno[dir]
            }
        };
        ShortErrors {
            count: [
                self.count[0] + other.count[0],
                self.count[1] + other.count[1],
            ],
            first_errno: [first(0), first(1)],
        }
    }
}

/// Which way the adaptive engine sent its requests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PathCounts {
    /// Requests done inline, in the caller's thread.
    pub inline: u64,
    /// Requests handed to the asynchronous engine.
    pub asynchronous: u64,
    /// Of those, requests sent the other way than their class's choice, to
    /// keep the price of that way current.
    pub explored: u64,
    /// Times a class changed its choice.
    pub switches: u64,
    /// What exploring cost: each request sent the other way times how much
    /// dearer that way came out than the class's choice, in nanoseconds of
    /// the caller's time (an estimate, from the prices the engine measured).
    pub learning_ns: u64,
    /// Reads and writes sent uncached (`RWF_DONTCACHE`) by the engine's own
    /// choice, for files the caller let it choose ([`Caching::Auto`]).
    pub uncached: u64,
    /// Bytes the engine asked the kernel to read ahead of sequential read
    /// streams (from a helper thread), for files the caller let it choose
    /// the caching of.
    pub read_ahead: u64,
}

/// The engines this library has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// `lseek` + `read`/`write`, as fio's `sync`.
    Sync,
    /// `pread`/`pwrite`, as fio's `psync`.
    Psync,
    /// `preadv2`/`pwritev2` with per-request flags (`RWF_HIPRI`, `RWF_NOWAIT`), as fio's `pvsync2`.
    Pvsync2,
    /// A pool of worker threads doing `pread`/`pwrite`: user space's io-wq.
    Pool,
    /// Linux native AIO (`io_submit`/`io_getevents`), as fio's `libaio`.
    Libaio,
    /// POSIX AIO as the C library does it (`aio_read`/`aio_suspend`: its
    /// threads, one request at a time per file), as fio's `posixaio`.
    Posixaio,
    /// io_uring, with batched submission and reaping.
    IoUring,
    /// Each request inline or asynchronous, whichever has cost less lately
    /// for requests like it: hybrio's own, and the library's default.
    Adaptive,
    /// Completes everything at once without doing I/O: measures the caller's own overhead.
    Null,
}

impl EngineKind {
    /// Every engine, in the order a comparison lists them.
    pub const ALL: [EngineKind; 9] = [
        EngineKind::Sync,
        EngineKind::Psync,
        EngineKind::Pvsync2,
        EngineKind::Pool,
        EngineKind::Libaio,
        EngineKind::Posixaio,
        EngineKind::IoUring,
        EngineKind::Adaptive,
        EngineKind::Null,
    ];

    /// fio's name for it (`pool` is hybrio's own).
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Psync => "psync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Pool => "pool",
            EngineKind::Libaio => "libaio",
            EngineKind::Posixaio => "posixaio",
            EngineKind::IoUring => "io_uring",
            EngineKind::Adaptive => "adaptive",
            EngineKind::Null => "null",
        }
    }

    /// Looks an engine up by fio's name.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl Default for EngineKind {
    /// The adaptive engine.
    fn default() -> Self {
        EngineKind::Adaptive
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Requests an engine makes room for when it is built; lists of requests
/// grow past it as requests come. A depth is a limit, not a promise of use:
/// room made up front for any depth asked (`u32::MAX` from C) would fail to
/// allocate where it is never needed.
pub(crate) const PREALLOCATED: usize = 1024;

/// How to build an engine.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// Most requests queued or in flight at once (fio's `iodepth`).
    pub depth: u32,
    /// Register the buffer pool with the kernel (io_uring fixed buffers; fio's `fixedbufs`).
    pub fixed_buffers: bool,
    /// Register files with the kernel (io_uring fixed files; fio's `registerfiles`).
    pub register_files: bool,
    /// A kernel thread polls the submission queue (io_uring SQPOLL; fio's `sqthread_poll`).
    pub sq_thread_poll: bool,
    /// Polled completions (io_uring IOPOLL, pvsync2 `RWF_HIPRI`; fio's
    /// `hipri`). Needs O_DIRECT and a device with poll queues.
    pub hipri: bool,
    /// Never block in the kernel: a request that would wait fails with
    /// `EAGAIN` (or completes short) instead (`RWF_NOWAIT`; fio's `nowait`).
    /// pvsync2, libaio and io_uring.
    pub nowait: bool,
    /// Receive on each socket through one standing multishot receive, into
    /// buffers the ring provides (io_uring; provided-buffer rings, Linux
    /// 5.19, multishot receive, 6.0), instead of one receive per request: a
    /// datagram then costs a completion and a copy. A socket's buffers are
    /// as large as its first receive, or a UDP socket's largest datagram if
    /// larger, so that no datagram is cut short of a receive's length; on a
    /// Unix datagram socket, a receive longer than the first completes with
    /// `EMSGSIZE`. Standing receives take no room of the depth. The adaptive
    /// engine leaves it off (its inline tries would overtake data waiting in
    /// the buffers).
    pub recv_multishot: bool,
    /// Replace the medium by an emulated device whose requests complete this
    /// long after submission (see the `device` module); `None`: real I/O.
    pub completion_latency: Option<Duration>,
    /// Faults the engine injects into its own requests, below its retry
    /// rule (the `inject` module).
    pub inject: Option<FaultPlan>,
    /// The engine may be driven from one thread and then another (never two
    /// at once), and dropped from any: its io_uring ring is built without
    /// `SINGLE_ISSUER|DEFER_TASKRUN` (completions are run at the next kernel
    /// entry instead, `COOP_TASKRUN`), which bind a ring to the thread that
    /// first commits and leave a drop elsewhere unable to cancel or wait for
    /// what it has in flight. Off (the default), an engine stays on the
    /// thread that first commits, and its ring gives its descriptor back
    /// there (see the `io_uring` engine). The C API sets it: its engines may
    /// move.
    pub any_thread: bool,
    /// Another thread waits for the engine's completions on
    /// [`Engine::completion_fd`] and reaps them (an async runtime's driver):
    /// io_uring then finishes a completion (a block device's, say) by
    /// interrupting the thread that submitted it, rather than leaving it for
    /// that thread's next entry into the kernel, which a thread asleep
    /// elsewhere (a runtime's idle worker) may not make for a long while.
    /// Implies [`any_thread`](Self::any_thread).
    pub reaped_elsewhere: bool,
    /// What the adaptive engine's classes of requests start from.
    pub adaptive_memory: AdaptiveMemory,
}

/// What an adaptive engine's classes of requests start from: a class is a
/// file's requests of one operation and size; its first choice between the
/// inline and the asynchronous path costs two explorations when it starts
/// from nothing, a short job's whole learning cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AdaptiveMemory {
    /// What the process's adaptive engines learned for requests of the same
    /// kind (the same device, `O_DIRECT` or not, operation, size and depth,
    /// and asynchronous engine): a new engine, or a new file on a known
    /// device, makes its first choice at once. What it measures then
    /// corrects a prior that no longer fits, as it follows any change.
    #[default]
    Process,
    /// What this engine learned only (its other files): every engine starts
    /// from nothing, as in a fresh process. For benchmark jobs that must not
    /// depend on the jobs before them.
    Engine,
    /// What was learned under this kernel by the processes that saved to this
    /// file, and by this process's engines that name it: the table is read
    /// from the file once per process and written back (whole, by a rename)
    /// when each such engine is dropped. A file saved under another kernel,
    /// or that does not parse, is not used; a kind whose saved prices a class
    /// finds far off is forgotten at once.
    File(std::path::PathBuf),
}

impl EngineConfig {
    /// Defaults with the given depth.
    pub fn with_depth(depth: u32) -> Self {
        EngineConfig {
            depth: depth.max(1),
            fixed_buffers: false,
            register_files: false,
            sq_thread_poll: false,
            hipri: false,
            nowait: false,
            recv_multishot: false,
            completion_latency: None,
            inject: None,
            any_thread: false,
            reaped_elsewhere: false,
            adaptive_memory: AdaptiveMemory::Process,
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self::with_depth(1)
    }
}
