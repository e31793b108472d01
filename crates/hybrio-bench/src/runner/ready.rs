//! A job made ready on its thread, whichever kind it is.

use super::file_ops::FileOpsJob;
use super::files::open_files;
use super::job::{RunError, engine_kind};
use super::prepared::PreparedJob;
use super::pseudo::PseudoJob;
use super::{flow, stop};
use crate::options::JobOptions;
use crate::outcome::JobOutcome;
use crate::progress::Progress;

/// A job ready to run on its own thread: I/O through an engine, or one of
/// fio's file-operation engines.
#[derive(Debug)]
pub enum ReadyJob {
    /// Reads, writes, trims: through the library's engine.
    Io(Box<PreparedJob>),
    /// Files created, looked up or deleted.
    FileOps(Box<FileOpsJob>),
    /// No I/O: a CPU kept busy, or a program run.
    Pseudo(Box<PseudoJob>),
}

impl ReadyJob {
    /// Builds the job of `options` over the files `plans` names: opens them
    /// and builds its engine, unless it is a file-operation job (which opens
    /// nothing ahead). `replay`: what it replays instead of its workload.
    pub fn new(
        options: &JobOptions,
        plans: &[crate::layout::FilePlan],
        seed: u64,
        (number, jobs_in_run): (usize, usize),
        replay: Option<crate::iolog::Replay>,
    ) -> Result<ReadyJob, RunError> {
        if let Some(op) = crate::options::FileOp::named(&options.ioengine, options.stat_type) {
            let job = FileOpsJob::new(options.clone(), op, plans, number);
            return Ok(ReadyJob::FileOps(Box::new(job)));
        }
        if let Some(engine) = crate::options::PseudoEngine::named(&options.ioengine) {
            let job = PseudoJob::new(options.clone(), engine);
            return Ok(ReadyJob::Pseudo(Box::new(job)));
        }
        let kind = engine_kind(options)?;
        let files = open_files(options, plans).map_err(|source| RunError::Engine {
            job: options.name.clone(),
            source,
        })?;
        PreparedJob::new(
            options.clone(),
            kind,
            files,
            seed,
            (number, jobs_in_run),
            replay,
        )
        .map(|job| ReadyJob::Io(Box::new(job)))
    }

    /// What other jobs end it by (`exitall`).
    pub fn set_stop(&mut self, stop: stop::JobStop) {
        match self {
            ReadyJob::Io(job) => job.set_stop(stop),
            ReadyJob::FileOps(job) => job.set_stop(stop),
            ReadyJob::Pseudo(job) => job.set_stop(stop),
        }
    }

    /// Its place in a flow group (`flow`); a file-operation job takes none.
    pub fn set_flow(&mut self, flow: flow::JobFlow) {
        if let ReadyJob::Io(job) = self {
            job.set_flow(flow);
        }
    }

    /// The group it ramps with (`ramp_size` with `group_reporting`).
    pub fn set_ramp_group(&mut self, group: crate::progress::RampGroup) {
        if let ReadyJob::Io(job) = self {
            job.ramp_group = Some(group);
        }
    }

    /// Runs the job to its end.
    pub fn run(self, progress: &Progress) -> JobOutcome {
        match self {
            ReadyJob::Io(job) => job.run(progress),
            ReadyJob::FileOps(job) => job.run(progress),
            ReadyJob::Pseudo(job) => job.run(progress),
        }
    }
}
