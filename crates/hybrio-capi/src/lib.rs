//! The C API of hybrio: open an engine by name (the adaptive one by
//! default), add files, queue reads, writes and syncs with the caller's own
//! buffers, commit, reap, read the counters. `include/hybrio.h` is generated
//! from this file by cbindgen (`build.rs`; a test checks it is current).
//!
//! Every call that can fail returns a negative errno (`-EINVAL` for a
//! caller's mistake, the kernel's errno otherwise) and leaves a message
//! for [`hybrio_last_error`]. Completions come out of one place,
//! [`hybrio_reap`]: what an engine completes inside a queue call waits
//! there for the next reap.
//!
//! Threads: a `hybrio_engine` may move between threads, but the calls that
//! take one must not run on two threads at once for the same engine (give
//! each thread its own engine, as each job of the benchmark has). Calls on
//! different engines, [`hybrio_buffer_alloc`], [`hybrio_buffer_free`] and
//! [`hybrio_last_error`] (whose message is per thread) may run anywhere at
//! any time.
//!
//! Buffers are the caller's: any memory valid until its request's
//! completion is reaped (for `O_DIRECT`, aligned as the file needs:
//! [`hybrio_buffer_alloc`] gives 4096-aligned, zeroed memory).

#![allow(non_camel_case_types)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr::NonNull;

use hybrio::buf::Buf;
use hybrio::engine::{self, Engine, EngineConfig, EngineKind, QueueOutcome};
use hybrio::file::{FileHandle, OpenOptions};
use hybrio::request::{Completion, Op, Request};

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
        _ => libc::EIO,
    }
}

fn fail_with(error: &hybrio::Error) -> c_int {
    fail(errno_of(error), error.to_string())
}

/// A C string argument, or `-EINVAL` named by `what`.
///
/// # Safety
///
/// `text` is NULL or a NUL-terminated string.
unsafe fn text_arg<'a>(text: *const c_char, what: &str) -> Result<&'a str, c_int> {
    if text.is_null() {
        return Err(fail(libc::EINVAL, format!("{what} is NULL")));
    }
    // SAFETY: not NULL, and NUL-terminated as the caller promised.
    unsafe { CStr::from_ptr(text) }
        .to_str()
        .map_err(|_| fail(libc::EINVAL, format!("{what} is not UTF-8")))
}

/// The message of this thread's last failed call, or "" if none failed;
/// valid until this thread's next hybrio call.
#[unsafe(no_mangle)]
pub extern "C" fn hybrio_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// Opens engine `name` ("adaptive", "io_uring", "libaio", "pool", "psync",
/// "pvsync2", "sync", "null"; NULL for "adaptive") keeping up to `depth`
/// requests in flight, into `*out`. Returns 0, or -errno (`-ENOSYS` when
/// this system refuses the engine).
///
/// # Safety
///
/// `name` is NULL or a NUL-terminated string; `out` points at writable
/// memory for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_open(
    name: *const c_char,
    depth: u32,
    out: *mut *mut hybrio_engine,
) -> c_int {
    if out.is_null() {
        return fail(libc::EINVAL, "hybrio_open: out is NULL");
    }
    let kind = if name.is_null() {
        EngineKind::Adaptive
    } else {
        // SAFETY: not NULL, NUL-terminated as the caller promised.
        let name = match unsafe { text_arg(name, "engine name") } {
            Ok(name) => name,
            Err(errno) => return errno,
        };
        match EngineKind::from_name(name) {
            Some(kind) => kind,
            None => return fail(libc::EINVAL, format!("unknown engine {name:?}")),
        }
    };
    if depth == 0 {
        return fail(libc::EINVAL, "depth must be at least 1");
    }
    match engine::open(kind, &EngineConfig::with_depth(depth), None) {
        Ok(engine) => {
            let boxed = Box::new(hybrio_engine {
                engine,
                ready: VecDeque::new(),
                reaped: Vec::new(),
            });
            // SAFETY: `out` is not NULL and writable, as the caller promised.
            unsafe { out.write(Box::into_raw(boxed)) };
            0
        }
        Err(error) => fail_with(&error),
    }
}

