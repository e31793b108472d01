//! The suite's descriptor count: an engine holds one descriptor per file
//! the caller adds, the caller's own (seeds/001: hundreds of jobs, each
//! with its files, under `RLIMIT_NOFILE`), on the emulated device too
//! (where the adaptive engine reopened the file for each of its four
//! aliases inside before: five descriptors a file).

use std::path::{Path, PathBuf};

use super::{all_flavours, data_file, read_write, run, scratch, take};
use crate::buf::BufPool;
use crate::file;
use crate::request::Request;

/// How many of this process's descriptors are open on files under `dir`
/// (named by their link in `/proc/self/fd`: other tests' descriptors,
/// opened and closed meanwhile, are not counted).
fn descriptors_under(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd lists this process's descriptors")
        .filter_map(Result::ok)
        .filter(|link| std::fs::read_link(link.path()).is_ok_and(|target| target.starts_with(dir)))
        .count()
}

#[test]
fn every_engine_holds_the_callers_descriptor_and_no_other() {
    let dir = scratch();
    let root = dir.path().canonicalize().unwrap();
    let paths: Vec<PathBuf> = (0..5)
        .map(|i| data_file(&root, &format!("f{i}"), 8192).0)
        .collect();
    for flavour in all_flavours() {
        let pool = BufPool::new(8, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let mut handles = Vec::new();
        for path in &paths {
            let file = file::open(path, &read_write()).unwrap();
            let handle = engine.add_file(file, path.clone()).unwrap();
            // The caching the engine chooses: the adaptive engine reads
            // ahead of such a file's streams through the caller's descriptor
            // (it held a copy of its own for that before).
            engine.set_caching(handle, file::Caching::Auto).unwrap();
            handles.push(handle);
        }
        // A read of each, so that whatever an engine opens on first use is open.
        let reads = handles
            .iter()
            .enumerate()
            .map(|(i, &handle)| Request::read(handle, 4096, take(&pool, 4096), i as u64));
        let done = run(engine.as_mut(), reads.collect::<Vec<_>>());
        assert!(
            done.iter().all(|c| c.result == 4096 || c.result == 0),
            "{name}: {done:?}"
        );
        drop(done);
        assert_eq!(descriptors_under(&root), paths.len(), "{name}: files added");
        let given_back: Vec<_> = handles[..2]
            .iter()
            .map(|&handle| engine.remove_file(handle).unwrap())
            .collect();
        assert_eq!(
            descriptors_under(&root),
            paths.len(),
            "{name}: two given back"
        );
        drop(given_back);
        assert_eq!(
            descriptors_under(&root),
            paths.len() - 2,
            "{name}: those closed"
        );
        drop(engine);
        assert_eq!(descriptors_under(&root), 0, "{name}: engine dropped");
    }
}
