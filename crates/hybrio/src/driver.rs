//! The common case in a few lines: [`Driver`] keeps requests in flight on
//! an engine and hands their completions back in the order they were
//! submitted or as they complete, whichever the caller asks for.
//!
//! It is built on the [`Engine`] interface and nothing else: a request
//! [`submit`](Driver::submit)ted while the engine is full first takes what
//! has completed (kept for [`next_completion`](Driver::next_completion)), the engine's batches
//! are committed when the caller waits, and a completion the engine made
//! inside `queue` comes out of `next_completion` like any other. So one loop works the
//! same on every engine, synchronous or not.
//!
//! Random reads at a depth, in submission order, with a pool of 16
//! buffers reused as completions come back:
//!
//! ```no_run
//! use hybrio::buf::BufPool;
//! use hybrio::driver::{Driver, Order};
//! use hybrio::engine::{self, EngineConfig, EngineKind};
//! use hybrio::file::OpenOptions;
//! use hybrio::request::Request;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let pool = BufPool::new(16, 4096)?;
//! let mut engine = engine::open(EngineKind::Adaptive, &EngineConfig::with_depth(16), Some(&pool))?;
//! let file = engine.open_file("data".as_ref(), &OpenOptions::default())?;
//! let mut blocks = [7u64, 3, 12, 0].into_iter();
//! Driver::new(engine.as_mut(), Order::Submission).stream(
//!     &pool,
//!     |buf| blocks.next().map(|block| Request::read(file, block * 4096, buf, block)),
//!     |done| {
//!         println!("block {}: {} bytes", done.user_data, done.outcome()?);
//!         Ok::<(), Box<dyn std::error::Error>>(())
//!     },
//! )?;
//! # Ok(()) }
//! ```
//!
//! [`submit`](Driver::submit) and [`next_completion`](Driver::next_completion) are the steps
//! under it, for loops whose completions lead to more requests (a copy:
//! each read's buffer becomes a write).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;
use crate::buf::{Buf, BufPool};
use crate::engine::{Engine, QueueOutcome};
use crate::request::{Completion, Request};

/// The order [`Driver::next_completion`] hands completions back in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The order the requests were submitted in (a completion that came
    /// early waits for those before it).
    Submission,
    /// As they complete.
    Completion,
}

/// Keeps requests in flight on an engine; see the [module docs](self).
///
/// Requests keep their own `user_data`: the driver tags each with a
/// sequence number on its way down and puts the caller's back on the way
/// up. Completions not yet taken are dropped with the driver (their
/// buffers go back to their pool); requests still in flight stay with the
/// engine, whose drop waits for them.
///
/// A driver knows its own requests by sequence numbers no other driver in
/// the process uses. A completion it did not submit (of a request a dropped
/// driver left in the engine, or one queued on the engine by hand before
/// the driver was made) is not its to hand back: it is dropped when met,
/// its buffer back to its pool. So make a driver over an engine with
/// nothing in flight when those completions matter.
#[derive(Debug)]
pub struct Driver<'e> {
    engine: &'e mut dyn Engine,
    order: Order,
    /// Each request not yet handed back, by sequence number from `first`.
    tags: VecDeque<Tag>,
    first: u64,
    /// Completions taken from the engine, not yet handed back: by sequence
    /// number from `first` (submission order), or in arrival order.
    ready: VecDeque<Option<Completion>>,
    /// Requests submitted and not yet handed back.
    outstanding: usize,
    reaped: Vec<Completion>,
}

/// Where a request the driver submitted is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    /// In the engine; the caller's `user_data`.
    Out(u64),
    /// Taken from the engine, not yet handed back.
    Back(u64),
    /// Handed back.
    Done,
}

/// `Busy` answers in a row, each after a wait that took no completion,
/// before [`Driver::submit`] gives up with [`Error::Stalled`] rather than
/// spin: the engine is full of requests none of which can complete.
const MAX_FRUITLESS_WAITS: u32 = 1000;

/// The next driver's first sequence number, in units of 2^32: each driver
/// numbers its requests in a range of its own.
static NEXT_RANGE: AtomicU64 = AtomicU64::new(1);

