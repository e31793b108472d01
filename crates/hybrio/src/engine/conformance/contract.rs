//! The contract a caller writes its loops against ([`Engine`]'s docs), on
//! every engine: a natural refill loop ends and reads the right bytes,
//! `Busy` comes only when the engine is full, `in_flight` is the caller's
//! own count of requests not yet handed back, a caller may hold completions
//! (their buffers come back to the pool when it lets go of them), and
//! [`Engine::open_file`] opens and adds a file with its path given once.

use super::*;

/// What a refill loop saw.
#[derive(Debug, Default)]
struct Seen {
    completed: usize,
    busy: usize,
    inline: usize,
}

/// The loop a new user writes: while there is work and a free buffer, queue
/// a read; take what `queue` completes at once; on `Busy` keep the request
/// for later; then commit, and reap at least one when anything is out.
/// Checks every answer against the contract as it goes, and every byte.
fn refill_loop(
    engine: &mut dyn Engine,
    pool: &BufPool,
    file: FileHandle,
    contents: &[u8],
    reads: usize,
    depth: usize,
    name: &str,
) -> Seen {
    let blocks = contents.len() / 4096;
    let mut free: Vec<Buf> = std::iter::from_fn(|| pool.take()).collect();
    let buffers = free.len();
    let mut next = 0usize;
    let mut waiting: Option<Request> = None;
    let mut outstanding = 0usize;
    let mut seen = Seen::default();
    let mut done = Vec::new();
    let check = |c: &Completion, seen: &mut Seen| {
        let offset = c.offset as usize;
        let buf = &c.buf;
        assert_eq!(c.result, 4096, "{name}: read at {offset}");
        assert_eq!(
            buf.as_slice(),
            &contents[offset..offset + 4096],
            "{name}: bytes at {offset}"
        );
        seen.completed += 1;
    };
    // Bounded: each turn completes or reaps something, or the contract broke.
    for _turn in 0..reads * 4 + 16 {
        if seen.completed == reads {
            break;
        }
        loop {
            let request = match waiting.take() {
                Some(request) => request,
                None if next < reads => match free.pop() {
                    Some(mut buf) => {
                        buf.set_len(4096);
                        let block = (next * 7) % blocks;
                        next += 1;
                        Request::read(file, (block * 4096) as u64, buf, next as u64)
                    }
                    None => break,
                },
                None => break,
            };
            match engine.queue(request) {
                QueueOutcome::Completed(mut c) => {
                    check(&c, &mut seen);
                    seen.inline += 1;
                    free.push(c.take_buf());
                }
                QueueOutcome::Queued => outstanding += 1,
                QueueOutcome::Busy(request) => {
                    seen.busy += 1;
                    assert!(
                        engine.in_flight() >= depth,
                        "{name}: Busy with {} in flight, depth {depth}",
                        engine.in_flight()
                    );
                    waiting = Some(request);
                    break;
                }
            }
            assert_eq!(engine.in_flight(), outstanding, "{name}: in_flight");
        }
        engine.commit().unwrap();
        if outstanding > 0 {
            engine.reap(1, usize::MAX, &mut done).unwrap();
            for mut c in done.drain(..) {
                check(&c, &mut seen);
                outstanding -= 1;
                free.push(c.take_buf());
            }
            assert_eq!(
                engine.in_flight(),
                outstanding,
                "{name}: in_flight after reap"
            );
        }
    }
    assert_eq!(
        seen.completed, reads,
        "{name}: the loop did not end: {seen:?}"
    );
    assert_eq!((outstanding, engine.in_flight()), (0, 0), "{name}");
    assert_eq!(free.len(), buffers, "{name}: every buffer back");
    seen
}

#[test]
fn a_refill_loop_ends_reads_every_byte_and_is_busy_only_when_full() {
    let dir = scratch();
    // Cached data: the adaptive engine completes these inline, holding
    // completions behind its asynchronous ones.
    let (path, contents) = data_file(dir.path(), "f", 64 * 4096);
    for flavour in all_flavours() {
        let name = flavour.name();
        // More buffers than the depth, so that the engine, not the pool,
        // says when to stop: Busy must then mean full.
        let depth = flavour.config.depth as usize;
        let pool = BufPool::new(depth * 2 + 1, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = add(engine.as_mut(), &path, &OpenOptions::default());
        if flavour.kind == EngineKind::Null {
            // No bytes to check: its reads leave the buffer as it was.
            continue;
        }
        let seen = refill_loop(engine.as_mut(), &pool, file, &contents, 300, depth, &name);
        if engine.is_synchronous() {
            assert_eq!(
                seen.inline, 300,
                "{name}: a synchronous engine completes in queue"
            );
        }
    }
}

#[test]
fn a_caller_may_hold_completions_and_their_buffers_come_back_when_dropped() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16 * 4096);
    for flavour in all_flavours() {
        let name = flavour.name();
        let pool = BufPool::new(8, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = add(engine.as_mut(), &path, &OpenOptions::default());
        let reads = (0..8u64).map(|i| Request::read(file, i * 4096, take(&pool, 4096), i));
        let held = run(engine.as_mut(), reads);
        assert_eq!(held.len(), 8, "{name}");
        // Held completions keep their buffers: the pool is empty until the
        // caller lets go of them.
        assert_eq!(pool.available(), 0, "{name}");
        assert!(pool.take().is_none(), "{name}");
        if flavour.kind != EngineKind::Null {
            for c in &held {
                let at = c.offset as usize;
                assert_eq!(c.buf.as_slice(), &contents[at..at + 4096], "{name}");
            }
        }
        drop(held);
        assert_eq!(
            pool.available(),
            8,
            "{name}: dropping a completion returns its buffer"
        );
    }
}

