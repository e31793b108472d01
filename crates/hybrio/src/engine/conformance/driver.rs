//! The driver on every engine: submission order kept, completion order
//! complete, the caller's tags back, a copy in a few lines, and a pool the
//! caller holds whole refused in one error rather than a hang.

use super::*;
use crate::driver::{Driver, Order};

#[test]
fn random_reads_come_back_in_submission_order_with_their_tags_and_bytes() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 32 * 4096);
    for flavour in io_flavours() {
        let name = flavour.name();
        // Fewer buffers than requests: the driver waits for them as it goes.
        let pool = BufPool::new(flavour.config.depth as usize + 2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = engine.open_file(&path, &OpenOptions::default()).unwrap();
        let blocks: Vec<u64> = (0..100u64).map(|i| (i * 13 + 5) % 32).collect();
        let mut driver = Driver::new(engine.as_mut(), Order::Submission);
        let mut back = Vec::new();
        let mut next = blocks.iter().enumerate();
        driver
            .stream(
                &pool,
                |buf| {
                    let (i, &block) = next.next()?;
                    Some(Request::read(file, block * 4096, buf, 1000 + i as u64))
                },
                |done| {
                    // Kept: the bytes are checked below, the buffer copied out.
                    back.push((done.user_data, done.outcome(), done.data().to_vec()));
                    Ok::<(), Error>(())
                },
            )
            .unwrap();
        assert_eq!(driver.outstanding(), 0, "{name}");
        let tags: Vec<u64> = back.iter().map(|c| c.0).collect();
        assert_eq!(
            tags,
            (1000..1100).collect::<Vec<_>>(),
            "{name}: submission order"
        );
        for ((_, outcome, data), &block) in back.iter().zip(&blocks) {
            let at = block as usize * 4096;
            assert_eq!(*outcome.as_ref().unwrap(), 4096, "{name}");
            assert_eq!(data, &contents[at..at + 4096], "{name}: block {block}");
        }
        assert_eq!(pool.available(), pool.count(), "{name}");
    }
}

#[test]
fn run_keeps_the_engine_busy_and_hands_every_completion_back() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16 * 4096);
    for flavour in all_flavours() {
        let name = flavour.name();
        let pool = BufPool::new(40, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = engine.open_file(&path, &OpenOptions::default()).unwrap();
        let reads: Vec<Request> = (0..40u64)
            .map(|i| Request::read(file, (i % 16) * 4096, take(&pool, 4096), i))
            .collect();
        let mut seen = Vec::new();
        Driver::new(engine.as_mut(), Order::Completion)
            .run(reads, |c| {
                if flavour.kind != EngineKind::Null {
                    let at = (c.user_data % 16) as usize * 4096;
                    assert_eq!(c.data(), &contents[at..at + 4096], "{name}");
                }
                seen.push(c.user_data);
                Ok::<(), Error>(())
            })
            .unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..40).collect::<Vec<_>>(), "{name}: each once");
        assert_eq!(engine.in_flight(), 0, "{name}");
        assert_eq!(
            pool.available(),
            40,
            "{name}: buffers back with the completions"
        );
    }
}

#[test]
fn a_copy_is_a_few_lines_and_copies_every_byte() {
    let dir = scratch();
    let (src_path, contents) = data_file(dir.path(), "src", 20 * 4096 + 100);
    for flavour in io_flavours() {
        let name = flavour.name();
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let dst_path = dir.path().join("dst");
        // An old, longer file at the target: truncate cuts its tail.
        fs::write(&dst_path, vec![7u8; 40 * 4096]).unwrap();
        let src = engine
            .open_file(&src_path, &OpenOptions::default())
            .unwrap();
        let target = OpenOptions::new().write(true).create(true).truncate(true);
        let dst = engine.open_file(&dst_path, &target).unwrap();
        let size = contents.len() as u64;

        let mut driver = Driver::new(engine.as_mut(), Order::Completion);
        let mut offset = 0;
        loop {
            while offset < size
                && let Some(buf) = pool.take()
            {
                driver.submit(Request::read(src, offset, buf, 0)).unwrap();
                offset += 4096;
            }
            let Some(mut done) = driver.next_completion().unwrap() else {
                break;
            };
            let moved = done.outcome().unwrap();
            if done.op == Op::Read {
                let mut buf = done.take_buf();
                buf.set_len(moved);
                driver
                    .submit(Request::write(dst, done.offset, buf, 0))
                    .unwrap();
            }
        }
        drop(driver);
        let copied = fs::read(&dst_path).unwrap();
        assert_eq!(copied.len(), contents.len(), "{name}");
        assert!(copied == contents, "{name}: bytes differ");
    }
}

