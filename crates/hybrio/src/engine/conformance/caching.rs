//! The suite's caching part: uncached I/O (`RWF_DONTCACHE`) through every
//! engine that takes it, the right bytes and no pages left in the page
//! cache; and the one-line refusals of the engines and files that cannot.

use std::path::Path;

use super::{Flavour, io_flavours};
use crate::Error;
use crate::buf::BufPool;
use crate::engine::testkit::{add, pattern, read_write, run, scratch, take};
use crate::engine::{Engine, EngineKind};
use crate::file::Caching;
use crate::file::FileHandle;
use crate::request::Request;
use crate::sys;

const LEN: usize = 1 << 20;
const BLOCK: usize = 64 << 10;

/// Pages of the file at `path` in the page cache.
fn resident(path: &Path) -> usize {
    resident_of(path, LEN)
}

/// Whether this flavour can take uncached files (on a filesystem that can).
fn takes_uncached(flavour: &Flavour) -> bool {
    flavour.config.completion_latency.is_none()
        && matches!(
            flavour.kind,
            EngineKind::Pvsync2 | EngineKind::IoUring | EngineKind::Pool | EngineKind::Adaptive
        )
}

/// Checks that the uncached requests left the file's pages out of the
/// cache: fewer than half of them, where cached I/O leaves all 256. How many
/// is the kernel's business: it drops an uncached page only when nothing
/// else holds it and it gets the page's lock at once (the end of a write's
/// writeback may not); one request at a time mostly leaves none, requests
/// side by side (a pool's workers) some that another held or read ahead
/// (up to 31 seen). Injected faults are not checked: a short read is read
/// again from where it stopped, over pages the first one read ahead (up to
/// 120 left, with the pool).
fn assert_uncached(flavour: &Flavour, path: &Path, what: &str) {
    let name = flavour.name();
    let left = resident(path);
    if flavour.config.inject.is_some() {
        return;
    }
    if left > 0 {
        eprintln!("{name}: {left} pages left after the uncached {what}");
    }
    assert!(
        left < LEN / 4096 / 2,
        "{name}: {left} pages left after the uncached {what}"
    );
}

#[test]
fn uncached_files_get_their_bytes_and_leave_no_pages_in_the_cache() {
    let dir = scratch();
    if !uncached_goes_in(dir.path()) {
        return;
    }
    for (number, flavour) in io_flavours().into_iter().enumerate() {
        let pool = BufPool::new(LEN / BLOCK, BLOCK).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let path = dir.path().join(format!("uncached-{number}"));
        // Sparse: no page of it is in the cache before the engine writes.
        std::fs::File::create(&path)
            .unwrap()
            .set_len(LEN as u64)
            .unwrap();
        let file = add(engine.as_mut(), &path, &read_write());
        match engine.set_caching(file, Caching::Uncached) {
            Ok(()) => assert!(takes_uncached(&flavour), "{name} took an uncached file"),
            Err(Error::CachingUnsupported { engine }) => {
                assert!(!takes_uncached(&flavour), "{name} refused it: {engine}");
                assert!(matches!(
                    flavour.kind,
                    EngineKind::Sync
                        | EngineKind::Psync
                        | EngineKind::Libaio
                        | EngineKind::Posixaio
                ));
                continue;
            }
            Err(Error::UncachedRefused { reason, .. }) => {
                assert!(
                    flavour.config.completion_latency.is_some(),
                    "{name}: {reason}"
                );
                assert!(reason.contains("emulated device"), "{name}: {reason}");
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        }
        let mut data = vec![0u8; LEN];
        pattern(number as u64 + 1, &mut data);
        let writes = data.chunks(BLOCK).enumerate().map(|(i, chunk)| {
            let mut buf = take(&pool, BLOCK);
            buf.as_mut_slice().copy_from_slice(chunk);
            Request::write(file, (i * BLOCK) as u64, buf, i as u64)
        });
        for done in run(engine.as_mut(), writes) {
            assert_eq!(done.result, BLOCK as i64, "{name}: write {done:?}");
        }
        let synced = run(engine.as_mut(), [Request::sync(file, true, 0)]);
        assert_eq!(synced[0].result, 0, "{name}: fdatasync");
        assert_uncached(&flavour, &path, "writes");
        let reads = (0..LEN / BLOCK)
            .map(|i| Request::read(file, (i * BLOCK) as u64, take(&pool, BLOCK), i as u64));
        for done in run(engine.as_mut(), reads) {
            assert_eq!(done.result, BLOCK as i64, "{name}: read {done:?}");
            let at = done.offset as usize;
            assert!(
                done.buf.as_slice() == &data[at..at + BLOCK],
                "{name}: the bytes read at {at} differ"
            );
        }
        assert_uncached(&flavour, &path, "reads");
    }
}

/// Whether uncached I/O can go in `dir`; says why not if not.
fn uncached_goes_in(dir: &Path) -> bool {
    let probe = dir.join("probe");
    std::fs::write(&probe, b"x").unwrap();
    let probe = std::fs::File::open(&probe).unwrap();
    match sys::probe_uncached(std::os::fd::AsRawFd::as_raw_fd(&probe)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!(
                "skipping: {} does not take RWF_DONTCACHE here: {e}",
                dir.display()
            );
            false
        }
    }
}

