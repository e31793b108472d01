//! The hook, through the engines that carry it, as `engine::open` makes
//! them: what each fault does to a request, and that the retry rule of
//! every engine makes the recoverable ones whole.

use std::time::{Duration, Instant};

use super::*;
use crate::buf::BufPool;
use crate::engine::testkit::{add, data_file, finish, run, scratch, take};
use crate::engine::{Engine, EngineConfig, EngineKind, QueueOutcome};
use crate::file::OpenOptions;
use crate::probe;
use crate::request::Completion;

fn plan(text: &str) -> FaultPlan {
    text.parse().unwrap()
}

fn errno(completion: &Completion) -> Option<i32> {
    completion.error().and_then(|e| e.raw_os_error())
}

/// Every engine that does I/O, as `engine::open` makes it with `plan` at
/// `depth` (and `nowait`), with the name to report; those the system
/// refuses are skipped, saying why.
fn engines(
    plan_text: &str,
    depth: u32,
    nowait: bool,
    pool: &BufPool,
) -> Vec<(String, Box<dyn Engine>)> {
    let mut config = EngineConfig::with_depth(depth);
    config.inject = Some(plan(plan_text));
    config.nowait = nowait;
    EngineKind::ALL
        .into_iter()
        .filter(|&kind| kind != EngineKind::Null)
        .filter_map(|kind| {
            if let Err(reason) = probe::engine_available(kind) {
                eprintln!("skipping {}: {reason}", kind.name());
                return None;
            }
            if nowait && kind == EngineKind::Libaio {
                // libaio's nowait is the kernel's RWF_NOWAIT: not what this tests.
                return None;
            }
            if nowait && kind == EngineKind::Posixaio {
                // POSIX AIO has no per-request flags: it refuses nowait.
                return None;
            }
            let engine = crate::engine::open(kind, &config, Some(pool)).unwrap();
            Some((format!("{} at depth {depth}", kind.name()), engine))
        })
        .collect()
}

#[test]
fn a_plan_reads_back_as_it_shows() {
    let text = "eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms";
    let parsed = plan(text);
    assert_eq!(
        parsed,
        FaultPlan {
            eio: 0.001,
            short: 0.01,
            eagain: 0.01,
            delay: 0.001,
            delay_by: Duration::from_millis(5),
            corrupt: 0.0,
            seed: DEFAULT_SEED,
        }
    );
    assert_eq!(parsed.to_string(), text);
    for (given, shown) in [
        ("none", "none"),
        (" eagain : 1 , seed:42 ", "eagain:1,seed:42"),
        ("delay:0.5@250us", "delay:0.5@250us"),
        ("delay:1@2s", "delay:1@2s"),
        ("delay:0.1@1.5ms", "delay:0.1@1500us"),
        ("delay:0.1@7ns", "delay:0.1@7ns"),
        ("short:0.25,eio:0.75", "eio:0.75,short:0.25"),
        ("corrupt:0.5,eio:0.25", "eio:0.25,corrupt:0.5"),
        (
            "eio:0.1,short:0.2,eagain:0.3,delay:0.4@1ms",
            "eio:0.1,short:0.2,eagain:0.3,delay:0.4@1ms",
        ),
    ] {
        let parsed = plan(given);
        assert_eq!(parsed.to_string(), shown, "{given}");
        assert_eq!(plan(shown), parsed, "{given}: round trip");
    }
    assert_eq!(plan("none"), FaultPlan::default());
}

#[test]
fn a_bad_plan_is_refused_naming_the_bad_part() {
    for (text, part, says) in [
        ("eio:2", "eio:2", "not between 0 and 1"),
        ("eio:-0.1", "eio:-0.1", "not between 0 and 1"),
        ("eio:NaN", "eio:NaN", "not between 0 and 1"),
        ("eio:lots", "eio:lots", "not a probability"),
        ("foo:0.1", "foo:0.1", "unknown fault `foo`"),
        ("eio", "eio", "expected fault:probability"),
        ("delay:0.1", "delay:0.1", "delay needs a duration"),
        ("delay:0.1@5", "delay:0.1@5", "give a unit"),
        ("delay:0.1@fastms", "delay:0.1@fastms", "expected a number"),
        ("delay:0.1@-5ms", "delay:0.1@-5ms", "out of range"),
        ("eio:0.6,short:0.6", "eio:0.6,short:0.6", "add up to 1.2"),
        ("eio:0.1,eio:0.2", "eio:0.2", "given twice"),
        ("eio:0.1,", "", "expected fault:probability"),
        ("seed:x", "seed:x", "not a seed"),
        ("", "", "empty"),
    ] {
        let err = text.parse::<FaultPlan>().unwrap_err();
        assert_eq!(err.part, part, "{text}: {err}");
        assert!(err.reason.contains(says), "{text}: {err}");
        let line = err.to_string();
        assert!(
            !line.contains('\n') && line.contains(&format!("`{part}`")),
            "{line}"
        );
    }
}

