//! Reading ahead of a sequential read stream, on a thread of the engine's
//! own, for the files whose caching the caller lets the engine choose
//! ([`Caching::Auto`](crate::file::Caching::Auto)).
//!
//! One thread reading a file too large for the page cache spends its time
//! beside the copy: the kernel's readahead allocates the pages (reclaiming
//! others, once memory is full) and builds the device's requests in the
//! reader's own call, a window at a time. Here, a helper thread asks for the
//! window ahead of the reader (`posix_fadvise(WILLNEED)`, the kernel's
//! readahead run from that thread), so that that work runs on another core
//! and the reader finds its pages in the cache or under way. On this
//! machine (2 vCPUs, 24 GiB, a virtio disk), cold sequential reads of 25 GiB
//! by one thread ran at 1.12x (128 KiB) and 1.08x (1 MiB) the kernel's own
//! readahead (medians of 6 alternated pairs; up to 1.9x when the disk
//! outran the reader), two jobs at 1.33x and 1.31x, and a copy of 10 GiB at
//! 1.43x (docs/results.md, seeds/002). What the reader sees does not change: the
//! pages are the file's, read as the kernel would read them.
//!
//! A step whose pages are in the page cache already (a file just written,
//! or read before) is not asked for: see [`Helper::in_page_cache`].
//!
//! A stream is what [`caching`](super::caching) calls one for writes: each
//! read continues the last, give or take the engine's depth of reads. The
//! helper starts once a stream has passed [`STREAM_AFTER`] (the kernel's
//! own readahead serves short runs), asks at most one step per read, and
//! stays a window ahead of the stream's end; a read elsewhere starts a new
//! stream. The window is a sixteenth of the dirty page cache at which the
//! kernel starts writing back (memory the machine can spare for pages in
//! flight), between [`LEAST_AHEAD`] and [`MOST_AHEAD`].

use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

use super::run::Run;
use crate::sys;

/// How long a run of sequential reads is before the helper reads ahead of it.
pub(super) const STREAM_AFTER: u64 = 8 << 20;
/// What the helper asks for at once: large enough that its calls are few
/// (one per 64 reads of 128 KiB), small enough that the reader rarely
/// waits behind one.
pub(super) const STEP: u64 = 8 << 20;
/// The window ahead of the reader, at most: with a C loop and a readahead
/// thread on this machine's virtio disk, 64 and 128 MiB ahead in 8 MiB
/// steps ran alike (1.1-1.25 GB/s at 128 KiB), 32 in 4 MiB steps a little
/// slower, 256 in 16 MiB steps slower (0.96); 64 holds less memory.
const MOST_AHEAD: u64 = 64 << 20;
/// The least (a machine with little memory).
const LEAST_AHEAD: u64 = 2 * STEP;
/// Steps waiting for the helper; when it is this far behind, the stream
/// asks again later.
const WAITING_STEPS: usize = 8;

/// The window ahead of a stream, from the dirty page cache at which the
/// kernel starts writing back (`None`: not known).
pub(super) fn window(background_threshold: Option<u64>) -> u64 {
    background_threshold
        .map_or(MOST_AHEAD, |threshold| threshold / 16)
        .clamp(LEAST_AHEAD, MOST_AHEAD)
}

/// One file's read stream.
#[derive(Debug)]
pub(super) struct ReadStream {
    /// The caller's descriptor of the file (no copy: one descriptor a
    /// file). Before the file leaves the engine, [`Helper::forget`] waits
    /// until the helper has nothing of it left, so the number is never read
    /// ahead of once another file may have it.
    fd: RawFd,
    window: u64,
    /// Reads in flight together may come out of order: see
    /// [`AutoCaching`](super::caching::AutoCaching).
    depth: u64,
    /// The current run of sequential reads; the helper has been asked for
    /// everything up to `asked_to`.
    run: Run,
    asked_to: u64,
}

/// A range of a file for the helper to read into the page cache.
#[derive(Debug)]
pub(super) struct Step {
    fd: RawFd,
    offset: u64,
    len: u64,
}

/// What the helper is asked.
#[derive(Debug)]
enum Ask {
    Step(Step),
    /// Answer once every step asked before is done (or dropped).
    Done(SyncSender<()>),
}

