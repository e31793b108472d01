//! The engine interface and the engines: one file per engine, like fio's `engines/`.
//!
//! Every engine behaves the same from the outside: the same results for the same
//! requests, errors as a negative errno in the completion, never a panic.

mod adaptive;
mod alias;
mod api;
#[cfg(test)]
mod conformance;
pub mod inject;
mod inline;
mod io_uring;
mod libaio;
#[cfg(test)]
mod model;
mod null;
mod pool;
mod posixaio;
mod psync;
mod pvsync2;
mod retry;
mod slotted;
mod sync;
#[cfg(test)]
pub(crate) mod testkit;

pub use api::{
    AdaptiveMemory, Engine, EngineConfig, EngineCounters, EngineKind, PathCounts, QueueOutcome,
    RingCounts, ShortErrors,
};

use crate::Error;
use crate::buf::BufPool;

/// Builds an engine. `pool` is the buffer pool whose buffers the requests will
/// carry; with `fixed_buffers` it is registered with the kernel.
///
/// Every engine answers the same way: short transfers are sent again for
/// the rest and "try again" errors (`EINTR`, and `EAGAIN` unless
/// [`EngineConfig::nowait`]) retried a bounded number of times, so that a
/// completion comes back short only at the end of a file or after an error
/// (the synchronous engines in place, the pool's workers around their
/// calls, io_uring and libaio where their completions arrive, the adaptive
/// engine through the engines inside it). With `config.inject`, each
/// engine injects those faults ([`inject`]) below its rule, which treats
/// them as it treats the kernel's answers.
pub fn open(
    kind: EngineKind,
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    Ok(match kind {
        EngineKind::Sync => Box::new(sync::SyncEngine::new(config)),
        EngineKind::Psync => Box::new(psync::PsyncEngine::new(config)),
        EngineKind::Pvsync2 => Box::new(pvsync2::Pvsync2Engine::new(config)),
        EngineKind::Pool => Box::new(pool::PoolEngine::new(config)?),
        EngineKind::Libaio => Box::new(libaio::LibaioEngine::new(config)?),
        EngineKind::Posixaio => Box::new(posixaio::PosixaioEngine::new(config)?),
        EngineKind::IoUring => Box::new(io_uring::IoUringEngine::new(config, pool)?),
        EngineKind::Adaptive => adaptive::open(config, pool)?,
        EngineKind::Null => Box::new(null::NullEngine::new(config)),
    })
}