/// Runs `n` 4096-byte reads through `engine` (the null engine: no data);
/// returns their results.
fn null_results(engine: &mut dyn Engine, n: usize) -> Vec<i64> {
    let pool = BufPool::new(1, 4096).unwrap();
    let handle = engine
        .add_file(
            std::fs::File::open("/dev/null").unwrap(),
            "/dev/null".into(),
        )
        .unwrap();
    (0..n)
        .map(
            |i| match engine.queue(Request::read(handle, 0, take(&pool, 4096), i as u64)) {
                QueueOutcome::Completed(done) => {
                    assert_eq!(done.buf.len(), 4096, "window as queued");
                    done.result
                }
                other => panic!("{other:?}"),
            },
        )
        .collect()
}

fn null_with(plan_text: &str) -> Box<dyn Engine> {
    let mut config = EngineConfig::with_depth(1);
    config.inject = Some(plan(plan_text));
    crate::engine::open(EngineKind::Null, &config, None).unwrap()
}

#[test]
fn draws_follow_the_plan_and_its_seed() {
    const N: usize = 20_000;
    let faults = "eio:0.1,eagain:0.2,short:0.3";
    let mut engine = null_with(faults);
    let first = null_results(engine.as_mut(), N);
    let counters = engine.counters();
    let counts = counters.injected;
    let count = |r: i64| first.iter().filter(|&&x| x == r).count() as u64;
    assert_eq!(count(-i64::from(libc::EIO)), counts.eio);
    // Every injected EAGAIN was tried again (a draw of its own), up to the
    // limit, which 20 in a row at p = 0.2 never reach.
    assert_eq!(count(-i64::from(libc::EAGAIN)), 0);
    assert_eq!(counters.retries, counts.eagain);
    // A short answer's rest is "sent again" at once: whole in the end.
    assert_eq!(counters.short_ios[0], counts.short);
    assert_eq!(count(4096) as usize, N - counts.eio as usize);
    // Within 5 standard deviations of what the probabilities say, per
    // draw: EAGAIN draws again, so a request draws 1/(1 - 0.2) times.
    let draws = N as f64 / 0.8;
    for (got, p) in [(counts.eio, 0.1), (counts.eagain, 0.2), (counts.short, 0.3)] {
        let expected = draws * p;
        let sd = (draws * p * (1.0 - p)).sqrt();
        assert!(
            (got as f64 - expected).abs() < 5.0 * sd,
            "{got} for p = {p}: {counts:?}"
        );
    }
    assert_eq!(counts.delay, 0);
    let again = null_results(null_with(faults).as_mut(), N);
    assert!(first == again, "the same seed gives the same faults");
    let other = null_results(null_with(&format!("{faults},seed:1")).as_mut(), N);
    assert!(first != other, "another seed gives other faults");
}

#[test]
fn nothing_is_injected_without_a_plan_or_with_an_empty_one() {
    for engine in [
        crate::engine::open(EngineKind::Null, &EngineConfig::with_depth(1), None).unwrap(),
        null_with("none"),
    ] {
        let mut engine = engine;
        assert!(
            null_results(engine.as_mut(), 1000)
                .iter()
                .all(|&r| r == 4096)
        );
        assert_eq!(engine.counters().injected, InjectedCounts::default());
    }
    assert!(
        null_results(null_with("eio:1").as_mut(), 1000)
            .iter()
            .all(|&r| r == -i64::from(libc::EIO))
    );
}

/// Reads of 8 KiB at each 8 KiB of a 256 KiB file through `engine`, tagged
/// by their offset; returns the completions, and the file's bytes.
fn read_all(
    engine: &mut dyn Engine,
    pool: &BufPool,
    dir: &std::path::Path,
) -> (Vec<Completion>, Vec<u8>) {
    let (path, contents) = data_file(dir, "data", 256 << 10);
    let handle = add(engine, &path, &OpenOptions::default());
    let requests = (0..32u64).map(|i| Request::read(handle, i * 8192, take(pool, 8192), i * 8192));
    (run(engine, requests), contents)
}

