//! What the models share: the engine stacks they drive, the files those
//! read and write (and the caller's own memory mirroring each), and how a
//! run is seeded and sized.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use tempfile::TempDir;

use super::scripted::{Script, ScriptedAsync, ScriptedInline, byte_at};
use crate::buf::Buf;
use crate::buf::caller::Caller as CallerMemory;
use crate::engine::adaptive::ForcedPath;
use crate::engine::{Engine, EngineConfig};
use crate::file::{FileHandle, OpenOptions};

/// Size of every model file.
pub(super) const FILE_SIZE: u64 = 64 * 1024;
/// Seed of the CI runs; `HYBRIO_MODEL_SEED` picks another (`random`: a fresh one).
const CI_SEED: u64 = 20;

/// The stack under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stack {
    /// The adaptive engine over two asynchronous engines (and a scripted
    /// inline one); else one engine under the resubmission and injection
    /// layers, as every other engine is stacked.
    pub(super) adaptive: bool,
    pub(super) bottom: Bottom,
}

/// The engines at the bottom of a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bottom {
    /// Scripted engines.
    Scripted,
    /// A real SQPOLL ring whose thread publishes its SQ head late (under
    /// the adaptive engine: for buffered files, a scripted engine for
    /// `O_DIRECT` ones).
    SqpollRing,
    /// The real worker pool (under the adaptive engine: the pool, and real
    /// libaio for `O_DIRECT` files, as where the kernel refuses io_uring).
    Pool,
    /// Real libaio (plain stack only).
    Libaio,
}

/// A model file: its bytes are [`byte_at`]`(salt, offset)`.
#[derive(Debug)]
pub(super) struct ModelFile {
    pub(super) path: PathBuf,
    pub(super) salt: u8,
    pub(super) direct: bool,
}

/// The files every run uses: two buffered, one `O_DIRECT` where the
/// filesystem allows it; and for each, the caller's own memory holding the
/// same bytes, from which writes of the file's own bytes may come (many at
/// once, as a C program writes one pattern buffer over and over).
pub(super) struct Files {
    _dir: TempDir,
    pub(super) files: Vec<ModelFile>,
    pub(super) direct_supported: bool,
    /// Page-aligned, as `O_DIRECT` needs. It outlives every engine of the
    /// run (each dropped, after its requests, within its case).
    mirrors: Vec<CallerMemory>,
}

impl Files {
    pub(super) fn new() -> Files {
        let dir = crate::engine::testkit::scratch();
        let direct_supported = crate::probe::o_direct_supported(dir.path());
        let mut mirrors = Vec::new();
        let files = (0..3u8)
            .map(|salt| {
                let direct = salt == 2;
                let name = format!("{}{salt}", if direct { 'd' } else { 'f' });
                let path = dir.path().join(name);
                let bytes: Vec<u8> = (0..FILE_SIZE).map(|at| byte_at(salt, at)).collect();
                std::fs::write(&path, &bytes).unwrap();
                let mirror = CallerMemory::new(bytes.len());
                mirror.buf().as_mut_slice().copy_from_slice(&bytes);
                mirrors.push(mirror);
                ModelFile { path, salt, direct }
            })
            .collect();
        Files {
            _dir: dir,
            files,
            direct_supported,
            mirrors,
        }
    }

    /// A window of `len` bytes at `offset` of file `file`'s mirror: the
    /// file's own bytes there, in memory other requests may share.
    pub(super) fn mirror(&self, file: usize, offset: u64, len: usize) -> Buf {
        let mut buf = self.mirrors[file].buf();
        buf.advance(offset as usize);
        buf.set_len(len);
        buf
    }
}

/// A stack as a case asks for it.
pub(super) struct Built {
    pub(super) engine: Box<dyn Engine>,
    /// The adaptive engine's path for the next request.
    pub(super) forced: Option<ForcedPath>,
    /// The adaptive engine's virtual clock.
    pub(super) clock: Arc<AtomicU64>,
    /// Each model file's handle, salt and whether it is `O_DIRECT`.
    pub(super) handles: Vec<(FileHandle, u8, bool)>,
}

/// A fault plan: 0, none; 1, light; 2, heavy, with `EIO` and delays.
pub(super) fn fault_plan(faults: u8, seed: u64) -> Option<crate::engine::inject::FaultPlan> {
    match faults {
        0 => None,
        1 => Some(format!("short:0.1,eagain:0.1,seed:{seed}")),
        _ => Some(format!(
            "short:0.2,eagain:0.1,eio:0.02,delay:0.05@20us,seed:{seed}"
        )),
    }
    .map(|plan| plan.parse().unwrap())
}

