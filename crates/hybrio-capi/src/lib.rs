//! The C API of hybrio: open an engine by name (the adaptive one by
//! default), add files, queue reads, writes and syncs with the caller's own
//! buffers, commit, reap, read the counters. `include/hybrio.h` is generated
//! from this crate by cbindgen (`build.rs`; a test checks it is current).
//!
//! The functions C calls are in `sys/`, the only module that touches C's
//! pointers: they turn them into references, strings, slices and buffers
//! (each with the promise it relies on) and call the safe core here.
//!
//! Every call that can fail returns a negative errno (`-EINVAL` for a
//! caller's mistake, the kernel's errno otherwise) and leaves a message
//! for [`hybrio_last_error`]. Completions come out of one place,
//! [`hybrio_reap`]: what an engine completes inside a queue call waits
//! there for the next reap.
//!
//! Threads: a `hybrio_engine` may move between threads at any time, with
//! requests in flight too, and be closed on any thread (its io_uring ring is
//! built for that: without `SINGLE_ISSUER`), but the calls that take one
//! must not run on two threads at once for the same engine (give each thread
//! its own engine, as each job of the benchmark has). Calls on
//! different engines, [`hybrio_buffer_alloc`], [`hybrio_buffer_free`] and
//! [`hybrio_last_error`] (whose message is per thread) may run anywhere at
//! any time.
//!
//! Buffers are the caller's: any memory valid until its request's
//! completion is reaped (for `O_DIRECT`, aligned as the file needs:
//! [`hybrio_buffer_alloc`] gives 4096-aligned, zeroed memory).

#![allow(non_camel_case_types)]

mod sys;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{CString, c_char, c_int, c_void};
use std::mem::MaybeUninit;
use std::path::Path;

use hybrio::engine::{self, Engine, EngineConfig, EngineKind, QueueOutcome};
use hybrio::file::{FileHandle, OpenOptions};
use hybrio::request::{Completion, Op, Request};

pub use sys::*;

/// Open for reading.
pub const HYBRIO_READ: u32 = 1;
/// Open for writing.
pub const HYBRIO_WRITE: u32 = 2;
/// Create the file if it does not exist (with `mode`).
pub const HYBRIO_CREATE: u32 = 4;
/// Cut the file to length 0 when it opens.
pub const HYBRIO_TRUNCATE: u32 = 8;
/// `O_DIRECT`: bypass the page cache (buffers, offsets and lengths aligned).
pub const HYBRIO_DIRECT: u32 = 16;
/// With `HYBRIO_DIRECT`: every write of the file is torn-write protected
/// (`RWF_ATOMIC`, Linux 6.11), landing whole or not at all. Refused with
/// `-EOPNOTSUPP` (the file not added) where the engine passes no flags or
/// the file's filesystem or device offers none (XFS does on any device from
/// Linux 6.16); each write must then be a power of two within the file's
/// units (`statx`), at a multiple of its length, or it completes `-EINVAL`.
pub const HYBRIO_ATOMIC_WRITES: u32 = 32;

/// A completion's operation: a read.
pub const HYBRIO_OP_READ: u32 = 1;
/// A write.
pub const HYBRIO_OP_WRITE: u32 = 2;
/// An `fsync`.
pub const HYBRIO_OP_FSYNC: u32 = 3;
/// An `fdatasync`.
pub const HYBRIO_OP_FDATASYNC: u32 = 4;

/// An engine and what it completed inside a queue call, waiting for the
/// next reap. Opaque to C.
#[derive(Debug)]
pub struct hybrio_engine {
    engine: Box<dyn Engine>,
    /// The depth asked: requests taken and not yet reaped (what the engine
    /// holds plus what waits in `ready`) never exceed it.
    depth: usize,
    /// Requests taken and not yet reaped.
    taken: usize,
    /// Completions made inside a queue call, as C sees them (their buffers
    /// are the caller's memory, so nothing is held by keeping only this).
    ready: VecDeque<hybrio_completion>,
    reaped: Vec<Completion>,
}

/// One finished request.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hybrio_completion {
    /// The caller's tag, as queued.
    pub user_data: u64,
    /// Bytes transferred (a read at the end of a file: fewer, or 0), or a
    /// negative errno.
    pub result: i64,
    /// The offset queued.
    pub offset: u64,
    /// The buffer queued (NULL for a sync): the caller's again.
    pub buf: *mut c_void,
    /// The file.
    pub file: i32,
    /// `HYBRIO_OP_READ`, `HYBRIO_OP_WRITE`, `HYBRIO_OP_FSYNC` or `HYBRIO_OP_FDATASYNC`.
    pub op: u32,
}

