//! The policy driven through the engine by synthetic engines whose costs
//! the tests set, on a clock the tests move: every figure is exact, so
//! the checks are about decisions, never about timing.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::asynchronous::IoUringOrLibaio;
use super::*;
use crate::buf::{Buf, BufPool};
use crate::engine::AdaptiveMemory;
use crate::engine::psync::PsyncEngine;
use crate::engine::testkit;

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
    fn queue(&mut self, request: Request) -> QueueOutcome {
        let cost = if self.costs.apart(&request) {
            &self.costs.write_inline_ns
        } else {
            &self.costs.inline_ns
        };
        advance(&self.clock, cost.load(Ordering::Relaxed));
        let len = request.len() as i64;
        QueueOutcome::Completed(request.complete(len))
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
    /// Files added: their handles are 100, 101, ...
    files: u32,
}

impl AsyncBackend for SyntheticAsync {}

impl Engine for SyntheticAsync {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUring
    }
    fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, Error> {
        self.files += 1;
        Ok(FileHandle(99 + self.files))
    }
    fn remove_file(&mut self, _handle: FileHandle) -> Result<File, Error> {
        unreachable!("the tests remove no file")
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        assert!(
            (100..100 + self.files).contains(&request.file.0),
            "the backend's own handle, not {:?}",
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
                        self.buffers.push(done.buf.expect("the buffer comes back"));
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
                        self.buffers.push(back.buf.expect("the buffer comes back"));
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
                self.buffers.push(done.buf.expect("the buffer comes back"));
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
                self.buffers.push(done.buf.expect("the buffer comes back"));
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

#[test]
fn page_cache_hits_stay_inline_at_any_depth() {
    // io_uring copies a cached page inside the submit call: more CPU than pread.
    let rig = Rig::new(1_000, 1_300, 0, 0);
    converges(&rig, 1, Path::Inline);
    converges(&rig, 16, Path::Inline);
}

#[test]
fn writes_a_kernel_worker_serialises_stay_inline() {
    // ext4's buffered writes through io_uring: one worker per inode, 20 us each.
    let rig = Rig::new(6_000, 500, 20_000, 1);
    converges(&rig, 1, Path::Inline);
    converges(&rig, 4, Path::Inline);
}

#[test]
fn a_device_with_one_request_outstanding_goes_inline() {
    // seeds/003 at one request: the synchronous call saves the submit and reap.
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    converges(&rig, 1, Path::Inline);
}

#[test]
fn a_device_with_requests_to_overlap_goes_asynchronous() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    converges(&rig, 2, Path::Async);
    converges(&rig, 4, Path::Async);
    let rig = Rig::new(60_000, 1_000, 60_000, 8);
    converges(&rig, 32, Path::Async);
}

/// A copy through the caller's engine, as examples/copy.rs does it: each of
/// its buffers read, then written back, then read into again. Returns the
/// virtual time `pairs` reads and their writes took.
fn copy(caller: &mut Caller, pairs: usize) -> u64 {
    let start = now(&caller.clock);
    let handle = caller.handle;
    let (mut reads_left, mut written) = (pairs, 0);
    let mut to_write: Vec<Buf> = Vec::new();
    let mut done = Vec::new();
    while written < pairs {
        loop {
            let request = if let Some(buf) = to_write.pop() {
                Request::write(handle, 0, buf, 8)
            } else if reads_left > 0
                && let Some(buf) = caller.buffers.pop()
            {
                reads_left -= 1;
                Request::read(handle, 0, buf, 7)
            } else {
                break;
            };
            advance(&caller.clock, caller.own_ns);
            match caller.engine.queue(request) {
                QueueOutcome::Completed(completion) => done.push(completion),
                QueueOutcome::Queued => caller.outstanding += 1,
                QueueOutcome::Busy(back) => {
                    let buf = back.buf.expect("the buffer comes back");
                    if back.op == Op::Write {
                        to_write.push(buf);
                    } else {
                        reads_left += 1;
                        caller.buffers.push(buf);
                    }
                    break;
                }
            }
        }
        caller.engine.commit().unwrap();
        if done.is_empty() {
            let n = caller.engine.reap(1, caller.depth, &mut done).unwrap();
            assert!(n >= 1, "a reap with requests out waits for one");
            caller.outstanding -= n;
        }
        for completion in done.drain(..) {
            assert_eq!(completion.result, 4096);
            let buf = completion.buf.expect("the buffer comes back");
            match completion.op {
                Op::Read => to_write.push(buf),
                _ => {
                    caller.buffers.push(buf);
                    written += 1;
                }
            }
        }
    }
    now(&caller.clock) - start
}

#[test]
fn a_copy_hands_its_writes_to_a_worker_while_its_reads_run_inline() {
    // examples/copy.rs: page-cache reads (20 us inline, 60 us of the
    // caller's through the asynchronous engine) feeding buffered writes (25
    // us inline; asynchronous, a kernel worker takes them one at a time, 30
    // us each, while the caller reads on). Inline a pair takes 45 us, all
    // asynchronous 61; reads inline and writes on the worker, 30: better
    // than either static engine. Priced with the reads' time in it, an
    // asynchronous write looked like the whole pair (30 us), dearer than an
    // inline one, and the writes stayed inline.
    let rig = Rig::new(20_000, 60_000, 0, 0);
    rig.costs.set_writes(25_000, 1_000, 30_000);
    let depth = 4;
    let pairs = 10_000;
    let mut inline = Caller::new(Box::new(rig.inline_engine()), rig.clock.clone(), depth);
    let inline_ns = copy(&mut inline, pairs);
    let mut asynchronous = Caller::new(Box::new(rig.async_engine()), rig.clock.clone(), depth);
    let async_ns = copy(&mut asynchronous, pairs);
    assert!(
        inline_ns < async_ns,
        "the rig: inline {inline_ns} ns, async {async_ns} ns"
    );
    let mut adaptive = rig.adaptive(depth as u32);
    // The first explorations price both classes at once; the writes'
    // own come with the regular ones, after 500 epochs (16,000 requests).
    copy(&mut adaptive, 20_000);
    let before = adaptive.paths();
    let took = copy(&mut adaptive, pairs);
    let share = async_share(before, adaptive.paths());
    assert!(
        (0.45..0.55).contains(&share),
        "{share:.3} asynchronous: the writes, not the reads"
    );
    let ratio = took as f64 / inline_ns as f64;
    assert!(
        ratio < 0.75,
        "adaptive took {ratio:.3}x the best static engine, inline (async {async_ns}, adaptive {took})"
    );
}

#[test]
fn an_inline_look_back_beside_finished_asynchronous_requests_is_timed() {
    // Page-cache hits through io_uring at depth 20: done inside the submit,
    // reaped only when the caller's queue is full. Once the class is
    // asynchronous, its inline look-backs start with some of them out; they
    // contend with nothing, so the look-back's inline requests are timed
    // (left in the engine, they kept every one untimed, and the epoch was
    // priced by its time per request, holding and all).
    // Inline 700 ns, asynchronous 400 (of the caller's CPU at the submit),
    // the caller's own 100 ns on each: far enough apart for the class to go
    // asynchronous at once, near enough for its look-backs to run whole.
    let rig = Rig::new(700, 400, 0, 0);
    // (At depth 16 its look-backs start with some of them out; at 20 and
    // 32, in step with the timed requests' spacing, they started right
    // after a reap.)
    let engine = rig.adaptive_engine(16, Priors::default());
    let timed = engine.explored_inline_samples.clone();
    let mut caller = Caller::new(Box::new(engine), rig.clock.clone(), 16);
    // The class's first windows, inline, are no exploration: left out.
    caller.run(1_000);
    let (started, timed_then) = (caller.paths(), timed.load(Ordering::Relaxed));
    caller.run(49_000);
    let paths = caller.paths();
    assert!(
        paths.asynchronous > 45_000,
        "the rig's cheaper path is asynchronous: {paths:?}"
    );
    let looked_back = paths.inline - started.inline;
    assert!(looked_back > 32, "{looked_back} inline: no look-back ran");
    // Every one (untimed beside the finished requests, 13 of 160 were).
    let timed = timed.load(Ordering::Relaxed) - timed_then;
    assert!(
        timed >= looked_back,
        "{timed} of {looked_back} inline requests timed"
    );
}

#[test]
fn a_class_of_a_known_kind_makes_its_first_choice_without_exploring() {
    // A device overlapping requests at depth 4: the first engine learns that
    // its reads go asynchronous, in two explorations.
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let priors = Priors::default();
    let mut first = rig.adaptive_with(4, priors.clone());
    first.run(2_000);
    assert!(first.paths().explored > 0 && first.paths().switches == 1);
    // The next engine's reads of the same file (the same device, operation,
    // size and depth) go asynchronous from the first: no exploration, no
    // switch, no inline request.
    let mut next = rig.adaptive_with(4, priors.clone());
    next.run(200);
    let paths = next.paths();
    assert_eq!(
        (paths.inline, paths.explored, paths.switches),
        (0, 0, 0),
        "{paths:?}"
    );
    // At another depth the kind is another: it learns from nothing.
    let mut deeper = rig.adaptive_with(16, priors.clone());
    deeper.run(200);
    assert!(deeper.paths().inline > 0, "{:?}", deeper.paths());
    // A prior that no longer fits (the file's pages are cached now: inline
    // is 30 times cheaper) is followed away from as fast as any change.
    rig.costs.set(1_000, 1_300, 0, 0);
    let mut misled = rig.adaptive_with(4, priors);
    let followed = requests_to_follow(&mut misled, Path::Inline);
    assert!(
        followed <= 1024,
        "left a prior that no longer fits after {followed} requests"
    );
}

#[test]
fn what_an_engine_learned_is_saved_for_the_next_when_asked() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let dir = testkit::scratch();
    let path = dir.path().join("adaptive-memory");
    let config = EngineConfig {
        adaptive_memory: AdaptiveMemory::File(path.clone()),
        ..EngineConfig::with_depth(4)
    };
    let engine = |rig: &Rig| {
        let time = Time::Virtual {
            ns: rig.clock.clone(),
            reads: rig.clock_reads.clone(),
        };
        let engine = AdaptiveEngine::with_engines(
            rig.inline_engine(),
            vec![rig.async_engine()],
            &config,
            time,
        );
        Caller::new(Box::new(engine), rig.clock.clone(), 4)
    };
    let mut first = engine(&rig);
    first.run(2_000);
    assert_eq!(first.paths().switches, 1);
    drop(first);
    let saved = std::fs::read_to_string(&path).expect("saved when the engine was dropped");
    assert_eq!(
        saved
            .lines()
            .filter(|line| line.contains(" async "))
            .count(),
        1,
        "{saved}"
    );
    // The next engine naming the file starts its reads asynchronous.
    let mut next = engine(&rig);
    next.run(200);
    let paths = next.paths();
    assert_eq!((paths.inline, paths.explored), (0, 0), "{paths:?}");
}

