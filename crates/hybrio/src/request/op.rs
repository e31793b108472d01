//! What a request does: apart from the request itself, so that the crate's
//! error, which names a failed request's operation, need not depend on
//! requests, which return that error.

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
    /// Give back the storage of `len()` bytes at `offset`: a hole punched in
    /// a regular file (`fallocate(PUNCH_HOLE | KEEP_SIZE)`: the range then
    /// reads as zeros, the size unchanged), a discard on a block device
    /// (`BLKDISCARD`). No buffer.
    Trim,
    /// Allocate storage for `len()` bytes at `offset` (`fallocate(2)`, mode
    /// 0): the file grows when the range ends past its end. No buffer.
    Allocate,
    /// As [`Allocate`](Op::Allocate), the size unchanged
    /// (`FALLOC_FL_KEEP_SIZE`). No buffer.
    AllocateKeepSize,
    /// Set the file's size to `offset` (`ftruncate(2)`). No buffer.
    Truncate,
}

impl Op {
    /// The name used in error messages ("read", "write", "fsync",
    /// "fdatasync", "recv", "send", "trim", "fallocate", "ftruncate").
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::Recv => "recv",
            Op::Send => "send",
            Op::Trim => "trim",
            Op::Allocate => "fallocate",
            Op::AllocateKeepSize => "fallocate (keep size)",
            Op::Truncate => "ftruncate",
        }
    }

    /// True for reads, writes, receives and sends: the operations with a buffer.
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Read | Op::Write | Op::Recv | Op::Send)
    }

    /// True for the operations on a file's space and size: trim, allocate,
    /// truncate.
    pub fn changes_space(self) -> bool {
        matches!(
            self,
            Op::Trim | Op::Allocate | Op::AllocateKeepSize | Op::Truncate
        )
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
