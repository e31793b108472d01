//! The adaptive engine's tests. Most drive the policy through the engine
//! by synthetic engines whose costs the tests set, on a clock the tests
//! move: every figure is exact, so the checks are about decisions, never
//! about timing. This file is their rig; what the engine learns is in
//! `learning`, its held completions in `held`, and the engine over real
//! asynchronous engines in `backends`.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::backend::AsyncEngine;
use super::priors::Priors;
use super::state::*;
use super::*;
use crate::buf::{Buf, BufPool};
use crate::clock::Clock;
use crate::engine::AdaptiveMemory;
use crate::engine::PathCounts;
use crate::engine::psync::PsyncEngine;
use crate::engine::testkit;

mod backends;
mod held;
mod learning;

/// The shared virtual clock, in nanoseconds.
type Ticks = Arc<AtomicU64>;

fn advance(clock: &Ticks, ns: u64) {
    clock.fetch_add(ns, Ordering::Relaxed);
}

fn now(clock: &Ticks) -> u64 {
    clock.load(Ordering::Relaxed)
}

/// Costs a test sets, and may change mid-run.
#[derive(Debug, Default)]
struct Costs {
    /// An inline request blocks the caller this long.
    inline_ns: AtomicU64,
    /// The caller's CPU per asynchronous request, at commit (a kernel doing
    /// page-cache copies inside the submit call).
    async_cpu_ns: AtomicU64,
    /// Then the request takes this long on the device.
    async_latency_ns: AtomicU64,
    /// How many requests the device serves at once (0: any number).
    async_parallelism: AtomicU64,
    /// Writes cost apart ([`Costs::set_writes`]).
    writes_apart: AtomicBool,
    write_inline_ns: AtomicU64,
    write_async_cpu_ns: AtomicU64,
    /// Asynchronous writes go to a worker of their own, one at a time, each
    /// taking this long.
    write_async_latency_ns: AtomicU64,
}

impl Costs {
    fn set(&self, inline: u64, cpu: u64, latency: u64, parallelism: u64) {
        self.inline_ns.store(inline, Ordering::Relaxed);
        self.async_cpu_ns.store(cpu, Ordering::Relaxed);
        self.async_latency_ns.store(latency, Ordering::Relaxed);
        self.async_parallelism.store(parallelism, Ordering::Relaxed);
    }

    /// Writes cost apart from reads: inline, the caller's CPU at commit, and
    /// the time on a worker that takes them one at a time (ext4's buffered
    /// writes through io_uring: one kernel worker per inode).
    fn set_writes(&self, inline: u64, cpu: u64, latency: u64) {
        self.write_inline_ns.store(inline, Ordering::Relaxed);
        self.write_async_cpu_ns.store(cpu, Ordering::Relaxed);
        self.write_async_latency_ns
            .store(latency, Ordering::Relaxed);
        self.writes_apart.store(true, Ordering::Relaxed);
    }

    fn apart(&self, request: &Request) -> bool {
        request.op == Op::Write && self.writes_apart.load(Ordering::Relaxed)
    }
}

/// Completes every request in `queue`, after moving the clock by its cost.
#[derive(Debug)]
struct SyntheticInline {
    clock: Ticks,
    costs: Arc<Costs>,
    files: u32,
}

impl Engine for SyntheticInline {
    fn kind(&self) -> EngineKind {
        EngineKind::Psync
    }
    fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, Error> {
        self.files += 1;
        Ok(FileHandle(self.files - 1))
    }
    fn remove_file(&mut self, _handle: FileHandle) -> Result<File, Error> {
        unreachable!("the tests remove no file")
    }
    fn queue(&mut self, mut request: Request) -> QueueOutcome {
        let result = self.run_in_place(&mut request);
        QueueOutcome::Completed(request.complete(result))
    }
    fn commit(&mut self) -> Result<usize, Error> {
        Ok(0)
    }
    fn reap(&mut self, _: usize, _: usize, _: &mut Vec<Completion>) -> Result<usize, Error> {
        Ok(0)
    }
    fn in_flight(&self) -> usize {
        0
    }
    fn is_synchronous(&self) -> bool {
        true
    }
}