#[test]
fn an_o_direct_class_with_requests_to_overlap_starts_asynchronous() {
    // A device at depth 16: 60 us a read inline, 4 us of the caller's
    // through the queue. Started inline, a class paid its first window at
    // one read at a time; its inline exploration, at 32 reads draining the
    // queue, more.
    let dir = testkit::scratch();
    if !crate::probe::o_direct_supported(dir.path()) {
        eprintln!("skipping: no O_DIRECT in {}", dir.path().display());
        return;
    }
    let rig = Rig::new(60_000, 1_000, 60_000, 0);
    let depth = 16;
    let engine = rig.adaptive_engine(depth, Priors::default());
    let direct = crate::file::OpenOptions {
        direct: true,
        ..testkit::read_write()
    };
    let mut caller = Caller::opening(
        Box::new(engine),
        rig.clock.clone(),
        depth as usize,
        dir,
        &direct,
    );
    let took = caller.run(500);
    let paths = caller.paths();
    // Three inline requests price that path (at four times the queue's
    // price and more, the epoch ends), and then it is far dearer.
    assert!(paths.inline <= 4, "{paths:?}");
    let (_, async_ns) = rig.static_times(depth as usize, 500);
    let ratio = took as f64 / async_ns as f64;
    assert!(
        ratio < 1.10,
        "500 reads took {ratio:.3}x the asynchronous engine's time"
    );
}