/// Closes an engine: waits for the requests it has in flight (10 s at
/// most), closes its files. NULL is ignored.
///
/// # Safety
///
/// `engine` is NULL or from [`hybrio_open`], not closed before; the
/// buffers of requests not yet reaped must stay valid until this returns,
/// and for ever for a request the engine could neither finish nor cancel
/// within those 10 s (the kernel or a worker may still write into it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_close(engine: *mut hybrio_engine) {
    if !engine.is_null() {
        // SAFETY: from `hybrio_open`'s `Box::into_raw`, closed once.
        drop(unsafe { Box::from_raw(engine) });
    }
}

/// The engine behind a handle, or `-EINVAL`.
///
/// # Safety
///
/// `engine` is NULL or a live engine from [`hybrio_open`], used by this
/// thread alone for the call.
unsafe fn engine_arg<'a>(engine: *mut hybrio_engine) -> Result<&'a mut hybrio_engine, c_int> {
    // SAFETY: NULL or live and unshared, as the caller promised.
    unsafe { engine.as_mut() }.ok_or_else(|| fail(libc::EINVAL, "engine is NULL"))
}

/// Opens `path` (`flags`: `HYBRIO_READ`, `HYBRIO_WRITE`, `HYBRIO_CREATE`,
/// `HYBRIO_TRUNCATE`, `HYBRIO_DIRECT`; `mode` for a created file) and adds
/// it to the engine. Returns the file's handle (>= 0), or -errno.
///
/// # Safety
///
/// `engine` is a live engine; `path` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_open_file(
    engine: *mut hybrio_engine,
    path: *const c_char,
    flags: u32,
    mode: u32,
) -> c_int {
    // SAFETY: `engine` is live and unshared, as this function's caller promised.
    let e = match unsafe { engine_arg(engine) } {
        Ok(e) => e,
        Err(errno) => return errno,
    };
    // SAFETY: `path` is NUL-terminated, as the caller promised.
    let path = match unsafe { text_arg(path, "path") } {
        Ok(value) => value,
        Err(errno) => return errno,
    };
    let known = HYBRIO_READ | HYBRIO_WRITE | HYBRIO_CREATE | HYBRIO_TRUNCATE | HYBRIO_DIRECT;
    if flags & !known != 0 || flags & (HYBRIO_READ | HYBRIO_WRITE) == 0 {
        return fail(
            libc::EINVAL,
            format!(
                "flags {flags:#x}: HYBRIO_READ and/or HYBRIO_WRITE, with CREATE, TRUNCATE, DIRECT"
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
    match e.engine.open_file(Path::new(path), &options) {
        Ok(handle) => handle.0 as c_int,
        Err(error) => fail_with(&error),
    }
}

/// Removes file `file` from the engine and closes it. Returns 0, or
/// `-EBUSY` while the engine has requests in flight, or -errno.
///
/// # Safety
///
/// `engine` is a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_close_file(engine: *mut hybrio_engine, file: c_int) -> c_int {
    // SAFETY: as this function's caller promised.
    let e = match unsafe { engine_arg(engine) } {
        Ok(e) => e,
        Err(errno) => return errno,
    };
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
fn queue(e: &mut hybrio_engine, request: Request) -> c_int {
    match e.engine.queue(request) {
        QueueOutcome::Completed(completion) => {
            e.ready.push_back(record(&completion));
            0
        }
        QueueOutcome::Queued => 0,
        QueueOutcome::Busy(request) => {
            // The caller's buffer goes back untouched: dropping this `Buf`
            // leaves its memory alone.
            drop(request);
            fail(libc::EBUSY, "the engine is full: reap first")
        }
    }
}

/// A request's buffer over the caller's memory, or `-EINVAL`.
///
/// # Safety
///
/// `buf` is valid for reads and writes of `len` bytes until the request's
/// completion is reaped, and used by nothing else meanwhile.
unsafe fn buffer_arg(buf: *mut c_void, len: usize) -> Result<Buf, c_int> {
    match NonNull::new(buf.cast::<u8>()) {
        // SAFETY: as this function's caller promised.
        Some(ptr) if len > 0 => Ok(unsafe { Buf::from_raw_parts(ptr, len) }),
        _ => Err(fail(libc::EINVAL, "buf is NULL or len is 0")),
    }
}

/// Queues the read or write `make` builds over the caller's `len` bytes at `buf`.
///
/// # Safety
///
/// `engine` is a live engine used by this thread alone; `buf` holds `len`
/// bytes that are the request's alone until it is reaped.
unsafe fn queue_transfer(
    engine: *mut hybrio_engine,
    buf: *mut c_void,
    len: usize,
    make: impl FnOnce(Buf) -> Request,
) -> c_int {
    // SAFETY: as this function's caller promised.
    let e = match unsafe { engine_arg(engine) } {
        Ok(e) => e,
        Err(errno) => return errno,
    };
    // SAFETY: as this function's caller promised.
    match unsafe { buffer_arg(buf, len) } {
        Ok(buf) => queue(e, make(buf)),
        Err(errno) => errno,
    }
}

/// Queues a read of `len` bytes at `offset` of `file` into `buf`. Returns
/// 0 (taken: its completion comes out of [`hybrio_reap`]), `-EBUSY` (the
/// engine is full: reap first), or -errno.
///
/// # Safety
///
/// `engine` is a live engine; `buf` is valid for writes of `len` bytes and
/// neither read, written nor freed by the caller until this request's
/// completion is reaped (or the engine closed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_queue_read(
    engine: *mut hybrio_engine,
    file: c_int,
    offset: u64,
    buf: *mut c_void,
    len: usize,
    user_data: u64,
) -> c_int {
    // SAFETY: as this function's caller promised.
    unsafe {
        queue_transfer(engine, buf, len, |buf| {
            Request::read(FileHandle(file as u32), offset, buf, user_data)
        })
    }
}

/// Queues a write of `len` bytes of `buf` at `offset` of `file`. As
/// [`hybrio_queue_read`].
///
/// # Safety
///
/// `engine` is a live engine; `buf` is valid for reads of `len` bytes and
/// neither written nor freed by the caller until this request's completion
/// is reaped (or the engine closed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_queue_write(
    engine: *mut hybrio_engine,
    file: c_int,
    offset: u64,
    buf: *const c_void,
    len: usize,
    user_data: u64,
) -> c_int {
    // SAFETY: as this function's caller promised; a write only reads the
    // memory (the buffer type allows both).
    unsafe {
        queue_transfer(engine, buf.cast_mut(), len, |buf| {
            Request::write(FileHandle(file as u32), offset, buf, user_data)
        })
    }
}

/// Queues an `fsync` (or, with `datasync` not 0, an `fdatasync`) of `file`.
/// As [`hybrio_queue_read`].
///
/// # Safety
///
/// `engine` is a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_queue_fsync(
    engine: *mut hybrio_engine,
    file: c_int,
    datasync: c_int,
    user_data: u64,
) -> c_int {
    // SAFETY: as this function's caller promised.
    let e = match unsafe { engine_arg(engine) } {
        Ok(e) => e,
        Err(errno) => return errno,
    };
    queue(
        e,
        Request::sync(FileHandle(file as u32), datasync != 0, user_data),
    )
}

