//! The SQE each kind of request becomes.

use io_uring::{opcode, squeue, types};

use super::types::FileRef;
use crate::buf::Buf;
use crate::request::{Marks, Op, Request};

/// Longest single transfer, the kernel's `MAX_RW_COUNT`: longer requests
/// complete short, as `read(2)` and `write(2)` would.
const MAX_RW_COUNT: usize = 0x7fff_f000;

/// Runs `$build` with `$target` bound to the `types::Fd` or `types::Fixed` that `$file` names.
macro_rules! with_target {
    ($file:expr, $target:ident => $build:expr) => {
        match $file {
            FileRef::Fd(fd) => {
                let $target = types::Fd(fd);
                $build
            }
            FileRef::Fixed(index) => {
                let $target = types::Fixed(index);
                $build
            }
        }
    };
}

/// The SQE for `request`: non-vectored READ/WRITE, or READ_FIXED/WRITE_FIXED
/// when `buf_index` names the registered buffer holding its data (but for
/// an atomic write); FSYNC,
/// with `DATASYNC` for fdatasync.
#[inline(always)]
pub(super) fn build_entry(
    request: &mut Request,
    file: FileRef,
    buf_index: Option<u16>,
    rw_flags: i32,
) -> squeue::Entry {
    let offset = request.offset;
    let ioprio = request.ioprio;
    let to_workers = request.marks.any(Marks::TO_WORKERS);
    let entry = match request.op {
        Op::Read => {
            let (ptr, len) = request
                .buffer_mut()
                .map_or((std::ptr::null_mut(), 0), |buf| {
                    (buf.as_mut_ptr(), transfer_len(buf))
                });
            with_target!(file, target => match buf_index {
                Some(index) => opcode::ReadFixed::new(target, ptr, len, index).offset(offset).rw_flags(rw_flags).ioprio(ioprio).build(),
                None => opcode::Read::new(target, ptr, len).offset(offset).rw_flags(rw_flags).ioprio(ioprio).build(),
            })
        }
        Op::Write => {
            let (ptr, len) = request.buffer().map_or((std::ptr::null(), 0), |buf| {
                (buf.as_ptr(), transfer_len(buf))
            });
            // An atomic write goes from the buffer's address: the kernel
            // takes one only from a single user buffer, and refuses one
            // from a registered buffer (EINVAL, Linux 6.18).
            let buf_index = buf_index.filter(|_| rw_flags & libc::RWF_ATOMIC == 0);
            with_target!(file, target => match buf_index {
                Some(index) => opcode::WriteFixed::new(target, ptr, len, index).offset(offset).rw_flags(rw_flags).ioprio(ioprio).build(),
                None => opcode::Write::new(target, ptr, len).offset(offset).rw_flags(rw_flags).ioprio(ioprio).build(),
            })
        }
        Op::Recv => {
            let (ptr, len) = request
                .buffer_mut()
                .map_or((std::ptr::null_mut(), 0), |buf| {
                    (buf.as_mut_ptr(), transfer_len(buf))
                });
            with_target!(file, target => opcode::Recv::new(target, ptr, len).build())
        }
        Op::Send => {
            let (ptr, len) = request.buffer().map_or((std::ptr::null(), 0), |buf| {
                (buf.as_ptr(), transfer_len(buf))
            });
            with_target!(file, target => opcode::Send::new(target, ptr, len).flags(libc::MSG_NOSIGNAL).build())
        }
        Op::Fsync => with_target!(file, target => opcode::Fsync::new(target).build()),
        // Trims on block devices never come here (the engine discards them
        // itself: io_uring's fallocate on a device zeroes, it does not discard).
        Op::Trim | Op::Allocate | Op::AllocateKeepSize => {
            let mode = match request.op {
                Op::Allocate => 0,
                Op::AllocateKeepSize => libc::FALLOC_FL_KEEP_SIZE,
                _ => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            };
            with_target!(file, target => opcode::Fallocate::new(target, request.span).offset(offset).mode(mode).build())
        }
        Op::Truncate => {
            with_target!(file, target => opcode::Ftruncate::new(target, offset).build())
        }
        Op::Fdatasync => {
            with_target!(file, target => opcode::Fsync::new(target).flags(types::FsyncFlags::DATASYNC).build())
        }
    };
    if to_workers {
        entry.flags(squeue::Flags::ASYNC)
    } else {
        entry
    }
}

/// Bytes one SQE transfers from `buf`, capped like a single `read(2)`.
#[inline]
fn transfer_len(buf: &Buf) -> u32 {
    // MAX_RW_COUNT < u32::MAX, so the cast cannot truncate.
    buf.len().min(MAX_RW_COUNT) as u32
}