/// Requests after a change of costs until the share of asynchronous
/// requests over the next 256 crosses to the new choice.
fn requests_to_follow(caller: &mut Caller, expect: Path) -> usize {
    for step in 0..200 {
        let before = caller.paths();
        caller.run(256);
        let share = async_share(before, caller.paths());
        let there = match expect {
            Path::Inline => share < 0.1,
            Path::Async => share > 0.9,
        };
        if there {
            return step * 256;
        }
    }
    panic!("never followed the change to {expect:?}");
}

#[test]
fn follows_the_cache_being_dropped_and_filled_again() {
    let cached = |rig: &Rig| rig.costs.set(1_000, 1_300, 0, 0);
    let device = |rig: &Rig| rig.costs.set(60_000, 1_000, 60_000, 0);
    let rig = Rig::new(0, 0, 0, 0);
    cached(&rig);
    let mut caller = rig.adaptive(4);
    caller.run(5_000);
    // Five explorations of 32 requests while the class learns (the other
    // path is only 1.3 times dearer: no epoch ends early).
    assert!(
        async_share(PathCounts::default(), caller.paths()) < 0.04,
        "{:?}",
        caller.paths()
    );
    let switches = caller.paths().switches;

    device(&rig);
    let followed = requests_to_follow(&mut caller, Path::Async);
    assert!(
        followed <= 1024,
        "followed the dropped cache after {followed} requests"
    );
    let before = caller.paths();
    caller.run(5_000);
    assert!(async_share(before, caller.paths()) > 0.99);

    cached(&rig);
    let followed = requests_to_follow(&mut caller, Path::Inline);
    assert!(
        followed <= 1024,
        "followed the refilled cache after {followed} requests"
    );
    assert_eq!(
        caller.paths().switches,
        switches + 2,
        "{:?}",
        caller.paths()
    );
}

#[test]
fn a_settled_asynchronous_class_times_few_requests_and_still_follows_a_change() {
    // A device overlapping requests, at depth 8: the class goes asynchronous.
    let device = |rig: &Rig| rig.costs.set(60_000, 1_000, 60_000, 0);
    let rig = Rig::new(0, 0, 0, 0);
    device(&rig);
    let mut caller = rig.adaptive(8);
    caller.run(5_000);
    let (before, reads_before) = (caller.paths(), rig.clock_reads.load(Ordering::Relaxed));
    let n = 40_000;
    caller.run(n);
    assert!(async_share(before, caller.paths()) > 0.99);
    // A timed request reads the clock when it is queued and when it is
    // reaped; the others never. Before the asynchronous fast path every
    // request was timed: 2 reads a request here; then every reap read it
    // once, for the integral of requests in flight: 1 a request. Now one
    // request of the class in 128 is timed: 2 reads in 128 requests, 0.016
    // a request, and 0.018 with the explorations and their looks back (one
    // in 64, as before, made it 0.031 and more).
    let reads = rig.clock_reads.load(Ordering::Relaxed) - reads_before;
    let per_request = reads as f64 / n as f64;
    assert!(
        per_request < 0.025,
        "{per_request:.4} clock reads a request: more than about one request in 100 is timed"
    );
    // The cache fills (inline is 60 times cheaper): followed as fast as the
    // inline path follows a cache dropped.
    rig.costs.set(1_000, 1_300, 0, 0);
    let followed = requests_to_follow(&mut caller, Path::Inline);
    assert!(
        followed <= 1024,
        "followed the refilled cache after {followed} requests"
    );
    // And back to the device.
    device(&rig);
    let followed = requests_to_follow(&mut caller, Path::Async);
    assert!(
        followed <= 1024,
        "followed the dropped cache after {followed} requests"
    );
}

