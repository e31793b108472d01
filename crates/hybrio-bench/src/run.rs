//! A whole run: expand jobs into clones, lay out files, start every job on
//! its own thread at the same moment, and gather the report.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::diskstats::DiskSnapshot;
use crate::jobfile::{GlobalOptions, JobDef};
use crate::layout::{self, LayoutError};
use crate::logs::AggregateLog;
use crate::options::{JobOptions, UnifiedRw};
use crate::outcome::JobOutcome;
use crate::output::{ErrorCount, GroupReport, JobDescription, JobReport, RunReport};
use crate::progress::{Progress, RampGroup, StatusLine};
use crate::runner::{self, RunError};
use crate::stats::{self, JobStats};

/// What stops a run before or while it runs. Each is one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    /// Files could not be made ready.
    #[error("{0}")]
    Layout(#[from] LayoutError),
    /// A job could not start.
    #[error("{0}")]
    Start(#[from] RunError),
    /// No engine of those asked for can run the jobs.
    #[error("{0}")]
    NoEngine(String),
    /// The jobs that run at once need more than the system allows.
    #[error("{0}")]
    Limit(#[from] runner::limits::LimitError),
    /// Ctrl-C (or SIGTERM) arrived before anything could be reported.
    #[error("interrupted")]
    Interrupted,
    /// The processes running the jobs together (MPI ranks) lost each other.
    #[error("{0}")]
    Ranks(String),
    /// A job thread could not be started.
    #[error("cannot start a job thread: {0}")]
    Spawn(String),
    /// A job thread died; this is a bug in hybrio.
    #[error("job '{0}' crashed (a bug in hybrio; please report it)")]
    Crashed(String),
    /// Requests were lost; this is a bug in hybrio or the engine.
    #[error(
        "job '{job}': {submitted} requests submitted but {completed} completed and {failed} failed"
    )]
    Lost {
        /// The job.
        job: String,
        /// Requests handed to the engine.
        submitted: u64,
        /// Requests that completed.
        completed: u64,
        /// Requests that failed.
        failed: u64,
    },
}

/// One clone of a job section.
#[derive(Debug, Clone)]
struct JobClone {
    def: JobDef,
    /// Which of its section's `numjobs` clones.
    number: u32,
    groupid: u32,
    /// Its place among all the run's jobs, from 1 (fio's thread number,
    /// which numbers the log files).
    in_run: usize,
}

/// fio's start banner for each job section, as printed before a run.
pub fn banners(jobs: &[JobDef]) -> String {
    let mut text = String::new();
    let mut groupid = 0;
    for (index, job) in jobs.iter().enumerate() {
        if index > 0 && (job.options.stonewall || job.options.new_group) {
            groupid += 1;
        }
        text.push_str(&crate::output::normal::banner(
            &describe(&job.options),
            groupid,
        ));
        text.push('\n');
        if job.options.numjobs > 1 {
            text.push_str("...\n");
        }
    }
    text.push_str(&format!("{}\n", version()));
    let threads: u32 = jobs.iter().map(|j| j.options.numjobs).sum();
    text.push_str(&format!(
        "Starting {threads} thread{}\n",
        if threads == 1 { "" } else { "s" }
    ));
    text
}

/// hybrio's version string, in the place fio puts its own.
pub fn version() -> String {
    format!("hybrio-{}", env!("CARGO_PKG_VERSION"))
}

fn describe(options: &JobOptions) -> JobDescription {
    JobDescription {
        name: options.name.clone(),
        rw: options.rw.name().to_string(),
        bs: [0, 1, 2].map(|dir| options.block_range(dir)),
        ioengine: options.ioengine.clone(),
        iodepth: options.iodepth,
        kb_base: options.kb_base,
        bits: options.network().is_some(),
    }
}

/// `--status-interval`: a report of the figures so far, every `every`;
/// its JSON also gives each job's figures since the report before
/// (`hybrio.jobs[].interval`, [`crate::output::interval`]).
pub struct StatusReports<'a> {
    /// How often.
    pub every: Duration,
    /// Receives each report (the figures from each job's start until now).
    pub emit: &'a mut dyn FnMut(&RunReport),
    /// Each job's figures at the report before, and when it was made.
    before: Vec<JobStats>,
    before_at: Option<Instant>,
}

