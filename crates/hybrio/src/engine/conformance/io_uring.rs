//! The suite's io_uring part: its set-up ladder, registered files and
//! buffers, and what dropping a ring with requests in flight does.

use std::os::fd::AsFd;

use super::*;
use crate::engine::testkit;

/// An io_uring engine built from `config`, or `None` when this system has none.
fn uring(config: EngineConfig, pool: Option<&BufPool>) -> Option<Box<dyn Engine>> {
    Flavour {
        config,
        ..Flavour::new(EngineKind::IoUring, 1)
    }
    .open(pool)
}

#[test]
fn reaping_without_waiting_still_delivers() {
    // With DEFER_TASKRUN completions exist only once an enter runs the task
    // work: a reap(0, ..) poll loop must still see them.
    for flavour in all_flavours() {
        let pool = BufPool::new(1, 4096).unwrap();
        let Some(mut engine) = flavour.open(None) else {
            continue;
        };
        // A new adaptive engine does its first requests inline.
        if engine.is_synchronous() || engine.kind() == EngineKind::Adaptive {
            continue;
        }
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 4096);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let read = Request::read(handle, 0, take(&pool, 4096), 5);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        assert_eq!(engine.commit().unwrap(), 1);
        let mut done = Vec::new();
        for _ in 0..5000 {
            if engine.reap(0, 8, &mut done).unwrap() > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(
            done.len(),
            1,
            "{}: polling never saw the completion",
            flavour.name()
        );
        assert_eq!((done[0].user_data, done[0].result), (5, 4096));
    }
}

#[test]
fn io_uring_engine_can_move_to_another_thread() {
    let pool = BufPool::new(16, 4096).unwrap();
    let mut config = EngineConfig::with_depth(8);
    config.fixed_buffers = true;
    config.register_files = true;
    let Some(mut engine) = uring(config, Some(&pool)) else {
        return;
    };
    let dir = scratch();
    let path = dir.path().join("moved");
    // Registered before the move, driven after it.
    let handle = add(engine.as_mut(), &path, &read_write());
    std::thread::spawn(move || {
        engine.remove_file(handle).unwrap();
        round_trip(
            engine.as_mut(),
            &pool,
            &path,
            &read_write(),
            "io_uring on another thread",
        );
    })
    .join()
    .unwrap();
}

#[test]
fn io_uring_registered_file_table_grows() {
    let pool = BufPool::new(2, 4096).unwrap();
    let mut config = EngineConfig::with_depth(2);
    config.register_files = true;
    let Some(mut engine) = uring(config, None) else {
        return;
    };
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 8192);
    let handles: Vec<FileHandle> = (0..150)
        .map(|_| add(engine.as_mut(), &path, &OpenOptions::default()))
        .collect();
    for &handle in [handles[0], handles[63], handles[64], handles[149]].iter() {
        let done = run_one(
            engine.as_mut(),
            Request::read(handle, 4096, take(&pool, 4096), handle.0.into()),
        );
        assert_eq!(done.result, 4096, "handle {}", handle.0);
        assert!(
            done.buf.as_slice() == &contents[4096..],
            "handle {}",
            handle.0
        );
    }
    engine.remove_file(handles[64]).unwrap();
    let done = run_one(
        engine.as_mut(),
        Request::read(handles[64], 0, take(&pool, 4096), 0),
    );
    assert_eq!(errno(&done), Some(libc::EBADF));
    let reused = add(engine.as_mut(), &path, &OpenOptions::default());
    assert_eq!(reused, handles[64]);
    assert_eq!(
        run_one(
            engine.as_mut(),
            Request::read(reused, 0, take(&pool, 4096), 0)
        )
        .result,
        4096
    );
}

#[test]
fn io_uring_fixed_buffers_accept_foreign_buffers_too() {
    let registered = BufPool::new(2, 8192).unwrap();
    let foreign = BufPool::new(2, 4096).unwrap();
    let mut config = EngineConfig::with_depth(4);
    config.fixed_buffers = true;
    let Some(mut engine) = uring(config, Some(&registered)) else {
        return;
    };
    assert!(
        engine.description().contains("fixed buffers"),
        "{}",
        engine.description()
    );
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16384);
    let handle = add(engine.as_mut(), &path, &OpenOptions::default());
    let done = run(
        engine.as_mut(),
        [
            Request::read(handle, 0, take(&registered, 8192), 0),
            Request::read(handle, 8192, take(&registered, 8192), 1),
            Request::read(handle, 4096, take(&foreign, 4096), 2),
        ],
    );
    for completion in done {
        let buf = &completion.buf;
        let at = completion.offset as usize;
        assert_eq!(
            completion.result,
            buf.len() as i64,
            "request {}",
            completion.user_data
        );
        assert!(
            buf.as_slice() == &contents[at..at + buf.len()],
            "request {}",
            completion.user_data
        );
    }
}

