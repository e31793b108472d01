//! Who reaps the engine's completions: a task in the reactor of a runtime
//! that has one, and hybrio-tokio's own thread for futures waiting outside
//! any runtime or in a runtime without an I/O driver. Each test runs alone
//! in its process (`run_alone`): the counts are the whole process's.

use std::future::Future;
use std::path::Path;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use hybrio_tokio::fs::File;

use super::{ALONE, io_uring_missing, mkfifo, open_read_write, run_alone};

/// Whether this process is the one `run_alone` started for `inner`.
fn alone_as(inner: &str) -> bool {
    std::env::var(ALONE).ok().as_deref() == Some(inner) && !io_uring_missing()
}

/// Ends the process with a failure if it is still running a minute from
/// now and `done` was not dropped: a hang guard that never polls the
/// future it guards (a guard that polled it would reap its completion
/// itself, and hide the hang).
fn watchdog(what: &'static str) -> std::sync::mpsc::Sender<()> {
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            finished.recv_timeout(Duration::from_secs(60))
        {
            eprintln!("{what}: no completion reached its future within a minute");
            std::process::exit(1);
        }
    });
    done
}

/// A read of `fifo` (through `file`) that is pending in the engine before
/// another thread writes its 16 bytes: its completion comes while the
/// future waits, to be reaped by whoever watches.
pub(crate) async fn round_trip(file: &File, fifo: &Path, byte: u8) {
    let mut read = pin!(file.read_at(vec![0u8; 16], 0));
    let first = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
    assert!(first.is_pending(), "nothing was written yet");
    let fifo = fifo.to_path_buf();
    let writer = std::thread::spawn(move || {
        let mut writer = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
        std::io::Write::write_all(&mut writer, &[byte; 16]).unwrap();
    });
    let (result, buf) = read.await;
    assert_eq!(result.unwrap(), 16);
    assert_eq!(buf, vec![byte; 16]);
    writer.join().unwrap();
}

#[test]
fn a_runtime_with_an_io_driver_reaps_in_its_reactor() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("reaping::reactor_alone");
    }
}

/// Runs only alone in its process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reactor_alone() {
    if !alone_as("reaping::reactor_alone") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    let file = open_read_write(&fifo).await;
    for byte in 0..20 {
        round_trip(&file, &fifo, byte).await;
    }
    let reaped = hybrio_tokio::reaped();
    assert_eq!(
        reaped.in_polls + reaped.in_reactors + reaped.by_thread,
        20,
        "{reaped:?}"
    );
    // The driver's thread watches the engine until the first reactor task
    // starts: it may take one completion more, never two.
    assert!(reaped.by_thread <= 1, "{reaped:?}");
}

/// `fifo` opened, and a runtime whose reactor has a reaper task that then
/// sits undriven (a current-thread runtime outside `block_on`): the
/// driver's thread does not watch the engine for it.
fn with_an_undriven_reactor(fifo: &Path) -> (tokio::runtime::Runtime, File) {
    let with_io = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let file = with_io.block_on(open_read_write(fifo));
    with_io.block_on(round_trip(&file, fifo, 1));
    (with_io, file)
}

#[test]
fn a_runtime_without_an_io_driver_is_served_by_the_driver_thread() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("reaping::without_reactor_alone");
    }
}

/// Runs only alone in its process.
#[test]
fn without_reactor_alone() {
    if !alone_as("reaping::without_reactor_alone") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    let (_with_io, file) = with_an_undriven_reactor(&fifo);
    let without_io = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let done = watchdog("a runtime without an I/O driver");
    for byte in 2..12 {
        without_io.block_on(round_trip(&file, &fifo, byte));
    }
    drop(done);
}

#[test]
fn a_future_polled_outside_any_runtime_is_woken() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("reaping::outside_alone");
    }
}

/// Wakes the thread that polls, once `woken` is set.
struct Unpark {
    thread: std::thread::Thread,
    woken: AtomicBool,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Polls `future` on this thread, outside any runtime, again only when
/// its waker is called.
fn block_on<F: Future>(future: F) -> F::Output {
    let unpark = Arc::new(Unpark {
        thread: std::thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(unpark.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        while !unpark.woken.swap(false, Ordering::SeqCst) {
            std::thread::park();
        }
    }
}

/// Runs only alone in its process.
#[test]
fn outside_alone() {
    if !alone_as("reaping::outside_alone") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    let (_with_io, file) = with_an_undriven_reactor(&fifo);
    let done = watchdog("a future outside any runtime");
    for byte in 2..12 {
        block_on(round_trip(&file, &fifo, byte));
    }
    drop(done);
}

#[test]
fn after_the_last_runtime_shuts_down_the_driver_thread_reaps() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("reaping::after_shutdown_alone");
    }
}

/// Runs only alone in its process.
#[test]
fn after_shutdown_alone() {
    if !alone_as("reaping::after_shutdown_alone") {
        return;
    }
    super::cancel::shut_down_with_requests_in_flight();
}

#[test]
fn a_dropped_futures_request_is_reaped_with_no_runtime_driven() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("reaping::orphan_alone");
    }
}

/// Runs only alone in its process.
#[test]
fn orphan_alone() {
    if !alone_as("reaping::orphan_alone") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    let (_with_io, file) = with_an_undriven_reactor(&fifo);
    let pool = hybrio::buf::BufPool::new(1, 4096).unwrap();
    // A read waiting in the kernel, its future dropped in a runtime that
    // then shuts down: the one reactor left is not driven.
    let other = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    other.block_on(async {
        let mut read = pin!(file.read_at(pool.take().unwrap(), 0));
        let first = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
        assert!(first.is_pending(), "nothing was written yet");
    });
    drop(other);
    assert_eq!(pool.available(), 0, "the kernel may still write the buffer");
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    // The whole buffer's worth: the engine reads a short read's rest itself.
    std::io::Write::write_all(&mut writer, &[3u8; 4096]).unwrap();
    // A hang guard: the completion comes at once.
    let back = super::within_a_minute(|| pool.available() == 1);
    assert!(back, "the dropped read's buffer never came back");
}
