//! `posixaio`: POSIX AIO (`aio_read`, `aio_write`, `aio_fsync`, reaped with
//! `aio_error`/`aio_return` and waited for with `aio_suspend`), as fio's
//! `posixaio` engine, through the C library.
//!
//! glibc does POSIX AIO with its own threads making `pread`/`pwrite` calls,
//! and runs the requests on one descriptor one after another, in order: the
//! depth overlaps requests on different files only. A program written to
//! `aio_*` gets that; this engine measures it, for comparison with the
//! kernel's native AIO (`libaio`), io_uring and hybrio's own worker pool
//! (which spreads one file's requests over its workers).
//!
//! A commit hands each queued request to glibc in a call of its own; a reap
//! asks each request handed over whether it is done (`aio_error`), and
//! waits in `aio_suspend` when none is and the caller wants one: both cost
//! in proportion to the depth, as they do in fio's engine. A short transfer
//! or a "try again" is sent again from the request's slot (the rule every
//! engine follows); injected faults come in below that rule as for `libaio`.
//!
//! It has no per-request flags (`nowait`, uncached I/O) and no emulated
//! device: an engine asked for either refuses in an error saying so.

use super::api::{EngineConfig, EngineKind, PREALLOCATED};
use super::slotted::{SlotQueue, SlottedEngine};
use crate::Error;
use crate::file::FileEntry;
use crate::request::{Completion, Request, Verdict};
use crate::sys::posix_aio::PosixAioQueue;
use crate::sys::slot_book::SlotBook;

/// The posixaio engine. See the [module documentation](self).
pub(crate) type PosixaioEngine = SlottedEngine<PosixAioQueue>;

impl PosixaioEngine {
    /// An engine for `config.depth` requests at once; refuses what POSIX AIO
    /// cannot do (see the [module documentation](self)).
    pub(crate) fn new(config: &EngineConfig) -> Result<PosixaioEngine, Error> {
        let refuse = |what, reason| {
            Err(Error::NotOffered {
                engine: EngineKind::Posixaio.name(),
                what,
                reason,
            })
        };
        if config.nowait {
            return refuse(
                "nowait",
                "POSIX AIO passes no per-request flags (RWF_NOWAIT); pvsync2, libaio and io_uring do",
            );
        }
        if config.completion_latency.is_some() {
            return refuse(
                "the emulated device (completion_latency)",
                "its requests complete in the C library's threads, which the device cannot time; \
                 psync, the pool, libaio, io_uring and adaptive take it",
            );
        }
        Ok(SlottedEngine::with_queue(
            PosixAioQueue::new(config.depth.max(1), PREALLOCATED),
            config,
        ))
    }
}

impl SlotQueue for PosixAioQueue {
    const KIND: EngineKind = EngineKind::Posixaio;
    const SUBMIT_CALL: &'static str = "aio_read/aio_write/aio_fsync";
    const WAIT_CALL: &'static str = "aio_suspend";
    const REFUSER: &'static str = "ioengine posixaio";
    const SOCKETS_REFUSED: &'static str = "hybrio's posixaio takes files: the C library's POSIX AIO \
         would hold one of its threads in each receive; io_uring, the pool, adaptive and the \
         synchronous engines take sockets";

    #[inline]
    fn book(&self) -> &SlotBook {
        PosixAioQueue::book(self)
    }

    fn slots(&self) -> usize {
        PosixAioQueue::slots(self)
    }

    #[inline]
    fn push(&mut self, request: Request, entry: &FileEntry) -> Result<(), Request> {
        PosixAioQueue::push(self, request, entry.fd())
    }

    fn submit_all(&mut self) -> std::io::Result<usize> {
        Ok(PosixAioQueue::submit_all(self))
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
        PosixAioQueue::reap_with(self, min, max, decide, out)
    }

    /// None of its own: a call glibc refuses for want of resources
    /// completes with `EAGAIN`, which the rule retries and counts.
    fn retries(&self) -> u64 {
        0
    }

    fn refuses_type(&self, _file_type: libc::mode_t) -> Option<&'static str> {
        None
    }

    fn describe(&self, depth: usize, _buffered: bool) -> String {
        format!("posixaio (depth {depth}; the C library's threads, one request at a time per file)")
    }
}

#[cfg(test)]
mod tests;