const MIB: usize = 1 << 20;
/// Buffers in the pool of the auto tests.
const BATCH: usize = 8;

/// Writes `blocks` MiB of `seed`'s pattern to `file` from `from` MiB on,
/// and syncs; gives back the bytes.
fn write_mib(
    engine: &mut dyn Engine,
    pool: &BufPool,
    file: FileHandle,
    from: usize,
    blocks: usize,
    seed: u64,
) -> Vec<u8> {
    let mut data = vec![0u8; blocks * MIB];
    pattern(seed, &mut data);
    // A batch at a time: the pool has `BATCH` buffers, and the completions
    // give theirs back when dropped.
    for (batch, chunks) in data.chunks(BATCH * MIB).enumerate() {
        let writes = chunks.chunks(MIB).enumerate().map(|(i, chunk)| {
            let mut buf = take(pool, MIB);
            buf.as_mut_slice().copy_from_slice(chunk);
            let at = from + batch * BATCH + i;
            Request::write(file, (at * MIB) as u64, buf, at as u64)
        });
        for done in run(engine, writes) {
            assert_eq!(done.result, MIB as i64, "write {done:?}");
        }
    }
    let synced = run(engine, [Request::sync(file, true, 0)]);
    assert_eq!(synced[0].result, 0, "fdatasync");
    data
}

/// Reads `expected.len()` bytes from `from` MiB on and compares them.
fn read_mib(
    engine: &mut dyn Engine,
    pool: &BufPool,
    file: FileHandle,
    from: usize,
    expected: &[u8],
) {
    for batch in (0..expected.len() / MIB).collect::<Vec<_>>().chunks(BATCH) {
        let reads = batch
            .iter()
            .map(|&i| Request::read(file, ((from + i) * MIB) as u64, take(pool, MIB), i as u64));
        for done in run(engine, reads) {
            assert_eq!(done.result, MIB as i64, "read {done:?}");
            let at = done.offset as usize - from * MIB;
            assert!(
                done.buf.as_slice() == &expected[at..at + MIB],
                "the bytes read at {} differ",
                done.offset
            );
        }
    }
}

/// Pages of the first `len` bytes of the file at `path` in the page cache.
fn resident_of(path: &Path, len: usize) -> usize {
    let file = std::fs::File::open(path).unwrap();
    sys::resident_pages(std::os::fd::AsRawFd::as_raw_fd(&file), len).unwrap()
}

/// Asserts that nearly all of the first `len` bytes of the file at `path`
/// are in the page cache: what hybrio sent uncached would be missing whole
/// (thousands of pages here), while the kernel may drop a few pages of what
/// hybrio left cached (a busy machine's writeback and reclaim; a flake hunt
/// saw 12286 of 12288).
fn assert_cached(path: &Path, len: usize, what: &str) {
    let pages = len / 4096;
    let resident = resident_of(path, len);
    assert!(
        resident >= pages - pages / 64,
        "{what}: {resident} of {pages} pages in the page cache"
    );
}

#[test]
fn auto_caching_writes_a_stream_uncached_once_the_cache_is_full_on_adaptive_only() {
    let dir = scratch();
    if !uncached_goes_in(dir.path()) {
        return;
    }
    // The machine's dirty pages at the kernel's background threshold: past
    // its first chunk, the stream goes uncached.
    crate::engine::adaptive::pretend_dirty_pages(0, 0);
    let head = crate::engine::adaptive::AutoRoom::now().chunk as usize / MIB;
    let tail = 32;
    let len = (head + tail) * MIB;
    let flavours = [
        Flavour::new(EngineKind::Adaptive, 1),
        Flavour::new(EngineKind::Adaptive, 8),
        Flavour::without_io_uring(8),
        Flavour::new(EngineKind::Psync, 1),
        Flavour::new(EngineKind::IoUring, 8),
    ];
    for (number, flavour) in flavours.into_iter().enumerate() {
        let pool = BufPool::new(BATCH, MIB).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let path = dir.path().join(format!("auto-{number}"));
        let file = add(engine.as_mut(), &path, &read_write());
        engine.set_caching(file, Caching::Auto).unwrap();
        let data = write_mib(
            engine.as_mut(),
            &pool,
            file,
            0,
            head + tail,
            number as u64 + 1,
        );
        let left = resident_of(&path, len);
        let (head_pages, tail_pages) = (head * MIB / 4096, tail * MIB / 4096);
        if flavour.kind == EngineKind::Adaptive {
            // The head stays cached; of the tail, requests side by side
            // may leave a few pages another held.
            assert!(
                left >= head_pages * 9 / 10 && left <= head_pages + tail_pages / 4,
                "{name}: {left} pages left of a {head}+{tail} MiB stream"
            );
        } else {
            assert_cached(&path, len, &format!("{name}: auto is cached here"));
        }
        read_mib(engine.as_mut(), &pool, file, 0, &data);
    }
}