/// What an engine counted.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hybrio_counters {
    /// The adaptive engine's requests done inline (0 for the others).
    pub inline_requests: u64,
    /// The adaptive engine's requests sent asynchronous (0 for the others).
    pub async_requests: u64,
    /// Times the adaptive engine changed a class's choice.
    pub switches: u64,
    /// Transfers that came back short and were sent again for the rest.
    pub short_ios: u64,
    /// Requests sent again after EINTR or EAGAIN.
    pub retries: u64,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `message` for [`hybrio_last_error`] and returns `-errno`.
fn fail(errno: c_int, message: impl Into<String>) -> c_int {
    let text = message.into().replace('\0', " ");
    LAST_ERROR.with(|last| *last.borrow_mut() = CString::new(text).unwrap_or_default());
    -errno.abs()
}

/// The errno of a library error (EIO when it has none of its own).
fn errno_of(error: &hybrio::Error) -> c_int {
    match error {
        hybrio::Error::Io { source, .. } | hybrio::Error::Engine { source, .. } => {
            source.raw_os_error().unwrap_or(libc::EIO)
        }
        hybrio::Error::BadHandle(_) => libc::EBADF,
        hybrio::Error::FileBusy { .. } => libc::EBUSY,
        hybrio::Error::Unavailable { .. } | hybrio::Error::Unsupported { .. } => libc::ENOSYS,
        hybrio::Error::Limit { .. } => libc::EAGAIN,
        hybrio::Error::NotOffered { .. } | hybrio::Error::AtomicRefused { .. } => libc::EOPNOTSUPP,
        hybrio::Error::FileRefused { reason, .. } => errno_of(reason),
        _ => libc::EIO,
    }
}

fn fail_with(error: &hybrio::Error) -> c_int {
    fail(errno_of(error), error.to_string())
}

/// The message of this thread's last failure.
fn last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// Engine `name` (`None`: adaptive) of `depth`, or -errno.
fn open_engine(name: Option<&str>, depth: u32) -> Result<Box<hybrio_engine>, c_int> {
    let kind = match name {
        None => EngineKind::Adaptive,
        Some(name) => EngineKind::from_name(name)
            .ok_or_else(|| fail(libc::EINVAL, format!("unknown engine {name:?}")))?,
    };
    if depth == 0 {
        return Err(fail(libc::EINVAL, "depth must be at least 1"));
    }
    let config = EngineConfig {
        // The header lets an engine move between threads.
        any_thread: true,
        ..EngineConfig::with_depth(depth)
    };
    match engine::open(kind, &config, None) {
        Ok(engine) => Ok(Box::new(hybrio_engine {
            engine,
            depth: depth as usize,
            taken: 0,
            ready: VecDeque::new(),
            reaped: Vec::new(),
        })),
        Err(error) => Err(fail_with(&error)),
    }
}

/// Opens `path` as `flags` and `mode` say and adds it: its handle, or -errno.
fn open_file(e: &mut hybrio_engine, path: &str, flags: u32, mode: u32) -> c_int {
    let known = HYBRIO_READ
        | HYBRIO_WRITE
        | HYBRIO_CREATE
        | HYBRIO_TRUNCATE
        | HYBRIO_DIRECT
        | HYBRIO_ATOMIC_WRITES;
    if flags & !known != 0 || flags & (HYBRIO_READ | HYBRIO_WRITE) == 0 {
        return fail(
            libc::EINVAL,
            format!(
                "flags {flags:#x}: HYBRIO_READ and/or HYBRIO_WRITE, with CREATE, TRUNCATE, DIRECT, ATOMIC_WRITES"
            ),
        );
    }
    let on = |bit: u32| flags & bit != 0;
    let options = OpenOptions::new()
        .read(on(HYBRIO_READ))
        .write(on(HYBRIO_WRITE))
        .create(on(HYBRIO_CREATE))
        .truncate(on(HYBRIO_TRUNCATE))
        .direct(on(HYBRIO_DIRECT))
        .mode(mode);
    let handle = match e.engine.open_file(Path::new(path), &options) {
        Ok(handle) => handle,
        Err(error) => return fail_with(&error),
    };
    if on(HYBRIO_ATOMIC_WRITES)
        && let Err(error) = e.engine.set_atomic_writes(handle, true)
    {
        // Not added after all: the caller has no handle to close it by.
        drop(e.engine.remove_file(handle));
        return fail_with(&error);
    }
    handle.0 as c_int
}

/// Removes and closes file `file`: 0, or -errno.
fn close_file(e: &mut hybrio_engine, file: c_int) -> c_int {
    let Ok(handle) = u32::try_from(file) else {
        return fail(libc::EBADF, format!("file {file} is not a handle"));
    };
    match e.engine.remove_file(FileHandle(handle)) {
        Ok(closed) => {
            drop(closed);
            0
        }
        Err(error) => fail_with(&error),
    }
}