impl<'a> StatusReports<'a> {
    /// Reports every `every` to `emit`.
    pub fn new(every: Duration, emit: &'a mut dyn FnMut(&RunReport)) -> StatusReports<'a> {
        StatusReports {
            every,
            emit,
            before: Vec::new(),
            before_at: None,
        }
    }

    /// Adds each job's figures since the report before to `report`'s JSON
    /// section, and keeps them for the next.
    fn add_intervals(
        &mut self,
        report: &mut RunReport,
        clones: &[JobClone],
        outcomes: &[JobOutcome],
    ) {
        let now = Instant::now();
        let since = self.before_at.map(|t| now.duration_since(t));
        if let Some(jobs) = report
            .extra
            .as_mut()
            .and_then(|extra| extra["jobs"].as_array_mut())
        {
            for (i, (job, outcome)) in jobs.iter_mut().zip(outcomes).enumerate() {
                let before = self.before.get(i);
                // A job's first interval runs from its start.
                let seconds = match (before, since) {
                    (Some(_), Some(since)) => since.as_secs_f64(),
                    _ => outcome.stats.job_runtime_ms() as f64 / 1000.0,
                };
                let list = clones
                    .get(i)
                    .map_or(&[][..], |c| &c.def.options.percentile_list[..]);
                job["interval"] =
                    crate::output::interval::figures(&outcome.stats, before, seconds, list);
            }
        }
        self.before = outcomes.iter().map(|o| o.stats.clone()).collect();
        self.before_at = Some(now);
    }
}

impl std::fmt::Debug for StatusReports<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusReports")
            .field("every", &self.every)
            .finish_non_exhaustive()
    }
}

