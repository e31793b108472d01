//! Requests handed to an engine and the completions that come back.

mod op;

pub use op::Op;

use crate::buf::Buf;
use crate::file::{FileEntry, FileHandle, FileTable};

/// One I/O request. Its buffer moves into the engine and comes back with the completion.
#[derive(Debug)]
// Moved by value into every engine: aligned, a move copies whole 16-byte
// blocks, so that a field read right after it is never split across two
// of the copy's stores (a read the CPU cannot forward from them, and waits).
#[repr(align(16))]
pub struct Request {
    /// What to do.
    pub op: Op,
    /// Which file (a handle returned by [`Engine::add_file`](crate::engine::Engine::add_file)).
    pub file: FileHandle,
    /// Byte offset in the file (ignored by sync operations).
    pub offset: u64,
    /// The data buffer: reads fill `buf.len()` bytes, writes write `buf.len()` bytes.
    /// [`Buf::empty`] for the operations without data (syncs, trims,
    /// allocations, truncations); a read, write, receive or send with the
    /// empty buffer fails with `EINVAL`.
    pub buf: Buf,
    /// Bytes a trim or an allocation covers (0 for the other operations,
    /// whose buffer says how much they move).
    pub span: u64,
    /// This read's or write's I/O priority (`IOPRIO_PRIO_VALUE(class,
    /// level)`: class << 13 | level), or 0 for the thread's own. io_uring
    /// and libaio send it with the request (the kernel refuses a class it
    /// does not know with `EINVAL`); the engines that run requests in
    /// threads use the thread's.
    pub ioprio: u16,
    /// Caller's tag, returned untouched in the completion.
    pub user_data: u64,
    /// What the library notes on the request on its way: uncached, or a
    /// fault to inject ([`Marks`]).
    pub(crate) marks: Marks,
}

/// What the library notes on a request on its way down, in the byte the
/// request had to spare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Marks(u8);

impl Marks {
    /// Set by the adaptive engine for a file the caller let it choose the
    /// caching of ([`Caching::Auto`](crate::file::Caching::Auto)): this
    /// read or write goes uncached (`RWF_DONTCACHE`) whatever its file's
    /// caching. Only set on files probed to take it.
    pub(crate) const UNCACHED: u8 = 1;
    /// Injected: the first answer is reported as half of what it moved
    /// ([`inject`](crate::engine::inject)).
    pub(crate) const SHORT: u8 = 2;
    /// Injected: one bit of what the read brought is flipped.
    pub(crate) const CORRUPT: u8 = 4;
    /// Injected: the completion is delivered late.
    pub(crate) const DELAY: u8 = 8;
    /// Every injected fault.
    pub(crate) const FAULTS: u8 = Self::SHORT | Self::CORRUPT | Self::DELAY;
    /// Set by the adaptive engine on a request it times: its `user_data`
    /// is then the index of the engine's record of it, which holds the
    /// caller's tag. The engines inside carry it to the completion, and a
    /// request sent again keeps it.
    pub(crate) const TIMED: u8 = 16;
    /// Set by the caller ([`Request::to_kernel_workers`]): io_uring hands
    /// the request to the kernel's worker threads at once (`IOSQE_ASYNC`).
    pub(crate) const TO_WORKERS: u8 = 32;

    /// Whether any of `bits` is set.
    #[inline(always)]
    pub(crate) fn any(self, bits: u8) -> bool {
        self.0 & bits != 0
    }

    /// Sets `bits`, or clears them.
    #[inline(always)]
    pub(crate) fn set(&mut self, bits: u8, on: bool) {
        if on {
            self.0 |= bits;
        } else {
            self.0 &= !bits;
        }
    }

    /// Whether `bit` was set; clears it.
    #[inline(always)]
    pub(crate) fn take(&mut self, bit: u8) -> bool {
        let was = self.any(bit);
        self.0 &= !bit;
        was
    }
}

