//! fio's engines that do no I/O, run beside jobs that do: `cpuio` keeps a
//! share of a CPU busy (to see what I/O does on a loaded machine), `exec`
//! runs a program for the job's runtime (a monitor, a load generator). Their
//! report has no I/O; its CPU line says what the job used.

use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use hybrio::clock::Clock;

use super::errno::EIO;
use super::finish::{cpu_since, finish_without_engine};
use super::stop::JobStop;
use crate::options::{CpuMode, JobOptions, PseudoEngine};
use crate::outcome::{IoFailure, JobOutcome};
use crate::progress::Progress;
use crate::stats::JobStats;

/// How often a waiting job looks at its clock and its stop (fio's exec
/// engine sleeps 50 ms between looks).
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Integers fio's qsort mode sorts each round (256 Ki).
const QSORT_LEN: usize = 256 << 10;

/// A job of `cpuio` or `exec`, ready to run.
#[derive(Debug)]
pub struct PseudoJob {
    options: JobOptions,
    engine: PseudoEngine,
    stop: Option<JobStop>,
}

impl PseudoJob {
    /// The job of `options`, whose engine is `engine`.
    pub fn new(options: JobOptions, engine: PseudoEngine) -> PseudoJob {
        PseudoJob {
            options,
            engine,
            stop: None,
        }
    }

    /// What other jobs end it by (`exitall`).
    pub fn set_stop(&mut self, stop: JobStop) {
        self.stop = Some(stop);
    }

    fn stopping(&self) -> bool {
        hybrio::interrupt::requested() || self.stop.as_ref().is_some_and(JobStop::requested)
    }

    /// Runs the job to its end: its runtime, or its program's exit.
    pub fn run(self, progress: &Progress) -> JobOutcome {
        let usage_before = hybrio::rusage::thread_usage().ok();
        let started = SystemTime::now();
        let clock = Clock::new();
        let stats = JobStats::new(super::io_loop::stats_config(&self.options), 0);
        progress.publish(&stats, 0.0);
        let failure = match self.engine {
            PseudoEngine::Cpu => {
                self.burn(&clock);
                None
            }
            PseudoEngine::Exec => self.execute(progress, &stats).err(),
        };
        let mut stats = stats;
        stats.finish(
            Duration::from_nanos(clock.now()),
            cpu_since(usage_before.as_ref()),
        );
        // exec's one request is its program.
        let exec = self.engine == PseudoEngine::Exec;
        let requests = (u64::from(exec), u64::from(exec && failure.is_none()));
        let engine = self.options.ioengine.clone();
        finish_without_engine(progress, stats, started, engine, requests, failure)
    }

    /// `cpuio`: busy for a stretch, then asleep in proportion
    /// (`cpuload`), until the runtime is over.
    fn burn(&self, clock: &Clock) {
        let options = &self.options;
        let end = options.runtime.map_or(u64::MAX, |r| r.as_nanos() as u64);
        let load = u64::from(options.pseudo.cpu_load.clamp(1, 100));
        let mut data = match options.pseudo.cpu_mode {
            CpuMode::Qsort => qsort_data(),
            CpuMode::Noop => Vec::new(),
        };
        while clock.now() < end && !self.stopping() {
            let busy_from = clock.now();
            match options.pseudo.cpu_mode {
                CpuMode::Noop => {
                    let until = busy_from + options.pseudo.cpu_chunk_us * 1000;
                    while clock.now() < until {
                        std::hint::spin_loop();
                    }
                }
                CpuMode::Qsort => sort_four_ways(&mut data),
            }
            // As fio: the rest of each cycle asleep, so that busy is
            // `cpuload` percent of it (qsort's stretch is what it took).
            let busy = clock.now() - busy_from;
            let idle = busy * (100 - load) / load;
            let idle = idle.min(end.saturating_sub(clock.now()));
            std::thread::sleep(Duration::from_nanos(idle));
        }
    }