#[test]
fn every_engine_sends_a_shortened_request_again_until_whole() {
    let pool = BufPool::new(64, 8192).unwrap();
    for depth in [1, 8] {
        for (name, mut engine) in engines("short:1", depth, false, &pool) {
            let dir = scratch();
            let (done, contents) = read_all(engine.as_mut(), &pool, dir.path());
            assert_eq!(done.len(), 32, "{name}");
            for completion in &done {
                let at = completion.offset as usize;
                assert_eq!(completion.result, 8192, "{name}: result at {at}");
                assert_eq!(completion.user_data, completion.offset, "{name}: tag");
                assert_eq!(
                    (completion.buf.start(), completion.buf.len()),
                    (0, 8192),
                    "{name}: window"
                );
                assert!(
                    completion.data() == &contents[at..at + 8192],
                    "{name}: data at {at}"
                );
            }
            let counters = engine.counters();
            assert_eq!(counters.injected.short, 32, "{name}: {counters:?}");
            assert_eq!(
                counters.short_ios,
                [32, 0],
                "{name}: the rule sent each again"
            );
        }
    }
}

#[test]
fn every_engine_retries_an_injected_eagain_up_to_its_limit() {
    let pool = BufPool::new(64, 8192).unwrap();
    for (name, mut engine) in engines("eagain:1", 4, false, &pool) {
        let dir = scratch();
        let (done, _) = read_all(engine.as_mut(), &pool, dir.path());
        assert_eq!(done.len(), 32, "{name}");
        assert!(
            done.iter().all(|c| errno(c) == Some(libc::EAGAIN)),
            "{name}"
        );
        let counters = engine.counters();
        let limit = u64::from(crate::engine::retry::RETRY_LIMIT);
        assert_eq!(counters.retries, 32 * limit, "{name}: {counters:?}");
        assert_eq!(counters.injected.eagain, 32 * (limit + 1), "{name}");
    }
}

#[test]
fn with_nowait_an_injected_eagain_is_the_callers_answer() {
    let pool = BufPool::new(64, 8192).unwrap();
    for (name, mut engine) in engines("eagain:1", 4, true, &pool) {
        let dir = scratch();
        let (done, _) = read_all(engine.as_mut(), &pool, dir.path());
        assert!(
            done.iter().all(|c| errno(c) == Some(libc::EAGAIN)),
            "{name}"
        );
        let counters = engine.counters();
        assert_eq!(
            (counters.retries, counters.injected.eagain),
            (0, 32),
            "{name}"
        );
    }
}

#[test]
fn an_injected_eio_fails_the_request_and_writes_nothing() {
    let pool = BufPool::new(64, 8192).unwrap();
    for (name, mut engine) in engines("eio:1", 4, false, &pool) {
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "data", 64 << 10);
        let handle = add(
            engine.as_mut(),
            &path,
            &crate::engine::testkit::read_write(),
        );
        let writes = (0..8u64).map(|i| {
            let mut buf = take(&pool, 8192);
            buf.as_mut_slice().fill(0xee);
            Request::write(handle, i * 8192, buf, i)
        });
        let done = run(engine.as_mut(), writes);
        assert_eq!(done.len(), 8, "{name}");
        assert!(done.iter().all(|c| errno(c) == Some(libc::EIO)), "{name}");
        assert_eq!(engine.counters().injected.eio, 8, "{name}");
        drop(engine);
        assert!(
            std::fs::read(&path).unwrap() == contents,
            "{name}: the file changed"
        );
    }
}

#[test]
fn an_injected_corruption_flips_one_bit_of_a_read_and_leaves_writes_alone() {
    let pool = BufPool::new(64, 8192).unwrap();
    for (name, mut engine) in engines("corrupt:1", 4, false, &pool) {
        let dir = scratch();
        let (done, contents) = read_all(engine.as_mut(), &pool, dir.path());
        for completion in &done {
            let at = completion.offset as usize;
            assert_eq!(completion.result, 8192, "{name}");
            let flipped: u32 = completion
                .data()
                .iter()
                .zip(&contents[at..at + 8192])
                .map(|(a, b)| (a ^ b).count_ones())
                .sum();
            assert_eq!(flipped, 1, "{name}: bits flipped in the read at {at}");
        }
        assert_eq!(engine.counters().injected.corrupt, 32, "{name}");
        // A write is written as given.
        let path = dir.path().join("data");
        let handle = add(
            engine.as_mut(),
            &path,
            &crate::engine::testkit::read_write(),
        );
        let mut buf = take(&pool, 8192);
        buf.as_mut_slice().fill(0x5a);
        let done = run(engine.as_mut(), [Request::write(handle, 0, buf, 1)]);
        assert_eq!(done[0].result, 8192, "{name}");
        drop(engine);
        assert!(
            std::fs::read(&path).unwrap()[..8192]
                .iter()
                .all(|&b| b == 0x5a),
            "{name}"
        );
    }
}

