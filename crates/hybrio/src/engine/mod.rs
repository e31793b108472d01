//! The engine interface and the engines: one file per engine, like fio's `engines/`.
//!
//! Every engine behaves the same from the outside: the same results for the same
//! requests, errors as a negative errno in the completion, never a panic.

mod adaptive;
mod alias;
mod api;
#[cfg(test)]
mod conformance;
mod inflight;
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
use layers::{bare_or_layered, own_rule};

/// Builds an engine. `pool` is the buffer pool whose buffers the requests will
/// carry; with `fixed_buffers` it is registered with the kernel.
///
/// Every engine answers the same way: short transfers are sent again for
/// the rest and "try again" errors (`EINTR`, and `EAGAIN` unless
/// [`EngineConfig::nowait`]) retried a bounded number of times, so that a
/// completion comes back short only at the end of a file or after an error
/// (the synchronous engines in place, the pool's workers around their
/// calls, io_uring and libaio where their completions arrive, the adaptive
/// engine through the engines inside it). With the fault injection of
/// `config.inject` ([`inject`]), the engine goes under it and the
/// resubmission layer, which applies the rule to the faults too.
pub fn open(
    kind: EngineKind,
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    Ok(match kind {
        // These send short transfers again themselves: in place, or from
        // the slot where the completion arrives.
        EngineKind::Sync => own_rule(
            sync::SyncEngine::new(config),
            inline::InlineEngine::retried_above,
            config,
        ),
        EngineKind::Psync => own_rule(
            psync::PsyncEngine::new(config),
            inline::InlineEngine::retried_above,
            config,
        ),
        EngineKind::Pvsync2 => own_rule(
            pvsync2::Pvsync2Engine::new(config),
            inline::InlineEngine::retried_above,
            config,
        ),
        EngineKind::Pool => own_rule(
            pool::PoolEngine::new(config)?,
            pool::PoolEngine::retried_above,
            config,
        ),
        EngineKind::Libaio => own_rule(
            libaio::LibaioEngine::new(config)?,
            libaio::LibaioEngine::retried_above,
            config,
        ),
        EngineKind::IoUring => own_rule(
            io_uring::IoUringEngine::new(config, pool)?,
            io_uring::IoUringEngine::retried_above,
            config,
        ),
        EngineKind::Adaptive => adaptive::open(config, pool)?,
        // Never short, never "try again": nothing for the rule to do.
        EngineKind::Null => bare_or_layered(null::NullEngine::new(config), config),
    })
}
