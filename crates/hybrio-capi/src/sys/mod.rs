//! The functions C calls, and the crate's only `unsafe`: each turns C's
//! pointers into what the safe core takes (an engine reference, a string,
//! a slice of completions, a buffer over the caller's memory), relying on
//! the promise its `# Safety` section asks of the C caller.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use hybrio::buf::Buf;
use hybrio::file::FileHandle;
use hybrio::request::Request;

use crate::{fail, hybrio_completion, hybrio_counters, hybrio_engine};

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

/// The message of this thread's last failed call, or "" if none failed;
/// valid until this thread's next hybrio call.
#[unsafe(no_mangle)]
pub extern "C" fn hybrio_last_error() -> *const c_char {
    crate::last_error()
}

/// Opens engine `name` ("adaptive", "io_uring", "libaio", "posixaio", "pool",
/// "psync", "pvsync2", "sync", "null"; NULL for "adaptive") keeping up to `depth`
/// requests in flight (completed ones not yet reaped count), into `*out`.
/// Returns 0, or -errno (`-ENOSYS` when this system refuses the engine; a
/// depth the engine cannot hold, such as `UINT32_MAX` on libaio, is an
/// error too, never an abort). The engine may move between threads at any
/// time, with requests in flight, and be closed on any thread; one thread
/// at a time uses it.
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
    let name = if name.is_null() {
        None
    } else {
        // SAFETY: not NULL, NUL-terminated as the caller promised.
        match unsafe { text_arg(name, "engine name") } {
            Ok(name) => Some(name),
            Err(errno) => return errno,
        }
    };
    match crate::open_engine(name, depth) {
        Ok(engine) => {
            // SAFETY: `out` is not NULL and writable, as the caller promised.
            unsafe { out.write(Box::into_raw(engine)) };
            0
        }
        Err(errno) => errno,
    }
}

/// Closes an engine, on any thread: cancels what it can of the requests it
/// has in flight and waits for them (10 s at most), closes its files. NULL
/// is ignored.
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

/// Opens `path` (`flags`: `HYBRIO_READ`, `HYBRIO_WRITE`, `HYBRIO_CREATE`,
/// `HYBRIO_TRUNCATE`, `HYBRIO_DIRECT`, `HYBRIO_ATOMIC_WRITES`; `mode` for a
/// created file) and adds it to the engine. Returns the file's handle
/// (>= 0), or -errno (`-EISDIR` for a directory; libaio refuses pipes,
/// FIFOs and character devices, whose I/O it would run inside its commit;
/// `-EOPNOTSUPP` where atomic writes cannot be, the file not added).
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
    match unsafe { text_arg(path, "path") } {
        Ok(path) => crate::open_file(e, path, flags, mode),
        Err(errno) => errno,
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
    match unsafe { engine_arg(engine) } {
        Ok(e) => crate::close_file(e, file),
        Err(errno) => errno,
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
        Ok(buf) => crate::queue(e, make(buf)),
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
    match unsafe { engine_arg(engine) } {
        Ok(e) => crate::queue(
            e,
            Request::sync(FileHandle(file as u32), datasync != 0, user_data),
        ),
        Err(errno) => errno,
    }
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
    match unsafe { engine_arg(engine) } {
        Ok(e) => crate::commit(e),
        Err(errno) => errno,
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
    let out: &mut [MaybeUninit<hybrio_completion>] = if max == 0 {
        &mut []
    } else if out.is_null() {
        return fail(libc::EINVAL, "out is NULL");
    } else {
        // SAFETY: `out` points at `max` writable completions, as the caller
        // promised; seen as not yet written, they are only written to.
        unsafe { std::slice::from_raw_parts_mut(out.cast(), max as usize) }
    };
    crate::reap(e, commit, min as usize, out)
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
    unsafe { engine.as_ref() }.map_or(0, crate::in_flight)
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
    // SAFETY: not NULL and writable, as the caller promised.
    unsafe { out.write(crate::counters(e)) };
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
    unsafe { engine.as_ref() }.map_or(std::ptr::null_mut(), |e| crate::describe(e).into_raw())
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
