//! Futures dropped at every point, in random interleavings, on both kinds
//! of runtime; runtimes shut down with requests in flight. What must hold:
//! no buffer is freed while the kernel may still write it (a pool's buffers
//! come back only once their requests are done), none is lost, and a write
//! happens whole or not at all.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use hybrio::buf::BufPool;
use proptest::prelude::*;

use super::{io_uring_missing, mkfifo, open_read_write, pattern, within_a_minute};

/// Blocks of the regular file the writes go to.
const BLOCKS: u64 = 16;

/// Polls `future` up to `polls` times, yielding to the runtime in between;
/// drops it there if it is not done.
async fn poll_then_drop<F: Future>(future: F, polls: u32) -> Option<F::Output> {
    let mut future = pin!(future);
    for _ in 0..polls {
        if let Poll::Ready(output) =
            std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
        {
            return Some(output);
        }
        tokio::task::yield_now().await;
    }
    None
}

#[derive(Debug, Clone)]
enum Step {
    /// A read of a FIFO that no data reaches until the end: dropped after
    /// these many polls (its request then waits in the kernel).
    WaitingRead(u32),
    /// A write of its own pattern to a block of the file, dropped after
    /// these many polls (or run to the end).
    Write(u64, u32),
    /// A read of a block, dropped after these many polls.
    Read(u64, u32),
}

fn step() -> impl Strategy<Value = Step> {
    let polls = prop_oneof![0..4u32, Just(u32::MAX)];
    prop_oneof![
        (0..4u32).prop_map(Step::WaitingRead),
        (0..BLOCKS, polls.clone()).prop_map(|(b, p)| Step::Write(b, p)),
        (0..BLOCKS, polls).prop_map(|(b, p)| Step::Read(b, p)),
    ]
}

/// The byte a write of `block` puts at `offset` within it.
fn block_byte(block: u64, offset: u64) -> u8 {
    pattern(block * 4096 + offset) | 1
}

async fn run_steps(steps: Vec<Step>, dir: &std::path::Path) {
    let fifo = mkfifo(dir);
    let waiting = std::sync::Arc::new(open_read_write(&fifo).await);
    let data = dir.join("data");
    let _ = std::fs::remove_file(&data);
    let file = std::sync::Arc::new(open_read_write(&data).await);
    file.set_len(BLOCKS * 4096).await.unwrap();
    let pool = std::sync::Arc::new(BufPool::new(steps.len().max(1), 4096).unwrap());
    let tasks: Vec<_> = steps
        .into_iter()
        .map(|step| {
            let (waiting, file, pool) = (waiting.clone(), file.clone(), pool.clone());
            tokio::spawn(async move {
                let buf = pool.take().expect("a buffer a step");
                match step {
                    Step::WaitingRead(polls) => {
                        let read = poll_then_drop(waiting.read_at(buf, 0), polls).await;
                        assert!(read.is_none(), "no data reaches the FIFO yet");
                    }
                    Step::Write(block, polls) => {
                        let mut buf = buf;
                        for (at, byte) in buf.as_mut_slice().iter_mut().enumerate() {
                            *byte = block_byte(block, at as u64);
                        }
                        if let Some((result, _)) =
                            poll_then_drop(file.write_all_at(buf, block * 4096), polls).await
                        {
                            result.unwrap();
                        }
                    }
                    Step::Read(block, polls) => {
                        if let Some((result, _)) =
                            poll_then_drop(file.read_exact_at(buf, block * 4096), polls).await
                        {
                            result.unwrap();
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    // Every future is gone. The FIFO reads that reached the engine wait in
    // the kernel, their buffers with them; everything else completes.
    let held = waiting.counts().asynchronous as usize;
    let expected = pool.count() - held;
    let settled = within_a_minute(|| {
        let available = pool.available();
        assert!(
            available <= expected,
            "a buffer the kernel may still write was freed"
        );
        available == expected
    });
    assert!(
        settled,
        "{} of {expected} buffers came back",
        pool.available()
    );
    // Data for every waiting read: they complete, and their buffers come back.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    std::io::Write::write_all(&mut writer, &vec![7u8; held * 4096]).unwrap();
    let back = within_a_minute(|| pool.available() == pool.count());
    assert!(
        back,
        "{} of {} buffers came back",
        pool.available(),
        pool.count()
    );
    // Each block: never written, or one write's whole pattern.
    file.sync_data().await.unwrap();
    let on_disk = std::fs::read(&data).unwrap();
    for (block, bytes) in on_disk.chunks(4096).enumerate() {
        let block = block as u64;
        let whole = bytes
            .iter()
            .enumerate()
            .all(|(at, &b)| b == block_byte(block, at as u64));
        assert!(
            whole || bytes.iter().all(|&b| b == 0),
            "block {block} holds part of a write"
        );
    }
}

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn futures_dropped_anywhere_on_a_multi_thread_runtime(steps in proptest::collection::vec(step(), 1..24)) {
        if io_uring_missing() {
            return Ok(());
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(run_steps(steps, dir.path()));
    }

    #[test]
    fn futures_dropped_anywhere_on_a_current_thread_runtime(steps in proptest::collection::vec(step(), 1..24)) {
        if io_uring_missing() {
            return Ok(());
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(run_steps(steps, dir.path()));
    }
}

#[test]
fn a_runtime_shut_down_with_requests_in_flight_frees_no_buffer_early() {
    if io_uring_missing() {
        return;
    }
    shut_down_with_requests_in_flight();
}

/// 8 reads of a FIFO in flight when their runtime shuts down: their
/// buffers stay with the engine until the data comes, then come back.
pub(crate) fn shut_down_with_requests_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    let pool = std::sync::Arc::new(BufPool::new(8, 4096).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let file = std::sync::Arc::new(runtime.block_on(open_read_write(&fifo)));
    for _ in 0..8 {
        let (file, pool) = (file.clone(), pool.clone());
        runtime.spawn(async move {
            let _ = file.read_at(pool.take().unwrap(), 0).await;
            unreachable!("no data comes before the runtime is gone");
        });
    }
    // Until every read is in the kernel (a hang guard, never reached).
    let started = within_a_minute(|| file.counts().asynchronous == 8);
    assert!(started);
    // Shut down: the tasks and their futures are dropped, not the buffers.
    drop(runtime);
    assert_eq!(
        pool.available(),
        0,
        "a buffer the kernel may still write was freed"
    );
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    std::io::Write::write_all(&mut writer, &[1u8; 8 * 4096]).unwrap();
    let back = within_a_minute(|| pool.available() == 8);
    assert!(back, "{} of 8 buffers came back", pool.available());
}