/// What a run tells as it goes, besides its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice<'a> {
    /// fio's "JOB: Laying out IO file (N files / MMiB)": fio prints it in
    /// its normal report (standard output, or `--output`'s file) and not
    /// at all with other formats.
    LayingOut(&'a str),
    /// A line that belongs on standard error (a file that could not be
    /// removed), so that standard output stays one document.
    Problem(&'a str),
}

/// Runs the jobs and returns the report. Jobs run together up to each
/// `stonewall`, which waits for those above it. `notice` receives what the
/// run tells as it goes ([`Notice`]).
pub fn run(
    jobs: &[JobDef],
    globals: &GlobalOptions,
    notice: &mut dyn FnMut(Notice<'_>),
) -> Result<RunReport, RunFailure> {
    run_reporting(jobs, globals, notice, None, None)
}

/// [`run`], with a report of the figures so far every so often, and
/// fio's `--bandwidth-log` of all the jobs together.
pub fn run_reporting(
    jobs: &[JobDef],
    globals: &GlobalOptions,
    notice: &mut dyn FnMut(Notice<'_>),
    status: Option<StatusReports>,
    bandwidth_log: Option<&mut AggregateLog>,
) -> Result<RunReport, RunFailure> {
    let ended = run_coordinated(jobs, globals, notice, status, bandwidth_log, &mut |_, _| {
        Ok(GroupStart::Go)
    })?;
    match ended.failure {
        Some(failure) => Err(failure),
        None => Ok(ended.report),
    }
}

/// How a coordinated run ended ([`run_coordinated`]): the report of the
/// groups that ran, and the failure that ended it before the rest, if one
/// did.
#[derive(Debug)]
pub struct Ended {
    /// The groups that ran.
    pub report: RunReport,
    /// What stopped the run before its last group, if anything did.
    pub failure: Option<RunFailure>,
}

/// Whether the next group starts ([`run_coordinated`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupStart {
    /// It starts.
    Go,
    /// The run ends here; the report covers the groups that ran.
    Stop,
}

/// [`run_reporting`], asking `before_io` whether each group starts once its
/// files are laid out and its jobs are ready (or could not get ready:
/// the flag says which), just before their I/O: under MPI, an agreement
/// across the ranks, so that a group's I/O starts together on every rank
/// (as IOR's barrier before the timed phase), and all stop together when
/// one could not get ready. With [`GroupStart::Stop`] the group's jobs
/// quit without I/O and the report covers the groups before it.
pub fn run_coordinated(
    jobs: &[JobDef],
    globals: &GlobalOptions,
    notice: &mut dyn FnMut(Notice<'_>),
    mut status: Option<StatusReports>,
    mut bandwidth_log: Option<&mut AggregateLog>,
    before_io: &mut dyn FnMut(usize, bool) -> Result<GroupStart, RunFailure>,
) -> Result<Ended, RunFailure> {
    let mut clones: Vec<JobClone> = Vec::new();
    let mut segments: Vec<std::ops::Range<usize>> = Vec::new();
    let mut groupid = 0;
    for (index, def) in jobs.iter().enumerate() {
        if index > 0 && (def.options.stonewall || def.options.new_group) {
            groupid += 1;
        }
        if index == 0 || def.options.stonewall {
            segments.push(clones.len()..clones.len());
        }
        for number in 0..def.options.numjobs {
            clones.push(JobClone {
                def: def.clone(),
                number,
                groupid,
                in_run: clones.len() + 1,
            });
        }
        segments.last_mut().expect("one segment at least").end = clones.len();
    }
    // What each group of jobs that run at once needs, against the limits.
    let limits = hybrio::probe::limits();
    let open_now = runner::limits::open_descriptors();
    let root = runner::limits::is_root();
    let rings_give_back = hybrio::probe::ring_gives_descriptor_back();
    for segment in &segments {
        let mut needs = runner::limits::Needs::default();
        for clone in &clones[segment.clone()] {
            let options = &clone.def.options;
            let kind = runner::engine_kind(options)?;
            // A file-operation job holds one file open at a time, at most.
            let file_op = crate::options::FileOp::named(&options.ioengine, options.stat_type);
            let pseudo = crate::options::PseudoEngine::named(&options.ioengine);
            let files = if options.network().is_some() || file_op.is_some() || pseudo.is_some() {
                1
            } else {
                // openfiles: no more open at once.
                let names = layout::file_names(options, clone.number).len();
                runner::open_limit(options, names).unwrap_or(names) as u64
            };
            needs = needs.and(runner::limits::Needs::of_job(
                options,
                kind,
                files,
                rings_give_back,
            ));
        }
        runner::limits::check(needs, &limits, open_now, root)?;
    }
    let mut paths = Vec::new();
    for clone in &clones {
        runner::engine_kind(&clone.def.options)?;
        // The null engine and network jobs have no files on a disk.
        if clone.def.options.ioengine != "null"
            && clone.def.options.network().is_none()
            && crate::options::PseudoEngine::named(&clone.def.options.ioengine).is_none()
        {
            // Names only: a file a later group reads may not exist before an earlier one writes it.
            paths.extend(layout::file_names(&clone.def.options, clone.number));
        }
    }
    let disks = DiskSnapshot::take(paths.iter().map(PathBuf::as_path));
    let mut outcomes = Vec::with_capacity(clones.len());
    let mut setups = Vec::new();
    // When the first group's I/O started: `startdelay` counts from here, as
    // fio counts it from its "genesis", for the jobs of every group.
    let mut run_start = None;
    // fio's flow groups span the run.
    let flows = Arc::new(runner::flow::Flows::default());
    // exitall, set in any job, holds for the run, as in fio.
    let stops = runner::stop::RunStops::new(
        groupid as usize + 1,
        clones.iter().any(|c| c.def.options.exitall),
    );
    let mut failure = None;
    for (number, segment) in segments.into_iter().enumerate() {
        // After Ctrl-C, or a job's exit_what=all, the groups not yet
        // started are not started.
        if hybrio::interrupt::requested() || stops.all_stopped() {
            break;
        }
        let done = Earlier {
            clones: &clones[..segment.start],
            outcomes: &outcomes,
            globals,
            disks: &disks,
        };
        let (new, setup) = match run_together(
            &clones[segment],
            &mut run_start,
            &stops,
            &flows,
            notice,
            Watch {
                status: status.as_mut().map(|s| (s, done)),
                bandwidth_log: bandwidth_log.as_deref_mut(),
            },
            &mut |ready| before_io(number, ready),
        ) {
            Ok(Some(ran)) => ran,
            Ok(None) => break,
            // The groups before it are reported all the same.
            Err(error) => {
                failure = Some(error);
                break;
            }
        };
        stops.segment_done();
        outcomes.extend(new);
        setups.push(setup);
    }
    // Groups run in order, so the jobs that ran are the first ones.
    let mut report = report(&clones[..outcomes.len()], outcomes, globals, &setups);
    report.disk_util = disks.finish();
    Ok(Ended { report, failure })
}

/// What watches a group's jobs as they run, besides the status line.
struct Watch<'s, 'r, 'e> {
    /// `--status-interval`'s reports, with the groups before this one.
    status: Option<(&'s mut StatusReports<'r>, Earlier<'e>)>,
    /// `--bandwidth-log`.
    bandwidth_log: Option<&'s mut AggregateLog>,
}

/// The groups that ran before the one running: what a status report also shows.
struct Earlier<'a> {
    clones: &'a [JobClone],
    outcomes: &'a [JobOutcome],
    globals: &'a GlobalOptions,
    disks: &'a DiskSnapshot,
}

impl Earlier<'_> {
    /// The report of the earlier groups and of `running` (the running group's
    /// jobs) with their figures so far; `None` if a job of the group has not
    /// left its figures within a second (it is not yet doing I/O, e.g. in its
    /// `startdelay`).
    fn report_with(
        &self,
        running: &[JobClone],
        progress: &[Arc<Progress>],
    ) -> Option<(RunReport, Vec<JobClone>, Vec<JobOutcome>)> {
        for p in progress.iter().filter(|p| !p.is_finished()) {
            p.want_outcome();
        }
        let asked = Instant::now();
        while progress
            .iter()
            .any(|p| p.outcome_wanted() && !p.is_finished())
        {
            if asked.elapsed() > Duration::from_secs(1) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut outcomes = self.outcomes.to_vec();
        for p in progress {
            outcomes.push(p.outcome()?);
        }
        let clones: Vec<JobClone> = self.clones.iter().chain(running).cloned().collect();
        let mut report = report(&clones, outcomes.clone(), self.globals, &[]);
        report.disk_util = self.disks.finish();
        Some((report, clones, outcomes))
    }
}

/// How a group of jobs got ready.
#[derive(Debug, Clone, Copy)]
struct Setup {
    jobs: usize,
    /// From the first job's thread start until every job was ready.
    ready_us: u64,
    /// The process's resident memory before the jobs were made, and once
    /// all were ready (0 where /proc does not say).
    rss_kib_before: u64,
    rss_kib_ready: u64,
}

/// The process's resident memory (`VmRSS`), KiB; 0 when /proc does not say.
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix("VmRSS:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// Lays out the files of `clones`, then runs them all at once; `None` when
/// `before_io` stopped them before their I/O.
fn run_together(
    clones: &[JobClone],
    run_start: &mut Option<Instant>,
    stops: &Arc<runner::stop::RunStops>,
    flows: &Arc<runner::flow::Flows>,
    notice: &mut dyn FnMut(Notice<'_>),
    watch: Watch<'_, '_, '_>,
    before_io: &mut dyn FnMut(bool) -> Result<GroupStart, RunFailure>,
) -> Result<Option<(Vec<JobOutcome>, Setup)>, RunFailure> {
    let mut files = Vec::with_capacity(clones.len());
    let mut replays = Vec::with_capacity(clones.len());
    for clone in clones {
        let options = &clone.def.options;
        // read_iolog: the job's files are the log's, as they are.
        let replay =
            crate::iolog::load(options, clone.number).map_err(|source| RunError::Iolog {
                job: options.name.clone(),
                source,
            })?;
        if let Some(replay) = replay {
            files.push(
                crate::iolog::file_plans(options, &replay).map_err(|source| RunError::Iolog {
                    job: options.name.clone(),
                    source,
                })?,
            );
            replays.push(Some(replay));
            continue;
        }
        replays.push(None);
        // A network job's file is its socket, and cpuio and exec have none:
        // nothing to lay out.
        if options.network().is_some()
            || crate::options::PseudoEngine::named(&options.ioengine).is_some()
        {
            files.push(Vec::new());
            continue;
        }
        let plans = layout::plan_files(options, clone.number)?;
        for plan in &plans {
            layout::check_file_type(&options.name, &plan.path, options.filetype)?;
        }
        // filecreate's and dircreate's files are what they make: nothing to
        // lay out (fio's DISKLESSIO); filestat and filedelete find theirs
        // laid out, dirstat and dirdelete their directories made (fio's
        // setup_dirs).
        let file_op = crate::options::FileOp::named(&options.ioengine, options.stat_type);
        if let Some(op) = file_op.filter(|op| op.on_directories()) {
            if !op.creates() {
                for plan in &plans {
                    layout::make_directory(&plan.path).map_err(LayoutError::from)?;
                }
            }
            files.push(plans);
            continue;
        }
        let creates = file_op.is_some_and(crate::options::FileOp::creates);
        if options.ioengine != "null" && !creates {
            // fio announces every file shorter than the job's part of it,
            // whether it writes data there first (reads) or only extends it.
            let extended: Vec<_> = plans
                .iter()
                .filter(|p| !options.create_on_open && shorter_than_used(p))
                .collect();
            if !extended.is_empty() {
                let total = extended.iter().fold(0u64, |sum, p| {
                    sum.saturating_add(p.start.saturating_add(p.size))
                });
                let (plural, total_of) = if extended.len() == 1 {
                    ("", "")
                } else {
                    ("s", "total ")
                };
                notice(Notice::LayingOut(&format!(
                    "{}: Laying out IO file{plural} ({} file{plural} / {total_of}{}MiB)",
                    options.name,
                    extended.len(),
                    total >> 20
                )));
            }
            for plan in &plans {
                if !options.allow_file_create && !plan.path.exists() {
                    return Err(LayoutError::NoFile {
                        job: options.name.clone(),
                        path: plan.path.display().to_string(),
                    }
                    .into());
                }
                // create_on_open: a file a job only writes is created when
                // the job opens it, not before.
                if holds_data_first(options) || !options.create_on_open {
                    layout::lay_out(plan, holds_data_first(options), preallocation(options))
                        .map_err(LayoutError::from)?;
                }
                if options.pre_read {
                    layout::pre_read(plan).map_err(LayoutError::from)?;
                } else if options.invalidate {
                    let file =
                        hybrio::file::open(&plan.path, &hybrio::file::OpenOptions::default())
                            .map_err(LayoutError::from)?;
                    hybrio::file::drop_page_cache(&file, &plan.path).map_err(LayoutError::from)?;
                }
            }
        }
        files.push(plans);
    }

    // fio's unlink: the files of the jobs that ask go once the group is
    // done; unlink_each_loop's after the last loop as after the others.
    let to_unlink: Vec<PathBuf> = clones
        .iter()
        .zip(&files)
        .filter(|(clone, _)| clone.def.options.unlink || clone.def.options.unlink_each_loop)
        .flat_map(|(_, plans)| plans.iter().map(|p| p.path.clone()))
        .filter(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file() || m.is_dir()))
        .collect();

    // Every job gets ready (engine, files) on its own thread, reports in, and
    // waits at the gate; the gate opens for all at once, or tells all to quit
    // when one could not get ready.
    let rss_kib_before = resident_kib();
    let setup_start = Instant::now();
    let gate = Arc::new(StartGate::default());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), RunError>>();
    let progress: Vec<Arc<Progress>> = clones.iter().map(|_| Arc::default()).collect();
    let running = Arc::new(runner::wait_for::Running::new(
        clones.iter().map(|c| c.def.options.name.as_str()),
    ));
    let mut handles = Vec::with_capacity(clones.len());
    let mut spawn_error = None;
    let jobs = clones.len();
    let all_progress = &progress;
    for (((clone, plans), replay), progress) in clones.iter().zip(files).zip(replays).zip(&progress)
    {
        let (gate, ready_tx, progress) = (gate.clone(), ready_tx.clone(), progress.clone());
        let mut options = clone.def.options.clone();
        if let Some(replay) = &replay {
            crate::iolog::shape_job(&mut options, replay);
        }
        // As fio: each clone of a network job takes the next port.
        if options.network().is_some() && options.net.port != 0 {
            options.net.port = options.net.port.saturating_add(clone.number as u16);
        }
        let seed = job_seed(&options, clone.number);
        let number = clone.in_run;
        let number_in_job = clone.number;
        let stop = stops.for_job(clone.groupid as usize);
        let running = Arc::clone(&running);
        // As fio, a job joins its flow group before any job of its group
        // starts: one that starts late (a busy machine, a startdelay) holds
        // the others to their shares from the first I/O, rather than their
        // running ahead alone and then waiting while it catches up.
        let flow = (options.flow > 0).then(|| flows.join(options.flow_id, options.flow));
        // As fio 3.42: with group_reporting, the group's jobs ramp together.
        let ramp_group = (options.group_reporting && options.ramp_size.is_some()).then(|| {
            let members = clones.iter().zip(all_progress);
            RampGroup(
                members
                    .filter(|(c, _)| c.groupid == clone.groupid)
                    .map(|(_, p)| Arc::clone(p))
                    .collect(),
            )
        });
        let spawned = std::thread::Builder::new()
            // comm: the job's own name for its thread, as fio's prctl.
            .name(
                options
                    .comm
                    .clone()
                    .unwrap_or_else(|| format!("{}.{}", options.name, clone.number)),
            )
            .spawn(move || {
                // The engine is built on the thread that uses it: an io_uring ring
                // with SINGLE_ISSUER belongs to one thread.
                let clone_number = number_in_job;
                let prepared = runner::place_thread(&options, clone_number).and_then(|()| {
                    runner::ReadyJob::new(&options, &plans, seed, (number, jobs), replay)
                });
                let (prepared, report) = match prepared {
                    Ok(job) => (Some(job), Ok(())),
                    Err(error) => (None, Err(error)),
                };
                // However this thread ends, jobs waiting for this one go on.
                let _ended = running.ends_on_drop(&options.name);
                // The receiver lives until every thread has reported.
                let _ = ready_tx.send(report);
                let run_start = gate.wait()?;
                let mut job = prepared?;
                job.set_stop(stop.clone());
                if let Some(flow) = flow {
                    job.set_flow(flow);
                }
                if let Some(group) = ramp_group {
                    job.set_ramp_group(group);
                }
                // fio's startdelay: the job's clock, and so its runtime,
                // starts only once the delay is over; and wait_for's job
                // must have ended.
                sleep_until(run_start + options.startdelay);
                if let Some(waitee) = &options.wait_for {
                    running.wait_for(waitee, || {
                        hybrio::interrupt::requested() || stop.requested()
                    });
                }
                let outcome = job.run(&progress);
                stop.job_ended(
                    outcome.failure.is_some(),
                    options.exitall_on_error,
                    options.exit_what,
                );
                Some(outcome)
            });
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(error) => {
                spawn_error = Some(RunFailure::Spawn(error.to_string()));
                break;
            }
        }
    }
    drop(ready_tx);
    let mut start_error = None;
    for report in ready_rx.iter().take(handles.len()) {
        if let Err(error) = report {
            start_error.get_or_insert(error);
        }
    }
    let setup = Setup {
        jobs: handles.len(),
        ready_us: u64::try_from(setup_start.elapsed().as_micros()).unwrap_or(u64::MAX),
        rss_kib_before,
        rss_kib_ready: resident_kib(),
    };
    let ready = start_error.is_none() && spawn_error.is_none();
    // Asked even when this group could not get ready, so that the others
    // (MPI ranks) hear it at the same point; the jobs quit on an error.
    let start = before_io(ready);
    let go = ready && matches!(start, Ok(GroupStart::Go));
    gate.open(go.then(|| *run_start.get_or_insert_with(Instant::now)));
    let show_line = std::io::stderr().is_terminal();
    let Watch {
        mut status,
        mut bandwidth_log,
    } = watch;
    if go && (show_line || status.is_some() || bandwidth_log.is_some()) {
        // The status line once a second, and the status reports, until every
        // job is done.
        let jobs: Vec<(&JobOptions, &Progress)> = clones
            .iter()
            .zip(&progress)
            .map(|(c, p)| (&c.def.options, p.as_ref()))
            .collect();
        let mut line = StatusLine::default();
        let mut shown = Instant::now();
        let mut reported = Instant::now();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            if show_line && shown.elapsed() >= Duration::from_secs(1) {
                eprint!("\r{}\x1b[K", line.render(&jobs));
                shown = Instant::now();
            }
            if let Some(log) = bandwidth_log.as_deref_mut()
                && log.due(Instant::now())
            {
                let mut bytes = [0u64; 3];
                for p in &progress {
                    for (sum, b) in bytes.iter_mut().zip(p.bytes()) {
                        *sum += b;
                    }
                }
                if let Err(error) = log.sample(Instant::now(), bytes) {
                    notice(Notice::Problem(&format!("hybrio: {error}")));
                    bandwidth_log = None;
                }
            }
            if let Some((reports, earlier)) = status.as_mut()
                && reported.elapsed() >= reports.every
            {
                reported = Instant::now();
                if let Some((mut report, all, outcomes)) = earlier.report_with(clones, &progress) {
                    reports.add_intervals(&mut report, &all, &outcomes);
                    (reports.emit)(&report);
                }
            }
        }
        if show_line {
            eprint!("\r\x1b[K");
        }
    }
    let mut outcomes: Vec<JobOutcome> = Vec::with_capacity(handles.len());
    let mut crashed = None;
    for (clone, handle) in clones.iter().zip(handles) {
        match handle.join() {
            Ok(Some(outcome)) => outcomes.push(outcome),
            Ok(None) => {}
            Err(_) => crashed = Some(clone.def.options.name.clone()),
        }
    }
    if let Some(log) = bandwidth_log {
        let dirs = [
            stats::DataDir::Read,
            stats::DataDir::Write,
            stats::DataDir::Trim,
        ];
        let mut bytes = [0u64; 3];
        for outcome in &outcomes {
            for (sum, dir) in bytes.iter_mut().zip(dirs) {
                *sum += outcome.stats.dir(dir).io_bytes();
            }
        }
        log.end_group(bytes);
    }
    for path in &to_unlink {
        // dircreate's and the others' directories go as fio removes them.
        let removed = if path.is_dir() {
            std::fs::remove_dir(path)
        } else {
            std::fs::remove_file(path)
        };
        if let Err(error) = removed
            && error.kind() != std::io::ErrorKind::NotFound
        {
            notice(Notice::Problem(&format!(
                "unlink {}: {error}",
                path.display()
            )));
        }
    }
    if let Some(error) = spawn_error {
        return Err(error);
    }
    if let Some(error) = start_error {
        return Err(error.into());
    }
    if start? == GroupStart::Stop {
        return Ok(None);
    }
    if let Some(name) = crashed {
        return Err(RunFailure::Crashed(name));
    }
    for (clone, outcome) in clones.iter().zip(&outcomes) {
        if outcome.submitted != outcome.completed + outcome.failed + outcome.abandoned {
            return Err(RunFailure::Lost {
                job: clone.def.options.name.clone(),
                submitted: outcome.submitted,
                completed: outcome.completed,
                failed: outcome.failed,
            });
        }
    }
    Ok(Some((outcomes, setup)))
}

