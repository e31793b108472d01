//! The engine interface and the engines: one file per engine, like fio's `engines/`.
//!
//! Every engine behaves the same from the outside: the same results for the same
//! requests, errors as a negative errno in the completion, never a panic.

mod adaptive;
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
use layers::wrap;

/// Builds an engine. `pool` is the buffer pool whose buffers the requests will
/// carry; with `fixed_buffers` it is registered with the kernel.
///
/// Every engine answers the same way: short transfers are sent again for
/// the rest and "try again" errors (`EINTR`, and `EAGAIN` unless
/// [`EngineConfig::nowait`]) retried a bounded number of times, so that a
/// completion comes back short only at the end of a file or after an error
/// (the synchronous engines do it in place, io_uring and libaio where their
/// completions arrive; the pool and the adaptive engine are wrapped in a
/// layer that does); the fault injection of `config.inject` ([`inject`])
/// when asked.
pub fn open(
    kind: EngineKind,
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    Ok(match kind {
        EngineKind::Sync => inline(sync::SyncEngine::new(config), config),
        EngineKind::Psync => inline(psync::PsyncEngine::new(config), config),
        EngineKind::Pvsync2 => inline(pvsync2::Pvsync2Engine::new(config), config),
        EngineKind::Pool => wrap(pool::PoolEngine::new(config)?, config),
        EngineKind::Libaio => {
            let engine = libaio::LibaioEngine::new(config)?;
            // It sends short transfers again itself, from the context's
            // slots; faults injected above it still need the layer.
            if config.inject.is_none() {
                Box::new(engine)
            } else {
                wrap(engine.retried_above(), config)
            }
        }
        EngineKind::IoUring => {
            let engine = io_uring::IoUringEngine::new(config, pool)?;
            // It sends short transfers again itself, where they complete;
            // faults injected above it, and the completions standing
            // receives deliver, still need the layer.
            if config.inject.is_none() && !config.recv_multishot {
                Box::new(engine)
            } else {
                wrap(engine.retried_above(), config)
            }
        }
        EngineKind::Adaptive => adaptive::open(config, pool)?,
        // Never short, never "try again": nothing for the rule to do.
        EngineKind::Null if config.inject.is_none() => Box::new(null::NullEngine::new(config)),
        EngineKind::Null => wrap(null::NullEngine::new(config), config),
    })
}

/// A synchronous engine, which sends short transfers again itself, in
/// place: bare, or under the layers when faults are injected above it.
fn inline<C: inline::InlineCalls + 'static>(
    engine: inline::InlineEngine<C>,
    config: &EngineConfig,
) -> Box<dyn Engine> {
    if config.inject.is_none() {
        Box::new(engine)
    } else {
        wrap(engine.retried_above(), config)
    }
}
