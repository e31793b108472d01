//! What a job set up to run holds. The I/O loop borrows it while the job
//! runs, so it sits below both the loop and [`job`](super::job), which sets
//! it up and runs it.

use std::fs::File;
use std::path::PathBuf;

use hybrio::buf::BufPool;
use hybrio::engine::Engine;
use hybrio::file::FileHandle;

use super::{flow, stop};
use crate::logs::JobLogs;
use crate::offsets::IoPlan;
use crate::options::JobOptions;

/// A job made ready to run: engine built and files added, on its own thread.
#[derive(Debug)]
pub struct PreparedJob {
    pub(super) options: JobOptions,
    pub(super) engine: Box<dyn Engine>,
    pub(super) pool: BufPool,
    pub(super) files: Vec<(FileHandle, PathBuf)>,
    /// The same files, for dropping their page cache between passes
    /// (`invalidate`) and once mid-run (`drop_cache_after`).
    pub(super) cache_files: Vec<(File, PathBuf)>,
    pub(super) plan: IoPlan,
    /// The steady state window (`steadystate_duration`), made here, where a
    /// window too large for memory can still fail the job with one line.
    pub(super) steady: Option<crate::stats::SteadyState>,
    /// Bytes of one pass over the files.
    pub(super) pass_bytes: u64,
    /// Each file's region (start, bytes), for `unlink_each_loop` to make it again.
    pub(super) regions: Vec<(u64, u64)>,
    /// `zonemode=strided`: the zones, and the size of the file they stride over.
    pub(super) zones: Option<(crate::options::StridedZones, u64)>,
    pub(super) total_bytes: u64,
    /// `write_lat_log` and the like.
    pub(super) logs: Option<JobLogs>,
    /// `write_iolog`.
    pub(super) iolog: Option<crate::iolog::IologWriter>,
    /// `read_iolog`: the replay the job issues instead of its plan's I/Os.
    pub(super) replay: Option<crate::iolog::Cursor>,
    /// How long the job may go without progress before it ends.
    pub(super) stall_limit_ns: u64,
    /// A network job's socket, bound or resolved, until the job starts.
    pub(super) endpoint: Option<crate::net::Endpoint>,
    /// A network job's socket once its peer is there.
    pub(super) session: Option<crate::net::Session>,
    /// Where a ping-pong sender to a multicast group receives its replies.
    pub(super) reply_handle: Option<FileHandle>,
    /// The job's number in the run, from 1 (fio's `thread_number`).
    pub(super) number: usize,
    /// How many jobs run together with it, itself counted (fio's
    /// `thread_number` when its dedupe working set is made).
    pub(super) jobs_in_run: usize,
    /// What other jobs end it by (`exitall`).
    pub(super) stop: Option<stop::JobStop>,
    /// Its place in a flow group (`flow`).
    pub(super) flow: Option<flow::JobFlow>,
    /// The jobs it ramps with (`ramp_size` with `group_reporting`).
    pub(crate) ramp_group: Option<crate::progress::RampGroup>,
}