#[test]
fn follows_a_slow_change_through_its_regular_explorations() {
    // The device speeds up by a third: less than a drift, so only the
    // regular explorations (every 100 ms of the class's time) can see it.
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(2);
    caller.run(2_000);
    let before = caller.paths();
    caller.run(2_000);
    // (Less than 1% explored inline: a learning exploration among them.)
    assert!(async_share(before, caller.paths()) > 0.98);
    // Now inline is cheaper even at two outstanding: a page cache, say,
    // filling up.
    rig.costs.set(8_000, 1_500, 30_000, 0);
    let started = now(&rig.clock);
    let followed = requests_to_follow(&mut caller, Path::Inline);
    let virtual_ms = (now(&rig.clock) - started) / 1_000_000;
    assert!(
        virtual_ms <= 400,
        "followed after {followed} requests and {virtual_ms} ms"
    );
}

#[test]
fn a_held_completion_does_not_wait_behind_younger_asynchronous_ones() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(8);
    caller.run(2_000);
    caller.drain();
    let queue_read = |caller: &mut Caller, tag| {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, tag);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
        caller.engine.commit().unwrap();
    };
    // Two reads out (this class goes asynchronously), then an fsync (a class
    // of its own, inline, so held), then two more reads.
    queue_read(&mut caller, 1);
    queue_read(&mut caller, 2);
    let sync = Request::sync(caller.handle, false, 3);
    assert!(matches!(caller.engine.queue(sync), QueueOutcome::Queued));
    caller.engine.commit().unwrap();
    queue_read(&mut caller, 4);
    queue_read(&mut caller, 5);
    // Every read is done by now.
    advance(&rig.clock, 1_000_000);
    // Reaped one at a time, as fio reaps: oldest first, the held fsync
    // between the reads queued before it and those queued after it (it
    // used to come last, after every asynchronous completion).
    let mut order = Vec::new();
    for _ in 0..5 {
        let mut done = Vec::new();
        assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
        order.push(done[0].user_data);
        if let Some(buf) = done.pop().and_then(|c| c.buf) {
            caller.buffers.push(buf);
        }
    }
    assert_eq!(order, [1, 2, 3, 4, 5]);
}

#[test]
fn held_counts_the_completions_a_reap_hands_over_at_once() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(8);
    caller.run(2_000);
    caller.drain();
    // Two reads out (this class goes asynchronously), then two fsyncs (a
    // class of its own, inline, so held).
    for tag in [1, 2] {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, tag);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
    }
    caller.engine.commit().unwrap();
    for tag in [3, 4] {
        let sync = Request::sync(caller.handle, false, tag);
        assert!(matches!(caller.engine.queue(sync), QueueOutcome::Queued));
    }
    caller.engine.commit().unwrap();
    assert_eq!(
        caller.engine.held(),
        0,
        "held behind the reads queued before them"
    );
    advance(&rig.clock, 1_000_000);
    let mut done = Vec::new();
    assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
    assert_eq!(done[0].user_data, 1);
    assert_eq!(caller.engine.held(), 0, "one older read is still out");
    done.clear();
    assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
    assert_eq!(done[0].user_data, 2);
    assert_eq!(caller.engine.held(), 2, "both fsyncs may come out now");
    done.clear();
    assert_eq!(caller.engine.reap(0, 2, &mut done).unwrap(), 2);
    let tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    assert_eq!(tags, [3, 4]);
    assert_eq!((caller.engine.held(), caller.engine.in_flight()), (0, 0));
}

#[test]
fn inline_completions_wait_for_the_reap_while_asynchronous_ones_are_out() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(2_000);
    caller.drain();
    // Fill the queue with reads, which this class sends asynchronously.
    while caller.outstanding < 3 {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, 7);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
        caller.outstanding += 1;
    }
    caller.engine.commit().unwrap();
    let before = caller.paths();
    // An fsync is a class of its own, which starts inline.
    let sync = Request::sync(caller.handle, false, 99);
    assert!(
        matches!(caller.engine.queue(sync), QueueOutcome::Queued),
        "an inline fsync is held while reads are out"
    );
    assert_eq!(caller.paths().inline, before.inline + 1);
    assert_eq!(caller.engine.in_flight(), 4);
    assert_eq!(
        caller.engine.commit().unwrap(),
        1,
        "the held completion counts as handed over"
    );
    let mut done = Vec::new();
    assert_eq!(caller.engine.reap(3, 3, &mut done).unwrap(), 3);
    let tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    assert_eq!(tags, [7, 7, 7], "the asynchronous ones, older, come first");
    assert!(
        done.iter()
            .all(|c| c.file == caller.handle && c.result == 4096)
    );
    assert_eq!(caller.engine.in_flight(), 1);
    // Nothing asynchronous is left, but a completion is held: the next
    // inline one is held behind it (not `Busy`: the engine is not full).
    assert!(
        matches!(
            caller
                .engine
                .queue(Request::sync(caller.handle, false, 100)),
            QueueOutcome::Queued
        ),
        "an inline completion waits behind a held one"
    );
    assert_eq!(caller.engine.in_flight(), 2);
    assert_eq!(caller.engine.commit().unwrap(), 1);
    done.clear();
    assert_eq!(caller.engine.reap(1, 4, &mut done).unwrap(), 2);
    let answers: Vec<(u64, i64)> = done.iter().map(|c| (c.user_data, c.result)).collect();
    assert_eq!(
        answers,
        [(99, 0), (100, 0)],
        "in the order they were queued"
    );
    assert_eq!(caller.engine.in_flight(), 0);
    assert!(
        matches!(
            caller.engine.queue(Request::sync(caller.handle, false, 101)),
            QueueOutcome::Completed(c) if c.user_data == 101
        ),
        "nothing out: inline completes at once"
    );
}

