//! The loop's state: each request's slot, the loop itself, and how it
//! starts from a job set up to run. Below the files that give the loop its
//! methods, which all reach its fields.

use std::time::SystemTime;

use hybrio::buf::Buf;
use hybrio::clock::Clock;
use hybrio::engine::EngineKind;
use hybrio::file::FileHandle;
use hybrio::request::{Completion, Request};

use super::{buffers, latency_target, priority, verify};
use crate::logs::JobLogs;
use crate::outcome::IoFailure;
use crate::progress::Progress;
use crate::runner::pacing::Pacing;
use crate::runner::prepared::PreparedJob;
use crate::stats::{JobStats, StatsConfig};

/// A request's life in the loop.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) buf: Option<Buf>,
    /// When the request was made (ns on the job's clock).
    pub(super) start: u64,
    /// When it was handed to the kernel.
    pub(super) issue: u64,
    /// A ping-pong's second half is out: the request's times are its first half's.
    pub(super) second_half: bool,
    /// Verify: what a write put in its buffer, or what a read must find.
    pub(super) verify: Option<crate::verify::Expected>,
    /// The request's I/O priority (`cmdprio_*`; 0: the thread's).
    pub(super) ioprio: u16,
    /// The bytes a request on a file touches (its file's index, offset and
    /// length), for `serialize_overlap`; `None` for one on no bytes (a sync).
    pub(super) extent: Option<(usize, u64, u64)>,
}

pub(in crate::runner) struct IoLoop<'a> {
    pub(super) job: &'a mut PreparedJob,
    pub(super) progress: &'a Progress,
    /// When to publish totals to the status line next (ns on the job's clock).
    pub(super) next_publish: u64,
    pub(in crate::runner) stats: JobStats,
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<usize>,
    pub(super) pending: Vec<usize>,
    pub(super) done: Vec<Completion>,
    pub(in crate::runner) failure: Option<IoFailure>,
    pub(in crate::runner) clock: Clock,
    /// The latest clock reading: stop conditions use it without a read of their own.
    pub(super) now: u64,
    pub(in crate::runner) submitted: u64,
    pub(in crate::runner) completed: u64,
    pub(in crate::runner) failed: u64,
    pub(in crate::runner) first_error: i32,
    pub(super) issued_bytes: u64,
    pub(super) pass_issued: u64,
    /// `ioengine=falloc|ftruncate`: each I/O is the space request it stands for.
    pub(super) space: Option<crate::options::SpaceEngine>,
    /// Reads and writes issued (fio's `number_ios` counts them).
    pub(super) ios_issued: u64,
    /// The count `thinktime` last stalled at.
    pub(super) thought_at: u64,
    pub(super) writes_since_sync: u32,
    pub(super) last_written: FileHandle,
    /// When `drop_cache_after` dropped the page cache (ns on the job's clock).
    pub(in crate::runner) cache_dropped_at: Option<u64>,
    /// Completions (`completed + failed`) when the stall watchdog last
    /// looked, and when that was: it looks only on its own (cold) paths, so
    /// the loop's hot path pays nothing for it.
    pub(super) progress_mark: u64,
    pub(super) last_progress: u64,
    /// Reaps since the last progress seen that should have waited for a
    /// completion and came back without one.
    pub(super) empty_reaps: u32,
    /// The job stopped making progress: it ends, and draining leaves.
    pub(super) stalled: bool,
    /// Commits and reaps that failed since the last progress seen.
    pub(super) errors_since_progress: u32,
    /// Requests the engine still held when the job gave up on them.
    pub(in crate::runner) abandoned: u64,
    /// A request the engine answered `Busy` to, with its slot: offered again
    /// after a reap, before any new one (its bytes are already counted).
    pub(super) refused: Option<(usize, Request)>,
    /// When the job started, and its thread's CPU use then: for the figures
    /// so far that a `--status-interval` report asks for.
    pub(super) started: SystemTime,
    pub(super) usage_before: Option<hybrio::rusage::ThreadUsage>,
    pub(super) pacing: Option<Pacing>,
    /// The engine may hold completed requests for a reap ([`Engine::held`]):
    /// the loop takes them as soon as they appear, as fio takes a request an
    /// engine completed at once. Only the adaptive engine does; the others
    /// are spared the call after every request.
    ///
    /// [`Engine::held`]: hybrio::engine::Engine::held
    pub(super) collect_held: bool,
    /// The job's logs, and from when they log (after the ramp, as fio).
    pub(in crate::runner) logs: Option<JobLogs>,
    pub(super) log_from: u64,
    /// Ping-pong halves to send on (each with its slot): offered as soon as
    /// the completion that asks for them is handled.
    pub(super) follow_ups: Vec<(usize, Request)>,
    /// Datagrams a network job had lost when its ramp ended (not its figures).
    pub(super) lost_before: u64,
    /// fio's verify, when the job verifies.
    pub(in crate::runner) verify: Option<verify::VerifyState>,
    /// `ss_dur`: the steady-state window, sampled every `ss_interval`.
    pub(in crate::runner) steady: Option<crate::stats::SteadyState>,
    pub(super) next_steady_sample: u64,
    /// `fill_device`: a write found the device full; the job ends.
    pub(super) device_full: bool,
    /// The plan's next I/O would pass the region's end: the job ends.
    pub(super) plan_ended: bool,
    /// `cmdprio_*`: which reads and writes go with which priority.
    pub(super) priorities: Option<priority::Priorities>,
    /// `latency_target`: the search for the deepest queue that meets it.
    pub(in crate::runner) latency_target: Option<latency_target::LatencyTarget>,
    /// The depth went down: what is in flight completes first.
    pub(super) latency_quiesce: bool,
    /// `openfiles`: files done for the pass, to close before the next I/O.
    pub(super) to_close: Vec<usize>,
    /// When the job's figures started (ns on its clock): after its ramp,
    /// or at latency_target's last window. Its runtime counts from there.
    pub(in crate::runner) measured_from: u64,
    /// The depth settled and its last window is over: the job is done.
    pub(super) latency_done: bool,
    /// `zonemode=strided`: where the current zone starts in the file's
    /// region, and the bytes done in it.
    pub(super) zone_base: u64,
    pub(super) zone_bytes: u64,
    /// What writes carry otherwise, and the smallest write (the unit of
    /// compressible data).
    pub(super) write_data: buffers::WriteData,
    pub(super) min_write: usize,
}

