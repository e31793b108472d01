//! The suite's caching part: uncached I/O (`RWF_DONTCACHE`) through every
//! engine that takes it, the right bytes and no pages left in the page
//! cache; and the one-line refusals of the engines and files that cannot.

use std::path::Path;

use super::{Flavour, io_flavours};
use crate::Error;
use crate::buf::BufPool;
use crate::engine::EngineKind;
use crate::engine::testkit::{add, pattern, read_write, run, scratch, take};
use crate::file::Caching;
use crate::request::Request;
use crate::sys;

const LEN: usize = 1 << 20;
const BLOCK: usize = 64 << 10;

/// Pages of the file at `path` in the page cache.
fn resident(path: &Path) -> usize {
    let file = std::fs::File::open(path).unwrap();
    sys::resident_pages(std::os::fd::AsRawFd::as_raw_fd(&file), LEN).unwrap()
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
/// cache (cached I/O leaves all 256). The kernel drops an uncached page only
/// when nothing else holds it: one request at a time leaves none; requests
/// side by side (a pool's workers) may leave some that another held or read
/// ahead (up to 31 seen). Injected faults are not checked: a short read is
/// read again from where it stopped, over pages the first one read ahead
/// (up to 120 left, with the pool).
fn assert_uncached(flavour: &Flavour, path: &Path, what: &str) {
    let name = flavour.name();
    let left = resident(path);
    if flavour.config.inject.is_some() {
        return;
    }
    if flavour.config.depth == 1 {
        assert_eq!(left, 0, "{name}: pages left after the uncached {what}");
    } else {
        assert!(
            left < LEN / 4096 / 2,
            "{name}: {left} pages left after the uncached {what}"
        );
    }
}

#[test]
fn uncached_files_get_their_bytes_and_leave_no_pages_in_the_cache() {
    let dir = scratch();
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"x").unwrap();
    let probe = std::fs::File::open(&probe).unwrap();
    if let Err(e) = sys::probe_uncached(std::os::fd::AsRawFd::as_raw_fd(&probe)) {
        eprintln!(
            "skipping: {} does not take RWF_DONTCACHE here: {e}",
            dir.path().display()
        );
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
                    EngineKind::Sync | EngineKind::Psync | EngineKind::Libaio
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
                done.buf.as_ref().unwrap().as_slice() == &data[at..at + BLOCK],
                "{name}: the bytes read at {at} differ"
            );
        }
        assert_uncached(&flavour, &path, "reads");
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
}