#[test]
fn held_completions_make_the_engine_busy_only_at_its_depth() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(2_000);
    caller.drain();
    let buf = caller.buffers.pop().unwrap();
    let read = Request::read(caller.handle, 0, buf, 7);
    assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
    caller.engine.commit().unwrap();
    // Inline fsyncs are held behind the asynchronous read, then behind each other.
    for tag in 0..3 {
        assert!(matches!(
            caller
                .engine
                .queue(Request::sync(caller.handle, false, 90 + tag)),
            QueueOutcome::Queued
        ));
    }
    let mut done = Vec::new();
    assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
    assert_eq!(done[0].user_data, 7, "the oldest first");
    assert_eq!(caller.engine.in_flight(), 3);
    assert!(matches!(
        caller.engine.queue(Request::sync(caller.handle, false, 93)),
        QueueOutcome::Queued
    ));
    assert_eq!(caller.engine.in_flight(), 4);
    let QueueOutcome::Busy(_) = caller.engine.queue(Request::sync(caller.handle, false, 94)) else {
        panic!("four held completions fill a depth of 4")
    };
    done.clear();
    assert_eq!(caller.engine.reap(1, 8, &mut done).unwrap(), 4);
    let tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    assert_eq!(tags, [90, 91, 92, 93]);
}

#[test]
fn every_request_is_counted_on_one_path() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(3_000);
    let paths = caller.paths();
    // The caller leaves at most its depth outstanding.
    let queued = paths.inline + paths.asynchronous;
    assert!((3_000..=3_004).contains(&queued), "{paths:?}");
    assert!(paths.explored >= 16 && paths.explored < 3_000, "{paths:?}");
    assert!(paths.switches >= 1, "{paths:?}");
}

#[test]
fn busy_at_depth_and_files_held_while_requests_are_out() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(2_000);
    caller.drain();
    for tag in 0..4 {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, tag);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
        assert_eq!(caller.engine.in_flight(), tag as usize + 1);
    }
    let extra = back_buffer(&mut caller);
    let QueueOutcome::Busy(back) =
        caller
            .engine
            .queue(Request::read(caller.handle, 8192, extra, 99))
    else {
        panic!("not busy at depth 4")
    };
    assert_eq!(
        (back.user_data, back.offset, back.file),
        (99, 8192, caller.handle)
    );
    match caller.engine.remove_file(caller.handle) {
        Err(Error::FileBusy {
            handle,
            in_flight: 4,
        }) => assert_eq!(handle, caller.handle.0),
        other => panic!("expected FileBusy, got {other:?}"),
    }
}

/// A buffer beyond the caller's depth (it has one spare).
fn back_buffer(caller: &mut Caller) -> Buf {
    caller.spare.take().expect("one spare buffer")
}

#[test]
fn without_io_uring_the_pool_takes_buffered_files_and_libaio_direct_ones() {
    let dir = testkit::scratch();
    if let Err(reason) = crate::probe::engine_available(EngineKind::Libaio) {
        eprintln!("skipping: libaio refused here ({reason})");
        return;
    }
    if !crate::probe::o_direct_supported(dir.path()) {
        eprintln!("skipping: no O_DIRECT in {}", dir.path().display());
        return;
    }
    let config = EngineConfig::with_depth(8);
    let backends: Vec<Box<dyn Engine>> = vec![
        Box::new(crate::engine::pool::PoolEngine::new(&config).unwrap()),
        Box::new(crate::engine::libaio::LibaioEngine::new(&config).unwrap()),
    ];
    let mut engine = AdaptiveEngine::with_engines(
        crate::engine::psync::PsyncEngine::new(&config),
        backends,
        &config,
        Time::Real(Clock::new()),
    );
    const LEN: usize = 1 << 20;
    let (buffered_path, buffered_data) = testkit::data_file(dir.path(), "buffered", LEN);
    let (direct_path, direct_data) = testkit::data_file(dir.path(), "direct", LEN);
    let buffered = testkit::add(&mut engine, &buffered_path, &testkit::read_write());
    let direct_options = crate::file::OpenOptions {
        direct: true,
        ..testkit::read_write()
    };
    let direct = testkit::add(&mut engine, &direct_path, &direct_options);
    assert_eq!(engine.route_of(buffered).unwrap().backend, 0, "the pool");
    assert_eq!(engine.route_of(direct).unwrap().backend, 1, "libaio");
    // The pool's files have the caller's handles; libaio's do not (it took the
    // second file as its first): both ways of handing completions back run.
    assert!(engine.backends[0].lockstep && !engine.backends[1].lockstep);
    // Reads of both files in one queue: each class explores the asynchronous
    // path, so both engines hold requests at once and are reaped together.
    let pool = BufPool::new(8, 4096).unwrap();
    for batch in 0..400u64 {
        let requests = (0..8u64).map(|i| {
            let n = batch * 8 + i;
            let file = if n % 2 == 0 { buffered } else { direct };
            let offset = (n * 7919 % (LEN as u64 / 4096)) * 4096;
            Request::read(file, offset, testkit::take(&pool, 4096), n)
        });
        for completion in testkit::run(&mut engine, requests) {
            let at = completion.offset as usize;
            let data = if completion.file == buffered {
                &buffered_data
            } else {
                &direct_data
            };
            assert_eq!(completion.result, 4096, "read {}", completion.user_data);
            assert!(
                completion.buf.as_ref().unwrap().as_slice() == &data[at..at + 4096],
                "read {} of {:?} at {at}: wrong bytes",
                completion.user_data,
                completion.file
            );
        }
    }
    let paths = engine.counters().paths.unwrap();
    assert!(paths.asynchronous > 0, "{paths:?}");
    assert_eq!(paths.inline + paths.asynchronous, 3200);
    engine.remove_file(direct).unwrap();
    engine.remove_file(buffered).unwrap();
}