impl<'a> IoLoop<'a> {
    pub(in crate::runner) fn new(
        job: &'a mut PreparedJob,
        progress: &'a Progress,
        started: SystemTime,
        usage_before: Option<hybrio::rusage::ThreadUsage>,
    ) -> IoLoop<'a> {
        let options = &job.options;
        let config = stats_config(options);
        let depth = options.iodepth as usize;
        let clock = Clock::new();
        let slots = (0..depth)
            .map(|_| Slot {
                buf: job.pool.take(),
                start: 0,
                issue: 0,
                second_half: false,
                verify: None,
                ioprio: 0,
                extent: None,
            })
            .collect::<Vec<_>>();
        // Writes carry fio's bytes: random unless the job says otherwise
        // (buffer_pattern, zero_buffers, a compressible or deduplicated
        // share), so that nothing along the way compresses or
        // deduplicates them away unless asked.
        let place = buffers::JobPlace {
            size: job.pass_bytes,
            number: job.number as u64,
            jobs: job.jobs_in_run as u64,
        };
        let mut write_data = buffers::WriteData::new(options, place);
        let min_write = options.block_range(1).0 as usize;
        let mut slots = slots;
        for slot in &mut slots {
            if let Some(buf) = slot.buf.as_mut() {
                write_data.fill(buf.as_mut_slice(), min_write.max(1));
            }
        }
        // A network job whose peer never came has no file.
        let last_written = job.files.first().map_or(FileHandle(0), |f| f.0);
        let pacing = Pacing::new(&job.options);
        let logs = job.logs.take();
        let collect_held = job.engine.kind() == EngineKind::Adaptive;
        let verify = verify::VerifyState::new(&job.options, job.number as u64, job.files.len());
        let space = crate::options::SpaceEngine::named(&job.options.ioengine);
        let priorities = priority::Priorities::new(&job.options, job.number as u64);
        let latency_target = (job.options.latency_target_ns > 0).then(|| {
            latency_target::LatencyTarget::new(
                job.options.latency_target_ns,
                job.options.latency_window_ns,
                job.options.latency_percentile,
                job.options.latency_run,
                job.options.iodepth as usize,
                0,
            )
        });
        let steady = job.steady.take();
        let next_steady_sample = steady
            .as_ref()
            .map_or(u64::MAX, |s| s.settings.interval_ns());
        IoLoop {
            write_data,
            min_write,
            verify,
            stats: JobStats::new(config, 0),
            free: (0..depth).rev().collect(),
            pending: Vec::with_capacity(depth),
            done: Vec::with_capacity(depth),
            slots,
            job,
            progress,
            next_publish: 0,
            failure: None,
            clock,
            now: 0,
            submitted: 0,
            completed: 0,
            failed: 0,
            first_error: 0,
            issued_bytes: 0,
            pass_issued: 0,
            space,
            steady,
            next_steady_sample,
            device_full: false,
            plan_ended: false,
            zone_base: 0,
            zone_bytes: 0,
            latency_target,
            priorities,
            latency_quiesce: false,
            to_close: Vec::new(),
            measured_from: 0,
            latency_done: false,
            ios_issued: 0,
            thought_at: 0,
            writes_since_sync: 0,
            last_written,
            cache_dropped_at: None,
            progress_mark: 0,
            last_progress: 0,
            empty_reaps: 0,
            stalled: false,
            errors_since_progress: 0,
            abandoned: 0,
            started,
            usage_before,
            pacing,
            collect_held,
            logs,
            log_from: 0,
            refused: None,
            follow_ups: Vec::new(),
            lost_before: 0,
        }
    }
}

/// Decimals written in a percentile (99.95 has 2): fio prints the labels
/// with as many decimals as the longest entry of `percentile_list`.
pub(super) fn decimals(percentile: f64) -> u32 {
    let text = percentile.to_string();
    text.split_once('.')
        .map_or(0, |(_, fraction)| fraction.len() as u32)
}

/// What a job's statistics record, and how, from its options.
pub(in crate::runner) fn stats_config(options: &crate::options::JobOptions) -> StatsConfig {
    StatsConfig {
        clat_percentiles: options.clat_percentiles,
        lat_percentiles: options.lat_percentiles,
        slat_percentiles: options.slat_percentiles,
        percentile_list: options.percentile_list.clone(),
        percentile_precision: options
            .percentile_list
            .iter()
            .map(|p| decimals(*p))
            .max()
            .unwrap_or(2),
        // fio's disable_bw_measurement: no bandwidth or IOPS samples.
        sample_interval_ms: if options.disable_bw { 0 } else { 500 },
        disabled: crate::stats::DisabledLatencies {
            slat: options.disable_slat,
            clat: options.disable_clat,
            lat: options.disable_lat,
        },
    }
}