impl crate::engine::alias::SharesFiles for SyntheticInline {}

impl InlinePath for SyntheticInline {
    fn run_in_place(&mut self, request: &mut Request) -> i64 {
        let cost = if self.costs.apart(request) {
            &self.costs.write_inline_ns
        } else {
            &self.costs.inline_ns
        };
        advance(&self.clock, cost.load(Ordering::Relaxed));
        request.len() as i64
    }
}

/// A device behind a queue: commit charges the caller's CPU, the device
/// serves `parallelism` requests at a time, reap waits (moves the clock) for
/// the completions it needs.
#[derive(Debug)]
struct SyntheticAsync {
    clock: Ticks,
    costs: Arc<Costs>,
    queued: Vec<Request>,
    /// (done at, request), in no order.
    on_device: Vec<(u64, Request)>,
    /// When each of the device's servers is next free.
    servers: Vec<u64>,
    /// When the writes' worker is next free (with [`Costs::set_writes`]).
    write_worker: u64,
    /// One more than the highest handle added.
    files: u32,
}

/// Takes the caller's handles, as the real engines do; counts them.
impl crate::engine::alias::SharesFiles for SyntheticAsync {
    fn add_alias(
        &mut self,
        at: FileHandle,
        _file: &File,
        _path: &std::path::Path,
        _direct: bool,
    ) -> Result<(), Error> {
        self.files = self.files.max(at.0 + 1);
        Ok(())
    }
}
impl AsyncBackend for SyntheticAsync {}

impl Engine for SyntheticAsync {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUring
    }
    fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, Error> {
        // Boxed, the adaptive engine's aliases come this way.
        self.files += 1;
        Ok(FileHandle(self.files - 1))
    }
    fn remove_file(&mut self, _handle: FileHandle) -> Result<File, Error> {
        unreachable!("the tests remove no file")
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        assert!(
            request.file.0 < self.files,
            "a handle the caller added, not {:?}",
            request.file
        );
        self.queued.push(request);
        QueueOutcome::Queued
    }
    fn commit(&mut self) -> Result<usize, Error> {
        let n = self.queued.len();
        let latency = self.costs.async_latency_ns.load(Ordering::Relaxed);
        let parallelism = self.costs.async_parallelism.load(Ordering::Relaxed) as usize;
        for request in self.queued.drain(..) {
            if self.costs.apart(&request) {
                advance(
                    &self.clock,
                    self.costs.write_async_cpu_ns.load(Ordering::Relaxed),
                );
                let latency = self.costs.write_async_latency_ns.load(Ordering::Relaxed);
                let start = self.write_worker.max(now(&self.clock));
                self.write_worker = start + latency;
                self.on_device.push((start + latency, request));
                continue;
            }
            advance(&self.clock, self.costs.async_cpu_ns.load(Ordering::Relaxed));
            let start = if parallelism == 0 {
                now(&self.clock)
            } else {
                self.servers.resize(parallelism, 0);
                let server = (0..parallelism)
                    .min_by_key(|&i| self.servers[i])
                    .expect("a server");
                let start = self.servers[server].max(now(&self.clock));
                self.servers[server] = start + latency;
                start
            };
            self.on_device.push((start + latency, request));
        }
        Ok(n)
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        self.on_device.sort_by_key(|(at, _)| *at);
        let min = min.min(self.on_device.len());
        if min > 0 {
            let needed = self.on_device[min - 1].0;
            if needed > now(&self.clock) {
                self.clock.store(needed, Ordering::Relaxed);
            }
        }
        let t = now(&self.clock);
        let ready = self.on_device.iter().take_while(|(at, _)| *at <= t).count();
        let n = ready.min(max);
        for (_, request) in self.on_device.drain(..n) {
            let len = request.len() as i64;
            out.push(request.complete(len));
        }
        Ok(n)
    }
    fn in_flight(&self) -> usize {
        self.queued.len() + self.on_device.len()
    }
    fn is_synchronous(&self) -> bool {
        false
    }
}