#[test]
fn auto_caching_keeps_a_stream_the_cache_has_room_for_cached() {
    let dir = scratch();
    if !uncached_goes_in(dir.path()) {
        return;
    }
    let room = crate::engine::adaptive::AutoRoom::now();
    let head = room.chunk as usize / MIB;
    let chunks = (room.cached_run / room.chunk).min(4) as usize;
    let len = (head * chunks) * MIB;
    // Room for the whole stream, and then some.
    crate::engine::adaptive::pretend_dirty_pages(0, 4 * len as u64);
    for flavour in [
        Flavour::new(EngineKind::Adaptive, 1),
        Flavour::new(EngineKind::Adaptive, 8),
        Flavour::without_io_uring(8),
    ] {
        let pool = BufPool::new(BATCH, MIB).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let path = dir.path().join(format!("room-{}", flavour.config.depth));
        let file = add(engine.as_mut(), &path, &read_write());
        engine.set_caching(file, Caching::Auto).unwrap();
        let data = write_mib(engine.as_mut(), &pool, file, 0, head * chunks, 7);
        assert_eq!(
            engine.counters().paths.unwrap().uncached,
            0,
            "{name}: a write went uncached with room in the cache"
        );
        assert_cached(
            &path,
            len,
            &format!("{name}: a stream the cache had room for"),
        );
        read_mib(engine.as_mut(), &pool, file, 0, &data);
    }
}

