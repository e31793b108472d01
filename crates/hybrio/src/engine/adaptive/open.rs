//! How an adaptive engine is made: which engines it runs on, and whose
//! table of priors it starts from.

use std::collections::VecDeque;

use super::backend::{AsyncBackend, AsyncEngine, Backend};
use super::priors::Priors;
#[cfg(test)]
use super::state::ForcedPath;
use super::state::{AdaptiveEngine, Appends, Time};
use crate::Error;
use crate::buf::BufPool;
use crate::clock::Clock;
use crate::engine::api::{AdaptiveMemory, Engine, EngineConfig, PathCounts};
use crate::engine::inline::InlinePath;
use crate::engine::io_uring::IoUringEngine;
use crate::engine::libaio::LibaioEngine;
use crate::engine::pool::PoolEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::pvsync2::Pvsync2Engine;
use crate::engine::retry::Retry;
use crate::sys::{aio, host};

/// The adaptive engine (the engines inside it apply the retry rule, and
/// inject the faults `config` asks for): psync
/// (pvsync2 when `hipri` or `nowait` asks for its flags) inline, and
/// io_uring for the asynchronous path; where the kernel refuses io_uring,
/// the pool, and libaio for `O_DIRECT` files when it is allowed (for
/// buffered files it runs inside `io_submit`, which is no asynchronous path).
pub(crate) fn open(
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    open_with(config, pool, true)
}

/// [`open`], as on a kernel that refuses io_uring.
#[cfg(test)]
pub(crate) fn open_without_io_uring(
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    open_with(config, pool, false)
}

fn open_with(
    config: &EngineConfig,
    pool: Option<&BufPool>,
    try_io_uring: bool,
) -> Result<Box<dyn Engine>, Error> {
    let io_uring = if try_io_uring {
        let ring_config = EngineConfig {
            recv_multishot: false,
            ..config.clone()
        };
        host::io_uring_status()
            .as_ref()
            .ok()
            .and_then(|_| IoUringEngine::new(&ring_config, pool).ok())
    } else {
        None
    };
    if let Some(ring) = io_uring {
        return Ok(wrapped(vec![AsyncEngine::IoUring(ring)], config));
    }
    let mut backends = vec![AsyncEngine::Pool(Box::new(PoolEngine::new(config)?))];
    let libaio = aio::status()
        .as_ref()
        .ok()
        .and_then(|_| LibaioEngine::new(config).ok());
    if let Some(libaio) = libaio {
        backends.push(AsyncEngine::Libaio(Box::new(libaio)));
    }
    Ok(wrapped(backends, config))
}

/// The engine over `backends`, with the inline engine `config` asks for.
fn wrapped<B: AsyncBackend + 'static>(backends: Vec<B>, config: &EngineConfig) -> Box<dyn Engine> {
    let time = Time::Real(Clock::new());
    if config.hipri || config.nowait {
        let inline = Pvsync2Engine::new(config);
        Box::new(AdaptiveEngine::with_engines(inline, backends, config, time))
    } else {
        let inline = PsyncEngine::new(config);
        Box::new(AdaptiveEngine::with_engines(inline, backends, config, time))
    }
}

impl<I: InlinePath, B: AsyncBackend> AdaptiveEngine<I, B> {
    /// The engine with `backends[0]` for every file, or for buffered files
    /// only when `backends[1]` is there for `O_DIRECT` ones.
    pub(super) fn with_engines(
        inline: I,
        backends: Vec<B>,
        config: &EngineConfig,
        time: Time,
    ) -> Self {
        // Tests never share what they learn: each engine has its own table
        // unless a test hands one over (`with_priors`).
        let priors = match &config.adaptive_memory {
            AdaptiveMemory::Process if !cfg!(test) => Priors::process(),
            AdaptiveMemory::Process | AdaptiveMemory::Engine => Priors::default(),
            AdaptiveMemory::File(path) => Priors::saved_at(path),
        };
        let mut engine = Self::with_priors(inline, backends, config, time, priors);
        if let AdaptiveMemory::File(path) = &config.adaptive_memory {
            engine.save_to = Some(path.clone());
        }
        engine
    }

    pub(super) fn with_priors(
        inline: I,
        backends: Vec<B>,
        config: &EngineConfig,
        time: Time,
        priors: Priors,
    ) -> Self {
        let slow_inline_ns = time.slow_inline_ns();
        AdaptiveEngine {
            inline,
            // Without io_uring libaio takes every O_DIRECT file already; an
            // emulated device's files are not what the kernel sees.
            appends: if backends.len() == 1 && config.completion_latency.is_none() {
                Appends::NotYet(Box::new(config.clone()))
            } else {
                Appends::Same
            },
            backends: backends.into_iter().map(Backend::new).collect(),
            depth: config.depth.max(1),
            routes: Vec::new(),
            lanes: Vec::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            timed_out: 0,
            ready: VecDeque::new(),
            async_queued: 0,
            async_reaped: 0,
            inline_spent_ns: 0,
            held_since_commit: 0,
            explorer: None,
            pending: None,
            time,
            counts: PathCounts::default(),
            retry: Retry::new(config.nowait),
            slow_inline_ns,
            priors,
            save_to: None,
            auto_files: 0,
            auto_room: None,
            readahead: super::readahead::Helper::default(),
            emulated_ns: config.completion_latency.map_or(0, |latency| {
                u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX)
            }),
            #[cfg(test)]
            route_override: ForcedPath::default(),
            #[cfg(test)]
            explored_inline_samples: Default::default(),
        }
    }
}