    /// `exec`: starts the program, then ends it at the end of the runtime
    /// (SIGTERM, and SIGKILL after `grace_time`), or waits for it to exit.
    fn execute(&self, progress: &Progress, stats: &JobStats) -> Result<(), IoFailure> {
        let options = &self.options;
        let pseudo = &options.pseudo;
        let program = pseudo.program.as_deref().unwrap_or_default();
        let runtime = options.runtime.unwrap_or_default();
        let arguments = pseudo
            .arguments
            .as_deref()
            .unwrap_or_default()
            .replace("%r", &runtime.as_secs().to_string())
            .replace("%n", &options.name);
        let mut command = Command::new(program);
        command.args(arguments.split(' ').filter(|a| !a.is_empty()));
        command.stdin(Stdio::null());
        let failed = |what: &str, e: std::io::Error| IoFailure {
            errno: e.raw_os_error().unwrap_or(EIO),
            message: format!("{what}: {e}"),
        };
        if pseudo.redirect {
            let out = format!("{}.stdout", options.name);
            let err = format!("{}.stderr", options.name);
            command.stdout(File::create(&out).map_err(|e| failed(&format!("create {out}"), e))?);
            command.stderr(File::create(&err).map_err(|e| failed(&format!("create {err}"), e))?);
        }
        let mut child = command
            .spawn()
            .map_err(|e| failed(&format!("run {program}"), e))?;
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().map_err(|e| failed("wait", e))? {
                return exited(program, status);
            }
            let over = options.runtime.is_some() && started.elapsed() >= runtime;
            if over || self.stopping() {
                return self.end(&mut child, program);
            }
            let done = if runtime.is_zero() {
                0.0
            } else {
                started.elapsed().as_secs_f64() / runtime.as_secs_f64()
            };
            progress.publish(stats, done.min(1.0));
            std::thread::sleep(LOOK_EVERY);
        }
    }

    /// The runtime is over: SIGTERM, then SIGKILL after the grace time.
    /// A program that ends on its signal ended as asked.
    fn end(&self, child: &mut Child, program: &str) -> Result<(), IoFailure> {
        let pid = rustix::process::Pid::from_raw(child.id() as i32);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let grace = Instant::now() + Duration::from_secs(self.options.pseudo.grace_s);
        while Instant::now() < grace {
            if let Ok(Some(_)) = child.try_wait() {
                return Ok(());
            }
            std::thread::sleep(LOOK_EVERY.min(grace - Instant::now()));
        }
        let _ = child.kill();
        child.wait().map(|_| ()).map_err(|e| IoFailure {
            errno: e.raw_os_error().unwrap_or(EIO),
            message: format!("wait for {program}: {e}"),
        })
    }
}

/// A program that exited on its own before the runtime was over ends its
/// job, as fio's exec engine lets it; a failure is said on stderr (fio's
/// says nothing), the job's own outcome unchanged.
fn exited(program: &str, status: std::process::ExitStatus) -> Result<(), IoFailure> {
    if !status.success() {
        eprintln!("hybrio: {program} exited before its runtime was over: {status}");
    }
    Ok(())
}

/// fio's qsort data: 256 Ki integers from its multiply-with-carry generator.
fn qsort_data() -> Vec<i32> {
    let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
    (0..QSORT_LEN)
        .map(|_| {
            z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
            w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
            (z << 16).wrapping_add(w) as i32
        })
        .collect()
}

/// One busy stretch of fio's qsort mode: sorted, reversed, its bytes
/// sorted, and reversed again.
fn sort_four_ways(data: &mut [i32]) {
    data.sort_unstable();
    data.sort_unstable_by(|a, b| b.cmp(a));
    let mut bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
    bytes.sort_unstable_by_key(|&b| b as i8);
    for (v, b) in data.iter_mut().zip(bytes.chunks_exact(4)) {
        *v = i32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    }
    data.sort_unstable_by(|a, b| b.cmp(a));
}