#[test]
fn io_uring_hipri_fails_per_request_on_a_device_without_poll_queues() {
    let pool = BufPool::new(1, 4096).unwrap();
    let mut config = EngineConfig::with_depth(2);
    config.hipri = true;
    let engine = match crate::engine::open(EngineKind::IoUring, &config, None) {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("skipping hipri: {e}");
            return;
        }
    };
    let mut engine = engine;
    assert!(
        engine.description().contains("IOPOLL"),
        "{}",
        engine.description()
    );
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 4096);
    let direct = OpenOptions {
        direct: probe::o_direct_supported(dir.path()),
        ..OpenOptions::default()
    };
    let handle = add(engine.as_mut(), &path, &direct);
    let done = run_one(
        engine.as_mut(),
        Request::read(handle, 0, take(&pool, 4096), 1),
    );
    // Polled completion needs a device with poll queues; without, the request fails alone.
    assert!(
        done.result == 4096
            || matches!(
                errno(&done),
                Some(libc::EOPNOTSUPP | libc::EINVAL | libc::EAGAIN)
            ),
        "hipri read: {}",
        done.result
    );
    eprintln!(
        "hipri read on {}: result {}",
        dir.path().display(),
        done.result
    );
}

#[test]
fn io_uring_reports_its_setup() {
    let Some(engine) = uring(EngineConfig::with_depth(4), None) else {
        return;
    };
    let description = engine.description();
    eprintln!("io_uring setup accepted here: {description}");
    assert!(description.starts_with("io_uring ("), "{description}");
    assert!(description.ends_with("depth 4)"), "{description}");
}

#[test]
fn every_flavour_is_built_as_configured() {
    for flavour in all_flavours() {
        let pool = BufPool::new(1, 4096).unwrap();
        let Some(engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let description = engine.description();
        eprintln!("{}: {description}", flavour.name());
        assert_eq!(engine.kind(), flavour.kind);
        assert!(
            description.starts_with(flavour.kind.name()),
            "{description}"
        );
        let c = &flavour.config;
        for (asked, shown) in [
            (c.sq_thread_poll, "SQPOLL"),
            (c.register_files, "registered files"),
            (c.fixed_buffers, "fixed buffers"),
        ] {
            assert_eq!(
                description.contains(shown),
                asked,
                "{}: {description}",
                flavour.name()
            );
        }
    }
}

/// A pipe whose read end never gets data while the test runs: a read from
/// it stays in flight until cancelled.
fn silent_pipe() -> (File, std::io::PipeWriter) {
    let (reader, writer) = std::io::pipe().unwrap();
    (File::from(std::os::fd::OwnedFd::from(reader)), writer)
}

#[test]
fn dropping_an_io_uring_engine_cancels_requests_that_would_never_end() {
    for depth in [1, 4] {
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = uring(EngineConfig::with_depth(depth), None) else {
            return;
        };
        let (read_end, _write_end) = silent_pipe();
        let handle = engine.add_file(read_end, "pipe".into()).unwrap();
        let read = Request::read(handle, 0, take(&pool, 4096), 1);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        engine.commit().unwrap();
        let mut done = Vec::new();
        assert_eq!(
            engine.reap(0, 1, &mut done).unwrap(),
            0,
            "nothing was written"
        );
        drop(engine);
        assert_eq!(
            pool.available(),
            2,
            "the cancelled read gave its buffer back"
        );
    }
}

#[test]
fn dropping_cancels_on_kernels_without_sync_cancel() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let pool = BufPool::new(2, 4096).unwrap();
    let mut engine =
        crate::engine::io_uring::IoUringEngine::new(&EngineConfig::with_depth(2), None).unwrap();
    engine.behave_without_sync_cancel();
    let (read_end, _write_end) = silent_pipe();
    let handle = engine.add_file(read_end, "pipe".into()).unwrap();
    for tag in 0..2 {
        let read = Request::read(handle, 0, take(&pool, 4096), tag);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    engine.commit().unwrap();
    drop(engine);
    assert_eq!(
        pool.available(),
        2,
        "both reads were cancelled one by one and gave their buffers back"
    );
}

#[test]
fn uncommitted_requests_are_not_performed_when_an_io_uring_engine_is_dropped() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Repeated: the old behaviour (submit, then cancel) raced and wrote now and then.
    for round in 0..20 {
        let path = dir.path().join(format!("f{round}"));
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = uring(EngineConfig::with_depth(2), None) else {
            return;
        };
        let opts = OpenOptions {
            read: true,
            write: true,
            create: true,
            direct: false,
            ..Default::default()
        };
        let handle = engine
            .add_file(file::open(&path, &opts).unwrap(), path.clone())
            .unwrap();
        // One committed request enables the ring; the second is never committed.
        let mut first = take(&pool, 4096);
        first.as_mut_slice().fill(1);
        let done = run(engine.as_mut(), [Request::write(handle, 0, first, 0)]);
        assert_eq!(done[0].result, 4096);
        drop(done);
        let mut second = take(&pool, 4096);
        second.as_mut_slice().fill(2);
        assert!(matches!(
            engine.queue(Request::write(handle, 4096, second, 1)),
            QueueOutcome::Queued
        ));
        drop(engine);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            4096,
            "round {round}: the uncommitted write must not happen"
        );
        assert_eq!(pool.available(), 2);
    }
}

