//! The engine interface and the engines: one file per engine, like fio's `engines/`.
//!
//! Every engine behaves the same from the outside: the same results for the same
//! requests, errors as a negative errno in the completion, never a panic.

mod adaptive;
mod api;
#[cfg(test)]
mod conformance;
pub mod inject;
mod inline;
mod io_uring;
mod layers;
mod libaio;
#[cfg(test)]
mod model;
mod null;
mod pool;
mod psync;
mod pvsync2;
mod resubmit;
mod retry;
mod sync;
#[cfg(test)]
pub(crate) mod testkit;

pub use api::{
    AdaptiveMemory, Engine, EngineConfig, EngineCounters, EngineKind, PathCounts, QueueOutcome,
    RingCounts, ShortErrors,
};

use crate::Error;
use crate::buf::BufPool;
use crate::request::{Op, Request};
use layers::wrap;

/// Builds an engine. `pool` is the buffer pool whose buffers the requests will
/// carry; with `fixed_buffers` it is registered with the kernel.
///
/// Every engine comes wrapped the same way: short transfers are sent again
/// for the rest and "try again" errors (`EINTR`, and `EAGAIN` unless
/// [`EngineConfig::nowait`]) retried a bounded number of times, so that a
/// completion comes back short only at the end of a file or after an error;
/// below that, the fault injection of `config.inject` ([`inject`]) when asked.
pub fn open(
    kind: EngineKind,
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    Ok(match kind {
        EngineKind::Sync => wrap(sync::SyncEngine::new(config), config),
        EngineKind::Psync => wrap(psync::PsyncEngine::new(config), config),
        EngineKind::Pvsync2 => wrap(pvsync2::Pvsync2Engine::new(config), config),
        EngineKind::Pool => wrap(pool::PoolEngine::new(config)?, config),
        EngineKind::Libaio => wrap(libaio::LibaioEngine::new(config)?, config),
        EngineKind::IoUring => wrap(io_uring::IoUringEngine::new(config, pool)?, config),
        EngineKind::Adaptive => adaptive::open(config, pool)?,
        EngineKind::Null => wrap(null::NullEngine::new(config), config),
    })
}

/// The errno a request fails with before it reaches the kernel, if any.
///
/// Every engine applies the same rules, so they all answer alike: a read or
/// write needs a buffer, and offsets past `i64::MAX` are `EINVAL` (`pread(2)`
/// says so; io_uring would read `u64::MAX` as "the current position").
#[inline]
fn malformed(request: &Request) -> Option<i32> {
    match request.op {
        Op::Read | Op::Write if request.buffer().is_none() || request.offset > i64::MAX as u64 => {
            Some(libc::EINVAL)
        }
        Op::Recv | Op::Send if request.buffer().is_none() => Some(libc::EINVAL),
        _ if request.op.changes_space()
            && (request.buffer().is_some() || request.offset > i64::MAX as u64) =>
        {
            Some(libc::EINVAL)
        }
        _ => None,
    }
}

/// A request on a file's space or size ([`Op::changes_space`]) done now,
/// the same for every engine that makes it in a thread: a trim punches a
/// hole in a file (`fallocate`) and discards on a block device
/// (`BLKDISCARD`); returns the bytes it covered.
pub(crate) fn change_space(
    fd: std::os::fd::RawFd,
    block_device: bool,
    request: &Request,
) -> std::io::Result<usize> {
    use crate::sys::{self, Fallocate, retry_on_interrupt};
    let (offset, span) = (request.offset, request.span);
    let allocate = |mode| retry_on_interrupt(|| sys::fallocate(fd, mode, offset, span));
    match request.op {
        Op::Trim if block_device => retry_on_interrupt(|| sys::discard(fd, offset, span)),
        Op::Trim => allocate(Fallocate::PunchHole),
        Op::Allocate => allocate(Fallocate::Allocate),
        Op::AllocateKeepSize => allocate(Fallocate::AllocateKeepSize),
        Op::Truncate => return retry_on_interrupt(|| sys::ftruncate(fd, offset)).map(|()| 0),
        _ => return Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
    }
    .map(|()| span as usize)
}

/// A receive or send on the socket `fd`, the same for every engine that
/// makes it in a thread (the synchronous engines, the pool's workers):
/// blocking, unless `flags` has `MSG_DONTWAIT`.
#[inline]
pub(crate) fn socket_transfer(
    fd: std::os::fd::RawFd,
    op: Op,
    buf: &mut crate::buf::Buf,
    flags: i32,
) -> std::io::Result<usize> {
    use crate::sys::{self, retry_on_interrupt};
    match op {
        Op::Recv => retry_on_interrupt(|| sys::recv(fd, buf.as_mut_slice(), flags)),
        Op::Send => retry_on_interrupt(|| sys::send(fd, buf.as_slice(), flags)),
        _ => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
    }
}
