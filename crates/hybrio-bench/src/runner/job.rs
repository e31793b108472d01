//! A job made ready to run on its own thread: its engine built, its files
//! added, its I/O planned; and why a job could not be.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hybrio::buf::BufPool;
use hybrio::clock::Clock;
use hybrio::engine::{self, Engine, EngineConfig, EngineKind};
use hybrio::file::{AccessPattern, FileHandle};

use super::errno::{EIO, ETIMEDOUT, error_errno};
use super::files::{NOT_OPEN, add_to_engine, open_limit};
use super::finish::{cpu_since, engine_line};
use super::io_loop::IoLoop;
use super::prepared::PreparedJob;
use super::{defrag, flow, offload, stop};
use crate::layout::JobFile;
use crate::logs::JobLogs;
use crate::offsets::{BlockSizing, Direction, IoPlan};
use crate::options::{FadviseHint, JobOptions};
use crate::outcome::{IoFailure, JobOutcome};
use crate::progress::Progress;
use crate::stats::DataDir;

/// Why a job could not run, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The engine could not be set up.
    #[error("job '{job}': {source}")]
    Engine {
        /// The job.
        job: String,
        /// What the library said.
        source: hybrio::Error,
    },
    /// An engine name hybrio does not know.
    #[error("job '{job}': ioengine '{engine}' is not supported by hybrio (known: {known})")]
    UnknownEngine {
        /// The job.
        job: String,
        /// What was asked for.
        engine: String,
        /// What exists.
        known: String,
    },
    /// A network job could not be set up.
    #[error("job '{job}': {source}")]
    Net {
        /// The job.
        job: String,
        /// Why.
        source: crate::net::NetError,
    },
    /// A log file could not be opened.
    #[error("job '{job}': {source}")]
    Log {
        /// The job.
        job: String,
        /// What failed.
        source: crate::logs::LogError,
    },
    /// The job's I/O log could not be written, or its replay read.
    #[error("job '{job}': {source}")]
    Iolog {
        /// The job.
        job: String,
        /// What failed.
        source: crate::iolog::IologError,
    },
    /// The job's options cannot be set up (what fio refuses at setup too).
    #[error("job '{job}': {message}")]
    Setup {
        /// The job.
        job: String,
        /// Why.
        message: String,
    },
    /// The job's thread could not be placed as asked (`cpus_allowed`,
    /// `nice`, `prio`, `numa_mem_policy`...).
    #[error("job '{job}': {what}: {source}")]
    Placement {
        /// The job.
        job: String,
        /// What was asked.
        what: String,
        /// What the kernel said.
        source: std::io::Error,
    },
}