impl Request {
    /// A read of `buf.len()` bytes at `offset`.
    pub fn read(file: FileHandle, offset: u64, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Read,
            file,
            offset,
            buf,
            user_data,
            span: 0,
            ioprio: 0,
            marks: Marks::default(),
        }
    }

    /// A write of `buf.len()` bytes at `offset`.
    pub fn write(file: FileHandle, offset: u64, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Write,
            file,
            offset,
            buf,
            user_data,
            span: 0,
            ioprio: 0,
            marks: Marks::default(),
        }
    }

    /// A receive of at most `buf.len()` bytes from the socket `socket` (a
    /// handle returned by [`Engine::add_socket`](crate::engine::Engine::add_socket)).
    pub fn recv(socket: FileHandle, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Recv,
            file: socket,
            offset: 0,
            buf,
            user_data,
            span: 0,
            ioprio: 0,
            marks: Marks::default(),
        }
    }

    /// A send of the buffer's `len()` bytes on the socket `socket`.
    pub fn send(socket: FileHandle, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Send,
            file: socket,
            offset: 0,
            buf,
            user_data,
            span: 0,
            ioprio: 0,
            marks: Marks::default(),
        }
    }

    /// An fsync (or, with `data_only`, an fdatasync) of the file.
    pub fn sync(file: FileHandle, data_only: bool, user_data: u64) -> Self {
        let op = if data_only { Op::Fdatasync } else { Op::Fsync };
        Request {
            op,
            file,
            offset: 0,
            buf: Buf::empty(),
            user_data,
            span: 0,
            ioprio: 0,
            marks: Marks::default(),
        }
    }

    /// A trim of `len` bytes at `offset` (see [`Op::Trim`]).
    pub fn trim(file: FileHandle, offset: u64, len: u64, user_data: u64) -> Self {
        Self::on_space(Op::Trim, file, offset, len, user_data)
    }

    /// An allocation of `len` bytes at `offset`, growing the file or, with
    /// `keep_size`, not (see [`Op::Allocate`]).
    pub fn allocate(
        file: FileHandle,
        offset: u64,
        len: u64,
        keep_size: bool,
        user_data: u64,
    ) -> Self {
        let op = if keep_size {
            Op::AllocateKeepSize
        } else {
            Op::Allocate
        };
        Self::on_space(op, file, offset, len, user_data)
    }

    /// A truncation (or extension) of the file to `size` bytes.
    pub fn truncate(file: FileHandle, size: u64, user_data: u64) -> Self {
        Self::on_space(Op::Truncate, file, size, 0, user_data)
    }

    fn on_space(op: Op, file: FileHandle, offset: u64, span: u64, user_data: u64) -> Self {
        Request {
            op,
            file,
            offset,
            buf: Buf::empty(),
            user_data,
            span,
            ioprio: 0,
            marks: Marks::default(),
        }
    }

    /// io_uring: the request goes to the kernel's worker threads at once
    /// (`IOSQE_ASYNC`) rather than being tried in the submitting thread
    /// first. For a request the caller knows will wait (a read that missed
    /// the page cache), whose try would only cost the submitting thread:
    /// a buffered read's try submits the next readahead in that thread,
    /// which may then wait for memory and for the device's request slots.
    /// The other engines leave it as it is.
    pub fn to_kernel_workers(mut self) -> Self {
        self.marks.set(Marks::TO_WORKERS, true);
        self
    }

    /// Bytes this request transfers, or, for a trim or an allocation, the
    /// bytes it covers (0 for syncs and truncations).
    pub fn len(&self) -> usize {
        if self.op.moves_data() {
            self.buf.len()
        } else {
            self.span as usize
        }
    }

    /// The request's buffer, or `None` when it carries the empty one (a
    /// sync's, a trim's; a read's without a buffer, which fails).
    #[inline(always)]
    pub(crate) fn buffer(&self) -> Option<&Buf> {
        (self.buf.capacity() > 0).then_some(&self.buf)
    }

    /// What it does, with its buffer and offset to move on (the retry rule
    /// moves both past what a short transfer did).
    #[inline(always)]
    pub(crate) fn parts_mut(&mut self) -> (Op, &mut Buf, &mut u64) {
        (self.op, &mut self.buf, &mut self.offset)
    }

    /// [`buffer`](Request::buffer), writable.
    #[inline(always)]
    pub(crate) fn buffer_mut(&mut self) -> Option<&mut Buf> {
        (self.buf.capacity() > 0).then_some(&mut self.buf)
    }

    /// The errno a request fails with before it reaches the kernel, if any.
    ///
    /// Every engine applies the same rules, so they all answer alike: a read or
    /// write needs a buffer, and offsets past `i64::MAX` are `EINVAL` (`pread(2)`
    /// says so; io_uring would read `u64::MAX` as "the current position").
    #[inline(always)]
    pub(crate) fn malformed(&self) -> Option<i32> {
        match self.op {
            Op::Read | Op::Write if self.buffer().is_none() || self.offset > i64::MAX as u64 => {
                Some(libc::EINVAL)
            }
            Op::Recv | Op::Send if self.buffer().is_none() => Some(libc::EINVAL),
            _ if self.op.changes_space()
                && (self.buffer().is_some() || self.offset > i64::MAX as u64) =>
            {
                Some(libc::EINVAL)
            }
            _ => None,
        }
    }

    /// Its file's entry in `files`, or the negative errno an engine answers
    /// instead: `EBADF` for a handle that names no file, else what
    /// [`malformed`](Self::malformed) finds.
    #[inline(always)]
    pub(crate) fn entry_in<'f>(&self, files: &'f FileTable) -> Result<&'f FileEntry, i64> {
        let entry = files.get(self.file).ok_or(-i64::from(libc::EBADF))?;
        match self.malformed() {
            Some(errno) => Err(-i64::from(errno)),
            None => Ok(entry),
        }
    }

    /// True when the request transfers no data.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `RWF_*` flags this request adds to its file's own.
    #[inline(always)]
    pub(crate) fn rw_flags(&self) -> i32 {
        if self.marks.any(Marks::UNCACHED) {
            libc::RWF_DONTCACHE
        } else {
            0
        }
    }

    /// The result of this request given the kernel's answer to it: a
    /// fallocate answers 0, and a trim or allocation gives the bytes it covered.
    #[inline(always)]
    pub(crate) fn result_of(&self, kernel: i64) -> i64 {
        match self.op {
            Op::Trim | Op::Allocate | Op::AllocateKeepSize if kernel == 0 => self.span as i64,
            _ => kernel,
        }
    }

    /// Turns the request into its completion with `result` (bytes, or negative errno).
    pub fn complete(self, result: i64) -> Completion {
        Completion {
            op: self.op,
            file: self.file,
            offset: self.offset,
            buf: self.buf,
            user_data: self.user_data,
            span: self.span,
            result,
            marks: self.marks,
        }
    }
}

