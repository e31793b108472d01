//! `libaio`: Linux native AIO (`io_submit`/`io_getevents`), as fio's
//! `libaio` engine, through raw system calls (no C library).
//!
//! Every commit hands all queued requests to the kernel in one `io_submit`
//! (more only when the kernel refuses one of them: that request completes
//! with the kernel's errno and the rest go on), and a reap collects
//! completions with one `io_getevents`.
//!
//! Native AIO is only asynchronous for `O_DIRECT` files. For buffered files
//! the kernel does the whole transfer (page-cache copy, and reading from the
//! disk on a miss) inside `io_submit`, before it returns: a commit then costs
//! what the synchronous calls would, and the depth buys no overlap.
//! [`description`](Engine::description) says so once a buffered file was added.
//!
//! With [`EngineConfig::nowait`] reads and writes carry `RWF_NOWAIT`: a
//! request that would block (a buffered read missing the page cache; on ext4,
//! any buffered write) completes with `-EAGAIN` (or `-EOPNOTSUPP`) instead,
//! and is not retried: the caller asked to hear about it.
//!
//! With [`EngineConfig::completion_latency`], requests go to the emulated
//! device (see the `device` module): the data moves at commit, and each
//! completion arrives through AIO itself, as an `IOCB_CMD_POLL` on a timerfd
//! armed at the device's deadline. `nowait` does not apply there.
//!
//! A context belongs to the process, not to a thread: an engine may be built
//! on one thread and driven from another.

use super::api::{EngineConfig, EngineKind};
use super::slotted::{SlotQueue, SlottedEngine, engine_error};
use crate::Error;
use crate::device::EmulatedDevice;
use crate::file::FileEntry;
use crate::request::{Completion, Request, Verdict};
use crate::sys::aio::{self, AioContext};
use crate::sys::host;
use crate::sys::slot_book::SlotBook;

const ENGINE: &str = "libaio";

/// The libaio engine. See the [module documentation](self).
///
/// Requests sit in the context's slab from [`queue`](super::Engine::queue)
/// until their completion is reaped; dropping the engine waits for every
/// request the kernel has, so no buffer is freed while the kernel may still use it.
pub(crate) type LibaioEngine = SlottedEngine<AioContext>;

impl LibaioEngine {
    /// A context for `config.depth` requests (`io_setup(depth)`).
    ///
    /// Fails with [`Error::Unavailable`] when the system refuses native AIO,
    /// and with [`Error::Engine`] when it refuses this context only.
    pub(crate) fn new(config: &EngineConfig) -> Result<LibaioEngine, Error> {
        let depth = config.depth.max(1);
        let device = config.completion_latency.map(EmulatedDevice::new);
        let aio =
            AioContext::new(depth, config.nowait, device).map_err(|e| setup_error(e, depth))?;
        Ok(SlottedEngine::with_queue(aio, config))
    }
}

impl SlotQueue for AioContext {
    const KIND: EngineKind = EngineKind::Libaio;
    const SUBMIT_CALL: &'static str = "io_submit";
    const WAIT_CALL: &'static str = "io_getevents";
    const REFUSER: &'static str = "ioengine libaio";
    const TAKES_WRITE_FLAGS: bool = true;
    const SOCKETS_REFUSED: &'static str = "Linux AIO has no socket commands (io_submit says EINVAL); \
         io_uring, the pool, adaptive and the synchronous engines take sockets";

    #[inline]
    fn book(&self) -> &SlotBook {
        AioContext::book(self)
    }

    fn slots(&self) -> usize {
        AioContext::slots(self)
    }

    #[inline]
    fn push(&mut self, request: Request, entry: &FileEntry) -> Result<(), Request> {
        let file_flags = entry.rw_flags(request.op);
        AioContext::push(self, request, entry.fd(), entry.is_direct(), file_flags)
    }

    fn submit_all(&mut self) -> std::io::Result<usize> {
        AioContext::submit_all(self)
    }

    #[inline]
    fn reap_with<F>(
        &mut self,
        min: usize,
        max: usize,
        decide: F,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<usize>
    where
        F: FnMut(u32, &mut Request, i64) -> Verdict,
    {
        AioContext::reap_with(self, min, max, decide, out)
    }

    fn retries(&self) -> u64 {
        AioContext::retries(self)
    }

    fn device(&self) -> Option<&EmulatedDevice> {
        AioContext::device(self)
    }

    /// Linux AIO runs a read or write of a pipe inside `io_submit`.
    fn refuses_type(&self, file_type: libc::mode_t) -> Option<&'static str> {
        (!self.nowait() && matches!(file_type, libc::S_IFIFO | libc::S_IFCHR)).then_some(
            "Linux AIO runs a read or write of a pipe, FIFO or character device \
             inside io_submit, which then waits for the data to come, for ever if \
             it never does (with nowait it fails with EAGAIN instead: that takes \
             them); io_uring, the pool, adaptive and the synchronous engines take them",
        )
    }

    fn describe(&self, depth: usize, buffered: bool) -> String {
        match self.device() {
            Some(device) => format!(
                "libaio (depth {depth}; emulated device, {} latency)",
                format_latency(device.latency())
            ),
            None if buffered => {
                format!("libaio (depth {depth}; buffered I/O completes inside io_submit)")
            }
            None => format!("libaio (depth {depth})"),
        }
    }
}

/// The error for a context of `depth` events the kernel would not make.
fn setup_error(err: std::io::Error, depth: u32) -> Error {
    match err.raw_os_error() {
        // If even a one-event context is refused, AIO as a whole is
        // unavailable, and the probe knows how to say why.
        Some(libc::ENOSYS | libc::EPERM) => match aio::status() {
            Err(reason) => Error::Unavailable {
                engine: ENGINE,
                reason: reason.clone(),
            },
            Ok(()) => engine_error::<AioContext>("io_setup", err),
        },
        Some(libc::EAGAIN) => Error::Limit {
            engine: ENGINE,
            reason: host::explain_aio_setup_error_at(&err, depth),
        },
        Some(libc::EINVAL) if depth > 1 => engine_error::<AioContext>(
            "io_setup (the depth is more events than the kernel puts in one AIO context)",
            err,
        ),
        _ => engine_error::<AioContext>("io_setup", err),
    }
}

/// A latency in the unit that shows it exactly, for descriptions.
fn format_latency(latency: std::time::Duration) -> String {
    let ns = latency.as_nanos();
    if ns.is_multiple_of(1_000_000) {
        format!("{} ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{} us", ns / 1_000)
    } else {
        format!("{ns} ns")
    }
}

#[cfg(test)]
mod tests;
