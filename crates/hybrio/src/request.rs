//! Requests handed to an engine and the completions that come back.

use crate::buf::Buf;
use crate::file::FileHandle;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read `buf.len()` bytes at `offset` into the buffer.
    Read,
    /// Write the buffer's `len()` bytes at `offset`.
    Write,
    /// `fsync(2)` the file.
    Fsync,
    /// `fdatasync(2)` the file.
    Fdatasync,
    /// Receive into the buffer from a socket (`recv(2)`): one datagram, or
    /// the bytes of a stream waiting, up to `buf.len()`. The offset is ignored.
    Recv,
    /// Send the buffer's `len()` bytes on a socket (`send(2)`): one datagram,
    /// or bytes of a stream. The offset is ignored.
    Send,
}

impl Op {
    /// The name used in error messages ("read", "write", "fsync",
    /// "fdatasync", "recv", "send").
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::Recv => "recv",
            Op::Send => "send",
        }
    }

    /// True for reads, writes, receives and sends; false for syncs.
    pub fn moves_data(self) -> bool {
        !matches!(self, Op::Fsync | Op::Fdatasync)
    }

    /// True for the socket operations, receive and send.
    pub fn is_socket(self) -> bool {
        matches!(self, Op::Recv | Op::Send)
    }

    /// True when the data moves into the buffer (read, receive).
    pub fn fills_buffer(self) -> bool {
        matches!(self, Op::Read | Op::Recv)
    }
}

/// One I/O request. Its buffer moves into the engine and comes back with the completion.
#[derive(Debug)]
pub struct Request {
    /// What to do.
    pub op: Op,
    /// Which file (a handle returned by [`Engine::add_file`](crate::engine::Engine::add_file)).
    pub file: FileHandle,
    /// Byte offset in the file (ignored by sync operations).
    pub offset: u64,
    /// The data buffer: reads fill `buf.len()` bytes, writes write `buf.len()` bytes.
    /// `None` for fsync/fdatasync.
    pub buf: Option<Buf>,
    /// Caller's tag, returned untouched in the completion.
    pub user_data: u64,
    /// Set by the adaptive engine for a file the caller let it choose the
    /// caching of ([`Caching::Auto`](crate::file::Caching::Auto)): this
    /// read or write goes uncached (`RWF_DONTCACHE`) whatever its file's
    /// caching. Only set on files probed to take it.
    pub(crate) uncached: bool,
}

impl Request {
    /// A read of `buf.len()` bytes at `offset`.
    pub fn read(file: FileHandle, offset: u64, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Read,
            file,
            offset,
            buf: Some(buf),
            user_data,
            uncached: false,
        }
    }

    /// A write of `buf.len()` bytes at `offset`.
    pub fn write(file: FileHandle, offset: u64, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Write,
            file,
            offset,
            buf: Some(buf),
            user_data,
            uncached: false,
        }
    }

    /// A receive of at most `buf.len()` bytes from the socket `socket` (a
    /// handle returned by [`Engine::add_socket`](crate::engine::Engine::add_socket)).
    pub fn recv(socket: FileHandle, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Recv,
            file: socket,
            offset: 0,
            buf: Some(buf),
            user_data,
            uncached: false,
        }
    }

    /// A send of the buffer's `len()` bytes on the socket `socket`.
    pub fn send(socket: FileHandle, buf: Buf, user_data: u64) -> Self {
        Request {
            op: Op::Send,
            file: socket,
            offset: 0,
            buf: Some(buf),
            user_data,
            uncached: false,
        }
    }

    /// An fsync (or, with `data_only`, an fdatasync) of the file.
    pub fn sync(file: FileHandle, data_only: bool, user_data: u64) -> Self {
        let op = if data_only { Op::Fdatasync } else { Op::Fsync };
        Request {
            op,
            file,
            offset: 0,
            buf: None,
            user_data,
            uncached: false,
        }
    }

    /// Bytes this request transfers (0 for sync operations).
    pub fn len(&self) -> usize {
        self.buf.as_ref().map_or(0, Buf::len)
    }

    /// True when the request transfers no data.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `RWF_*` flags this request adds to its file's own.
    #[inline(always)]
    pub(crate) fn rw_flags(&self) -> i32 {
        if self.uncached {
            libc::RWF_DONTCACHE
        } else {
            0
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
            result,
        }
    }
}

/// The outcome of one request.
#[derive(Debug)]
pub struct Completion {
    /// What was done.
    pub op: Op,
    /// On which file.
    pub file: FileHandle,
    /// At which offset.
    pub offset: u64,
    /// The request's buffer, handed back.
    pub buf: Option<Buf>,
    /// The caller's tag.
    pub user_data: u64,
    /// Bytes transferred (may be short), or a negative errno.
    pub result: i64,
}

impl Completion {
    /// The error of a failed request, if it failed.
    pub fn error(&self) -> Option<std::io::Error> {
        (self.result < 0).then(|| std::io::Error::from_raw_os_error((-self.result) as i32))
    }

    /// True when fewer bytes moved than were asked for (and no error).
    pub fn is_short(&self) -> bool {
        self.result >= 0 && (self.result as usize) < self.buf.as_ref().map_or(0, Buf::len)
    }
}