/// What the answer to a request still held where it was sent (a ring's
/// slot) means for its caller ([`retry`](crate::engine) decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The request is finished with this result; its offset and window are
    /// as the caller queued them.
    Done(i64),
    /// The request goes down again, as it is now (window and offset moved
    /// past what was done).
    Again,
}

/// The outcome of one request.
#[derive(Debug)]
// Aligned as `Request` is, for the same reason.
#[repr(align(16))]
pub struct Completion {
    /// What was done.
    pub op: Op,
    /// On which file.
    pub file: FileHandle,
    /// At which offset.
    pub offset: u64,
    /// The request's buffer, handed back: a read's or receive's bytes are
    /// in its window (see [`data`](Completion::data)). Dropping the
    /// completion, or this buffer once taken out, returns it to its pool.
    /// Syncs, trims, allocations and truncations carry [`Buf::empty`].
    pub buf: Buf,
    /// The caller's tag.
    pub user_data: u64,
    /// The request's [`span`](Request::span): what a trim or allocation covered.
    pub span: u64,
    /// Bytes transferred (may be short), or a negative errno. A trim or an
    /// allocation that succeeded gives the bytes it covered; a sync or a
    /// truncation 0.
    pub result: i64,
    /// The request's marks, back with it ([`Marks::TIMED`] is read here).
    pub(crate) marks: Marks,
}