/// With io_uring, a file's copies there have the caller's handle (and the
/// odd one after it for timed requests), so that completions need no
/// translation: files removed and added again keep them so, and every
/// completion, straight or timed, comes back with its caller's handle, tag
/// and bytes.
#[test]
fn with_io_uring_completions_come_back_as_queued_while_files_come_and_go() {
    if let Err(reason) = crate::probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping: io_uring refused here ({reason})");
        return;
    }
    let dir = testkit::scratch();
    // The emulated device at depth 8: the asynchronous path wins, so nearly
    // every request goes straight to io_uring, untimed.
    let config = EngineConfig {
        completion_latency: Some(std::time::Duration::from_micros(100)),
        ..EngineConfig::with_depth(8)
    };
    let mut engine = over_io_uring(&config);
    const LEN: usize = 256 << 10;
    let files: Vec<_> = ["a", "b", "c", "d"]
        .iter()
        .map(|name| testkit::data_file(dir.path(), name, LEN))
        .collect();
    let a = testkit::add(&mut engine, &files[0].0, &testkit::read_write());
    let b = testkit::add(&mut engine, &files[1].0, &testkit::read_write());
    engine.remove_file(a).unwrap();
    let c = testkit::add(&mut engine, &files[2].0, &testkit::read_write());
    let d = testkit::add(&mut engine, &files[3].0, &testkit::read_write());
    assert!(
        engine.backends[0].lockstep,
        "a file's copies left the caller's handles"
    );
    let open = [(b, &files[1].1), (c, &files[2].1), (d, &files[3].1)];
    let pool = BufPool::new(8, 4096).unwrap();
    let mut seen = 0;
    for batch in 0..100u64 {
        let requests = (0..8u64).map(|i| {
            let n = batch * 8 + i;
            let offset = (n * 7919 % (LEN as u64 / 4096)) * 4096;
            Request::read(
                open[n as usize % 3].0,
                offset,
                testkit::take(&pool, 4096),
                n,
            )
        });
        for completion in testkit::run(&mut engine, requests) {
            let (file, data) = open[completion.user_data as usize % 3];
            let at = completion.offset as usize;
            assert_eq!(completion.file, file, "read {}", completion.user_data);
            assert_eq!(completion.result, 4096, "read {}", completion.user_data);
            assert!(
                completion.buf.as_ref().unwrap().as_slice() == &data[at..at + 4096],
                "read {} of {file:?} at {at}: wrong bytes",
                completion.user_data
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 800);
    let paths = engine.counters().paths.unwrap();
    assert!(paths.asynchronous > 400, "{paths:?}");
    assert_eq!(engine.timed_out, 0, "a timed request was not recorded");
    for file in [b, c, d] {
        engine.remove_file(file).unwrap();
    }
}

/// The adaptive engine over real engines as without io_uring (psync inline;
/// the pool, and libaio for `O_DIRECT` files), every request sent
/// asynchronously; `None` where libaio or `O_DIRECT` is missing.
fn pool_and_libaio(depth: u32, dir: &std::path::Path) -> Option<AdaptiveEngine<PsyncEngine>> {
    if let Err(reason) = crate::probe::engine_available(EngineKind::Libaio) {
        eprintln!("skipping: libaio refused here ({reason})");
        return None;
    }
    if !crate::probe::o_direct_supported(dir) {
        eprintln!("skipping: no O_DIRECT in {}", dir.display());
        return None;
    }
    let config = EngineConfig::with_depth(depth);
    let backends: Vec<Box<dyn Engine>> = vec![
        Box::new(crate::engine::pool::PoolEngine::new(&config).unwrap()),
        Box::new(crate::engine::libaio::LibaioEngine::new(&config).unwrap()),
    ];
    let engine = AdaptiveEngine::with_engines(
        PsyncEngine::new(&config),
        backends,
        &config,
        Time::Real(Clock::new()),
    );
    engine.route_override.set(Some(Path::Async));
    Some(engine)
}

/// Issue 20, bug 2: with two asynchronous engines, `reap` waited on the one
/// holding more requests, counting uncommitted ones, which it returned
/// nothing for: `reap(1)` with a committed read in the pool and two
/// uncommitted ones in libaio had not returned after 10 s.
#[test]
fn with_two_backends_a_reap_waits_only_for_committed_requests() {
    let dir = testkit::scratch();
    let Some(mut engine) = pool_and_libaio(4, dir.path()) else {
        return;
    };
    let (buffered_path, buffered_data) = testkit::data_file(dir.path(), "buffered", 1 << 16);
    let (direct_path, _) = testkit::data_file(dir.path(), "direct", 1 << 16);
    let buffered = testkit::add(&mut engine, &buffered_path, &testkit::read_write());
    let direct_options = crate::file::OpenOptions {
        direct: true,
        ..testkit::read_write()
    };
    let direct = testkit::add(&mut engine, &direct_path, &direct_options);
    let pool = BufPool::new(3, 4096).unwrap();
    let read = Request::read(buffered, 4096, testkit::take(&pool, 4096), 1);
    assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    assert_eq!(engine.commit().unwrap(), 1);
    for tag in [2, 3] {
        let read = Request::read(direct, 0, testkit::take(&pool, 4096), tag);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut done = Vec::new();
        let reaped = engine.reap(1, 8, &mut done).map(|n| (n, done));
        let _ = answer.send((reaped, engine));
    });
    let (reaped, mut engine) = answered
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("reap(1) with one committed request did not return in 20 s");
    let (n, done) = reaped.unwrap();
    assert_eq!(n, 1, "only the committed read can complete");
    assert_eq!(
        (done[0].user_data, done[0].file, done[0].result),
        (1, buffered, 4096)
    );
    assert!(done[0].buf.as_ref().unwrap().as_slice() == &buffered_data[4096..8192]);
    let mut done = Vec::new();
    testkit::finish(&mut engine, &mut done);
    let mut tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    tags.sort_unstable();
    assert_eq!(tags, [2, 3]);
}

