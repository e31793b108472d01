//! SCAFFOLD (replaced before merge).

use super::{EngineConfig, EngineKind};
use crate::Error;

#[derive(Debug)]
pub(crate) struct PoolEngine;

impl PoolEngine {
    pub(crate) fn new(_config: &EngineConfig) -> Result<psync_stand_in::Engine, Error> {
        Err(Error::Unavailable {
            engine: EngineKind::Pool.name(),
            reason: "scaffold".into(),
        })
    }
}

mod psync_stand_in {
    pub(crate) type Engine = super::super::psync::PsyncEngine;
}