#[test]
fn a_pool_the_caller_holds_whole_is_an_error_not_a_hang() {
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 4 * 4096);
    for flavour in io_flavours() {
        let name = flavour.name();
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = engine.open_file(&path, &OpenOptions::default()).unwrap();
        let mut held = Vec::new();
        let mut offsets = 0..4u64;
        let error = Driver::new(engine.as_mut(), Order::Completion)
            .stream(
                &pool,
                |buf| Some(Request::read(file, offsets.next()? * 4096, buf, 0)),
                |done| {
                    held.push(done);
                    Ok::<(), Error>(())
                },
            )
            .unwrap_err();
        assert!(
            matches!(error, Error::NoBuffer { count: 2 }),
            "{name}: {error:?}"
        );
        assert_eq!(held.len(), 2, "{name}");
        assert_eq!(pool.available(), 0, "{name}");
        drop(held);
        assert_eq!(pool.available(), 2, "{name}: back once dropped");
    }
}

/// Issue 44, defect 3: a driver dropped with requests in the engine left
/// their completions, tagged with its sequence numbers, to the next driver,
/// which handed them back as its own (another request's offset and data)
/// and then panicked on a sequence number it never gave.
#[test]
fn a_driver_dropped_with_requests_in_flight_leaves_the_next_one_its_own() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16 * 4096);
    for order in [Order::Submission, Order::Completion] {
        for flavour in all_flavours() {
            let name = format!("{} {order:?}", flavour.name());
            let depth = flavour.config.depth as usize;
            let pool = BufPool::new(2 * depth + 2, 4096).unwrap();
            let Some(mut engine) = flavour.open(Some(&pool)) else {
                continue;
            };
            let file = engine.open_file(&path, &OpenOptions::default()).unwrap();
            {
                let mut first = Driver::new(engine.as_mut(), order);
                // One more than the depth: the last submit commits the others
                // to make room and takes one back.
                for i in 0..depth as u64 + 1 {
                    let block = 15 - i % 16;
                    first
                        .submit(Request::read(file, block * 4096, take(&pool, 4096), i))
                        .unwrap();
                }
                assert_eq!(first.outstanding(), depth + 1, "{name}");
                // Takes what is done without waiting, which commits the last
                // one too.
                while first.ready_completion().unwrap().is_some() {}
            }
            let mut second = Driver::new(engine.as_mut(), order);
            let reads = (0..depth as u64 + 2)
                .map(|i| Request::read(file, (i % 16) * 4096, take(&pool, 4096), 500 + i));
            let mut seen = Vec::new();
            second
                .run(reads, |done| {
                    let i = done.user_data - 500;
                    assert_eq!(done.offset, (i % 16) * 4096, "{name}: tag {i}'s offset");
                    if flavour.kind != EngineKind::Null {
                        let at = done.offset as usize;
                        assert_eq!(done.outcome().unwrap(), 4096, "{name}");
                        assert_eq!(done.data(), &contents[at..at + 4096], "{name}: tag {i}");
                    }
                    seen.push(done.user_data);
                    Ok::<(), Error>(())
                })
                .unwrap();
            assert_eq!(second.outstanding(), 0, "{name}");
            drop(second);
            if order == Order::Completion {
                seen.sort_unstable();
            }
            assert_eq!(
                seen,
                (500..500 + depth as u64 + 2).collect::<Vec<_>>(),
                "{name}: each of the second driver's requests once, none of the first's"
            );
            // The first driver's requests are the engine's until it drops.
            drop(engine);
            assert_eq!(pool.available(), pool.count(), "{name}: buffers back");
        }
    }
}
