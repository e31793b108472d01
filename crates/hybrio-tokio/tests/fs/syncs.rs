//! Syncs of one file asked for by many tasks at once: shared, and each
//! task's writes on the device when its sync returns.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use super::{io_uring_missing, mkfifo, open_read_write};

const TASKS: usize = 16;
const RECORDS: usize = 20;
const RECORD: usize = 8192;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_appending_and_syncing_one_file_all_succeed_with_every_record_written() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let file = Arc::new(open_read_write(&path).await);
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (file, next) = (file.clone(), next.clone());
            tokio::spawn(async move {
                for _ in 0..RECORDS {
                    let at = next.fetch_add(RECORD as u64, std::sync::atomic::Ordering::SeqCst);
                    let (result, _) = file.write_all_at(vec![task as u8 + 1; RECORD], at).await;
                    result.unwrap();
                    file.sync_data().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    file.sync_all().await.unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), TASKS * RECORDS * RECORD);
    let mut per_task = [0usize; TASKS];
    for record in bytes.chunks(RECORD) {
        let owner = record[0];
        assert!(
            (1..=TASKS as u8).contains(&owner) && record.iter().all(|&b| b == owner),
            "a record of mixed or missing bytes"
        );
        per_task[owner as usize - 1] += 1;
    }
    assert_eq!(per_task, [RECORDS; TASKS]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sync_reaches_every_task_that_asked() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A pipe cannot be synced: every sync of it fails with EINVAL.
    let file = Arc::new(open_read_write(&mkfifo(dir.path())).await);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let file = file.clone();
            tokio::spawn(async move { file.sync_data().await })
        })
        .collect();
    for task in tasks {
        let error = task.await.unwrap().unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::EINVAL), "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_whose_task_stopped_polling_or_dropped_it_ends_for_the_others() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let file = open_read_write(&path).await;
    for round in 0..20u8 {
        let (result, _) = file.write_all_at(vec![round; RECORD], 0).await;
        result.unwrap();
        // The first sync is in flight (or done) when the others ask; then
        // its future is dropped (even rounds) or kept and never polled
        // again (odd rounds): the others must not wait on it.
        let mut first = Some(Box::pin(file.sync_data()));
        let _ = poll_once(first.as_mut().unwrap()).await;
        let mut second = pin!(file.sync_all());
        let _ = poll_once(&mut second).await;
        let mut third = pin!(file.sync_data());
        let _ = poll_once(&mut third).await;
        if round % 2 == 0 {
            first = None;
        }
        let finished = tokio::time::timeout(Duration::from_secs(60), async {
            second.await.unwrap();
            third.await.unwrap();
        })
        .await;
        assert!(finished.is_ok(), "a sync waited on one no one polls");
        drop(first);
    }
}

/// Polls `future` once.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut *future).poll(cx))).await
}