/// Hands every queued request to the kernel (or the workers) in one call.
/// Returns how many, or -errno.
///
/// # Safety
///
/// `engine` is a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_commit(engine: *mut hybrio_engine) -> c_int {
    // SAFETY: as this function's caller promised.
    let e = match unsafe { engine_arg(engine) } {
        Ok(e) => e,
        Err(errno) => return errno,
    };
    match e.engine.commit() {
        Ok(n) => c_int::try_from(n).unwrap_or(c_int::MAX),
        Err(error) => fail_with(&error),
    }
}

/// Waits until at least `min` completions are ready (fewer only if fewer
/// are in flight; 0 never waits), writes at most `max` to `out`, and
/// returns how many, or -errno. Requests queued but not committed are not
/// waited for: commit first. Every request comes out here exactly once,
/// with its own `user_data` and buffer.
///
/// # Safety
///
/// `engine` is a live engine; `out` points at `max` writable completions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_reap(
    engine: *mut hybrio_engine,
    min: u32,
    out: *mut hybrio_completion,
    max: u32,
) -> c_int {
    // SAFETY: as this function's caller promised.
    unsafe { reap(engine, false, min, out, max) }
}

/// [`hybrio_commit`] then [`hybrio_reap`] in one call, and in one system
/// call where the engine can (io_uring submits and waits in one
/// `io_uring_enter`, as liburing's `io_uring_submit_and_wait`): the loop
/// that refills and waits pays one kernel entry a round. Returns what
/// `hybrio_reap` returns.
///
/// # Safety
///
/// As [`hybrio_reap`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_submit_and_reap(
    engine: *mut hybrio_engine,
    min: u32,
    out: *mut hybrio_completion,
    max: u32,
) -> c_int {
    // SAFETY: as this function's caller promised.
    unsafe { reap(engine, true, min, out, max) }
}

