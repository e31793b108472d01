//! What the synchronous engines (`sync`, `psync`, `pvsync2`) share: a file
//! table, requests done inside [`Engine::queue`], and the emulated device's
//! synchronous path. Each engine supplies only its system calls.

use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};

use super::alias::SharesFiles;
use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, QueueOutcome};
use super::inject::Faults;
use super::retry::{Retry, owed};
use crate::Error;
use crate::blocking;
use crate::buf::Buf;
use crate::device::EmulatedDevice;
use crate::file::{Caching, FileHandle, FileTable};
use crate::request::{Completion, Op, Request};
use crate::sys;

/// The system calls of one synchronous engine.
pub(crate) trait InlineCalls: Send + std::fmt::Debug {
    /// Which engine this is.
    const KIND: EngineKind;

    /// Whether its calls carry `RWF_*` flags, so that its files can be
    /// uncached ([`Engine::set_caching`]) and its writes atomic
    /// ([`Engine::set_atomic_writes`]).
    const TAKES_FLAGS: bool = false;

    /// Reads or writes `buf` (its window) at `offset` of `fd`, the file at
    /// `handle`, with the file's `RWF_*` flags (`flags`, 0 unless the engine
    /// or the engine around it takes them).
    fn transfer(
        &mut self,
        fd: RawFd,
        handle: FileHandle,
        op: Op,
        buf: &mut Buf,
        offset: u64,
        flags: i32,
    ) -> io::Result<usize>;

    /// A file was added at `handle`.
    fn file_added(&mut self, _handle: FileHandle) {}

    /// The engine's line in reports.
    fn description(&self) -> String {
        Self::KIND.name().to_owned()
    }
}

/// A synchronous engine: every request completes inside `queue`, sent
/// again there, in place, when it comes back short or told to try again
/// (the [rule](super::retry) every engine follows).
#[derive(Debug)]
pub(crate) struct InlineEngine<C> {
    files: FileTable,
    calls: C,
    device: Option<EmulatedDevice>,
    retry: Retry,
    faults: Option<Box<Faults>>,
}

impl<C: InlineCalls> InlineEngine<C> {
    /// An engine making `calls`, on the emulated device if `config` asks for one.
    pub(crate) fn with_calls(calls: C, config: &EngineConfig) -> Self {
        InlineEngine {
            files: FileTable::new(),
            calls,
            device: config.completion_latency.map(EmulatedDevice::new),
            retry: Retry::new(config.nowait),
            faults: Faults::of(config),
        }
    }

    /// Does the request, and again for what is left while the rule says so;
    /// returns its answer.
    #[inline(always)]
    fn execute_whole(&mut self, request: &mut Request) -> i64 {
        if self.faults.is_some() {
            return self.execute_with_faults(request);
        }
        let result = self.execute(request);
        self.settle(request, result)
    }

    /// The request's answer given its first, `result`: as it is, or, when
    /// short or "try again", what sending it again in place brings.
    #[inline(always)]
    fn settle(&mut self, request: &mut Request, result: i64) -> i64 {
        if !self
            .retry
            .needs_attention(result, owed(request.op, request.len() as u64))
        {
            return result;
        }
        self.send_again(request, result)
    }

    /// [`Self::execute_whole`] with faults injected ([`inject`](super::inject)):
    /// drawn for the request, applied to its first answer before the rule
    /// and to its last after it.
    #[cold]
    fn execute_with_faults(&mut self, request: &mut Request) -> i64 {
        let Some(mut faults) = self.faults.take() else {
            return self.execute(request);
        };
        let result = match faults.draw(request) {
            Some(answer) => answer,
            None => {
                let result = self.execute(request);
                let result = faults.shorten(request, result);
                let result = self.settle(request, result);
                faults.finish_here(request, result);
                result
            }
        };
        self.faults = Some(faults);
        result
    }

    /// [`Self::execute_whole`] for a request whose first answer was short or
    /// "try again".
    #[cold]
    fn send_again(&mut self, request: &mut Request, mut result: i64) -> i64 {
        let mut track = None;
        loop {
            match self.retry.settle_request(request, &mut track, result) {
                crate::request::Verdict::Done(result) => return result,
                crate::request::Verdict::Again => {
                    self.retry.take_pause();
                    result = self.execute(request);
                }
            }
        }
    }

    /// Does the request; returns bytes transferred or a negative errno.
    #[inline]
    fn execute(&mut self, request: &mut Request) -> i64 {
        let entry = match request.entry_in(&self.files) {
            Ok(entry) => entry,
            Err(errno) => return errno,
        };
        let fd = entry.fd();
        if let Some(device) = &self.device {
            return device.run_blocking(fd, entry.is_direct(), request);
        }
        let flags = entry.rw_flags(request.op) | request.rw_flags();
        let calls = &mut self.calls;
        blocking::run(
            fd,
            entry.is_block_device(),
            request,
            |file, op, buf, offset| calls.transfer(fd, file, op, buf, offset, flags),
        )
    }
}

