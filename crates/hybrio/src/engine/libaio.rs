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

use std::fs::File;
use std::path::{Path, PathBuf};

use super::alias::SharesFiles;
use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, QueueOutcome};
use super::inject::{self, Faults, FaultsFirst};
use super::retry::{Retry, Track};
use crate::Error;
use crate::blocking;
use crate::device::EmulatedDevice;
use crate::file::{Caching, FileHandle, FileTable};
use crate::request::{Completion, Marks, Request, Verdict};
use crate::sys::aio::{self, AioContext};
use crate::sys::host;

const ENGINE: &str = "libaio";

/// The libaio engine. See the [module documentation](self).
///
/// Requests sit in the context's slab from [`queue`](Engine::queue) until
/// their completion is reaped; dropping the engine waits for every request
/// the kernel has, so no buffer is freed while the kernel may still use it.
#[derive(Debug)]
pub(crate) struct LibaioEngine {
    // Declared first: dropping the context waits for in-flight requests
    // before their files are closed.
    aio: AioContext,
    files: FileTable,
    depth: usize,
    /// A file without O_DIRECT was added: its I/O completes inside io_submit.
    buffered: bool,
    /// Reads and writes carry `RWF_NOWAIT`: one that would wait fails with
    /// `EAGAIN` instead, inside io_submit too.
    nowait: bool,
    /// Short transfers and "try again" answers: what to do, and what was
    /// done. A request to send again stays in its slot of the context.
    retry: Retry,
    /// Per slot of the context, the record of a request being sent again.
    tracks: Vec<Option<Track>>,
    /// The caller's requests a resubmission's `io_submit` handed to the
    /// kernel before the caller's commit: that commit counts them.
    early: usize,
    /// Injected faults ([`inject`](super::inject)), if the caller asked.
    faults: Option<Box<Faults>>,
    /// The depth less the completions `faults` holds back: what the
    /// context may have in flight.
    room: usize,
}

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
        Ok(LibaioEngine {
            aio,
            files: FileTable::new(),
            depth: depth as usize,
            buffered: false,
            nowait: config.nowait,
            retry: Retry::new(config.nowait),
            tracks: vec![None; depth as usize],
            early: 0,
            faults: Faults::of(config),
            room: depth as usize,
        })
    }

    /// Reaps as [`Engine::reap`] says, sending again from its slot a request
    /// whose answer is short or "try again" (after one pause for the lot,
    /// when one was retried many times), before anything waits for it.
    #[inline(always)]
    fn reap_and_send_again(
        &mut self,
        mut faults: Option<&mut Faults>,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let mut got = 0;
        while got < max {
            let (retry, tracks) = (&mut self.retry, &mut self.tracks);
            let reaped = match faults.as_deref_mut() {
                None => self.aio.reap_with(
                    min.saturating_sub(got),
                    max - got,
                    |slot, request, result| {
                        retry.decide_request(request, &mut tracks[slot as usize], result)
                    },
                    out,
                ),
                Some(faults) => Self::reap_faulty(
                    &mut self.aio,
                    (retry, tracks),
                    faults,
                    (min.saturating_sub(got), max - got),
                    out,
                ),
            };
            got += reaped.map_err(|e| engine_error("io_getevents", e))?;
            let again = self.aio.again();
            if again == 0 {
                break;
            }
            self.retry.take_pause();
            let callers = self.aio.queued() - again;
            self.aio
                .submit_all()
                .map_err(|e| engine_error("io_submit", e))?;
            self.early += callers;
            if got >= min.min(max) {
                break;
            }
        }
        Ok(got)
    }
}

impl LibaioEngine {
    /// [`AioContext::reap_with`] with faults injected: a marked answer is
    /// shortened before the rule, and the request marked to be corrupted or
    /// delayed is so after it; a delayed completion is taken out of `out`
    /// and held back by `faults`. Returns how many stay in `out`.
    #[cold]
    fn reap_faulty(
        aio: &mut AioContext,
        (retry, tracks): (&mut Retry, &mut [Option<Track>]),
        faults: &mut Faults,
        (min, max): (usize, usize),
        out: &mut Vec<Completion>,
    ) -> std::io::Result<usize> {
        let start = out.len();
        // Where each delayed one went among those handed out: `deliver`
        // appends every finished request in the order it decides.
        let mut late = Vec::new();
        let mut finished = 0;
        let reaped = aio.reap_with(
            min,
            max,
            |slot, request, result| {
                let result = faults.shorten(request, result);
                let verdict = retry.decide_request(request, &mut tracks[slot as usize], result);
                if let Verdict::Done(result) = verdict {
                    if request.marks.any(Marks::FAULTS) && faults.finish(request, result) {
                        late.push(start + finished);
                    }
                    finished += 1;
                }
                verdict
            },
            out,
        );
        // In order: each one taken out moves the later ones down by one.
        for (taken, &at) in late.iter().enumerate() {
            faults.hold(out.remove(at - taken));
        }
        Ok(reaped? - late.len())
    }
}

impl inject::HoldsBack for LibaioEngine {
    fn faults(&mut self) -> &mut Option<Box<Faults>> {
        &mut self.faults
    }

    fn holding_back(&mut self, held: usize) {
        self.room = self.depth - held;
    }

    fn below(&self) -> usize {
        self.aio.in_flight()
    }

