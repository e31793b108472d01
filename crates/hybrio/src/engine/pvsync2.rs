//! SCAFFOLD (replaced before merge).
pub(crate) type Pvsync2Engine = super::psync::PsyncEngine;