/// The seed of a clone's offsets: `randseed` plus its number, or (with
/// `randrepeat=0`) something new every run.
fn job_seed(options: &JobOptions, number: u32) -> u64 {
    let base = if options.seeded_from_randseed() {
        options.randseed
    } else {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    base.wrapping_add(u64::from(number))
}

/// Holds job threads until every one is ready, then lets all go (or all quit).
#[derive(Debug, Default)]
struct StartGate {
    /// `None` while closed; then `Some(Some(run start))` to run, `Some(None)` to quit.
    state: Mutex<Option<Option<Instant>>>,
    opened: Condvar,
}

impl StartGate {
    /// Blocks until the gate opens; the run's start means run, `None` quit.
    fn wait(&self) -> Option<Instant> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.opened.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self, run_start: Option<Instant>) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(run_start);
        self.opened.notify_all();
    }
}

/// Sleeps until `when` in short steps, so that Ctrl-C during a long
/// `startdelay` stops the run at once instead of after the delay.
fn sleep_until(when: Instant) {
    const STEP: Duration = Duration::from_millis(20);
    while !hybrio::interrupt::requested() {
        let now = Instant::now();
        if now >= when {
            return;
        }
        std::thread::sleep((when - now).min(STEP));
    }
}

/// A regular file (or none yet) that ends before the job's part of it does.
fn shorter_than_used(plan: &layout::FilePlan) -> bool {
    let end = plan.start.saturating_add(plan.size);
    std::fs::metadata(&plan.path).map_or(true, |m| m.is_file() && m.len() < end)
}