/// `stack` at `depth` with `faults` (see [`fault_plan`]), its scripted
/// engines reading `script`, the model files added; `None` when the system
/// refuses its bottom.
pub(super) fn build(
    stack: Stack,
    depth: u32,
    faults: u8,
    fault_seed: u64,
    script: &Arc<Script>,
    files: &Files,
) -> Option<Built> {
    let mut config = EngineConfig::with_depth(depth);
    config.inject = fault_plan(faults, fault_seed);
    let clock = Arc::new(AtomicU64::new(1));
    let scripted = || ScriptedAsync::new(script.clone(), depth as usize);
    let ring = || {
        let mut ring_config = config.clone();
        ring_config.sq_thread_poll = true;
        let mut ring = crate::engine::io_uring::IoUringEngine::new(&ring_config, None).ok()?;
        ring.publish_sq_head_late();
        Some(ring)
    };
    let pool = || crate::engine::pool::PoolEngine::new(&config).ok();
    let libaio = || crate::engine::libaio::LibaioEngine::new(&config).ok();
    let (mut engine, forced) = if stack.adaptive {
        let backends: Vec<Box<dyn Engine>> = match stack.bottom {
            Bottom::Scripted => vec![Box::new(scripted()), Box::new(scripted())],
            Bottom::SqpollRing => vec![Box::new(ring()?), Box::new(scripted())],
            Bottom::Pool | Bottom::Libaio => vec![Box::new(pool()?), Box::new(libaio()?)],
        };
        let (adaptive, forced) = crate::engine::adaptive::with_engines_for_tests(
            ScriptedInline::new(script.clone()),
            backends,
            &config,
            clock.clone(),
        );
        (Box::new(adaptive) as Box<dyn Engine>, Some(forced))
    } else {
        // As `engine::open` makes them: each applies the retry rule, and
        // injects the faults, itself (the scripted engine's faults are its
        // script's).
        let engine: Box<dyn Engine> = match stack.bottom {
            Bottom::Scripted => Box::new(scripted()),
            Bottom::SqpollRing => Box::new(ring()?),
            Bottom::Pool => Box::new(pool()?),
            Bottom::Libaio => Box::new(libaio()?),
        };
        (engine, None)
    };
    let handles = add_files(engine.as_mut(), files);
    Some(Built {
        engine,
        forced,
        clock,
        handles,
    })
}

/// Adds the model files to `engine`: each one's handle, salt and whether
/// it is `O_DIRECT`.
pub(super) fn add_files(engine: &mut dyn Engine, files: &Files) -> Vec<(FileHandle, u8, bool)> {
    let mut handles = Vec::new();
    for file in &files.files {
        let direct = file.direct && files.direct_supported;
        let options = OpenOptions {
            read: true,
            write: true,
            create: false,
            direct,
            ..Default::default()
        };
        let opened: File = crate::file::open(&file.path, &options).unwrap();
        let handle = engine.add_file(opened, file.path.clone()).unwrap();
        handles.push((handle, file.salt, file.direct));
    }
    handles
}

/// The seed of this run: `HYBRIO_MODEL_SEED` (a number, or `random`), else [`CI_SEED`].
pub(super) fn seed() -> RngSeed {
    match std::env::var("HYBRIO_MODEL_SEED").as_deref() {
        Ok("random") => RngSeed::Random,
        Ok(number) => RngSeed::Fixed(
            number
                .parse()
                .expect("HYBRIO_MODEL_SEED: a number or random"),
        ),
        Err(_) => RngSeed::Fixed(CI_SEED),
    }
}

/// `cases`, unless `HYBRIO_MODEL_CASES` says otherwise.
pub(super) fn cases(cases: u32) -> u32 {
    std::env::var("HYBRIO_MODEL_CASES")
        .ok()
        .map_or(cases, |n| n.parse().expect("HYBRIO_MODEL_CASES: a number"))
}

/// Runs `model` on each stack for its count of cases, every one even
/// when an earlier one fails, so that a failure names every stack that
/// catches it (each one's report is printed as it fails).
pub(super) fn on_each(stacks: impl IntoIterator<Item = (Stack, u32)>, model: fn(Stack, u32)) {
    let failed: Vec<Stack> = stacks
        .into_iter()
        .filter(|&(stack, cases)| std::panic::catch_unwind(|| model(stack, cases)).is_err())
        .map(|(stack, _)| stack)
        .collect();
    assert!(failed.is_empty(), "the model failed on {failed:?}");
}

/// Runs `run_case` on `cases` cases drawn from `strategy` (each count
/// `HYBRIO_MODEL_CASES` overrides, from the run's [`seed`]), on one set of
/// files, counting into one tally; prints what the cases reached, or panics
/// with the broken invariant and the case shrunk, each under `name`.
pub(super) fn run<S, T>(
    name: &str,
    cases: u32,
    strategy: &S,
    run_case: impl Fn(&S::Value, &Files, &T) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: std::fmt::Debug,
    T: Default + std::fmt::Display,
{
    let cases = self::cases(cases);
    let seed = seed();
    let files = Files::new();
    if !files.direct_supported {
        eprintln!("{name}: no O_DIRECT in the scratch directory: the O_DIRECT file is buffered");
    }
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        rng_seed: seed,
        // Proptest's own limit is 4 tries a case: a failure found in a
        // run of 32 cases on a real engine would stay 100 steps long.
        max_shrink_iters: cases.max(4096),
        ..Config::default()
    });
    let started = std::time::Instant::now();
    let tally = T::default();
    match runner.run(strategy, |case| run_case(&case, &files, &tally)) {
        Ok(()) => eprintln!(
            "{name}: {cases} cases passed in {:?} (seed {seed:?}): {tally}",
            started.elapsed()
        ),
        Err(TestError::Fail(reason, case)) => {
            panic!("{name} (seed {seed:?}): {reason}\nshrunk to: {case:?}")
        }
        Err(TestError::Abort(reason)) => panic!("{name} aborted: {reason}"),
    }
}

/// A count of what a model's runs did, shared by the runner's cases.
#[derive(Debug, Default)]
pub(super) struct Count(AtomicU64);

impl Count {
    pub(super) fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn add_if(&self, yes: bool) {
        if yes {
            self.add();
        }
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.load(Ordering::Relaxed))
    }
}
