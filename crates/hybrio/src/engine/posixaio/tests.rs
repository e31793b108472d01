//! The posixaio engine's own tests, beyond the conformance suite.

use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::buf::BufPool;
use crate::engine::testkit::{add, pattern, read_write, run, scratch, take};
use crate::engine::{Engine, QueueOutcome};

fn engine_at(depth: u32) -> PosixaioEngine {
    PosixaioEngine::new(&EngineConfig::with_depth(depth)).unwrap()
}

/// Writes on two files at once, a whole depth of them in one commit, then
/// reads them back: every byte where it was written.
#[test]
fn a_depth_of_writes_on_two_files_reads_back_byte_for_byte() {
    let dir = scratch();
    let mut engine = engine_at(8);
    // The completions, kept until checked, hold their buffers.
    let pool = BufPool::new(16, 4096).unwrap();
    let paths: Vec<PathBuf> = ["a", "b"].iter().map(|n| dir.path().join(n)).collect();
    let files: Vec<_> = paths
        .iter()
        .map(|p| add(&mut engine, p, &read_write()))
        .collect();
    let block = |i: u64| {
        let mut bytes = vec![0; 4096];
        pattern(i + 1, &mut bytes);
        bytes
    };
    let writes = (0..16u64).map(|i| {
        let mut buf = take(&pool, 4096);
        buf.as_mut_slice().copy_from_slice(&block(i));
        Request::write(files[(i % 2) as usize], (i / 2) * 4096, buf, i)
    });
    let done = run(&mut engine, writes);
    assert_eq!(done.len(), 16);
    assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
    drop(done);
    for (f, path) in paths.iter().enumerate() {
        let on_disk = std::fs::read(path).unwrap();
        assert_eq!(on_disk.len(), 8 * 4096);
        for k in 0..8u64 {
            let i = k * 2 + f as u64;
            let at = (k * 4096) as usize;
            assert_eq!(&on_disk[at..at + 4096], &block(i)[..], "file {f} block {k}");
        }
    }
    let reads = (0..16u64).map(|i| {
        Request::read(
            files[(i % 2) as usize],
            (i / 2) * 4096,
            take(&pool, 4096),
            i,
        )
    });
    let done = run(&mut engine, reads);
    assert_eq!(done.len(), 16);
    for completion in &done {
        assert_eq!(completion.result, 4096);
        assert_eq!(completion.data(), &block(completion.user_data)[..]);
    }
}

/// A read at the end of a file comes back short, with the bytes there, and
/// one past it with 0: the rule sends the rest again and stops at the end.
#[test]
fn reads_past_the_end_come_back_short_with_the_bytes_there() {
    let dir = scratch();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![7u8; 6000]).unwrap();
    let mut engine = engine_at(4);
    let file = add(&mut engine, &path, &read_write());
    let pool = BufPool::new(2, 4096).unwrap();
    let done = run(
        &mut engine,
        [
            Request::read(file, 4096, take(&pool, 4096), 1),
            Request::read(file, 8192, take(&pool, 4096), 2),
        ],
    );
    let result = |tag| done.iter().find(|c| c.user_data == tag).unwrap().result;
    assert_eq!(result(1), 6000 - 4096);
    assert_eq!(result(2), 0);
}

/// A pipe is taken (glibc's threads read it), and a read gets what was
/// written into it.
#[test]
fn a_pipe_is_read_through_the_c_librarys_threads() {
    let (reader, mut writer) = std::io::pipe().unwrap();
    writer.write_all(b"posix aio").unwrap();
    let mut engine = engine_at(2);
    let pipe = engine
        .add_file(File::from(OwnedFd::from(reader)), PathBuf::from("pipe"))
        .unwrap();
    let pool = BufPool::new(1, 4096).unwrap();
    let done = run(&mut engine, [Request::read(pipe, 0, take(&pool, 9), 3)]);
    assert_eq!(done[0].result, 9);
    assert_eq!(done[0].data(), b"posix aio");
}

/// What POSIX AIO cannot do is refused when the engine is made, in words
/// naming the engine and what was asked.
#[test]
fn nowait_and_the_emulated_device_are_refused_naming_the_engine() {
    let mut nowait = EngineConfig::with_depth(4);
    nowait.nowait = true;
    let mut emulated = EngineConfig::with_depth(4);
    emulated.completion_latency = Some(Duration::from_micros(50));
    for (config, what) in [(nowait, "nowait"), (emulated, "completion_latency")] {
        let error = PosixaioEngine::new(&config).unwrap_err();
        let line = error.to_string();
        assert!(
            matches!(error, Error::NotOffered { .. })
                && line.contains("posixaio")
                && line.contains(what),
            "{line}"
        );
    }
}

/// Dropping the engine with requests out waits for those glibc runs and
/// cancels the others: every buffer comes back to its pool, none is freed
/// while glibc may still write into it.
#[test]
fn dropping_with_requests_out_gives_every_buffer_back() {
    let dir = scratch();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![1u8; 64 * 1024]).unwrap();
    let pool = BufPool::new(16, 4096).unwrap();
    let mut engine = engine_at(16);
    let file = add(&mut engine, &path, &read_write());
    for i in 0..16u64 {
        let request = Request::read(file, i * 4096, take(&pool, 4096), i);
        assert!(matches!(engine.queue(request), QueueOutcome::Queued));
    }
    assert_eq!(engine.commit().unwrap(), 16);
    assert_eq!(pool.available(), 0);
    drop(engine);
    assert_eq!(pool.available(), 16);
}

/// A depth is a limit, not a promise of use: slots are made as requests
/// come, and an engine of depth 2 hands one back Busy at the third.
#[test]
fn slots_are_made_as_requests_come_up_to_the_depth() {
    let dir = scratch();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![1u8; 8192]).unwrap();
    let mut engine = PosixaioEngine::new(&EngineConfig::with_depth(u32::MAX)).unwrap();
    let file = add(&mut engine, &path, &read_write());
    let pool = BufPool::new(3, 4096).unwrap();
    let done = run(
        &mut engine,
        (0..2).map(|i| Request::read(file, i * 4096, take(&pool, 4096), i)),
    );
    assert_eq!(done.len(), 2);
    assert_eq!(engine.queue.slots(), 2);
    drop(done);
    let mut small = engine_at(2);
    let file = add(&mut small, &path, &read_write());
    for i in 0..2 {
        let request = Request::read(file, i * 4096, take(&pool, 4096), i);
        assert!(matches!(small.queue(request), QueueOutcome::Queued));
    }
    let third = Request::read(file, 0, take(&pool, 4096), 9);
    assert!(matches!(small.queue(third), QueueOutcome::Busy(_)));
}
