//! Each option group's settings, as plain data: [`JobOptions`](super::JobOptions)
//! holds a field of each, and the group's table beside this module fills it.
//! They sit below both, so that the job depends on its groups' types and not
//! on the tables, whose setters take the whole job.

mod buffers;
mod cmdprio;
mod errors;
mod iolog;
mod net;
mod placement;
mod pseudo;
mod verify;

pub use buffers::BufferOptions;
pub use cmdprio::{BlockPriorities, CmdPrio, ioprio_value};
pub use errors::{ErrorKind, ErrorPolicy, ExitWhat};
pub use iolog::{IologOptions, ReplaySkip};
pub use net::{NetOptions, Protocol};
pub use placement::Placement;
pub use pseudo::{CpuMode, PseudoEngine, PseudoOptions};
pub use verify::VerifyOptions;