#[test]
fn io_uring_dropped_by_a_foreign_thread_never_frees_in_flight_buffers() {
    for any_thread in [false, true] {
        dropped_by_a_foreign_thread(any_thread);
    }
}

/// Issue 44, defect 6: an engine made for `any_thread` is driven by one
/// thread, then another, and dropped by a third that cancels and waits.
fn dropped_by_a_foreign_thread(any_thread: bool) {
    let pool = BufPool::new(2, 4096).unwrap();
    let config = EngineConfig {
        any_thread,
        ..EngineConfig::with_depth(2)
    };
    let Some(mut engine) = uring(config, None) else {
        return;
    };
    let (read_end, write_end) = silent_pipe();
    let handle = engine.add_file(read_end, "pipe".into()).unwrap();
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 8192);
    let data = add(engine.as_mut(), &path, &read_write());
    let read = Request::read(handle, 0, take(&pool, 4096), 1);
    let (send_engine, engine_back) = std::sync::mpsc::channel();
    let (send_done, dropped) = std::sync::mpsc::channel::<()>();
    // Committed on another thread, which a SINGLE_ISSUER ring then belongs to;
    // that thread stays alive (its exit would cancel the read) until the drop.
    let owner = std::thread::spawn(move || {
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        engine.commit().unwrap();
        send_engine.send(engine).unwrap();
        dropped.recv().unwrap();
    });
    let mut engine = engine_back.recv().unwrap();
    let description = engine.description();
    if any_thread {
        // Driven from here now, with the other thread's read in flight.
        let read = Request::read(data, 4096, take(&pool, 4096), 2);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        assert_eq!(engine.commit().unwrap(), 1, "{description}");
        let mut done = Vec::new();
        assert_eq!(engine.reap(1, 1, &mut done).unwrap(), 1, "{description}");
        assert_eq!(done[0].result, 4096, "{description}");
        assert_eq!(done[0].data(), &contents[4096..], "{description}");
    }
    drop(engine);
    // A DEFER_TASKRUN ring can be neither cancelled nor waited on from here:
    // its request and buffer must be leaked, not freed. Other rings cancel
    // the read and give the buffer back.
    let expected = if description.contains("DEFER_TASKRUN") {
        assert!(!any_thread, "{description}");
        1
    } else {
        2
    };
    assert_eq!(pool.available(), expected, "{description}");
    send_done.send(()).unwrap();
    owner.join().unwrap();
    drop(write_end);
}

