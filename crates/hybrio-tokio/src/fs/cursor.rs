//! `AsyncRead`, `AsyncWrite` and `AsyncSeek` on a [`File`](super::File), with
//! `tokio::fs::File`'s meaning: a position, one request in flight, a write
//! that returns once its bytes are copied and reports its error at the
//! latest at `flush`. A read is routed as a positioned one is: from the page
//! cache in the polling task, straight into the caller's buffer, where its
//! class has been finding it there; through the engine otherwise.

use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use hybrio::request::Request;
use tokio::io::ReadBuf;

use super::inner::{Inline, Inner};
use crate::buf;
use crate::driver::Op;

/// The most a request of the cursor moves at once (tokio's own bound).
const MAX_BUF: usize = 2 << 20;

/// A request of the cursor's, with its buffer.
type CursorOp = Op<(Vec<u8>, Arc<Inner>)>;

#[derive(Debug, Default)]
pub(super) struct Cursor {
    pos: u64,
    state: State,
    /// A write's error, reported by the next write, flush or seek.
    write_error: Option<io::Error>,
    /// A seek started and not yet completed.
    seek: Option<SeekFrom>,
}

#[derive(Debug)]
enum State {
    /// Nothing in flight; the buffer kept for the next request.
    Idle(Vec<u8>),
    Reading(CursorOp),
    Writing(CursorOp),
}

impl Default for State {
    fn default() -> Self {
        State::Idle(Vec::new())
    }
}

impl std::fmt::Debug for CursorOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a request in flight")
    }
}

impl Cursor {
    /// A request is in flight.
    pub(super) fn is_busy(&self) -> bool {
        !matches!(self.state, State::Idle(_))
    }
}

impl Cursor {
    /// Waits for the request in flight, if any: a read's bytes are dropped
    /// (the position was not moved for them), a write's error is kept.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<Vec<u8>> {
        let op = match &mut self.state {
            State::Idle(buffer) => return Poll::Ready(std::mem::take(buffer)),
            State::Reading(op) | State::Writing(op) => op,
        };
        let (result, (buffer, _file)) = ready!(Pin::new(op).poll(cx));
        if let State::Writing(_) = self.state
            && let Err(error) = result
        {
            self.write_error.get_or_insert(error);
        }
        self.state = State::Idle(Vec::new());
        Poll::Ready(buffer)
    }

    fn start(&mut self, inner: &Arc<Inner>, request: Request, buffer: Vec<u8>, writing: bool) {
        inner.route.went_async();
        let op = Op::new(inner.driver, request, (buffer, inner.clone()));
        self.state = if writing {
            State::Writing(op)
        } else {
            State::Reading(op)
        };
    }
}

impl Cursor {
    /// `AsyncRead::poll_read` of `inner`'s file.
    pub(super) fn poll_read(
        &mut self,
        inner: &Arc<Inner>,
        cx: &mut Context<'_>,
        dst: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            if let State::Reading(op) = &mut self.state {
                let (result, (buffer, _file)) = ready!(Pin::new(op).poll(cx));
                let got = result;
                if let Ok(n) = got {
                    let n = n.min(dst.remaining());
                    dst.put_slice(&buffer[..n]);
                    self.pos += n as u64;
                }
                self.state = State::Idle(buffer);
                return Poll::Ready(got.map(drop));
            }
            let mut buffer = ready!(self.poll_idle(cx));
            if dst.remaining() == 0 {
                self.state = State::Idle(buffer);
                return Poll::Ready(Ok(()));
            }
            let len = dst.remaining().min(MAX_BUF);
            if inner.may_read_inline_now(len) {
                let pos = self.pos;
                let unfilled = &mut dst.initialize_unfilled_to(len)[..len];
                let read = match inner.read_inline(unfilled, pos) {
                    Inline::Done(result) => Some(result),
                    // What the page cache had: a read may return less.
                    Inline::Rest(n) if n > 0 => Some(Ok(n)),
                    Inline::Rest(_) => None,
                };
                if let Some(result) = read {
                    self.state = State::Idle(buffer);
                    let n = result?;
                    dst.advance(n);
                    self.pos += n as u64;
                    return Poll::Ready(Ok(()));
                }
            }
            buffer.clear();
            buffer.resize(len, 0);
            let lent = buf::lend_mut(&mut buffer, 0);
            let request = inner.read_request(self.pos, lent, len);
            self.start(inner, request, buffer, false);
        }
    }
}

impl Cursor {
    /// `AsyncWrite::poll_write` to `inner`'s file.
    pub(super) fn poll_write(
        &mut self,
        inner: &Arc<Inner>,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut buffer = ready!(self.poll_idle(cx));
        if let Some(error) = self.write_error.take() {
            self.state = State::Idle(buffer);
            return Poll::Ready(Err(error));
        }
        if src.is_empty() {
            self.state = State::Idle(buffer);
            return Poll::Ready(Ok(0));
        }
        let n = src.len().min(MAX_BUF);
        let mut done = 0;
        if inner.may_write_inline_now(n) {
            match inner.write_inline(&src[..n], self.pos) {
                Inline::Done(result) => {
                    self.state = State::Idle(buffer);
                    let written = result?;
                    self.pos += written as u64;
                    return Poll::Ready(Ok(written));
                }
                // Written in part: the rest goes to the engine, copied.
                Inline::Rest(written) => done = written,
            }
        }
        buffer.clear();
        buffer.extend_from_slice(&src[done..n]);
        self.pos += done as u64;
        let request = Request::write(inner.handle, self.pos, buf::lend(&buffer), 0);
        self.start(inner, request, buffer, true);
        self.pos += (n - done) as u64;
        Poll::Ready(Ok(n))
    }

    /// `AsyncWrite::poll_flush`.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let buffer = ready!(self.poll_idle(cx));
        self.state = State::Idle(buffer);
        match self.write_error.take() {
            Some(error) => Poll::Ready(Err(error)),
            None => Poll::Ready(Ok(())),
        }
    }

    /// `AsyncSeek::start_seek`.
    pub(super) fn start_seek(&mut self, position: SeekFrom) -> io::Result<()> {
        if self.seek.is_some() {
            return Err(io::Error::other(
                "a seek is already under way: poll_complete it first",
            ));
        }
        self.seek = Some(position);
        Ok(())
    }

    /// `AsyncSeek::poll_complete` in `inner`'s file.
    pub(super) fn poll_complete(
        &mut self,
        inner: &Inner,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<u64>> {
        let buffer = ready!(self.poll_idle(cx));
        self.state = State::Idle(buffer);
        let Some(position) = self.seek.take() else {
            return Poll::Ready(Ok(self.pos));
        };
        if let Some(error) = self.write_error.take() {
            return Poll::Ready(Err(error));
        }
        let (base, delta) = match position {
            SeekFrom::Start(at) => return Poll::Ready(Ok(self.set_pos(at))),
            SeekFrom::Current(delta) => (self.pos, delta),
            SeekFrom::End(delta) => (crate::sys::metadata(inner.fd)?.len(), delta),
        };
        match base.checked_add_signed(delta) {
            Some(at) => Poll::Ready(Ok(self.set_pos(at))),
            None => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("seek to {base} {delta:+}: before the start of the file or past 2^64"),
            ))),
        }
    }
}

impl Cursor {
    fn set_pos(&mut self, at: u64) -> u64 {
        self.pos = at;
        at
    }
}
