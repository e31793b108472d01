//! `pvsync2`: `preadv2(2)`/`pwritev2(2)` with per-request flags, as fio's
//! `pvsync2` engine: `hipri` asks for a polled completion (`RWF_HIPRI`; only
//! O_DIRECT on a device with poll queues polls, elsewhere the flag has no
//! effect) and `nowait` for `EAGAIN` instead of blocking (`RWF_NOWAIT`).
//!
//! What `RWF_NOWAIT` does depends on the filesystem. Measured on ext4 here: a
//! buffered read of uncached data is `EAGAIN` (partly cached: short), a
//! buffered write is `EOPNOTSUPP`, an O_DIRECT extending write `EAGAIN`;
//! tmpfs refuses it with `EOPNOTSUPP` for everything.

use std::io;
use std::os::fd::RawFd;

use super::api::{EngineConfig, EngineKind};
use super::inline::{InlineCalls, InlineEngine};
use crate::buf::Buf;
use crate::file::FileHandle;
use crate::request::Op;
use crate::sys::{self, retry_on_interrupt};

/// Every request inline with one `preadv2`/`pwritev2`.
pub(crate) type Pvsync2Engine = InlineEngine<Pvsync2Calls>;

/// `preadv2`/`pwritev2` with the `RWF_*` flags asked for.
#[derive(Debug)]
pub(crate) struct Pvsync2Calls {
    flags: i32,
}

impl Pvsync2Engine {
    /// A pvsync2 engine: `config.hipri` and `config.nowait` set its flags.
    pub(crate) fn new(config: &EngineConfig) -> Self {
        let mut flags = 0;
        if config.hipri {
            flags |= libc::RWF_HIPRI;
        }
        if config.nowait {
            flags |= libc::RWF_NOWAIT;
        }
        InlineEngine::with_calls(Pvsync2Calls { flags }, config)
    }
}

impl InlineCalls for Pvsync2Calls {
    const KIND: EngineKind = EngineKind::Pvsync2;
    const TAKES_FLAGS: bool = true;

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
        let flags = self.flags | flags;
        match op {
            Op::Read => retry_on_interrupt(|| sys::preadv2(fd, buf.as_mut_slice(), offset, flags)),
            _ => retry_on_interrupt(|| sys::pwritev2(fd, buf.as_slice(), offset, flags)),
        }
    }

    fn description(&self) -> String {
        let mut flags = Vec::new();
        if self.flags & libc::RWF_HIPRI != 0 {
            flags.push("RWF_HIPRI");
        }
        if self.flags & libc::RWF_NOWAIT != 0 {
            flags.push("RWF_NOWAIT");
        }
        if flags.is_empty() {
            "pvsync2".to_owned()
        } else {
            format!("pvsync2 ({})", flags.join("|"))
        }
    }
}