/// A caller keeping `depth` requests outstanding, as the benchmark does:
/// queue while it can, commit each, reap one when full.
struct Caller {
    engine: Box<dyn Engine>,
    clock: Ticks,
    depth: usize,
    handle: FileHandle,
    buffers: Vec<Buf>,
    outstanding: usize,
    spare: Option<Buf>,
    done: Vec<Completion>,
    /// The caller's own time per request.
    own_ns: u64,
    _pool: BufPool,
    _dir: tempfile::TempDir,
}

impl Caller {
    fn new(engine: Box<dyn Engine>, clock: Ticks, depth: usize) -> Caller {
        Caller::opening(
            engine,
            clock,
            depth,
            testkit::scratch(),
            &testkit::read_write(),
        )
    }

    /// A caller whose file (in `dir`) is opened with `options`.
    fn opening(
        engine: Box<dyn Engine>,
        clock: Ticks,
        depth: usize,
        dir: tempfile::TempDir,
        options: &crate::file::OpenOptions,
    ) -> Caller {
        let (path, _) = testkit::data_file(dir.path(), "data", 4096);
        let mut engine = engine;
        let handle = testkit::add(engine.as_mut(), &path, options);
        let pool = BufPool::new(depth + 1, 4096).unwrap();
        let buffers = (0..depth).map(|_| testkit::take(&pool, 4096)).collect();
        let spare = Some(testkit::take(&pool, 4096));
        Caller {
            engine,
            clock,
            depth,
            handle,
            buffers,
            outstanding: 0,
            spare,
            done: Vec::new(),
            own_ns: 100,
            _pool: pool,
            _dir: dir,
        }
    }

    /// Completes `n` requests; returns the virtual time they took.
    fn run(&mut self, n: usize) -> u64 {
        let start = now(&self.clock);
        let mut completed = 0;
        while completed < n {
            if self.outstanding < self.depth
                && let Some(buf) = self.buffers.pop()
            {
                advance(&self.clock, self.own_ns);
                match self.engine.queue(Request::read(self.handle, 0, buf, 7)) {
                    QueueOutcome::Completed(done) => {
                        assert_eq!(done.result, 4096);
                        self.buffers.push(done.buf);
                        completed += 1;
                        continue;
                    }
                    QueueOutcome::Queued => {
                        self.outstanding += 1;
                        self.engine.commit().unwrap();
                        continue;
                    }
                    QueueOutcome::Busy(back) => {
                        // Held completions to collect first: reap, as the benchmark does.
                        assert!(self.outstanding > 0, "busy with nothing outstanding");
                        self.buffers.push(back.buf);
                    }
                }
            }
            self.done.clear();
            let n = self.engine.reap(1, self.depth, &mut self.done).unwrap();
            assert!(n >= 1, "a full caller's reap waits for one");
            for done in self.done.drain(..) {
                assert_eq!(
                    (done.result, done.user_data, done.file),
                    (4096, 7, self.handle)
                );
                self.buffers.push(done.buf);
                self.outstanding -= 1;
                completed += 1;
            }
        }
        now(&self.clock) - start
    }

    /// Reaps everything outstanding.
    fn drain(&mut self) {
        while self.outstanding > 0 {
            self.done.clear();
            self.engine.reap(1, self.depth, &mut self.done).unwrap();
            for done in self.done.drain(..) {
                self.buffers.push(done.buf);
                self.outstanding -= 1;
            }
        }
    }

    fn paths(&self) -> PathCounts {
        self.engine.counters().paths.unwrap_or_default()
    }
}

struct Rig {
    clock: Ticks,
    /// How often the adaptive engines of the rig read the clock.
    clock_reads: Arc<AtomicU64>,
    costs: Arc<Costs>,
}

