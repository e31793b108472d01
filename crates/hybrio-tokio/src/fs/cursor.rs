//! `AsyncRead`, `AsyncWrite` and `AsyncSeek` on [`File`], with
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
use tokio::io::{AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};

use super::{File, Inline, Inner};
use crate::buf;
use crate::driver::Op;
use crate::route::Kind;

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

fn result_of(result: i64) -> io::Result<usize> {
    if result < 0 {
        Err(io::Error::from_raw_os_error((-result) as i32))
    } else {
        Ok(result as usize)
    }
}

impl File {
    /// Waits for the request in flight, if any: a read's bytes are dropped
    /// (the position was not moved for them), a write's error is kept.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<Vec<u8>> {
        let cursor = &mut self.cursor;
        let op = match &mut cursor.state {
            State::Idle(buffer) => return Poll::Ready(std::mem::take(buffer)),
            State::Reading(op) | State::Writing(op) => op,
        };
        let (result, (buffer, _file)) = ready!(Pin::new(op).poll(cx));
        if let State::Writing(_) = cursor.state
            && let Err(error) = result_of(result)
        {
            cursor.write_error.get_or_insert(error);
        }
        cursor.state = State::Idle(Vec::new());
        Poll::Ready(buffer)
    }

    fn start(&mut self, request: Request, buffer: Vec<u8>, writing: bool) {
        self.inner.route.went_async();
        let op = Op::new(self.inner.driver, request, (buffer, self.inner.clone()));
        self.cursor.state = if writing {
            State::Writing(op)
        } else {
            State::Reading(op)
        };
    }
}

impl AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        dst: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if let State::Reading(op) = &mut this.cursor.state {
                let (result, (buffer, _file)) = ready!(Pin::new(op).poll(cx));
                let got = result_of(result);
                if let Ok(n) = got {
                    let n = n.min(dst.remaining());
                    dst.put_slice(&buffer[..n]);
                    this.cursor.pos += n as u64;
                }
                this.cursor.state = State::Idle(buffer);
                return Poll::Ready(got.map(drop));
            }
            let mut buffer = ready!(this.poll_idle(cx));
            if dst.remaining() == 0 {
                this.cursor.state = State::Idle(buffer);
                return Poll::Ready(Ok(()));
            }
            let len = dst.remaining().min(MAX_BUF);
            let inner = &this.inner;
            if inner.may_read_inline() && inner.route.try_inline(Kind::Read, len) {
                let pos = this.cursor.pos;
                let unfilled = &mut dst.initialize_unfilled_to(len)[..len];
                let read = match inner.read_inline(unfilled, pos) {
                    Inline::Done(result) => Some(result),
                    // What the page cache had: a read may return less.
                    Inline::Rest(n) if n > 0 => Some(Ok(n)),
                    Inline::Rest(_) => None,
                };
                if let Some(result) = read {
                    this.cursor.state = State::Idle(buffer);
                    let n = result?;
                    dst.advance(n);
                    this.cursor.pos += n as u64;
                    return Poll::Ready(Ok(()));
                }
            }
            buffer.clear();
            buffer.resize(len, 0);
            let lent = buf::lend_mut(&mut buffer, 0);
            let request = Request::read(this.inner.handle, this.cursor.pos, lent, 0);
            this.start(request, buffer, false);
        }
    }
}

impl AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut buffer = ready!(this.poll_idle(cx));
        if let Some(error) = this.cursor.write_error.take() {
            this.cursor.state = State::Idle(buffer);
            return Poll::Ready(Err(error));
        }
        if src.is_empty() {
            this.cursor.state = State::Idle(buffer);
            return Poll::Ready(Ok(0));
        }
        let n = src.len().min(MAX_BUF);
        let inner = &this.inner;
        let mut done = 0;
        if inner.may_write_inline() && inner.route.try_inline(Kind::Write, n) {
            match inner.write_inline(&src[..n], this.cursor.pos) {
                Inline::Done(result) => {
                    this.cursor.state = State::Idle(buffer);
                    let written = result?;
                    this.cursor.pos += written as u64;
                    return Poll::Ready(Ok(written));
                }
                // Written in part: the rest goes to the engine, copied.
                Inline::Rest(written) => done = written,
            }
        }
        buffer.clear();
        buffer.extend_from_slice(&src[done..n]);
        this.cursor.pos += done as u64;
        let request = Request::write(this.inner.handle, this.cursor.pos, buf::lend(&buffer), 0);
        this.start(request, buffer, true);
        this.cursor.pos += (n - done) as u64;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let buffer = ready!(this.poll_idle(cx));
        this.cursor.state = State::Idle(buffer);
        match this.cursor.write_error.take() {
            Some(error) => Poll::Ready(Err(error)),
            None => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

impl AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if this.cursor.seek.is_some() {
            return Err(io::Error::other(
                "a seek is already under way: poll_complete it first",
            ));
        }
        this.cursor.seek = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        let buffer = ready!(this.poll_idle(cx));
        this.cursor.state = State::Idle(buffer);
        let Some(position) = this.cursor.seek.take() else {
            return Poll::Ready(Ok(this.cursor.pos));
        };
        if let Some(error) = this.cursor.write_error.take() {
            return Poll::Ready(Err(error));
        }
        let (base, delta) = match position {
            SeekFrom::Start(at) => return Poll::Ready(Ok(this.set_pos(at))),
            SeekFrom::Current(delta) => (this.cursor.pos, delta),
            SeekFrom::End(delta) => (crate::sys::metadata(this.inner.fd)?.len(), delta),
        };
        match base.checked_add_signed(delta) {
            Some(at) => Poll::Ready(Ok(this.set_pos(at))),
            None => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("seek to {base} {delta:+}: before the start of the file or past 2^64"),
            ))),
        }
    }
}

impl File {
    fn set_pos(&mut self, at: u64) -> u64 {
        self.cursor.pos = at;
        at
    }
}