/// Queues `request`: 0 when taken (its completion comes out of a reap),
/// `-EBUSY` when the engine is full (reap first; the buffer stays the
/// caller's).
#[inline(always)]
fn queue(e: &mut hybrio_engine, request: Request) -> c_int {
    // What an engine completed inside `queue` waits here until reaped: it
    // counts against the depth, as requests in flight do.
    if e.taken >= e.depth {
        return fail(libc::EBUSY, "the engine is full: reap first");
    }
    match e.engine.queue(request) {
        QueueOutcome::Completed(completion) => {
            e.ready.push_back(record(&completion));
            e.taken += 1;
            0
        }
        QueueOutcome::Queued => {
            e.taken += 1;
            0
        }
        QueueOutcome::Busy(request) => {
            // The caller's buffer goes back untouched: dropping this `Buf`
            // leaves its memory alone.
            drop(request);
            fail(libc::EBUSY, "the engine is full: reap first")
        }
    }
}

/// Commits: how many requests went down, or -errno.
fn commit(e: &mut hybrio_engine) -> c_int {
    match e.engine.commit() {
        Ok(n) => c_int::try_from(n).unwrap_or(c_int::MAX),
        Err(error) => fail_with(&error),
    }
}

/// Reaps into `out` (committing first when `commit`): how many, or -errno.
/// Completions made inside a queue call come first, then the engine's.
#[inline(always)]
fn reap(
    e: &mut hybrio_engine,
    commit: bool,
    min: usize,
    out: &mut [MaybeUninit<hybrio_completion>],
) -> c_int {
    let max = out.len();
    let mut count = 0;
    while count < max
        && let Some(ready) = e.ready.pop_front()
    {
        out[count].write(ready);
        count += 1;
    }
    let wait = min.saturating_sub(count);
    if commit
        && wait == 0
        && let Err(error) = e.engine.commit()
        && count == 0
    {
        // Enough already: the queued requests are handed over, nothing
        // waited for. A failed commit keeps them queued: with completions
        // taken, those go back now and the next call meets the error.
        return fail_with(&error);
    }
    // The engine holds what was taken and not delivered from `ready`.
    if count < max && (wait > 0 || e.taken > count) {
        // The engine's list, kept between calls: no allocation per reap.
        let reaped = &mut e.reaped;
        let result = if commit && wait > 0 {
            e.engine.commit_and_reap(wait, max - count, reaped)
        } else {
            e.engine.reap(wait, max - count, reaped)
        };
        // Completions appended before an error are the caller's all the same.
        // (The engine appends at most `max - count`; were it to break that,
        // the rest would wait for the next reap rather than be lost.)
        for completion in reaped.iter() {
            match out.get_mut(count) {
                Some(slot) => {
                    slot.write(record(completion));
                    count += 1;
                }
                None => e.ready.push_back(record(completion)),
            }
        }
        reaped.clear();
        if let Err(error) = result
            && count == 0
        {
            return fail_with(&error);
        }
    }
    e.taken -= count;
    c_int::try_from(count).unwrap_or(c_int::MAX)
}

/// A completion as C sees it.
fn record(completion: &Completion) -> hybrio_completion {
    hybrio_completion {
        user_data: completion.user_data,
        result: completion.result,
        offset: completion.offset,
        buf: if completion.op.moves_data() {
            completion.buf.base_addr() as *mut c_void
        } else {
            std::ptr::null_mut()
        },
        file: completion.file.0 as i32,
        op: match completion.op {
            Op::Read => HYBRIO_OP_READ,
            Op::Write => HYBRIO_OP_WRITE,
            Op::Fsync => HYBRIO_OP_FSYNC,
            Op::Fdatasync => HYBRIO_OP_FDATASYNC,
            _ => 0,
        },
    }
}

/// Requests taken and not reaped, completed ones waiting included.
fn in_flight(e: &hybrio_engine) -> u32 {
    u32::try_from(e.taken).unwrap_or(u32::MAX)
}

/// The engine's counters as C sees them.
fn counters(e: &hybrio_engine) -> hybrio_counters {
    let counters = e.engine.counters();
    let paths = counters.paths.unwrap_or_default();
    hybrio_counters {
        inline_requests: paths.inline,
        async_requests: paths.asynchronous,
        switches: paths.switches,
        short_ios: counters.short_ios[0] + counters.short_ios[1],
        retries: counters.retries,
    }
}

/// The engine in one line, as a C string.
fn describe(e: &hybrio_engine) -> CString {
    CString::new(e.engine.description().replace('\0', " ")).unwrap_or_default()
}