impl Completion {
    /// The request this completion answers, to send it again: the rest
    /// goes at the thread's priority (a completion does not carry the
    /// request's), whoever chose it uncached for the first part (the
    /// adaptive engine) chooses again for the rest, and the faults drawn for
    /// the first part are not drawn again; a timed request stays timed.
    pub(crate) fn into_request(self) -> Request {
        Request {
            op: self.op,
            file: self.file,
            offset: self.offset,
            buf: self.buf,
            user_data: self.user_data,
            span: self.span,
            ioprio: 0,
            marks: Marks(self.marks.0 & Marks::TIMED),
        }
    }

    /// The error of a failed request, if it failed.
    pub fn error(&self) -> Option<std::io::Error> {
        (self.result < 0).then(|| std::io::Error::from_raw_os_error((-self.result) as i32))
    }

    /// The result as a `Result`: the bytes transferred (or covered, for a
    /// trim or an allocation; 0 for a sync or a truncation), or an
    /// [`Error::Request`](crate::Error::Request) naming the operation, the
    /// file's handle and the offset, so that `?` works in a loop that
    /// returns the crate's [`Error`](crate::Error) (the kernel's error alone
    /// is [`error`](Completion::error)).
    pub fn outcome(&self) -> Result<usize, crate::Error> {
        match self.error() {
            Some(source) => Err(crate::Error::Request {
                op: self.op,
                file: self.file,
                offset: (!matches!(self.op, Op::Fsync | Op::Fdatasync) && !self.op.is_socket())
                    .then_some(self.offset),
                source,
            }),
            None => Ok(self.result as usize),
        }
    }

    /// The bytes a read or receive brought (a write's: the bytes written):
    /// the start of the buffer's window, as many as moved; empty after an
    /// error and for requests without a buffer.
    pub fn data(&self) -> &[u8] {
        if self.result > 0 {
            &self.buf.as_slice()[..(self.result as usize).min(self.buf.len())]
        } else {
            &[]
        }
    }

    /// Takes the request's buffer out, to reuse it or give it back to its
    /// pool by dropping it, and leaves [`Buf::empty`] in its place: the
    /// completion stays whole for [`outcome`](Completion::outcome) and
    /// [`error`](Completion::error). Syncs, trims, allocations and
    /// truncations give the empty buffer.
    pub fn take_buf(&mut self) -> Buf {
        std::mem::take(&mut self.buf)
    }

    /// The request's buffer, the completion consumed.
    pub fn into_buf(self) -> Buf {
        self.buf
    }

    /// True when fewer bytes moved than were asked for (and no error).
    pub fn is_short(&self) -> bool {
        self.result >= 0 && (self.result as usize) < self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(op: Op, result: i64) -> Completion {
        Completion {
            op,
            file: FileHandle(2),
            offset: 4096,
            buf: Buf::empty(),
            user_data: 9,
            span: 0,
            result,
            marks: Marks::default(),
        }
    }

    #[test]
    fn a_failed_outcome_is_the_crates_error_naming_op_file_and_offset() {
        match failed(Op::Read, -i64::from(libc::EIO)).outcome() {
            Err(crate::Error::Request {
                op: Op::Read,
                file: FileHandle(2),
                offset: Some(4096),
                source,
            }) => assert_eq!(source.raw_os_error(), Some(libc::EIO)),
            other => panic!("{other:?}"),
        }
        // A sync has no offset to name.
        match failed(Op::Fdatasync, -i64::from(libc::ENOSPC)).outcome() {
            Err(crate::Error::Request {
                offset: None,
                source,
                ..
            }) => assert_eq!(source.raw_os_error(), Some(libc::ENOSPC)),
            other => panic!("{other:?}"),
        }
        assert_eq!(failed(Op::Write, 512).outcome().unwrap(), 512);
    }

    /// What README.md's first program does: `?` on an outcome inside a
    /// closure whose error is the crate's.
    #[test]
    fn an_outcome_goes_through_question_mark_as_the_crates_error() {
        let check = |done: Completion| -> Result<usize, crate::Error> { Ok(done.outcome()? + 1) };
        assert_eq!(check(failed(Op::Read, 7)).unwrap(), 8);
        let err = check(failed(Op::Read, -i64::from(libc::EIO))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("read file handle 2 (offset 4096): "),
            "{err}"
        );
    }
}