impl ReadStream {
    pub(super) fn new(fd: RawFd, window: u64, depth: u32) -> ReadStream {
        ReadStream {
            fd,
            window,
            depth: u64::from(depth.max(1)),
            run: Run::default(),
            asked_to: 0,
        }
    }

    /// Notes a read of `len` bytes at `offset`: the step to read ahead now,
    /// if the stream wants one. The same read offered twice asks nothing
    /// more.
    #[inline]
    pub(super) fn read(&mut self, offset: u64, len: u64) -> Option<Step> {
        if !self.run.take(offset, len, len.saturating_mul(self.depth)) {
            self.asked_to = 0;
        }
        if self.run.len() < STREAM_AFTER {
            return None;
        }
        let end = self.run.end();
        let from = self.asked_to.max(end);
        if from >= end.saturating_add(self.window) {
            return None;
        }
        Some(Step {
            fd: self.fd,
            offset: from,
            len: STEP,
        })
    }

    /// The helper took `step`: the stream is asked up to its end.
    pub(super) fn asked(&mut self, step_end: u64) {
        self.asked_to = self.asked_to.max(step_end);
    }
}

impl Step {
    pub(super) fn end(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

/// The helper thread, started with the first step asked of it.
#[derive(Debug, Default)]
pub(super) struct Helper {
    running: Option<Running>,
    /// Bytes handed to the helper to read ahead.
    pub(super) asked: u64,
    /// Bytes of steps found in the page cache already, not asked.
    pub(super) found_cached: u64,
    /// The kernel answered no question about its page cache (before Linux
    /// 6.5, or refused): every step is asked.
    cannot_look: bool,
}

#[derive(Debug)]
struct Running {
    steps: SyncSender<Ask>,
    stop: Arc<AtomicBool>,
    /// Steps the helper has done.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the tests read it: forget waits for every step")
    )]
    done: Arc<AtomicU64>,
    thread: JoinHandle<()>,
}

impl Helper {
    /// Hands `step` to the helper, starting it if it is not running: whether
    /// it took it (not when it is [`WAITING_STEPS`] behind, or could not be
    /// started: the kernel's own readahead goes on).
    pub(super) fn ask(&mut self, step: Step) -> bool {
        if self.running.is_none() {
            self.running = Running::start();
        }
        let Some(running) = &self.running else {
            return false;
        };
        let len = step.len;
        match running.steps.try_send(Ask::Step(step)) {
            Ok(()) => {
                self.asked += len;
                true
            }
            Err(TrySendError::Full(_)) => false,
            Err(TrySendError::Disconnected(_)) => {
                self.running = None;
                false
            }
        }
    }

    /// Whether `step`'s pages are in the page cache already, so that it
    /// needs no reading ahead (a copy of a file it has just written: asking
    /// for it took a core from the copy's writes for nothing). Looks at two
    /// of its pages, the last and the middle one, with `cachestat(2)`, in
    /// the reader's call: about a microsecond, where waking the helper to
    /// walk 8 MiB of cached pages cost a context switch and 160 us of the
    /// other core. Pages of a file are cached or evicted in runs, so two
    /// cached ones stand for the step; where one of them was not, the
    /// kernel's own readahead serves the reader as it would without the
    /// helper.
    pub(super) fn in_page_cache(&mut self, step: &Step) -> bool {
        self.in_page_cache_by(step, sys::cached_pages)
    }