#[test]
fn a_delayed_completion_comes_no_sooner_than_the_delay() {
    let pool = BufPool::new(64, 8192).unwrap();
    let delay = Duration::from_millis(30);
    for (name, mut engine) in engines("delay:1@30ms", 2, false, &pool) {
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "data", 64 << 10);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let start = Instant::now();
        let mut done = Vec::new();
        match engine.queue(Request::read(handle, 0, take(&pool, 8192), 7)) {
            QueueOutcome::Completed(completion) => done.push(completion),
            QueueOutcome::Queued => {
                engine.commit().unwrap();
                assert_eq!(engine.in_flight(), 1, "{name}: held back, still in flight");
                finish(engine.as_mut(), &mut done);
            }
            QueueOutcome::Busy(_) => panic!("{name}: busy when empty"),
        }
        assert!(start.elapsed() >= delay, "{name}: {:?}", start.elapsed());
        assert_eq!(
            (done.len(), done[0].result, done[0].user_data),
            (1, 8192, 7),
            "{name}"
        );
        assert_eq!(engine.counters().injected.delay, 1, "{name}");
    }
}

#[test]
fn completions_held_back_count_against_the_depth() {
    let pool = BufPool::new(64, 8192).unwrap();
    let delay = Duration::from_millis(50);
    for (name, mut engine) in engines("delay:1@50ms", 2, false, &pool) {
        if engine.is_synchronous() {
            continue;
        }
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "data", 64 << 10);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let start = Instant::now();
        let mut done = Vec::new();
        for tag in 0..2 {
            match engine.queue(Request::read(handle, 0, take(&pool, 8192), tag)) {
                QueueOutcome::Queued => {}
                QueueOutcome::Completed(completion) => done.push(completion),
                QueueOutcome::Busy(_) => panic!("{name}: busy below the depth"),
            }
        }
        engine.commit().unwrap();
        // Their I/O is done long before the delay: a reap that waits for
        // nothing finds them held back, still counted, unless the delay has
        // passed (a machine too busy to come back within it).
        std::thread::sleep(Duration::from_millis(5));
        engine.reap(0, usize::MAX, &mut done).unwrap();
        if done.is_empty() {
            assert_eq!(engine.in_flight(), 2, "{name}");
            match engine.queue(Request::read(handle, 0, take(&pool, 8192), 9)) {
                QueueOutcome::Busy(_) => {}
                other => panic!("{name}: a third request at depth 2: {other:?}"),
            }
        } else {
            // The adaptive engine runs these cached reads inline, where the
            // delay blocks the caller instead; the others held them.
            assert!(
                start.elapsed() >= delay,
                "{name}: delivered before the delay"
            );
        }
        finish(engine.as_mut(), &mut done);
        assert_eq!(done.len(), 2, "{name}");
        assert!(start.elapsed() >= delay, "{name}: {:?}", start.elapsed());
    }
}

#[test]
fn mixed_faults_complete_each_request_exactly_once_whole_or_failed() {
    // Every completion keeps its buffer until the checks.
    let pool = BufPool::new(416, 8192).unwrap();
    let faults = "eio:0.05,short:0.2,eagain:0.1,delay:0.05@1ms,seed:5";
    for depth in [1, 8] {
        for (name, mut engine) in engines(faults, depth, false, &pool) {
            let dir = scratch();
            let (path, contents) = data_file(dir.path(), "data", 256 << 10);
            let handle = add(engine.as_mut(), &path, &OpenOptions::default());
            let requests = (0..400u64).map(|i| {
                let offset = (i * 7919 % 32) * 8192;
                Request::read(handle, offset, take(&pool, 8192), i)
            });
            let done = run(engine.as_mut(), requests);
            let mut seen = vec![0u32; 400];
            let mut failed = 0;
            for completion in &done {
                seen[completion.user_data as usize] += 1;
                if errno(completion) == Some(libc::EIO) {
                    failed += 1;
                    continue;
                }
                let at = completion.offset as usize;
                assert_eq!(completion.result, 8192, "{name}");
                assert!(
                    completion.data() == &contents[at..at + 8192],
                    "{name}: data at {at}"
                );
            }
            assert!(seen.iter().all(|&n| n == 1), "{name}: each request once");
            let counters = engine.counters();
            assert_eq!(counters.injected.eio, failed, "{name}: {counters:?}");
            assert_eq!(
                counters.injected.short, counters.short_ios[0],
                "{name}: {counters:?}"
            );
            assert!(
                counters.injected.short > 20 && counters.injected.delay > 0,
                "{name}: {counters:?}"
            );
        }
    }
}

#[test]
fn the_description_names_the_plan() {
    let pool = BufPool::new(4, 8192).unwrap();
    for (name, engine) in engines("eio:0.5", 2, false, &pool) {
        let description = engine.description();
        assert!(
            description.contains("+ inject(eio:0.5)"),
            "{name}: {description}"
        );
    }
}