impl<'e> Driver<'e> {
    /// A driver over `engine` handing completions back in `order`.
    pub fn new(engine: &'e mut dyn Engine, order: Order) -> Driver<'e> {
        Driver {
            engine,
            order,
            tags: VecDeque::new(),
            first: NEXT_RANGE.fetch_add(1, Ordering::Relaxed).wrapping_shl(32),
            ready: VecDeque::new(),
            outstanding: 0,
            reaped: Vec::new(),
        }
    }

    /// Requests submitted and not yet handed back by [`next_completion`](Driver::next_completion).
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Hands `request` to the engine. When the engine is full, it first
    /// waits for a completion (kept for [`next_completion`](Driver::next_completion)).
    pub fn submit(&mut self, mut request: Request) -> Result<(), Error> {
        let seq = self.first.wrapping_add(self.tags.len() as u64);
        self.tags.push_back(Tag::Out(request.user_data));
        self.outstanding += 1;
        request.user_data = seq;
        let mut fruitless = 0;
        loop {
            match self.engine.queue(request) {
                QueueOutcome::Completed(completion) => {
                    self.keep(completion);
                    return Ok(());
                }
                QueueOutcome::Queued => {
                    return Ok(());
                }
                QueueOutcome::Busy(back) => {
                    // Full: what is out must come back first (Busy only comes
                    // with the engine at its depth, so there is some).
                    request = back;
                    let waited = self.take_some(1).and_then(|reaped| {
                        fruitless = if reaped == 0 { fruitless + 1 } else { 0 };
                        if fruitless > MAX_FRUITLESS_WAITS {
                            return Err(Error::Stalled {
                                in_flight: self.engine.in_flight(),
                            });
                        }
                        Ok(())
                    });
                    if let Err(error) = waited {
                        // Never submitted: not the driver's to hand back.
                        self.tags.pop_back();
                        self.outstanding -= 1;
                        return Err(error);
                    }
                }
            }
        }
    }

    /// The next completion in the driver's order, waiting for it if need
    /// be; `None` when nothing is outstanding. Its `user_data` is the
    /// caller's again.
    pub fn next_completion(&mut self) -> Result<Option<Completion>, Error> {
        loop {
            if let Some(completion) = self.pop_ready() {
                return Ok(Some(completion));
            }
            if self.outstanding() == 0 {
                return Ok(None);
            }
            self.take_some(1)?;
        }
    }

    /// The next completion if one is ready now, without waiting: what is
    /// queued is committed, and what the engine has finished taken without
    /// blocking (so calling it after every submit commits each request
    /// alone; [`stream`](Driver::stream) and [`run`](Driver::run) do not).
    pub fn ready_completion(&mut self) -> Result<Option<Completion>, Error> {
        if let Some(completion) = self.pop_ready() {
            return Ok(Some(completion));
        }
        if self.outstanding() > 0 {
            self.take_some(0)?;
        }
        Ok(self.pop_ready())
    }

    /// Submits every request of `requests`, keeping as many in flight as
    /// the engine takes, and calls `done` with each completion in the
    /// driver's order. Stops at `done`'s first error.
    pub fn run<E>(
        &mut self,
        requests: impl IntoIterator<Item = Request>,
        mut done: impl FnMut(Completion) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<Error>,
    {
        for request in requests {
            self.submit(request)?;
            // Those already taken from the engine (a full engine's, a
            // synchronous one's): asking the engine for more here would
            // commit each request alone.
            while let Some(completion) = self.pop_ready() {
                done(completion)?;
            }
        }
        while let Some(completion) = self.next_completion()? {
            done(completion)?;
        }
        Ok(())
    }

    /// The loop most callers want: while `make` has requests, it gets a
    /// free buffer of `pool` and turns it into a request (`None`: no more),
    /// which is submitted; each completion goes to `done` in the driver's
    /// order, before the driver waits for a buffer, so that the buffers
    /// `done` lets go of are the next requests'. Ends when `make` has no
    /// more and every completion went to `done`; stops at `done`'s first
    /// error. When `done` keeps every buffer of `pool` (nothing in flight,
    /// none free), [`Error::NoBuffer`] rather than a wait that never ends.
    pub fn stream<E>(
        &mut self,
        pool: &BufPool,
        mut make: impl FnMut(Buf) -> Option<Request>,
        mut done: impl FnMut(Completion) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<Error>,
    {
        let mut making = true;
        loop {
            // Those already taken from the engine; the engine is asked only
            // when no buffer is free, so requests go down in batches.
            while let Some(completion) = self.pop_ready() {
                done(completion)?;
            }
            if making && let Some(buf) = pool.take() {
                match make(buf) {
                    Some(request) => self.submit(request)?,
                    None => making = false,
                }
                continue;
            }
            match self.next_completion()? {
                Some(completion) => done(completion)?,
                None if making => {
                    return Err(Error::NoBuffer {
                        count: pool.count(),
                    }
                    .into());
                }
                None => return Ok(()),
            }
        }
    }

    /// Commits what is queued and takes at least `min` completions from
    /// the engine (0: what is there, without waiting); returns how many it
    /// took.
    ///
    /// It commits even when the driver queued nothing since its last
    /// commit: requests left queued on the engine by a dropped driver (or
    /// by hand) must go down for the room they hold to come back, and a
    /// commit with nothing queued costs no system call.
    fn take_some(&mut self, min: usize) -> Result<usize, Error> {
        let mut reaped = std::mem::take(&mut self.reaped);
        // One system call where the engine can (io_uring).
        let result = self.engine.commit_and_reap(min, usize::MAX, &mut reaped);
        let taken = reaped.len();
        // Completions appended before an error are the caller's all the same.
        for completion in reaped.drain(..) {
            self.keep(completion);
        }
        self.reaped = reaped;
        result.map(|_| taken)
    }

    /// Keeps a completion from the engine for `next_completion`; drops one
    /// the driver is not waiting for (see [`Driver`]).
    fn keep(&mut self, completion: Completion) {
        let Some(at) = usize::try_from(completion.user_data.wrapping_sub(self.first))
            .ok()
            .filter(|&at| at < self.tags.len())
        else {
            return;
        };
        let Tag::Out(tag) = self.tags[at] else {
            return;
        };
        self.tags[at] = Tag::Back(tag);
        match self.order {
            Order::Completion => self.ready.push_back(Some(completion)),
            Order::Submission => {
                if self.ready.len() <= at {
                    self.ready.resize_with(at + 1, || None);
                }
                self.ready[at] = Some(completion);
            }
        }
    }

    /// The next completion to hand back, if it has come, with the caller's
    /// `user_data` back on it.
    fn pop_ready(&mut self) -> Option<Completion> {
        let mut completion = match self.order {
            Order::Completion => self.ready.pop_front()??,
            Order::Submission => {
                self.ready.front()?.as_ref()?;
                self.ready.pop_front()??
            }
        };
        self.outstanding -= 1;
        // `keep` took only completions of requests out, and marked them back.
        let at = completion.user_data.wrapping_sub(self.first) as usize;
        let Tag::Back(tag) = std::mem::replace(&mut self.tags[at], Tag::Done) else {
            unreachable!("a kept completion's request is marked back");
        };
        completion.user_data = tag;
        // Sequence numbers handed back from the front are done with.
        while let Some(Tag::Done) = self.tags.front() {
            self.tags.pop_front();
            self.first = self.first.wrapping_add(1);
        }
        Some(completion)
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::path::PathBuf;

    use super::*;
    use crate::engine::EngineKind;
    use crate::file::FileHandle;

    /// Full, with one request of its own in flight whose reap fails.
    #[derive(Debug)]
    struct Broken;

    impl Engine for Broken {
        fn kind(&self) -> EngineKind {
            EngineKind::Null
        }
        fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, Error> {
            Ok(FileHandle(0))
        }
        fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
            Err(Error::BadHandle(handle.0))
        }
        fn queue(&mut self, request: Request) -> QueueOutcome {
            QueueOutcome::Busy(request)
        }
        fn commit(&mut self) -> Result<usize, Error> {
            Ok(0)
        }
        fn reap(&mut self, _: usize, _: usize, _: &mut Vec<Completion>) -> Result<usize, Error> {
            Err(Error::Engine {
                engine: "broken",
                op: "reap",
                source: std::io::Error::from_raw_os_error(libc::EIO),
            })
        }
        fn in_flight(&self) -> usize {
            1
        }
        fn is_synchronous(&self) -> bool {
            false
        }
    }

    /// Issue 44, defect 3: a submit that failed while waiting for room kept
    /// its request counted, so `next_completion` waited for it for ever.
    #[test]
    fn a_submit_that_fails_leaves_nothing_outstanding() {
        let mut engine = Broken;
        let mut driver = Driver::new(&mut engine, Order::Submission);
        let read = Request::read(FileHandle(0), 0, Buf::empty(), 7);
        assert!(driver.submit(read).is_err());
        assert_eq!(driver.outstanding(), 0);
        assert!(driver.next_completion().unwrap().is_none());
    }
}