/// [`hybrio_reap`], committing first when `commit`.
///
/// # Safety
///
/// As [`hybrio_reap`].
unsafe fn reap(
    engine: *mut hybrio_engine,
    commit: bool,
    min: u32,
    out: *mut hybrio_completion,
    max: u32,
) -> c_int {
    // SAFETY: as this function's caller promised.
    let e = match unsafe { engine_arg(engine) } {
        Ok(e) => e,
        Err(errno) => return errno,
    };
    if out.is_null() && max > 0 {
        return fail(libc::EINVAL, "out is NULL");
    }
    let (min, max) = (min as usize, max as usize);
    let mut count = 0;
    while count < max
        && let Some(ready) = e.ready.pop_front()
    {
        // SAFETY: `count < max`, and `out` has room for `max` (the caller's
        // promise): the slot is inside that array.
        let slot = unsafe { out.add(count) };
        // SAFETY: `slot` is inside the caller's writable array (above).
        unsafe { slot.write(ready) };
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
    if count < max && (wait > 0 || e.engine.in_flight() > 0) {
        // The engine's list, kept between calls: no allocation per reap.
        let mut reaped = std::mem::take(&mut e.reaped);
        let result = if commit && wait > 0 {
            e.engine.commit_and_reap(wait, max - count, &mut reaped)
        } else {
            e.engine.reap(wait, max - count, &mut reaped)
        };
        // Completions appended before an error are the caller's all the same.
        for completion in reaped.drain(..) {
            // SAFETY: the engine appended at most `max - count`: the slot is
            // inside the caller's array of `max`.
            let slot = unsafe { out.add(count) };
            // SAFETY: `slot` is inside the caller's writable array (above).
            unsafe { slot.write(record(&completion)) };
            count += 1;
            // The caller's memory is the caller's again: dropping the
            // completion leaves it alone.
        }
        e.reaped = reaped;
        if let Err(error) = result
            && count == 0
        {
            return fail_with(&error);
        }
    }
    c_int::try_from(count).unwrap_or(c_int::MAX)
}

/// A completion as C sees it.
fn record(completion: &Completion) -> hybrio_completion {
    hybrio_completion {
        user_data: completion.user_data,
        result: completion.result,
        offset: completion.offset,
        buf: completion
            .buf
            .as_ref()
            .map_or(std::ptr::null_mut(), |b| b.base_addr() as *mut c_void),
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

/// Requests queued and not yet reaped (completed ones waiting for a reap
/// included): the caller's own count. 0 for a NULL engine.
///
/// # Safety
///
/// `engine` is NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_in_flight(engine: *const hybrio_engine) -> u32 {
    // SAFETY: NULL or live, as the caller promised; only read.
    unsafe { engine.as_ref() }.map_or(0, |e| {
        u32::try_from(e.engine.in_flight() + e.ready.len()).unwrap_or(u32::MAX)
    })
}

/// The engine's counters into `*out`. Returns 0, or -EINVAL.
///
/// # Safety
///
/// `engine` is a live engine; `out` points at one writable `hybrio_counters`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_get_counters(
    engine: *const hybrio_engine,
    out: *mut hybrio_counters,
) -> c_int {
    // SAFETY: NULL or live, as the caller promised; only read.
    let Some(e) = (unsafe { engine.as_ref() }) else {
        return fail(libc::EINVAL, "engine is NULL");
    };
    if out.is_null() {
        return fail(libc::EINVAL, "out is NULL");
    }
    let counters = e.engine.counters();
    let paths = counters.paths.unwrap_or_default();
    let record = hybrio_counters {
        inline_requests: paths.inline,
        async_requests: paths.asynchronous,
        switches: paths.switches,
        short_ios: counters.short_ios[0] + counters.short_ios[1],
        retries: counters.retries,
    };
    // SAFETY: not NULL and writable, as the caller promised.
    unsafe { out.write(record) };
    0
}

/// The engine as set up, in one line ("adaptive (inline psync, async
/// io_uring (...))"): a NUL-terminated string the caller frees with
/// [`hybrio_free_string`]; NULL for a NULL engine.
///
/// # Safety
///
/// `engine` is NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_describe(engine: *const hybrio_engine) -> *mut c_char {
    // SAFETY: NULL or live, as the caller promised; only read.
    match unsafe { engine.as_ref() } {
        Some(e) => CString::new(e.engine.description().replace('\0', " "))
            .map_or(std::ptr::null_mut(), CString::into_raw),
        None => std::ptr::null_mut(),
    }
}

