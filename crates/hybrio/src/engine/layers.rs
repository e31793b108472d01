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