    /// [`in_page_cache`](Self::in_page_cache), asking `cached_pages`.
    fn in_page_cache_by(
        &mut self,
        step: &Step,
        cached_pages: impl Fn(RawFd, u64, u64) -> std::io::Result<u64>,
    ) -> bool {
        if self.cannot_look || step.len == 0 {
            return false;
        }
        let page = sys::host::page_size() as u64;
        let last = step.end().saturating_sub(1) / page * page;
        let middle = (step.offset + step.len / 2) / page * page;
        for at in [last, middle] {
            match cached_pages(step.fd, at, page) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(_) => {
                    // Not asked again: the steps go to the helper, as
                    // before the kernel could be asked.
                    self.cannot_look = true;
                    return false;
                }
            }
        }
        self.found_cached += step.len;
        true
    }

    /// Returns once the helper has done (or dropped) every step asked so
    /// far: called before a file read ahead of leaves the engine, whose
    /// descriptor the helper must not use once it is closed. At most the
    /// steps waiting (each one `posix_fadvise`, which starts reads and does
    /// not wait for them).
    pub(super) fn forget(&mut self) {
        let Some(running) = &self.running else {
            return;
        };
        let (done, answered) = mpsc::sync_channel(1);
        if running.steps.send(Ask::Done(done)).is_err() || answered.recv().is_err() {
            // The helper is gone: nothing of it is left either.
            self.running = None;
        }
    }

    /// Steps the helper has done so far.
    #[cfg(test)]
    fn steps_done(&self) -> u64 {
        self.running
            .as_ref()
            .map_or(0, |running| running.done.load(Ordering::Acquire))
    }

    /// Stops the helper: the step under way is finished, the others dropped.
    pub(super) fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop.store(true, Ordering::Relaxed);
            drop(running.steps);
            let _ = running.thread.join();
        }
    }
}

impl Running {
    fn start() -> Option<Running> {
        let (steps, waiting) = mpsc::sync_channel(WAITING_STEPS);
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let (stopped, counted) = (Arc::clone(&stop), Arc::clone(&done));
        let thread = std::thread::Builder::new()
            .name("hybrio-readahead".into())
            .spawn(move || read_ahead(&waiting, &stopped, &counted))
            .ok()?;
        Some(Running {
            steps,
            stop,
            done,
            thread,
        })
    }
}