#[test]
fn an_io_uring_engine_reaped_elsewhere_is_woken_through_its_completion_fd() {
    // Rings that finish completions in their submitter's own kernel entries
    // offer none.
    for any_thread in [false, true] {
        let config = EngineConfig {
            any_thread,
            ..EngineConfig::with_depth(1)
        };
        if let Some(engine) = uring(config, None) {
            assert!(engine.completion_fd().is_none(), "{}", engine.description());
        }
    }
    let dir = scratch();
    // A read from the device: its completion comes from the block layer.
    if crate::probe::o_direct_supported(dir.path()) {
        let (path, contents) = data_file(dir.path(), "direct", 8192);
        woken_elsewhere(
            |engine| {
                add(
                    engine,
                    &path,
                    &OpenOptions {
                        direct: true,
                        ..OpenOptions::default()
                    },
                )
            },
            4096,
            || {},
            &contents[4096..],
        );
    } else {
        eprintln!(
            "no O_DIRECT in {}: the device read is left out",
            dir.path().display()
        );
    }
    // A read from a pipe: its completion comes when the data does.
    let (read_end, mut write_end) = std::io::pipe().unwrap();
    let mut read_end = Some(File::from(std::os::fd::OwnedFd::from(read_end)));
    let message: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    woken_elsewhere(
        |engine| {
            engine
                .add_file(read_end.take().unwrap(), "pipe".into())
                .unwrap()
        },
        0,
        // All 4096 bytes at once: a part would be a short read, sent again.
        || std::io::Write::write_all(&mut write_end, &message).unwrap(),
        &message,
    );
}

/// An engine made for [`EngineConfig::reaped_elsewhere`] reads 4096 bytes
/// at `offset` of the file `add` adds, queued and committed by a thread
/// that then sleeps (as a runtime's idle worker does), never entering
/// io_uring again; after `feed`, the completion must reach the engine's
/// completion descriptor, polled here, and carry `expected`. (What the
/// interrupting task-run mode adds over COOP_TASKRUN is time: under the
/// latter the completion waits for the sleeper's next return to user space,
/// a timer tick or more. That shows in hybrio-tokio's benchmark, 6-7k
/// against 38-42k O_DIRECT reads a second, not in an assertion.)
fn woken_elsewhere(
    add: impl FnOnce(&mut dyn Engine) -> FileHandle,
    offset: u64,
    feed: impl FnOnce(),
    expected: &[u8],
) {
    let config = EngineConfig {
        reaped_elsewhere: true,
        ..EngineConfig::with_depth(2)
    };
    let Some(mut engine) = uring(config, None) else {
        return;
    };
    let description = engine.description();
    let completions = engine
        .completion_fd()
        .expect("an engine reaped elsewhere has a completion descriptor")
        .try_clone_to_owned()
        .unwrap();
    let readable = |timeout| testkit::readable_within(completions.as_fd(), timeout);
    let handle = add(engine.as_mut());
    let pool = BufPool::new(1, 4096).unwrap();
    let engine = std::sync::Arc::new(std::sync::Mutex::new(engine));
    let (submitted, wait_submitted) = std::sync::mpsc::channel();
    let (release, parked) = std::sync::mpsc::channel::<()>();
    let submitter = {
        let engine = engine.clone();
        let buf = take(&pool, 4096);
        std::thread::spawn(move || {
            let mut engine = engine.lock().unwrap();
            let read = Request::read(handle, offset, buf, 7);
            assert!(matches!(engine.queue(read), QueueOutcome::Queued));
            assert_eq!(engine.commit().unwrap(), 1);
            drop(engine);
            submitted.send(()).unwrap();
            // Asleep until the test ends.
            parked.recv().unwrap();
        })
    };
    wait_submitted.recv().unwrap();
    feed();
    // A hang guard: the completion comes within microseconds when it comes.
    assert!(
        readable(std::time::Duration::from_secs(60)),
        "{description}: the completion never reached the descriptor"
    );
    let mut done = Vec::new();
    let mut engine = engine.lock().unwrap();
    assert_eq!(engine.reap(0, 4, &mut done).unwrap(), 1, "{description}");
    assert_eq!(
        (done[0].user_data, done[0].result),
        (7, 4096),
        "{description}"
    );
    assert_eq!(done[0].data(), expected, "{description}");
    // Reaped, nothing waits: the descriptor is quiet again.
    assert!(!readable(std::time::Duration::ZERO), "{description}");
    drop(engine);
    release.send(()).unwrap();
    submitter.join().unwrap();
}

#[test]
fn a_request_sent_to_the_kernels_workers_completes_as_any_other() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 3 * 4096);
    for flavour in all_flavours() {
        let pool = BufPool::new(1, 4096).unwrap();
        let Some(mut engine) = flavour.open(None) else {
            continue;
        };
        // The null engine moves no bytes.
        if engine.kind() == EngineKind::Null {
            continue;
        }
        let description = engine.description();
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let read = Request::read(handle, 4096, take(&pool, 4096), 3).to_kernel_workers();
        let done = run_one(engine.as_mut(), read);
        assert_eq!((done.user_data, done.result), (3, 4096), "{description}");
        assert_eq!(done.data(), &contents[4096..8192], "{description}");
    }
}