    fn reap_below(
        &mut self,
        faults: &mut Faults,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        self.reap_and_send_again(Some(faults), min, max, out)
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
            Ok(()) => engine_error("io_setup", err),
        },
        Some(libc::EAGAIN) => Error::Limit {
            engine: ENGINE,
            reason: host::explain_aio_setup_error_at(&err, depth),
        },
        Some(libc::EINVAL) if depth > 1 => engine_error(
            "io_setup (the depth is more events than the kernel puts in one AIO context)",
            err,
        ),
        _ => engine_error("io_setup", err),
    }
}

fn engine_error(op: &'static str, source: std::io::Error) -> Error {
    Error::Engine {
        engine: ENGINE,
        op,
        source,
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

impl FaultsFirst for LibaioEngine {
    fn faults_mut(&mut self) -> Option<&mut Faults> {
        self.faults.as_deref_mut()
    }

    #[inline(always)]
    fn queue_plain(&mut self, request: Request) -> QueueOutcome {
        let entry = match request.entry_in(&self.files) {
            Ok(entry) => entry,
            Err(errno) => return QueueOutcome::Completed(request.complete(errno)),
        };
        if request.op.changes_space() {
            // Linux AIO has no command for these: run here, as fio's libaio
            // engine does its trims.
            let result = blocking::result(blocking::change_space(
                entry.fd(),
                entry.is_block_device(),
                &request,
            ));
            return QueueOutcome::Completed(request.complete(result));
        }
        if self.aio.in_flight() >= self.room {
            return QueueOutcome::Busy(request);
        }
        match self.aio.push(request, entry.fd(), entry.is_direct()) {
            Ok(()) => QueueOutcome::Queued,
            Err(request) => QueueOutcome::Busy(request),
        }
    }
}

impl Engine for LibaioEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Libaio
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        if self.aio.device().is_some() {
            return EmulatedDevice::insert(&mut self.files, file, path);
        }
        let handle = self.files.insert(file, path);
        self.adopt(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.files.remove_idle(handle, self.in_flight())
    }

    /// Only an `O_DIRECT` file (uncached already) can be uncached here:
    /// Linux AIO's buffered I/O is synchronous, and hybrio passes it no flags.
    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        let entry = self.files.get(handle).ok_or(Error::BadHandle(handle.0))?;
        if caching == Caching::Uncached && !entry.is_direct() {
            return Err(Error::CachingUnsupported { engine: ENGINE });
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.queue_faults_first(request)
    }

    fn commit(&mut self) -> Result<usize, Error> {
        let committed = self
            .aio
            .submit_all()
            .map_err(|e| engine_error("io_submit", e))?;
        Ok(committed + std::mem::take(&mut self.early))
    }

    /// Requests queued but not committed are not waited for: `min` counts
    /// only committed ones.
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if self.faults.is_some() {
            return inject::HoldsBack::reap_holding_back(self, min, max, out);
        }
        self.reap_and_send_again(None, min, max, out)
    }

    fn in_flight(&self) -> usize {
        self.aio.in_flight() + (self.depth - self.room)
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn description(&self) -> String {
        let described = match self.aio.device() {
            Some(device) => format!(
                "libaio (depth {}; emulated device, {} latency)",
                self.depth,
                format_latency(device.latency())
            ),
            None if self.buffered => format!(
                "libaio (depth {}; buffered I/O completes inside io_submit)",
                self.depth
            ),
            None => format!("libaio (depth {})", self.depth),
        };
        inject::described(described, self.faults.as_deref())
    }

    fn counters(&self) -> EngineCounters {
        let rule = self.retry.counters();
        let mut counters = EngineCounters {
            retries: self.aio.retries() + rule.retries,
            ..rule
        };
        if let Some(faults) = &self.faults {
            faults.add_to(&mut counters);
        }
        counters
    }
}

#[cfg(test)]
mod tests;

impl LibaioEngine {
    /// Keeps the file just added at `handle`, or refuses it (taken out
    /// again): Linux AIO has no sockets, and runs a pipe's reads inside
    /// `io_submit`.
    fn adopt(&mut self, handle: FileHandle) -> Result<FileHandle, Error> {
        if self
            .files
            .get(handle)
            .is_some_and(|entry| entry.is_socket())
        {
            return Err(self.files.refuse(handle, |path| Error::Unsupported {
                what: "ioengine libaio",
                path: path.to_owned(),
                reason: "Linux AIO has no socket commands (io_submit says EINVAL); \
                         io_uring, the pool, adaptive and the synchronous engines take sockets",
            }));
        }
        let kind = self
            .files
            .get(handle)
            .map_or(Ok(0), |entry| crate::sys::file_type(entry.fd()));
        if !self.nowait && matches!(kind, Ok(libc::S_IFIFO | libc::S_IFCHR)) {
            return Err(self.files.refuse(handle, |path| Error::Unsupported {
                what: "ioengine libaio",
                path: path.to_owned(),
                reason: "Linux AIO runs a read or write of a pipe, FIFO or character device \
                         inside io_submit, which then waits for the data to come, for ever if \
                         it never does (with nowait it fails with EAGAIN instead: that takes \
                         them); io_uring, the pool, adaptive and the synchronous engines take them",
            }));
        }
        if self
            .files
            .get(handle)
            .is_some_and(|entry| !entry.is_direct())
        {
            self.buffered = true;
        }
        Ok(handle)
    }
}

impl SharesFiles for LibaioEngine {
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        self.files.insert_alias(at, file, path, direct)?;
        self.adopt(at).map(drop)
    }

    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        self.files.discard(handle, self.aio.in_flight())
    }
}