/// The helper's loop: each step read into the page cache, until the engine
/// goes (the steps still waiting are dropped then: nobody will read them).
fn read_ahead(waiting: &Receiver<Ask>, stop: &AtomicBool, done: &AtomicU64) {
    while let Ok(ask) = waiting.recv() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match ask {
            // Advice only: a range the kernel cannot read ahead is read by
            // the reader, as it would be without the helper.
            Ask::Step(step) => {
                let _ = sys::fadvise(step.fd, step.offset, step.len, sys::Advice::WillNeed);
                done.fetch_add(1, Ordering::Release);
            }
            Ask::Done(answer) => {
                let _ = answer.send(());
            }
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// A stream's arithmetic alone: no helper reads its descriptor.
    fn stream(depth: u32) -> ReadStream {
        ReadStream::new(-1, 4 * STEP, depth)
    }

    /// Reads `count` requests of `len` from `first`, taking every step asked:
    /// the steps' offsets.
    fn read_run(stream: &mut ReadStream, first: u64, len: u64, count: u64) -> Vec<u64> {
        let mut steps = Vec::new();
        for i in 0..count {
            if let Some(step) = stream.read(first + i * len, len) {
                steps.push(step.offset);
                stream.asked(step.end());
            }
        }
        steps
    }

    #[test]
    fn a_stream_is_read_a_window_ahead_once_past_its_head() {
        let mut s = stream(1);
        let steps = read_run(&mut s, 0, MIB, 64);
        // Nothing over the first 8 MiB; then one step per read until the
        // window (32 MiB) is covered, then one per 8 MiB read.
        assert_eq!(steps[0], STREAM_AFTER);
        assert!(
            steps.windows(2).all(|w| w[1] == w[0] + STEP),
            "contiguous steps: {steps:?}"
        );
        let last = *steps.last().unwrap();
        assert!(
            last + STEP >= 64 * MIB + 4 * STEP - STEP,
            "kept a window ahead: {last}"
        );
        assert!(
            last + STEP <= 64 * MIB + 4 * STEP,
            "no more than a window: {last}"
        );
    }

    #[test]
    fn the_same_read_offered_twice_asks_nothing_more() {
        let mut s = stream(1);
        read_run(&mut s, 0, MIB, 40);
        // The window is covered: the same read again asks nothing.
        assert!(s.read(39 * MIB, MIB).is_none());
    }

    #[test]
    fn a_step_not_taken_is_asked_again() {
        let mut s = stream(1);
        read_run(&mut s, 0, MIB, 8);
        let first = s.read(8 * MIB, MIB).expect("a step past the head");
        // Not taken (the helper behind): the next read asks from the same place.
        let again = s.read(9 * MIB, MIB).expect("asked again");
        assert_eq!(first.offset, again.offset);
    }

    #[test]
    fn random_reads_ask_nothing() {
        let mut s = stream(16);
        let mut offset = 0u64;
        for _ in 0..1000 {
            offset = (offset + 37 * MIB + 4096) % (1024 * MIB);
            assert!(s.read(offset, 128 << 10).is_none());
        }
    }

    #[test]
    fn a_jump_starts_a_new_stream() {
        let mut s = stream(1);
        read_run(&mut s, 0, MIB, 32);
        let steps = read_run(&mut s, 500 * MIB, MIB, 16);
        assert_eq!(steps.first(), Some(&(508 * MIB)), "{steps:?}");
    }

    #[test]
    fn reads_out_of_order_within_a_depth_still_stream() {
        let mut s = stream(4);
        let block = 128 << 10;
        let order = [2, 0, 3, 1];
        let mut steps = 0;
        for group in 0..256u64 {
            for i in order {
                if let Some(step) = s.read((group * 4 + i) * block, block) {
                    steps += 1;
                    s.asked(step.end());
                }
            }
        }
        // 128 MiB read: past the head, the window's steps and one per 8 MiB.
        assert!(steps >= 14, "{steps} steps");
    }

    #[test]
    fn forgetting_returns_once_every_step_asked_is_done() {
        let dir = crate::engine::testkit::scratch();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut helper = Helper::default();
        for round in 0..3 {
            let mut taken = 0;
            for i in 0..WAITING_STEPS as u64 {
                let step = Step {
                    fd: std::os::fd::AsRawFd::as_raw_fd(&file),
                    offset: i * STEP,
                    len: STEP,
                };
                taken += u64::from(helper.ask(step));
            }
            assert!(taken > 0, "round {round}: the helper took none");
            helper.forget();
            assert_eq!(
                helper.steps_done(),
                helper.asked / STEP,
                "round {round}: every step taken is done when forget returns"
            );
        }
        helper.stop();
        helper.forget();
        assert_eq!(helper.steps_done(), 0, "stopped: nothing runs");
    }

    #[test]
    fn a_step_in_the_page_cache_is_not_asked_and_one_not_there_is() {
        let page = sys::host::page_size() as u64;
        let step = |offset| Step {
            fd: 3,
            offset,
            len: STEP,
        };
        let asked = std::cell::RefCell::new(Vec::new());
        // Cached below 24 MiB.
        let cache = |fd: RawFd, at: u64, len: u64| {
            assert_eq!((fd, len), (3, page));
            asked.borrow_mut().push(at);
            Ok(u64::from(at < 24 * MIB))
        };
        let mut helper = Helper::default();
        assert!(helper.in_page_cache_by(&step(8 * MIB), cache));
        assert_eq!(
            *asked.borrow(),
            [16 * MIB - page, 12 * MIB],
            "its last page, then its middle one"
        );
        assert_eq!(helper.found_cached, STEP);
        asked.borrow_mut().clear();
        assert!(!helper.in_page_cache_by(&step(20 * MIB), cache));
        assert_eq!(*asked.borrow(), [28 * MIB - page], "its last page is not");
        assert_eq!(helper.found_cached, STEP, "counted once");
        assert_eq!(helper.asked, 0, "looking asks the helper nothing");
    }

    #[test]
    fn a_kernel_that_cannot_tell_is_not_asked_again() {
        let calls = std::cell::Cell::new(0);
        let refuse = |_: RawFd, _: u64, _: u64| {
            calls.set(calls.get() + 1);
            Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
        };
        let mut helper = Helper::default();
        let step = Step {
            fd: 3,
            offset: 0,
            len: STEP,
        };
        assert!(!helper.in_page_cache_by(&step, refuse));
        assert!(!helper.in_page_cache_by(&step, refuse));
        assert_eq!(calls.get(), 1, "asked once");
    }

    #[test]
    fn the_window_is_bounded() {
        assert_eq!(window(None), MOST_AHEAD);
        assert_eq!(window(Some(64 << 20)), LEAST_AHEAD, "a small machine");
        assert_eq!(window(Some(2 << 30)), MOST_AHEAD);
    }
}