/// An asynchronous engine whose reap appends its completions, then fails.
#[derive(Debug, Default)]
struct FailingReap {
    queued: Vec<Request>,
    committed: Vec<Request>,
    files: u32,
}

impl AsyncBackend for FailingReap {}

impl Engine for FailingReap {
    fn kind(&self) -> EngineKind {
        EngineKind::Libaio
    }
    fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, Error> {
        self.files += 1;
        Ok(FileHandle(99 + self.files))
    }
    fn remove_file(&mut self, _handle: FileHandle) -> Result<File, Error> {
        unreachable!("the test removes no file")
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.queued.push(request);
        QueueOutcome::Queued
    }
    fn commit(&mut self) -> Result<usize, Error> {
        let n = self.queued.len();
        self.committed.append(&mut self.queued);
        Ok(n)
    }
    fn reap(&mut self, _min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        let n = self.committed.len().min(max);
        out.extend(self.committed.drain(..n).map(|r| {
            let len = r.len() as i64;
            r.complete(len)
        }));
        Err(Error::Engine {
            engine: "failing reap",
            op: "io_getevents",
            source: std::io::Error::from_raw_os_error(libc::EIO),
        })
    }
    fn in_flight(&self) -> usize {
        self.queued.len() + self.committed.len()
    }
    fn is_synchronous(&self) -> bool {
        false
    }
}

