//! What the engine learns and when: the paths it settles on, priors, and
//! changes it follows.

use super::*;

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
                    let buf = back.buf;
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
            let buf = completion.buf;
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
