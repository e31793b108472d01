//! `psync`: `pread(2)`/`pwrite(2)`, one request at a time, as fio's `psync` engine.

use std::io;
use std::os::fd::RawFd;

use super::api::{EngineConfig, EngineKind};
use super::inline::{InlineCalls, InlineEngine};
use crate::blocking;
use crate::buf::Buf;
use crate::file::FileHandle;
use crate::request::Op;

/// Every request inline with one positioned system call.
pub(crate) type PsyncEngine = InlineEngine<PsyncCalls>;

/// `pread`/`pwrite`.
#[derive(Debug)]
pub(crate) struct PsyncCalls;

impl PsyncEngine {
    /// A psync engine; of `config`, only the emulated device applies.
    pub(crate) fn new(config: &EngineConfig) -> Self {
        InlineEngine::with_calls(PsyncCalls, config)
    }
}

impl InlineCalls for PsyncCalls {
    const KIND: EngineKind = EngineKind::Psync;

    #[inline]
    fn transfer(
        &mut self,
        fd: RawFd,
        _handle: FileHandle,
        op: Op,
        buf: &mut Buf,
        offset: u64,
        flags: i32,
    ) -> io::Result<usize> {
        // Flags come only inside the adaptive engine (psync itself refuses
        // uncached files): there the calls are preadv2/pwritev2.
        blocking::positioned(fd, op, buf, offset, flags)
    }
}