/// Issue 20, bug 4: when a backend's reap failed after appending
/// completions, they escaped with the backend's tag and file handle, and
/// `in_flight()` stayed up.
#[test]
fn a_failing_backend_reap_hands_back_what_it_appended_translated() {
    let config = EngineConfig::with_depth(4);
    let mut engine = AdaptiveEngine::with_engines(
        PsyncEngine::new(&config),
        vec![FailingReap::default()],
        &config,
        Time::Real(Clock::new()),
    );
    engine.route_override.set(Some(Path::Async));
    let dir = testkit::scratch();
    let (path, _) = testkit::data_file(dir.path(), "data", 8192);
    let file = testkit::add(&mut engine, &path, &testkit::read_write());
    let pool = BufPool::new(2, 4096).unwrap();
    for tag in [41, 42] {
        let read = Request::read(file, 0, testkit::take(&pool, 4096), tag);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    engine.commit().unwrap();
    let mut done = Vec::new();
    assert!(engine.reap(1, 8, &mut done).is_err());
    let answers: Vec<(u64, FileHandle)> = done.iter().map(|c| (c.user_data, c.file)).collect();
    assert_eq!(
        answers,
        [(41, file), (42, file)],
        "the caller's tags and handle"
    );
    assert_eq!(engine.in_flight(), 0);
}

/// A source and an empty destination, both `O_DIRECT`, under a scratch
/// directory whose filesystem makes io_uring hand direct writes past a
/// file's end to a worker; `None` (printed) where io_uring, libaio,
/// `O_DIRECT` or such a filesystem is missing.
struct DirectCopy {
    dir: tempfile::TempDir,
    src_path: PathBuf,
    data: Vec<u8>,
    dst_path: PathBuf,
    dst_file: File,
}

const COPY_LEN: usize = 2 << 20;
const COPY_BLOCK: usize = 64 << 10;

fn direct_copy() -> Option<DirectCopy> {
    if let Err(reason) = crate::probe::engine_available(EngineKind::IoUring)
        .and(crate::probe::engine_available(EngineKind::Libaio))
    {
        println!("skipped: {reason}");
        return None;
    }
    let dir = testkit::scratch();
    let (src_path, data) = testkit::data_file(dir.path(), "src", COPY_LEN);
    let dst_path = dir.path().join("dst");
    let Ok(dst_file) = crate::file::open(&dst_path, &direct_options(true)) else {
        println!("skipped: O_DIRECT refused under {}", dir.path().display());
        return None;
    };
    if !super::appends::grows_by_direct_writes(&dst_file, &dst_path) {
        println!(
            "skipped: this filesystem starts direct writes past a file's end without blocking"
        );
        return None;
    }
    Some(DirectCopy {
        dir,
        src_path,
        data,
        dst_path,
        dst_file,
    })
}

fn direct_options(create: bool) -> crate::file::OpenOptions {
    crate::file::OpenOptions {
        direct: true,
        create,
        ..testkit::read_write()
    }
}

/// Copies `src` to `dst` through `engine`, each round writing what the last
/// one read and reading the next blocks, so that reads and writes are out
/// at once; `also` (a buffered file holding the same data) is read beside
/// them, and what it reads checked against `data`.
fn copy_through(
    engine: &mut dyn Engine,
    (src, dst, also): (FileHandle, FileHandle, Option<FileHandle>),
    data: &[u8],
) {
    let pool = BufPool::new(24, COPY_BLOCK).unwrap();
    let blocks = (COPY_LEN / COPY_BLOCK) as u64;
    let mut to_write: Vec<Completion> = Vec::new();
    let mut next = 0u64;
    let mut written = 0u64;
    while written < blocks {
        let mut requests: Vec<Request> = to_write
            .drain(..)
            .map(|read| {
                let mut buf = read.buf.expect("a read's buffer");
                buf.rewind();
                buf.set_len(COPY_BLOCK);
                Request::write(dst, read.offset, buf, 1)
            })
            .collect();
        for _ in 0..4 {
            if next < blocks {
                let offset = next * COPY_BLOCK as u64;
                requests.push(Request::read(
                    src,
                    offset,
                    testkit::take(&pool, COPY_BLOCK),
                    0,
                ));
                if let Some(also) = also {
                    let buf = testkit::take(&pool, COPY_BLOCK);
                    requests.push(Request::read(also, offset, buf, 2));
                }
                next += 1;
            }
        }
        for completion in testkit::run(engine, requests) {
            assert_eq!(
                completion.result, COPY_BLOCK as i64,
                "{:?} at {}",
                completion.op, completion.offset
            );
            let whose = [src, dst, also.unwrap_or(src)];
            assert_eq!(
                Some(completion.file),
                whose.get(completion.user_data as usize).copied(),
                "the caller's handle and tag on a {:?} at {}",
                completion.op,
                completion.offset
            );
            match (completion.op, completion.user_data) {
                (Op::Read, 2) => {
                    let offset = completion.offset as usize;
                    let buf = completion.buf.as_ref().expect("a read's buffer");
                    assert!(
                        buf.as_slice() == &data[offset..offset + COPY_BLOCK],
                        "the buffered file's bytes at {offset}"
                    );
                }
                (Op::Read, _) => to_write.push(completion),
                _ => written += 1,
            }
        }
    }
}

#[test]
fn a_direct_file_written_past_its_end_takes_every_direct_file_to_libaio_and_a_copy_lands_whole() {
    let Some(copy) = direct_copy() else {
        return;
    };
    let config = EngineConfig::with_depth(8);
    let mut engine = over_io_uring(&config);
    // The buffered file first: the direct one's twins then have other
    // handles on libaio than on io_uring.
    let buffered = testkit::add(&mut engine, &copy.src_path, &testkit::read_write());
    let src = testkit::add(&mut engine, &copy.src_path, &direct_options(false));
    assert!(
        !engine.description().contains("libaio"),
        "no libaio before a file needs it: {}",
        engine.description()
    );
    assert_eq!(
        engine.route_of(src).unwrap().backend,
        0,
        "io_uring at first"
    );
    let dst = engine
        .add_file(copy.dst_file, copy.dst_path.clone())
        .unwrap();
    assert_eq!(engine.route_of(dst).unwrap().backend, 1, "libaio");
    assert_eq!(
        engine.route_of(src).unwrap().backend,
        1,
        "the other O_DIRECT file follows it there"
    );
    assert_eq!(
        engine.route_of(buffered).unwrap().backend,
        0,
        "a buffered file stays on io_uring"
    );
    assert!(
        engine
            .description()
            .contains("O_DIRECT (one written past its end) libaio"),
        "{}",
        engine.description()
    );
    // Both engines hold requests at once (the buffered reads on io_uring),
    // and are reaped together.
    copy_through(&mut engine, (src, dst, Some(buffered)), &copy.data);
    drop(engine);
    assert_eq!(
        std::fs::read(&copy.dst_path).unwrap(),
        copy.data,
        "the copy, byte for byte"
    );
    drop(copy.dir);
}

#[test]
fn a_direct_file_with_requests_out_on_io_uring_stays_there_when_libaio_comes() {
    let Some(copy) = direct_copy() else {
        return;
    };
    let config = EngineConfig::with_depth(8);
    let mut engine = over_io_uring(&config);
    let src = testkit::add(&mut engine, &copy.src_path, &direct_options(false));
    let pool = BufPool::new(1, COPY_BLOCK).unwrap();
    engine.route_override.set(Some(Path::Async));
    let read = Request::read(src, 0, testkit::take(&pool, COPY_BLOCK), 7);
    assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    engine.commit().unwrap();
    engine.route_override.set(None);
    // Requests are not counted by file: with any out, none of io_uring's
    // files moves.
    let dst = engine
        .add_file(copy.dst_file, copy.dst_path.clone())
        .unwrap();
    assert_eq!(engine.route_of(src).unwrap().backend, 0, "still io_uring");
    assert_eq!(engine.route_of(dst).unwrap().backend, 1, "libaio");
    let mut done = Vec::new();
    engine.reap(1, 1, &mut done).unwrap();
    assert_eq!((done[0].file, done[0].user_data), (src, 7));
    assert_eq!(done[0].result, COPY_BLOCK as i64);
    drop(done);
    copy_through(&mut engine, (src, dst, None), &copy.data);
    drop(engine);
    assert_eq!(std::fs::read(&copy.dst_path).unwrap(), copy.data);
}

/// The adaptive engine as `open` makes it where io_uring is allowed: psync
/// inline, io_uring asynchronous, on the real clock.
fn over_io_uring(config: &EngineConfig) -> AdaptiveEngine<PsyncEngine, IoUringOrLibaio> {
    let ring = crate::engine::io_uring::IoUringEngine::new(config, None).unwrap();
    AdaptiveEngine::with_engines(
        PsyncEngine::new(config),
        vec![IoUringOrLibaio::IoUring(ring)],
        config,
        Time::Real(Clock::new()),
    )
}
