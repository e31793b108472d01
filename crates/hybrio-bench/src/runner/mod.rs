//! Runs one job on its own thread: files, engine, the I/O loop, statistics.
//!
//! The loop is fio's `do_io`: take a free slot, plan an I/O, queue it; commit
//! every `iodepth_batch_submit` requests; when all slots are busy, reap at least
//! `iodepth_batch_complete_min` (1 when full) until the depth is down to
//! `iodepth_low`. Clock reads are what fio does: one at each request's start,
//! one per commit batch (issue time) and one per reap batch (completion time).
//!
//! This file only gathers the runner's parts: the job kinds and the loop
//! take what they share from modules below them (`prepared`, `files`,
//! `finish`, `errno`), never from here, so that no part reaches back up
//! into the module that declares it.

use crate::options::JobOptions;
pub use file_ops::FileOpsJob;
pub use files::{open_files, open_limit};
pub use job::{RunError, engine_kind};
pub use prepared::PreparedJob;
pub use pseudo::PseudoJob;
pub use ready::ReadyJob;

mod defrag;
mod errno;
mod file_ops;
mod files;
mod finish;
pub mod flow;
mod io_loop;
mod job;
pub mod limits;
mod offload;
mod pacing;
mod prepared;
mod pseudo;
mod ready;
pub mod stop;
#[cfg(test)]
mod tests;
pub mod wait_for;

/// Places the calling thread, the job's (clone `clone`, from 0), as its
/// options ask: CPUs (one of them per clone with `cpus_allowed_policy=split`),
/// memory policy, nice value, I/O priority. Done before the job allocates
/// anything, so that its memory follows the policy.
pub fn place_thread(options: &JobOptions, clone: u32) -> Result<(), RunError> {
    use hybrio::placement::{
        IoClass, pin_to_cpus, set_io_priority_hinted, set_memory_policy, set_nice,
    };
    let placement = &options.placement;
    let failed = |what: String| {
        let job = options.name.clone();
        move |source| RunError::Placement { job, what, source }
    };
    if let Some(cpus) = &placement.cpus {
        let cpus = if placement.split {
            vec![cpus[clone as usize % cpus.len()]]
        } else {
            cpus.clone()
        };
        pin_to_cpus(&cpus).map_err(failed(format!("run on CPUs {cpus:?}")))?;
    }
    if let Some(policy) = &placement.memory {
        set_memory_policy(policy).map_err(failed(format!("memory policy {policy:?}")))?;
    }
    if let Some(nice) = placement.nice {
        set_nice(nice).map_err(failed(format!("nice {nice}")))?;
    }
    if let Some((class, level, hint)) = placement.ioprio() {
        let class = match class {
            1 => IoClass::Realtime,
            3 => IoClass::Idle,
            _ => IoClass::BestEffort,
        };
        set_io_priority_hinted(class, level, hint).map_err(failed(format!(
            "I/O priority {class:?} {level} hint {hint}"
        )))?;
    }
    Ok(())
}