impl Rig {
    fn new(inline: u64, cpu: u64, latency: u64, parallelism: u64) -> Rig {
        let costs = Arc::new(Costs::default());
        costs.set(inline, cpu, latency, parallelism);
        Rig {
            clock: Arc::new(AtomicU64::new(1)),
            clock_reads: Arc::default(),
            costs,
        }
    }

    fn inline_engine(&self) -> SyntheticInline {
        SyntheticInline {
            clock: self.clock.clone(),
            costs: self.costs.clone(),
            files: 0,
        }
    }

    fn async_engine(&self) -> SyntheticAsync {
        SyntheticAsync {
            clock: self.clock.clone(),
            costs: self.costs.clone(),
            queued: Vec::new(),
            on_device: Vec::new(),
            servers: Vec::new(),
            write_worker: 0,
            files: 0,
        }
    }

    fn adaptive(&self, depth: u32) -> Caller {
        self.adaptive_with(depth, Priors::default())
    }

    /// An adaptive engine whose classes start from `priors`, and leave
    /// what they learn there.
    fn adaptive_with(&self, depth: u32, priors: Priors) -> Caller {
        let engine = self.adaptive_engine(depth, priors);
        Caller::new(Box::new(engine), self.clock.clone(), depth as usize)
    }

    /// The adaptive engine over the rig's synthetic engines and clock.
    fn adaptive_engine(
        &self,
        depth: u32,
        priors: Priors,
    ) -> AdaptiveEngine<SyntheticInline, SyntheticAsync> {
        AdaptiveEngine::with_priors(
            self.inline_engine(),
            vec![self.async_engine()],
            &EngineConfig::with_depth(depth),
            Time::Virtual {
                ns: self.clock.clone(),
                reads: self.clock_reads.clone(),
            },
            priors,
        )
    }

    /// Virtual time for `n` requests on each static engine alone.
    fn static_times(&self, depth: usize, n: usize) -> (u64, u64) {
        let mut inline = Caller::new(Box::new(self.inline_engine()), self.clock.clone(), depth);
        let mut asynchronous =
            Caller::new(Box::new(self.async_engine()), self.clock.clone(), depth);
        (inline.run(n), asynchronous.run(n))
    }
}

/// Share of the requests between two counts that went asynchronous.
fn async_share(before: PathCounts, after: PathCounts) -> f64 {
    let inline = after.inline - before.inline;
    let asynchronous = after.asynchronous - before.asynchronous;
    asynchronous as f64 / (inline + asynchronous).max(1) as f64
}

/// Checks that adaptive settles on the cheaper path, and that once settled
/// it takes at most 3% longer than the best static engine.
fn converges(rig: &Rig, depth: u32, expect: Path) {
    let n = 20_000;
    let (inline_ns, async_ns) = rig.static_times(depth as usize, n);
    let best = inline_ns.min(async_ns);
    assert_eq!(
        expect == Path::Inline,
        inline_ns < async_ns,
        "the rig's cheaper path: inline {inline_ns} ns, async {async_ns} ns"
    );
    let mut caller = rig.adaptive(depth);
    caller.run(1_000);
    let settled = caller.paths();
    let took = caller.run(n);
    let share = async_share(settled, caller.paths());
    // The class's first explorations (while it learns) come back sooner
    // than the regular ones: up to 2-3% of these requests go the other way.
    match expect {
        Path::Inline => assert!(share < 0.03, "{share:.3} asynchronous"),
        Path::Async => assert!(share > 0.97, "{share:.3} asynchronous"),
    }
    let ratio = took as f64 / best as f64;
    assert!(
        ratio < 1.03,
        "adaptive took {ratio:.3}x the best static engine (inline {inline_ns}, async {async_ns}, adaptive {took})"
    );
}

/// A buffer beyond the caller's depth (it has one spare).
fn back_buffer(caller: &mut Caller) -> Buf {
    caller.spare.take().expect("one spare buffer")
}
