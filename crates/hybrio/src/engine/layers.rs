//! The layers an engine goes under when faults are injected: resubmission,
//! and fault injection below it; every engine is bare otherwise. Apart from
//! the factory so that the adaptive engine, which the factory builds, can
//! wrap itself without naming the factory.

use super::api::{Engine, EngineConfig};
use super::{inject, resubmit};

/// The engine under the resubmission layer, and under fault injection if asked.
pub(super) fn wrap<E: Engine + 'static>(engine: E, config: &EngineConfig) -> Box<dyn Engine> {
    match &config.inject {
        Some(plan) => Box::new(resubmit::Resubmit::new(
            inject::Inject::new(engine, plan.clone()),
            config,
        )),
        None => Box::new(resubmit::Resubmit::new(engine, config)),
    }
}

/// Whether the layers sit above the engines `config` builds: with injected
/// faults, which the resubmission layer over them retries.
pub(crate) fn layered(config: &EngineConfig) -> bool {
    config.inject.is_some()
}

/// An engine for inside another (the adaptive engine's inline and
/// asynchronous ones): applying the retry rule itself, or, where the layers
/// sit above the engine it is inside ([`layered`]), leaving it to them.
pub(crate) fn inside<E>(engine: E, retried_above: fn(E) -> E, config: &EngineConfig) -> E {
    if layered(config) {
        retried_above(engine)
    } else {
        engine
    }
}

/// An engine that applies the retry rule itself: bare, or, with injected
/// faults, wrapped as `retried_above(engine)` under the layers, which
/// leaves the rule to them: applied twice, a read that met the end of the
/// file would be sent once more.
pub(crate) fn own_rule<E: Engine + 'static>(
    engine: E,
    retried_above: fn(E) -> E,
    config: &EngineConfig,
) -> Box<dyn Engine> {
    bare_or_layered(inside(engine, retried_above, config), config)
}

/// `engine` bare, or under the layers when faults are injected.
pub(crate) fn bare_or_layered<E: Engine + 'static>(
    engine: E,
    config: &EngineConfig,
) -> Box<dyn Engine> {
    if layered(config) {
        wrap(engine, config)
    } else {
        Box::new(engine)
    }
}