#[test]
fn a_completion_hands_its_buffer_back_without_an_option() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 4 * 4096);
    for flavour in io_flavours() {
        let name = flavour.name();
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = add(engine.as_mut(), &path, &read_write());
        let mut read = run_one(
            engine.as_mut(),
            Request::read(file, 8192, take(&pool, 4096), 7),
        );
        assert_eq!(read.data(), &contents[8192..12288], "{name}");
        // The buffer comes out as a `Buf`, and the completion stays whole.
        let buf: Buf = read.take_buf();
        assert_eq!(read.outcome().unwrap(), 4096, "{name}");
        assert!(read.error().is_none() && read.data().is_empty(), "{name}");
        assert_eq!((buf.pool_id(), buf.len()), (pool.id(), 4096), "{name}");
        assert_eq!(pool.available(), 1, "{name}: the taken buffer is held");
        drop(buf);
        assert_eq!(pool.available(), 2, "{name}: dropped, it is back");
        // A sync carries the empty buffer, which no pool misses.
        let sync = run_one(engine.as_mut(), Request::sync(file, false, 8));
        assert_eq!(sync.outcome().unwrap(), 0, "{name}");
        assert_eq!((sync.buf.capacity(), sync.buf.pool_id()), (0, 0), "{name}");
        drop(sync);
        assert_eq!(pool.available(), 2, "{name}");
    }
}

#[test]
fn open_file_opens_and_adds_with_the_path_given_once() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 4 * 4096);
    for flavour in io_flavours() {
        let name = flavour.name();
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let file = engine.open_file(&path, &OpenOptions::default()).unwrap();
        let c = run_one(
            engine.as_mut(),
            Request::read(file, 4096, take(&pool, 4096), 1),
        );
        assert_eq!(c.buf.as_slice(), &contents[4096..8192], "{name}");
        // A file that is not there: one error naming the open and the path, no offset.
        let missing = dir.path().join("missing");
        let error = engine
            .open_file(&missing, &OpenOptions::default())
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with(&format!("open {}: ", missing.display())) && !text.contains("offset"),
            "{name}: {text}"
        );
    }
}

#[test]
fn truncate_cuts_the_old_tail_and_mode_sets_the_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "old", 8 * 4096);
    let copy = OpenOptions::new().write(true).create(true).truncate(true);
    drop(file::open(&path, &copy).unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    let new = dir.path().join("new");
    drop(file::open(&new, &copy.mode(0o600)).unwrap());
    assert_eq!(
        fs::metadata(&new).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// Issue 44, defect 2: the pool and null engines made room for the whole
/// depth up front, so the largest depth C can ask for (`u32::MAX`) ended the
/// process with Rust's out-of-memory abort. Every engine either opens at that
/// depth and works, or refuses it in an error.
#[test]
fn the_largest_depth_opens_and_works_or_is_refused_in_an_error() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 8192);
    for kind in EngineKind::ALL {
        if let Err(reason) = probe::engine_available(kind) {
            eprintln!("skipping {kind}: {reason}");
            continue;
        }
        let mut engine = match crate::engine::open(kind, &EngineConfig::with_depth(u32::MAX), None)
        {
            Ok(engine) => engine,
            Err(error) => {
                // Refused: in words, naming the engine.
                let text = error.to_string();
                assert!(text.contains(kind.name()), "{kind}: {text}");
                eprintln!("{kind} at depth u32::MAX: {text}");
                continue;
            }
        };
        let file = engine.open_file(&path, &OpenOptions::default()).unwrap();
        let pool = BufPool::new(2, 4096).unwrap();
        let reads = (0..2u64).map(|i| Request::read(file, i * 4096, take(&pool, 4096), i));
        let done = run(engine.as_mut(), reads);
        assert_eq!(done.len(), 2, "{kind}");
        for completion in &done {
            assert_eq!(completion.result, 4096, "{kind}");
            if kind != EngineKind::Null {
                let at = completion.offset as usize;
                assert_eq!(completion.data(), &contents[at..at + 4096], "{kind}");
            }
        }
    }
}