#[test]
fn auto_caching_keeps_what_is_read_again_cached() {
    let dir = scratch();
    if !uncached_goes_in(dir.path()) {
        return;
    }
    // Streams go uncached past their first chunk.
    crate::engine::adaptive::pretend_dirty_pages(0, 0);
    let head = crate::engine::adaptive::AutoRoom::now().chunk as usize / MIB;
    for depth in [1, 8] {
        let flavour = Flavour::new(EngineKind::Adaptive, depth);
        let name = flavour.name();
        let pool = BufPool::new(BATCH, MIB).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        // A file written and read again, smaller than the chunk: all of
        // it stays; and so does one read cold, from the device.
        let small = dir.path().join(format!("small-{depth}"));
        let file = add(engine.as_mut(), &small, &read_write());
        engine.set_caching(file, Caching::Auto).unwrap();
        let data = write_mib(engine.as_mut(), &pool, file, 0, 16, 1);
        for _ in 0..2 {
            read_mib(engine.as_mut(), &pool, file, 0, &data);
        }
        assert_cached(&small, 16 * MIB, &format!("{name}: re-read"));
        // Dropped from the cache, if the kernel will: DONTNEED leaves what
        // another CPU still holds in its LRU batch (on a busy machine, all
        // 2048 pages, as large folios, were seen to stay). Whether the reads
        // below are cold is the kernel's; what is checked is hybrio's.
        let opened = std::fs::File::open(&small).unwrap();
        for _ in 0..20 {
            crate::file::drop_page_cache(&opened, &small).unwrap();
            if resident_of(&small, 16 * MIB) == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let left = resident_of(&small, 16 * MIB);
        if left > 0 {
            eprintln!(
                "{name}: the kernel kept {left} pages after DONTNEED: the reads are not all cold"
            );
        }
        let uncached = engine.counters().paths.unwrap().uncached;
        read_mib(engine.as_mut(), &pool, file, 0, &data);
        assert_eq!(
            engine.counters().paths.unwrap().uncached,
            uncached,
            "{name}: a cold read went uncached"
        );
        assert_cached(&small, 16 * MIB, &format!("{name}: cold reads"));
        // A stream past the chunk whose uncached part is read again:
        // what it writes next stays cached.
        let stream = dir.path().join(format!("stream-{depth}"));
        let file = add(engine.as_mut(), &stream, &read_write());
        engine.set_caching(file, Caching::Auto).unwrap();
        let data = write_mib(engine.as_mut(), &pool, file, 0, head + 16, 2);
        let before = resident_of(&stream, (head + 16) * MIB);
        read_mib(engine.as_mut(), &pool, file, head, &data[head * MIB..]);
        let uncached = engine.counters().paths.unwrap().uncached;
        let more = write_mib(engine.as_mut(), &pool, file, head + 16, 16, 3);
        assert_eq!(
            engine.counters().paths.unwrap().uncached,
            uncached,
            "{name}: a write went uncached after the uncached part was read again"
        );
        let len = (head + 32) * MIB;
        assert_cached(
            &stream,
            len,
            &format!("{name}: {before} pages after the stream, then its end read and written on"),
        );
        read_mib(engine.as_mut(), &pool, file, head + 16, &more);
    }
}

#[test]
fn auto_caching_reads_ahead_of_a_read_stream_and_cached_does_not() {
    let dir = scratch();
    if !uncached_goes_in(dir.path()) {
        return;
    }
    let window = crate::engine::adaptive::AutoRoom::now().read_ahead as usize / MIB;
    // Read this far, then look past where the kernel's own readahead
    // reaches (two windows of the device's `read_ahead_kb`, 8 MiB here).
    let (read, beyond) = (16, 16);
    if window < beyond + 8 {
        eprintln!("skipping: the engine reads {window} MiB ahead here, too little to tell");
        return;
    }
    let len = read + window + 8;
    for depth in [1, 8] {
        let flavour = Flavour::new(EngineKind::Adaptive, depth);
        let name = flavour.name();
        let pool = BufPool::new(BATCH, MIB).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let path = dir.path().join(format!("stream-read-{depth}"));
        let file = add(engine.as_mut(), &path, &read_write());
        let data = write_mib(engine.as_mut(), &pool, file, 0, len, 4);
        // The helper may read on between the two counts: the shorter first.
        let pages_past = |path: &Path| {
            let before = resident_of(path, (read + beyond) * MIB);
            resident_of(path, (read + window) * MIB).saturating_sub(before)
        };
        for caching in [Caching::Cached, Caching::Auto] {
            engine.set_caching(file, caching).unwrap();
            let opened = std::fs::File::open(&path).unwrap();
            crate::file::drop_page_cache(&opened, &path).unwrap();
            let asked = engine.counters().paths.unwrap().read_ahead;
            read_mib(engine.as_mut(), &pool, file, 0, &data[..read * MIB]);
            let asked = engine.counters().paths.unwrap().read_ahead - asked;
            // The helper reads on its own time, from a disk a busy machine
            // may keep busy: a minute, only so that it does not wait for ever.
            let mut past = pages_past(&path);
            for _ in 0..600 {
                if caching == Caching::Cached || past * 2 > (window - beyond) * MIB / 4096 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
                past = pages_past(&path);
            }
            if caching == Caching::Cached {
                assert_eq!(asked, 0, "{name}: a cached file is left to the kernel");
                continue;
            }
            assert!(
                asked >= ((window - read) * MIB) as u64,
                "{name}: asked {asked} bytes ahead"
            );
            assert!(
                past * 2 > (window - beyond) * MIB / 4096,
                "{name}: {past} pages read ahead from {} to {} MiB",
                read + beyond,
                read + window
            );
            // And what the reader gets is the file's.
            read_mib(engine.as_mut(), &pool, file, read, &data[read * MIB..]);
        }
    }
}

#[test]
fn a_filesystem_that_refuses_uncached_io_is_named_in_one_line() {
    let dir = Path::new("/dev/shm");
    let Ok(probe) = tempfile::tempfile_in(dir) else {
        eprintln!("skipping: no /dev/shm here");
        return;
    };
    if !sys::is_tmpfs(std::os::fd::AsRawFd::as_raw_fd(&probe)).unwrap_or(false) {
        eprintln!("skipping: /dev/shm is not tmpfs here");
        return;
    }
    let flavour = Flavour::new(EngineKind::Pvsync2, 1);
    let mut engine = flavour.open(None).unwrap();
    let file = tempfile::NamedTempFile::new_in(dir).unwrap();
    let handle = add(engine.as_mut(), file.path(), &read_write());
    match engine.set_caching(handle, Caching::Uncached) {
        Err(e @ Error::UncachedRefused { .. }) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "{line}");
            assert!(line.contains("tmpfs on Linux "), "{line}");
            assert!(line.contains(&file.path().display().to_string()), "{line}");
        }
        other => panic!("tmpfs took uncached I/O: {other:?}"),
    }
    // The file stays, cached, and works.
    assert_eq!(engine.set_caching(handle, Caching::Cached).ok(), Some(()));
    // Auto allows, never asks: there it is cached, on every engine.
    for kind in [EngineKind::Pvsync2, EngineKind::Adaptive] {
        let mut engine = Flavour::new(kind, 1).open(None).unwrap();
        let handle = add(engine.as_mut(), file.path(), &read_write());
        assert_eq!(
            engine.set_caching(handle, Caching::Auto).ok(),
            Some(()),
            "{kind}"
        );
    }
}