/// Looks the engine up, checking that this kernel allows it.
pub fn engine_kind(job: &JobOptions) -> Result<EngineKind, RunError> {
    // fio's `net` engine is synchronous: `recv`/`send` in the job's thread;
    // so are its space engines (`falloc`, `ftruncate`).
    let space = crate::options::SpaceEngine::named(&job.ioengine);
    if space == Some(crate::options::SpaceEngine::Ftruncate) && (job.rw.reads() || job.rw.trims()) {
        return Err(RunError::Setup {
            job: job.name.clone(),
            message: format!(
                "ioengine=ftruncate truncates the file on writes only, and rw={} does more than write",
                job.rw.name()
            ),
        });
    }
    // The file-operation engines make their system calls themselves
    // (`file_ops`): they have no engine of the library's.
    let file_op = crate::options::FileOp::named(&job.ioengine, job.stat_type).is_some()
        || crate::options::PseudoEngine::named(&job.ioengine).is_some();
    let name = if job.ioengine == "net" || job.ioengine == "e4defrag" || space.is_some() || file_op
    {
        "psync"
    } else {
        job.ioengine.as_str()
    };
    let kind = EngineKind::from_name(name).ok_or_else(|| RunError::UnknownEngine {
        job: job.name.clone(),
        engine: job.ioengine.clone(),
        known: EngineKind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    hybrio::probe::engine_available(kind).map_err(|source| RunError::Engine {
        job: job.name.clone(),
        source,
    })?;
    Ok(kind)
}

/// Held while a job makes its engine (see [`PreparedJob::new`]).
static MAKING_ENGINES: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl PreparedJob {
    /// Builds the engine and opens the files (and the logs, numbered
    /// `number`, the job's number in the run from 1, of `jobs_in_run`).
    /// Must run on the thread that will run the job.
    pub fn new(
        options: JobOptions,
        kind: EngineKind,
        files: Vec<JobFile>,
        seed: u64,
        (number, jobs_in_run): (usize, usize),
        replay: Option<crate::iolog::Replay>,
    ) -> Result<PreparedJob, RunError> {
        let wrap = |source| RunError::Engine {
            job: options.name.clone(),
            source,
        };
        let depth = options.iodepth;
        // A replay's buffers hold its largest I/O, as fio grows its own.
        let largest = replay.as_ref().map_or(0, crate::iolog::Replay::largest);
        let pool = BufPool::new(
            depth as usize,
            options.max_block_size().max(largest) as usize,
        )
        .map_err(wrap)?;
        let config = EngineConfig {
            depth,
            fixed_buffers: options.fixedbufs,
            register_files: options.registerfiles || options.sqthread_poll,
            sq_thread_poll: options.sqthread_poll,
            hipri: options.hipri,
            nowait: options.nowait,
            recv_multishot: options.recv_multishot,
            completion_latency: options.completion_latency,
            adaptive_memory: options.adaptive_memory.clone(),
            // Checked when the option was read.
            inject: options.inject.as_deref().and_then(|plan| plan.parse().ok()),
            // A job's engine stays on its thread, which reaps it.
            any_thread: false,
            reaped_elsewhere: false,
        };
        // One job at a time makes its engine and binds it to its thread
        // with a first commit, after which an io_uring ring holds no
        // descriptor: hundreds of jobs making theirs at once held a ring
        // descriptor each until their commits (seeds/001 under
        // `RLIMIT_NOFILE`).
        let one_at_a_time = MAKING_ENGINES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut engine: Box<dyn Engine> = if options.offload {
            let config = config.clone();
            let offloaded =
                offload::OffloadEngine::start(depth, move || engine::open(kind, &config, None));
            Box::new(offloaded.map_err(wrap)?)
        } else {
            engine::open(kind, &config, Some(&pool)).map_err(wrap)?
        };
        engine.commit().map_err(wrap)?;
        drop(one_at_a_time);
        let mut engine: Box<dyn Engine> = if options.ioengine == "e4defrag" {
            let donor = options.pseudo.donor.as_deref().unwrap_or_default();
            let donor = match &options.directory {
                Some(dir) => Path::new(dir).join(donor),
                None => PathBuf::from(donor),
            };
            let start = files.iter().map(|f| f.start).min().unwrap_or(0);
            let end = files.iter().map(|f| f.start + f.size).max().unwrap_or(0);
            let defrag =
                defrag::DefragEngine::new(engine, donor, options.pseudo.inplace, (start, end));
            Box::new(defrag.map_err(wrap)?)
        } else {
            engine
        };
        let endpoint = match options.network() {
            Some(protocol) => Some(prepare_network(&options, protocol, engine.as_mut())?),
            None => None,
        };
        // The first clock of the process calibrates the time-stamp counter
        // (20 ms): do it now, before the jobs start together, not inside one.
        Clock::new();
        let mut sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
        let files_count = files.len();
        let regions: Vec<(u64, u64)> = files.iter().map(|f| (f.start, f.size)).collect();
        let starts: Vec<u64> = files.iter().map(|f| f.start).collect();
        if endpoint.is_some() {
            // One stream of `size` bytes (a time-based job's size does
            // not end it; sequential offsets mean nothing on a socket).
            sizes.push(options.size.unwrap_or(u64::MAX / 2));
        }
        let mut handles = Vec::with_capacity(files.len());
        let mut cache_files = Vec::with_capacity(files.len());
        let advice = options.fadvise_hint.map(|hint| match hint {
            FadviseHint::Workload if options.rw.is_random() => AccessPattern::Random,
            FadviseHint::Workload | FadviseHint::Sequential => AccessPattern::Sequential,
            FadviseHint::Normal => AccessPattern::Normal,
            FadviseHint::Random => AccessPattern::Random,
            FadviseHint::NoReuse => AccessPattern::NoReuse,
        });
        let mut opened = Vec::with_capacity(files.len());
        for file in files {
            let Some(open) = file.file else {
                // Past `openfiles`: opened when the job reaches it.
                opened.push(false);
                handles.push((NOT_OPEN, file.path));
                continue;
            };
            opened.push(true);
            if let Some(advice) = advice
                && kind != EngineKind::Null
            {
                hybrio::file::advise(&open, &file.path, advice).map_err(wrap)?;
            }
            // The emulated device keeps its data in the page cache: dropping
            // it would put the real disk under the emulated one.
            if (options.invalidate || options.drop_cache_after.is_some())
                && kind != EngineKind::Null
                && options.completion_latency.is_none()
            {
                let copy = open
                    .try_clone()
                    .map_err(|e| wrap(hybrio::Error::io("dup", &file.path, e)))?;
                cache_files.push((copy, file.path.clone()));
            }
            let handle =
                add_to_engine(engine.as_mut(), open, file.path.clone(), &options).map_err(wrap)?;
            handles.push((handle, file.path));
        }
        let zones = options.zones.active(files_count);
        let plan = IoPlan::new(
            options.rw,
            options.rwmixread,
            // A trimming job's blocks are its trims' sizes (bs's third value).
            [0, 1].map(|dir| {
                let dir = if dir == 1 && options.rw.trims() {
                    2
                } else {
                    dir
                };
                BlockSizing::of_job(&options, dir)
            }),
            // Strided zones: the plan walks one zone's range; the loop
            // moves it along the file.
            &zones.map_or_else(
                || sizes.clone(),
                |z| sizes.iter().map(|&size| size.min(z.range)).collect(),
            ),
            !options.norandommap,
            seed,
        )
        .map_err(|e| RunError::Setup {
            job: options.name.clone(),
            message: e.to_string(),
        })?
        .with_distributions([
            &options.random_distribution[0],
            &options.random_distribution[1],
        ])
        .with_distribution_seeds(&distribution_seeds(&options, &handles, number, seed))
        .with_zone_generator(fio_generator(&options, number, seed, Generator::Zones))
        .with_open_files(&opened, open_limit(&options, opened.len()))
        .with_fio_generators(
            fio_generator(&options, number, seed, Generator::Offsets),
            fio_generator(&options, number, seed, Generator::Mix),
            // fio reseeds each loop of a repeatable job; a given randseed
            // makes it unrepeatable (fio's init.c).
            options.randrepeat && !options.randseed_given && !options.time_based,
        )
        .with_offset_modifiers(
            options.rw_seq_nr,
            options.rw_seq_add,
            options.rw_sequencer_identical,
        )
        .with_size_generators([
            fio_generator(&options, number, seed, Generator::Sizes(0)),
            fio_generator(
                &options,
                number,
                seed,
                Generator::Sizes(if options.rw.trims() { 2 } else { 1 }),
            ),
        ]);
        // Files up to 8 EiB each can add up past 64 bits: such a pass
        // never ends anyway, so it stops at the most that can be counted.
        let pass_bytes = options
            .size
            .unwrap_or_else(|| sizes.iter().fold(0, |sum, &s| sum.saturating_add(s)));
        let mut plan = plan;
        if options.random_lfsr
            && options.rw.is_random()
            && !plan.use_lfsr(fio_block_seed(&options, number, seed))
        {
            return Err(RunError::Setup {
                job: options.name.clone(),
                message: "random_generator=lfsr: fio's shift register cannot be set up for these files (more than 2^63 blocks, or the seed's low bits are all ones); use tausworthe64".into(),
            });
        }
        let plan = plan
            .with_file_starts(&starts)
            .with_block_align(options.blockalign)
            .with_file_service(
                options.file_service,
                fio_generator(&options, number, seed, Generator::Files),
            );
        // As fio, a size that is not a whole number of blocks is rounded down
        // to one that is: no I/O runs past it.
        let unit = [
            (options.rw.reads(), Direction::Read),
            (options.rw.writes(), Direction::Write),
        ]
        .into_iter()
        .filter(|(used, _)| *used)
        .map(|(_, dir)| plan.unit(dir))
        .min()
        .unwrap_or(1);
        let pass_bytes = if sizes.len() > 1 && endpoint.is_none() && options.rw.is_random() {
            // Each file's share, in whole blocks, as fio's random map
            // rounds each file's.
            let whole = sizes
                .iter()
                .map(|s| s - s % unit.max(1))
                .fold(0, u64::saturating_add);
            whole.min(pass_bytes)
        } else if pass_bytes >= unit {
            pass_bytes - pass_bytes % unit
        } else {
            pass_bytes
        };
        // io_size: the bytes to do, the region staying `size` (more than
        // it: passes over it again).
        let total_bytes = options
            .io_size
            .unwrap_or(pass_bytes)
            .saturating_mul(options.loops as u64);
        // A replay ends with its log, as fio's: no size ends it, no pass
        // starts over.
        let (pass_bytes, total_bytes) = match replay {
            Some(_) => (u64::MAX, u64::MAX),
            None => (pass_bytes, total_bytes),
        };
        let logs = JobLogs::open(&options, number).map_err(|source| RunError::Log {
            job: options.name.clone(),
            source,
        })?;
        // A replay's write_iolog is dropped when its job is read.
        let iolog = match &options.iolog.write {
            Some(path) if endpoint.is_none() => {
                let made_up = options.filename.is_none();
                let names: Vec<String> = handles
                    .iter()
                    .map(|(_, path)| crate::iolog::write::file_label(path, made_up))
                    .collect();
                Some(
                    crate::iolog::IologWriter::create(Path::new(path), &names).map_err(
                        |source| RunError::Iolog {
                            job: options.name.clone(),
                            source,
                        },
                    )?,
                )
            }
            _ => None,
        };
        let steady = (options.steady.seconds > 0)
            .then(|| crate::stats::SteadyState::new(options.steady))
            .transpose()
            .map_err(|message| RunError::Setup {
                job: options.name.clone(),
                message,
            })?;
        Ok(PreparedJob {
            options,
            engine,
            pool,
            files: handles,
            cache_files,
            plan,
            steady,
            pass_bytes,
            zones: zones.map(|z| (z, sizes.first().copied().unwrap_or(0))),
            regions,
            total_bytes,
            logs,
            iolog,
            replay: replay.map(crate::iolog::Cursor::new),
            stall_limit_ns: STALL_LIMIT_NS,
            endpoint,
            session: None,
            reply_handle: None,
            number,
            jobs_in_run,
            stop: None,
            flow: None,
            ramp_group: None,
        })
    }

    /// A network job meets its peer (accepts, or connects), under a guard
    /// that ends the wait when the job's time is up, and hands the socket
    /// to the engine.
    fn open_network(&mut self, endpoint: crate::net::Endpoint) -> Result<(), IoFailure> {
        let failure = |message: String, errno: i32| IoFailure { errno, message };
        // A second descriptor of a socket: the guard's, the session's.
        let dup = |socket: &socket2::Socket, what: &str| {
            socket.try_clone().map_err(|e| {
                failure(
                    format!("duplicate the socket of {what}: {e}"),
                    e.raw_os_error().unwrap_or(EIO),
                )
            })
        };
        let budget = self
            .options
            .runtime
            .map(|runtime| std::time::Instant::now() + self.options.ramp_time + runtime);
        let listener = endpoint.guard_handle().map_err(|e| {
            failure(
                format!("duplicate the socket of {}: {e}", endpoint.name()),
                e.raw_os_error().unwrap_or(EIO),
            )
        })?;
        let guard = crate::net::Guard::start(vec![listener], budget);
        let protocol = self
            .options
            .network()
            .unwrap_or(crate::options::Protocol::Tcp);
        let connection = endpoint.open(&guard).map_err(|e| {
            let errno = match &e {
                crate::net::NetError::Socket { source, .. } => source.raw_os_error().unwrap_or(EIO),
                _ => ETIMEDOUT,
            };
            failure(e.to_string(), errno)
        })?;
        let name = connection.name.clone();
        if let Some(replies) = connection.replies {
            let replies_name = format!("{name} (replies)");
            guard.add(dup(&replies, &replies_name)?);
            let handle = self
                .engine
                .add_socket(std::os::fd::OwnedFd::from(replies), &replies_name)
                .map_err(|e| failure(e.to_string(), error_errno(&e)))?;
            self.reply_handle = Some(handle);
        }
        let second = dup(&connection.socket, &name)?;
        guard.add(dup(&second, &name)?);
        let handle = self
            .engine
            .add_socket(std::os::fd::OwnedFd::from(connection.socket), &name)
            .map_err(|e| failure(e.to_string(), error_errno(&e)))?;
        self.files.push((handle, PathBuf::from(&name)));
        self.session = Some(crate::net::Session::new(
            protocol,
            self.options.net.pingpong,
            self.options.net.datagram_size as usize,
            guard,
            second,
        ));
        Ok(())
    }

    /// Puts the job in its flow group (`flow`), as it starts.
    pub fn set_flow(&mut self, flow: flow::JobFlow) {
        self.flow = Some(flow);
    }

    /// Lets other jobs end this one (`exitall`).
    pub fn set_stop(&mut self, stop: stop::JobStop) {
        self.stop = Some(stop);
    }

    /// Runs the job to its end and returns what it measured.
    pub fn run(mut self, progress: &Progress) -> JobOutcome {
        let opened = match self.endpoint.take() {
            Some(endpoint) => self.open_network(endpoint),
            None => Ok(()),
        };
        // A network job's clock starts when its peer is there, as fio's.
        let usage_before = hybrio::rusage::thread_usage().ok();
        let started = SystemTime::now();
        if let Some(session) = &self.session {
            let runtime = self.options.runtime;
            let ramp = self.options.ramp_time;
            session
                .guard()
                .set_deadline(runtime.map(|r| std::time::Instant::now() + ramp + r));
        }
        let mut io_loop = IoLoop::new(&mut self, progress, started, usage_before);
        if let Err(failure) = opened {
            io_loop.fail(failure.errno, failure.message);
        }
        io_loop.run();
        io_loop.end_others();
        let mut intervals = Vec::new();
        if let Some(logs) = io_loop.logs.take() {
            match logs.finish(io_loop.clock.now()) {
                Ok(done) => intervals = done,
                Err(error) => {
                    io_loop.fail(error.source.raw_os_error().unwrap_or(5), error.to_string())
                }
            }
        }
        io_loop.finish_iolog();
        let IoLoop {
            mut stats,
            failure,
            submitted,
            completed,
            failed,
            first_error,
            clock,
            cache_dropped_at,
            abandoned,
            verify,
            steady,
            latency_target,
            measured_from,
            ..
        } = io_loop;
        let counters = self.engine.counters();
        // fio counts a transfer it had to resubmit for the rest as short.
        stats.add_short_ios(DataDir::Read, counters.short_ios[0]);
        stats.add_short_ios(DataDir::Write, counters.short_ios[1]);
        if (self.options.end_fsync || self.options.end_syncfs) && failure.is_none() {
            // end_syncfs: one syncfs per filesystem among the job's files.
            let mut synced_filesystems = Vec::new();
            for (handle, _) in &self.files {
                if let Ok(file) = self.engine.remove_file(*handle) {
                    // The job's result does not change with the sync's outcome; fio ignores it too.
                    if !self.options.end_syncfs {
                        let _ = file.sync_all();
                        continue;
                    }
                    let device = file
                        .metadata()
                        .map(|m| std::os::unix::fs::MetadataExt::dev(&m));
                    if let Ok(device) = device
                        && !synced_filesystems.contains(&device)
                    {
                        synced_filesystems.push(device);
                        let _ = rustix::fs::syncfs(&file);
                    }
                }
            }
        }
        // As fio: the ramp (and latency_target's search) is not the job's time.
        let runtime = Duration::from_nanos(clock.now().saturating_sub(measured_from));
        stats.finish(runtime, cpu_since(usage_before.as_ref()));
        // After the job's time and CPU are taken: the goodbye is not its I/O.
        // A receiver says it only to a ping-pong sender, the one that reads.
        if let Some(session) = &self.session
            && (self.options.rw.writes() || session.pingpong())
        {
            session.goodbye();
        }
        let outcome = JobOutcome {
            stats,
            failure,
            started,
            submitted,
            completed,
            failed,
            first_error,
            counters,
            engine: engine_line(&self.options, self.engine.as_ref()),
            cache_dropped_at: cache_dropped_at.map(Duration::from_nanos),
            abandoned,
            verify: verify.as_ref().map(|v| v.counts()),
            steady,
            latency_target: latency_target.as_ref().map(|t| t.report()),
            intervals,
        };
        // The final figures first, then "finished": whoever sees the job
        // finished finds them.
        progress.put_outcome(outcome.clone());
        progress.finish();
        outcome
    }
}

/// fio's seed of random offsets (`FIO_RAND_BLOCK_OFF`) for job `number`.
/// From fio 3.35 it comes from `randseed` like every other seed (unless
/// `randrepeat=0` without a `randseed`: then `fresh`). Before, `randrepeat`
/// made it `FIO_RANDSEED` times the job's number, whatever `randseed` said:
/// fio seeds a job before a given `randseed` turns `randrepeat` off.
fn fio_block_seed(options: &JobOptions, number: usize, fresh: u64) -> u64 {
    use crate::fio_rand::{BLOCK_SEED, REPEATABLE_SEED, job_seeds};
    if !options.fio_compat.offsets_from_randseed() && options.randrepeat {
        REPEATABLE_SEED.wrapping_mul(number as u64)
    } else if options.seeded_from_randseed() {
        job_seeds(options.randseed, number as u64)[BLOCK_SEED]
    } else {
        fresh
    }
}

/// Which of fio's generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Generator {
    /// Random offsets.
    Offsets,
    /// A mixed job's directions.
    Mix,
    /// `file_service_type=random`'s files.
    Files,
    /// Varying block sizes of a direction (0 reads, 1 writes, 2 trims).
    Sizes(usize),
    /// A zoned distribution's zones.
    Zones,
}

/// The seeds of fio's Zipf, Pareto and normal generators, one per file:
/// fio's `jhash` of the file's name times the job's number, times the
/// job's block seed from fio 3.35; before, the block seed alone for an
/// unrepeatable job.
fn distribution_seeds(
    options: &JobOptions,
    files: &[(FileHandle, PathBuf)],
    number: usize,
    fresh: u64,
) -> Vec<u32> {
    let block_seed = fio_block_seed(options, number, fresh);
    files
        .iter()
        .map(|(_, path)| {
            // fio's name of the file: as given, or in the directory given.
            let name = path.to_string_lossy();
            let name = name.strip_prefix("./").unwrap_or(&name);
            let by_name = crate::fio_rand::jhash(name.as_bytes(), 0).wrapping_mul(number as u32);
            if options.fio_compat.offsets_from_randseed() {
                by_name.wrapping_mul(block_seed as u32)
            } else if options.randrepeat && !options.randseed_given {
                by_name
            } else {
                block_seed as u32
            }
        })
        .collect()
}

/// One of fio's generators for job `number` (from 1), seeded as the fio of
/// `fio_compat` seeds it. The seeds come from `randseed` (its default too)
/// unless `randrepeat=0` leaves it unset: then from `fresh`, different every
/// run. Offsets are seeded as [`fio_block_seed`] says. Directions are drawn
/// 32-bit.
fn fio_generator(
    options: &JobOptions,
    number: usize,
    fresh: u64,
    which: Generator,
) -> crate::fio_rand::FioRand {
    use crate::fio_rand::{FILE_SEED, FioRand, MIX_SEED, ZONE_SEED, job_seeds};
    let seeds = options
        .seeded_from_randseed()
        .then(|| job_seeds(options.randseed, number as u64));
    match which {
        Generator::Offsets => FioRand::new(
            fio_block_seed(options, number, fresh),
            options.random_generator64,
        ),
        Generator::Mix => FioRand::new(seeds.map_or(fresh ^ 0x6d69, |s| s[MIX_SEED]), false),
        Generator::Files => FioRand::new(
            seeds.map_or(fresh ^ 0x66, |s| s[FILE_SEED]),
            options.random_generator64,
        ),
        Generator::Zones => FioRand::new(seeds.map_or(fresh ^ 0x7a6f, |s| s[ZONE_SEED]), false),
        Generator::Sizes(dir) => {
            // As fio: a verifying job's writes draw as its reads, and a
            // trimwrite's trims as its writes (the same sizes either way).
            let dir = if dir == 2 && options.rw.writes_after_trim() {
                1
            } else {
                dir
            };
            let dir = if dir == 1 && options.verify.kind.is_some() {
                0
            } else {
                dir
            };
            FioRand::new(
                seeds.map_or(fresh ^ (0x6273 + dir as u64), |s| s[dir]),
                options.random_generator64,
            )
        }
    }
}

/// Sets up a network job before the run starts: checks its options, binds
/// (or resolves) its socket, and asks the engine whether it takes sockets
/// at all (Linux AIO does not), so that a job that cannot run says so
/// before any job starts.
fn prepare_network(
    options: &JobOptions,
    protocol: crate::options::Protocol,
    engine: &mut dyn Engine,
) -> Result<crate::net::Endpoint, RunError> {
    let net_error = |source| RunError::Net {
        job: options.name.clone(),
        source,
    };
    let endpoint = crate::net::Endpoint::prepare(options, protocol).map_err(net_error)?;
    let probe = endpoint.guard_handle().map_err(|source| {
        net_error(crate::net::NetError::Socket {
            op: "duplicate the socket of",
            target: endpoint.name(),
            source,
        })
    })?;
    let handle = engine
        .add_socket(std::os::fd::OwnedFd::from(probe), &endpoint.name())
        .map_err(|source| RunError::Engine {
            job: options.name.clone(),
            source,
        })?;
    let _ = engine.remove_file(handle);
    Ok(endpoint)
}

/// How long a job may go without a completion, its reaps coming back at
/// once with nothing (a wait in the kernel counts as progress), before it
/// ends with the engine's state in its error.
const STALL_LIMIT_NS: u64 = 2_000_000_000;
