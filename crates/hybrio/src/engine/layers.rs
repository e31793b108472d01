//! The layers every engine comes wrapped in, the adaptive engine included:
//! resubmission, and fault injection below it when asked. Apart from the
//! factory so that the adaptive engine, which the factory builds, can wrap
//! itself without naming the factory.

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

/// An engine that applies the retry rule itself: bare, or, where the layers
/// must sit above it (injected faults, or `layered`), wrapped as
/// `retried_above(engine)`, which leaves the rule to the layer: applied
/// twice, a read that met the end of the file would be sent once more.
pub(crate) fn own_rule<E: Engine + 'static>(
    engine: E,
    retried_above: fn(E) -> E,
    config: &EngineConfig,
    layered: bool,
) -> Box<dyn Engine> {
    if config.inject.is_none() && !layered {
        Box::new(engine)
    } else {
        wrap(retried_above(engine), config)
    }
}