fn report(
    clones: &[JobClone],
    outcomes: Vec<JobOutcome>,
    globals: &GlobalOptions,
    setups: &[Setup],
) -> RunReport {
    // unified_rw_reporting=mixed: every direction summed into one before
    // anything else reads the figures, group totals included, as fio sums them.
    let outcomes: Vec<JobOutcome> = outcomes
        .into_iter()
        .zip(clones)
        .map(|(mut outcome, clone)| {
            if clone.def.options.unified_rw_reporting == UnifiedRw::Mixed {
                outcome.stats = outcome.stats.into_mixed();
            }
            outcome
        })
        .collect();
    let run_start = outcomes
        .iter()
        .map(|o| o.started)
        .min()
        .unwrap_or_else(SystemTime::now);
    let pid = std::process::id();
    let mut failures = Vec::new();
    let reports_of = |clone: &JobClone, outcome: &JobOutcome| JobReport {
        desc: describe(&clone.def.options),
        groupid: clone.groupid,
        jobs: 1,
        error: outcome.failure.as_ref().map_or(0, |f| f.errno),
        pid,
        start_time: outcome.started,
        job_start_ms: outcome
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        elapsed_s: outcome.started.elapsed().map_or(0, |d| d.as_secs().max(1)),
        options: clone.def.own_options.clone(),
        stats: outcome.stats.clone(),
        errors: clone.def.options.errors.is_on().then_some(ErrorCount {
            total: outcome.failed,
            first: outcome.first_error,
        }),
        engine: Some(outcome.engine.clone()),
        paths: outcome.counters.paths,
        short_errors: outcome.counters.short_errors,
        unified: clone.def.options.unified_rw_reporting,
        steady: outcome.steady.clone(),
        latency_target: outcome.latency_target,
    };
    let mut groups = Vec::new();
    let mut jobs = Vec::new();
    let mut groupids: Vec<u32> = clones.iter().map(|c| c.groupid).collect();
    groupids.dedup();
    for groupid in groupids {
        let members: Vec<(&JobClone, &JobOutcome)> = clones
            .iter()
            .zip(&outcomes)
            .filter(|(c, _)| c.groupid == groupid)
            .collect();
        for (clone, outcome) in &members {
            if let Some(failure) = &outcome.failure {
                failures.push(format!(
                    "job '{}': {}",
                    clone.def.options.name, failure.message
                ));
            }
        }
        let grouped = members
            .first()
            .is_some_and(|(c, _)| c.def.options.group_reporting);
        if !grouped {
            let per_job: Vec<&JobStats> = members.iter().map(|(_, o)| &o.stats).collect();
            groups.push(GroupReport {
                groupid,
                summary: stats::group_summary(&per_job),
            });
        }
        if grouped {
            let (first_clone, first) = members[0];
            let mut merged = reports_of(first_clone, first);
            for (_, outcome) in &members[1..] {
                merged.stats.merge(&outcome.stats);
                if let (Some(sum), Some(more)) = (&mut merged.paths, outcome.counters.paths) {
                    sum.inline += more.inline;
                    sum.asynchronous += more.asynchronous;
                    sum.explored += more.explored;
                    sum.switches += more.switches;
                    sum.learning_ns += more.learning_ns;
                    sum.uncached += more.uncached;
                    sum.read_ahead += more.read_ahead;
                }
                merged.short_errors = merged.short_errors + outcome.counters.short_errors;
                if let Some(errors) = &mut merged.errors {
                    errors.total += outcome.failed;
                    if errors.first == 0 {
                        errors.first = outcome.first_error;
                    }
                }
                if merged.error == 0 {
                    merged.error = outcome.failure.as_ref().map_or(0, |f| f.errno);
                }
            }
            merged.jobs = members.len() as u32;
            // As fio: with group_reporting the group line comes from the merged report.
            groups.push(GroupReport {
                groupid,
                summary: stats::group_summary(&[&merged.stats]),
            });
            jobs.push(merged);
        } else {
            jobs.extend(members.iter().map(|(c, o)| reports_of(c, o)));
        }
    }
    let extra = serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        // Each group's set-up, before its I/O (seeds/001: hundreds of engine
        // contexts must start fast and small): its jobs, how long until all
        // were ready (engines made, files opened and added), and the
        // process's resident memory before and then.
        "setup": setups.iter().map(|s| serde_json::json!({
            "jobs": s.jobs,
            "ready_us": s.ready_us,
            "rss_kib_before": s.rss_kib_before,
            "rss_kib_ready": s.rss_kib_ready,
        })).collect::<Vec<_>>(),
        "errors": failures,
        // Ctrl-C (or SIGTERM) cut the run short: the figures cover it until then.
        "interrupted": hybrio::interrupt::requested(),
        // Every job, also those a group_reporting group merges: fio's merged
        // object names its first job only (fio issues #499, #2132).
        "jobs": clones.iter().zip(&outcomes).map(|(c, o)| serde_json::json!({
            "jobname": c.def.options.name,
            "groupid": c.groupid,
            // An option given twice keeps its last value, the one in effect.
            "job options": c.def.own_options.iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect::<serde_json::Map<_, _>>(),
            "ioengine": o.engine,
            "submitted": o.submitted,
            "completed": o.completed,
            "failed": o.failed,
            "abandoned": o.abandoned,
            // Blocks (verify intervals) read back and checked, and those that failed.
            "verify": o.verify.map(|v| serde_json::json!({
                "blocks": v.blocks,
                "bad_blocks": v.bad_blocks,
            })),
            "short_ios": o.counters.short_ios,
            // Of the short transfers: those an error cut short, with its errno.
            "short_errors": {
                "read": o.counters.short_errors.count[0],
                "write": o.counters.short_errors.count[1],
                "first_errno": o.counters.short_errors.first_errno,
            },
            "retries": o.counters.retries,
            "injected": {
                "eio": o.counters.injected.eio,
                "short": o.counters.injected.short,
                "eagain": o.counters.injected.eagain,
                "delay": o.counters.injected.delay,
                "corrupt": o.counters.injected.corrupt,
            },
            "paths": o.counters.paths.map(|p| serde_json::json!({
                "inline": p.inline,
                "async": p.asynchronous,
                "explored": p.explored,
                "switches": p.switches,
                // The explorations' cost beyond each class's choice (see
                // hybrio's PathCounts), and that against the job's time.
                "learning_ns": p.learning_ns,
                "learning_share": p.learning_ns as f64
                    / (o.stats.job_runtime_ms().max(1) as f64 * 1e6),
                // Reads and writes the engine sent uncached by its own
                // choice (`uncached=auto`).
                "uncached": p.uncached,
                // Bytes its helper thread read ahead of sequential read
                // streams (`uncached=auto`).
                "read_ahead_bytes": p.read_ahead,
            })),
            // io_uring's completion queue: reaps, what they took, and how
            // often the queue's head was published (seeds/004: once a reap).
            "completion_queue": o.counters.ring.map(|r| serde_json::json!({
                "reaps": r.reaps,
                "completions": r.completions,
                "head_commits": r.cq_head_commits,
                "completions_per_reap": r.completions as f64 / r.reaps.max(1) as f64,
                "head_commits_per_reap": r.cq_head_commits as f64 / r.reaps.max(1) as f64,
            })),
            // The job's windows (the report's pictures over time): per window
            // its I/Os, bytes and completion latencies per direction, and the
            // adaptive engine's path counts so far.
            "timeline": o.stats.timeline(),
            // log_hist_msec: each window's completion latency percentiles,
            // per direction (hybrio's answer to fio issue #130).
            "percentiles_over_time": (c.def.options.log_hist_msec > 0).then(|| serde_json::json!({
                "interval_ms": c.def.options.log_hist_msec,
                "windows": o.intervals.iter().map(|w| serde_json::json!({
                    "t_ms": w.end_ms,
                    "dir": w.dir.name(),
                    "count": w.count,
                    "percentiles": w.percentiles.iter()
                        .map(|(p, ns)| (format!("{p:.6}"), serde_json::Value::from(*ns)))
                        .collect::<serde_json::Map<_, _>>(),
                })).collect::<Vec<_>>(),
            })),
            // Milliseconds from the job's I/O start; null when the cache was never dropped.
            "cache_dropped_at_ms": o.cache_dropped_at.map(|d| d.as_secs_f64() * 1e3),
        })).collect::<Vec<_>>(),
    });
    RunReport {
        version: version(),
        time: run_start,
        global_options: globals.clone(),
        jobs,
        groups,
        disk_util: Vec::new(),
        extra: Some(extra),
        clients: Vec::new(),
        fio_compat: clones
            .iter()
            .map(|clone| clone.def.options.fio_compat)
            .min()
            .unwrap_or(crate::fio_version::FioVersion::NEWEST),
    }
}

/// One-line descriptions of every request failure in the report.
pub fn failures(report: &RunReport) -> Vec<String> {
    report
        .extra
        .as_ref()
        .and_then(|e| e.get("errors"))
        .and_then(|e| e.as_array())
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a job's files must hold data before it starts: it reads them, or
/// trims them (fio leaves a trimming job's new file sparse, where a trim
/// frees nothing; hybrio writes it, so that its trims give blocks back).
fn holds_data_first(options: &crate::options::JobOptions) -> bool {
    options.rw.reads() || options.rw.trims()
}

/// How a new file a job writes gets its space: as `fallocate` says; an
/// `e4defrag` job's as fio's default (`native`), whose extents it moves.
fn preallocation(options: &crate::options::JobOptions) -> crate::options::Preallocate {
    use crate::options::Preallocate;
    match options.fallocate {
        Preallocate::None if options.ioengine == "e4defrag" => Preallocate::Allocate,
        given => given,
    }
}
