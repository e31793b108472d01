//! One request done now by one blocking system call, in the calling thread:
//! what the synchronous engines do inside `queue`, what the pool's workers
//! do, and what the emulated device does to move a request's data. One
//! place, so that every engine that makes the calls itself answers alike.

use std::io;
use std::os::fd::RawFd;

use crate::buf::Buf;
use crate::file::FileHandle;
use crate::request::{Op, Request};
use crate::sys::{self, Fallocate, negative_errno, retry_on_interrupt};

/// Does `request` (already checked by [`Request::malformed`]) on `fd`, a
/// block device if `block_device`: its reads and writes through `transfer`
/// (given the request's file, operation, buffer and offset), which is where
/// the engines differ; syncs, the space and size requests, receives and sends
/// the same for all. Returns the bytes transferred or a negative errno.
///
/// `inline(always)`: a synchronous engine's page-cache read runs through
/// here, where a call of its own would be a measurable share of the request.
#[inline(always)]
pub(crate) fn run(
    fd: RawFd,
    block_device: bool,
    request: &mut Request,
    transfer: impl FnOnce(FileHandle, Op, &mut Buf, u64) -> io::Result<usize>,
) -> i64 {
    let offset = request.offset;
    let outcome = match (
        request.op,
        (request.buf.capacity() > 0).then_some(&mut request.buf),
    ) {
        (op, _) if op.changes_space() => change_space(fd, block_device, request),
        (Op::Fsync, _) => retry_on_interrupt(|| sys::fsync(fd)).map(|()| 0),
        (Op::Fdatasync, _) => retry_on_interrupt(|| sys::fdatasync(fd)).map(|()| 0),
        (op @ (Op::Read | Op::Write), Some(buf)) => transfer(request.file, op, buf, offset),
        (op @ (Op::Recv | Op::Send), Some(buf)) => socket_transfer(fd, op, buf, 0),
        (Op::Read | Op::Write | Op::Recv | Op::Send, None)
        | (Op::Trim | Op::Allocate | Op::AllocateKeepSize | Op::Truncate, _) => {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        }
    };
    result(outcome)
}

/// A read (`op` is [`Op::Read`]) or write of `buf`'s window at `offset`:
/// `pread`/`pwrite`, or `preadv2`/`pwritev2` when the file's `RWF_*` flags
/// (`flags`) ask for something.
#[inline(always)]
pub(crate) fn positioned(
    fd: RawFd,
    op: Op,
    buf: &mut Buf,
    offset: u64,
    flags: i32,
) -> io::Result<usize> {
    match (op, flags) {
        (Op::Read, 0) => retry_on_interrupt(|| sys::pread(fd, buf.as_mut_slice(), offset)),
        (Op::Read, _) => retry_on_interrupt(|| sys::preadv2(fd, buf.as_mut_slice(), offset, flags)),
        (_, 0) => retry_on_interrupt(|| sys::pwrite(fd, buf.as_slice(), offset)),
        _ => retry_on_interrupt(|| sys::pwritev2(fd, buf.as_slice(), offset, flags)),
    }
}

/// A system call's outcome as a completion's result: the bytes it moved
/// (or covered), or a negative errno.
#[inline(always)]
pub(crate) fn result(outcome: io::Result<usize>) -> i64 {
    match outcome {
        Ok(n) => n as i64,
        Err(e) => negative_errno(&e),
    }
}

/// A request on a file's space or size ([`Op::changes_space`]) done now,
/// the same for every engine that makes it in a thread: a trim punches a
/// hole in a file (`fallocate`) and discards on a block device
/// (`BLKDISCARD`); returns the bytes it covered.
pub(crate) fn change_space(fd: RawFd, block_device: bool, request: &Request) -> io::Result<usize> {
    let (offset, span) = (request.offset, request.span);
    let allocate = |mode| retry_on_interrupt(|| sys::fallocate(fd, mode, offset, span));
    match request.op {
        Op::Trim if block_device => retry_on_interrupt(|| sys::discard(fd, offset, span)),
        Op::Trim => allocate(Fallocate::PunchHole),
        Op::Allocate => allocate(Fallocate::Allocate),
        Op::AllocateKeepSize => allocate(Fallocate::AllocateKeepSize),
        Op::Truncate => return retry_on_interrupt(|| sys::ftruncate(fd, offset)).map(|()| 0),
        _ => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
    }
    .map(|()| span as usize)
}

/// A receive or send on the socket `fd`, the same for every engine that
/// makes it in a thread (the synchronous engines, the pool's workers):
/// blocking, unless `flags` has `MSG_DONTWAIT`.
#[inline]
pub(crate) fn socket_transfer(fd: RawFd, op: Op, buf: &mut Buf, flags: i32) -> io::Result<usize> {
    match op {
        Op::Recv => retry_on_interrupt(|| sys::recv(fd, buf.as_mut_slice(), flags)),
        Op::Send => retry_on_interrupt(|| sys::send(fd, buf.as_slice(), flags)),
        _ => Err(io::Error::from_raw_os_error(libc::EINVAL)),
    }
}
