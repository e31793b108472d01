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
#[derive(Debug)]
pub struct Driver<'e> {
    engine: &'e mut dyn Engine,
    order: Order,
    /// The caller's `user_data` of each request not yet handed back, by
    /// sequence number from `first`; `None` once it has been handed back.
    tags: VecDeque<Option<u64>>,
    first: u64,
    /// Completions taken from the engine, not yet handed back: by sequence
    /// number from `first` (submission order), or in arrival order.
    ready: VecDeque<Option<Completion>>,
    /// Requests submitted and not yet handed back.
    outstanding: usize,
    /// Requests queued since the last commit.
    uncommitted: usize,
    reaped: Vec<Completion>,
}

impl<'e> Driver<'e> {
    /// A driver over `engine` handing completions back in `order`.
    pub fn new(engine: &'e mut dyn Engine, order: Order) -> Driver<'e> {
        Driver {
            engine,
            order,
            tags: VecDeque::new(),
            first: 0,
            ready: VecDeque::new(),
            outstanding: 0,
            uncommitted: 0,
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
        let seq = self.first + self.tags.len() as u64;
        self.tags.push_back(Some(request.user_data));
        self.outstanding += 1;
        request.user_data = seq;
        loop {
            match self.engine.queue(request) {
                QueueOutcome::Completed(completion) => {
                    self.keep(completion);
                    return Ok(());
                }
                QueueOutcome::Queued => {
                    self.uncommitted += 1;
                    return Ok(());
                }
                QueueOutcome::Busy(back) => {
                    // Full: what is out must come back first (Busy only comes
                    // with the engine at its depth, so there is some).
                    request = back;
                    self.take_some(1)?;
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
    /// the engine (0: what is there, without waiting).
    fn take_some(&mut self, min: usize) -> Result<(), Error> {
        let mut reaped = std::mem::take(&mut self.reaped);
        let result = if self.uncommitted > 0 {
            self.uncommitted = 0;
            // One system call where the engine can (io_uring).
            self.engine.commit_and_reap(min, usize::MAX, &mut reaped)
        } else {
            self.engine.reap(min, usize::MAX, &mut reaped)
        };
        // Completions appended before an error are the caller's all the same.
        for completion in reaped.drain(..) {
            self.keep(completion);
        }
        self.reaped = reaped;
        result.map(drop)
    }

    /// Keeps a completion from the engine for `next_completion`.
    fn keep(&mut self, completion: Completion) {
        match self.order {
            Order::Completion => self.ready.push_back(Some(completion)),
            Order::Submission => {
                let at = (completion.user_data - self.first) as usize;
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
        let at = (completion.user_data - self.first) as usize;
        completion.user_data = self.tags[at].take().expect("each request completes once");
        // Sequence numbers handed back from the front are done with.
        while let Some(None) = self.tags.front() {
            self.tags.pop_front();
            self.first += 1;
        }
        Some(completion)
    }
}