/// Frees a string from [`hybrio_describe`]. NULL is ignored.
///
/// # Safety
///
/// `text` is NULL or from [`hybrio_describe`], freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_free_string(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: from `CString::into_raw` in `hybrio_describe`, freed once.
        drop(unsafe { CString::from_raw(text) });
    }
}

/// `len` bytes of zeroed memory aligned to 4096 (what `O_DIRECT` needs on
/// every device), for request buffers; NULL when `len` is 0 or memory ran
/// out. Free it with [`hybrio_buffer_free`] and the same `len`.
#[unsafe(no_mangle)]
pub extern "C" fn hybrio_buffer_alloc(len: usize) -> *mut c_void {
    match std::alloc::Layout::from_size_align(len, hybrio::buf::ALIGN) {
        // SAFETY: the layout's size is not 0.
        Ok(layout) if len > 0 => unsafe { std::alloc::alloc_zeroed(layout) }.cast(),
        _ => std::ptr::null_mut(),
    }
}

/// Frees memory from [`hybrio_buffer_alloc`]. NULL is ignored.
///
/// # Safety
///
/// `buf` is NULL or from [`hybrio_buffer_alloc`] with this `len`, freed
/// once, in no request that is not reaped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hybrio_buffer_free(buf: *mut c_void, len: usize) {
    if let Ok(layout) = std::alloc::Layout::from_size_align(len, hybrio::buf::ALIGN)
        && !buf.is_null()
        && len > 0
    {
        // SAFETY: allocated by `hybrio_buffer_alloc` with this layout, freed once.
        unsafe { std::alloc::dealloc(buf.cast(), layout) };
    }
}