impl<C: InlineCalls> Engine for InlineEngine<C> {
    fn kind(&self) -> EngineKind {
        C::KIND
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        let handle = if self.device.is_some() {
            EmulatedDevice::insert(&mut self.files, file, path)?
        } else {
            self.files.insert(file, path)
        };
        self.calls.file_added(handle);
        Ok(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.files.remove_idle(handle, 0)
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        if !C::TAKES_FLAGS && caching == Caching::Uncached {
            return Err(Error::CachingUnsupported {
                engine: C::KIND.name(),
            });
        }
        self.files
            .set_caching(handle, caching, self.device.is_some())
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        if !C::TAKES_FLAGS && atomic {
            return Err(super::api::atomic_writes_not_offered(C::KIND));
        }
        self.set_atomic_writes_inside(handle, atomic)
    }

    #[inline(always)]
    fn queue(&mut self, mut request: Request) -> QueueOutcome {
        let result = self.execute_whole(&mut request);
        QueueOutcome::Completed(request.complete(result))
    }

    fn commit(&mut self) -> Result<usize, Error> {
        Ok(0)
    }

    fn reap(
        &mut self,
        _min: usize,
        _max: usize,
        _out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        Ok(0)
    }

    fn in_flight(&self) -> usize {
        0
    }

    fn is_synchronous(&self) -> bool {
        true
    }

    fn counters(&self) -> EngineCounters {
        let mut counters = self.retry.counters();
        if let Some(faults) = &self.faults {
            faults.add_to(&mut counters);
        }
        counters
    }

    fn description(&self) -> String {
        let calls = self.calls.description();
        let described = match &self.device {
            Some(device) => format!("{calls} (emulated device, {:?})", device.latency()),
            None => calls,
        };
        super::inject::described(described, self.faults.as_deref())
    }
}

/// What the adaptive engine asks of the engine its inline requests run on,
/// beyond [`Engine`]: the calls of an engine inside another, which the
/// public contract leaves out.
pub(crate) trait InlinePath: SharesFiles {
    /// Does `request` where it lies, now; its answer, the retry rule
    /// applied. The request is not moved:
    /// on a page-cache hit a move each way is a tenth of the engines' cost.
    fn run_in_place(&mut self, request: &mut Request) -> i64;

    /// As [`set_caching`](Engine::set_caching), for an engine inside another
    /// (the adaptive engine's inline path, a psync engine, takes flags too).
    fn set_caching_inside(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        self.set_caching(handle, caching)
    }

    /// As [`set_atomic_writes`](Engine::set_atomic_writes), for an engine
    /// inside another.
    fn set_atomic_writes_inside(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        self.set_atomic_writes(handle, atomic)
    }

    /// Tries a receive or send on a socket now (`MSG_DONTWAIT`), and when
    /// nothing was waiting, waits up to `linger_ns` for data (or room) and
    /// tries once more: its result, `-EAGAIN` when nothing came (the
    /// request then untouched), or `None` where this engine cannot try.
    fn try_socket_now(&mut self, request: &mut Request, linger_ns: u64) -> Option<i64> {
        let _ = (request, linger_ns);
        None
    }
}

impl<C: InlineCalls> SharesFiles for InlineEngine<C> {
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        self.files.insert_alias(at, file, path, direct)?;
        self.calls.file_added(at);
        Ok(())
    }

    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        self.files.discard(handle, 0)
    }
}

impl<C: InlineCalls> InlinePath for InlineEngine<C> {
    #[inline(always)]
    fn run_in_place(&mut self, request: &mut Request) -> i64 {
        self.execute_whole(request)
    }

    fn set_caching_inside(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        // Inside another engine any of these takes the flags: psync's calls
        // become preadv2/pwritev2 for an uncached file.
        self.files
            .set_caching(handle, caching, self.device.is_some())
    }

    fn set_atomic_writes_inside(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        self.files
            .set_atomic_writes(handle, atomic, self.device.is_some())
    }

    fn try_socket_now(&mut self, request: &mut Request, linger_ns: u64) -> Option<i64> {
        let entry = self.files.get(request.file)?;
        if !entry.is_socket() || !request.op.is_socket() || self.device.is_some() {
            return None;
        }
        let fd = entry.fd();
        let op = request.op;
        let buf = request.buffer_mut()?;
        let mut attempt =
            || blocking::result(blocking::socket_transfer(fd, op, buf, libc::MSG_DONTWAIT));
        let result = attempt();
        if result != -i64::from(libc::EAGAIN) || linger_ns == 0 {
            return Some(result);
        }
        match sys::wait_ready(fd, op == Op::Send, linger_ns) {
            Ok(true) => Some(attempt()),
            _ => Some(result),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::buf::BufPool;
    use crate::engine::api::{EngineConfig, EngineKind};
    use crate::engine::testkit::{data_file, reads_across_the_end, scratch};

    /// A read across the end of the file comes back short from the kernel:
    /// each synchronous engine, as `open` makes it, sends
    /// the rest again in place, meets the end, and answers with the bytes
    /// there, the offset and the window as queued; on the emulated device too.
    #[test]
    fn a_read_across_the_end_of_the_file_is_sent_again_in_place() {
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 10_000);
        for kind in [EngineKind::Sync, EngineKind::Psync, EngineKind::Pvsync2] {
            for latency in [None, Some(std::time::Duration::from_micros(50))] {
                let what = format!("{kind} latency {latency:?}");
                let pool = BufPool::new(8, 8192).unwrap();
                let mut config = EngineConfig::with_depth(1);
                config.completion_latency = latency;
                let mut engine = crate::engine::open(kind, &config, Some(&pool)).unwrap();
                reads_across_the_end(engine.as_mut(), &pool, &path, &contents, &what);
                assert_eq!(engine.counters().short_ios, [2, 0], "{what}");
            }
        }
    }
}
