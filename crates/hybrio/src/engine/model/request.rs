//! The requests the models make of the model files, and what each one's
//! completion must be.

use super::scripted::byte_at;
use super::stack::{FILE_SIZE, Files};
use crate::buf::BufPool;
use crate::file::FileHandle;
use crate::request::{Completion, Op, Request};
use proptest::test_runner::TestCaseError;

/// Largest request.
pub(super) const LARGEST: usize = 4096;

/// How many values a step's `op` draws from: 0-5 a read, 6-8 a write of a
/// pool's buffer, 9 an fsync, 10-11 a write of the file's mirror (the
/// caller's own memory, which other writes in flight may share).
pub(super) const OPS: u8 = 12;

/// A request the caller has out, as it queued it.
#[derive(Debug)]
pub(super) struct Expected {
    pub(super) op: Op,
    pub(super) file: FileHandle,
    pub(super) offset: u64,
    pub(super) len: usize,
    pub(super) salt: u8,
    /// Where its window starts in its buffer.
    pub(super) start: usize,
    /// The mirror's first byte, for a write of the caller's own memory.
    pub(super) mirror: Option<usize>,
    pub(super) committed: bool,
}

/// The model files as an engine knows them: handle, salt, `O_DIRECT`.
pub(super) type Handles = [(FileHandle, u8, bool)];

/// The request a step asks for on model file `file` (see [`OPS`]), tagged
/// `tag`, and what its completion must be; `None` when it needs a buffer
/// of `pool` and none is free.
#[allow(clippy::too_many_arguments)]
pub(super) fn make(
    files: &Files,
    handles: &Handles,
    pool: &BufPool,
    file: u8,
    op: u8,
    at: u16,
    size: u8,
    tag: u64,
) -> Option<(Request, Expected)> {
    let (handle, salt, direct) = handles[usize::from(file)];
    let (offset, len) = if direct {
        let len = 512 * (1 + usize::from(size % 8));
        let sectors = (FILE_SIZE - len as u64) / 512;
        (u64::from(at) % (sectors + 1) * 512, len)
    } else {
        let len = [1, 511, 512, 1000, 3000, 4096][usize::from(size % 6)];
        (u64::from(at) % (FILE_SIZE - len as u64 + 1), len)
    };
    let mut expected = Expected {
        op: Op::Write,
        file: handle,
        offset,
        len,
        salt,
        start: 0,
        mirror: None,
        committed: false,
    };
    let request = match op % OPS {
        9 => {
            expected.op = Op::Fsync;
            (expected.offset, expected.len) = (0, 0);
            Request::sync(handle, false, tag)
        }
        10.. => {
            let buf = files.mirror(usize::from(file), offset, len);
            expected.start = buf.start();
            expected.mirror = Some(buf.base_addr());
            Request::write(handle, offset, buf, tag)
        }
        op => {
            let write = op >= 6;
            let mut buf = pool.take()?;
            buf.set_len(len);
            for (i, byte) in buf.as_mut_slice().iter_mut().enumerate() {
                // A read must overwrite this; a write must write the file's own bytes.
                let own = byte_at(salt, offset + i as u64);
                *byte = if write { own } else { !own };
            }
            if write {
                Request::write(handle, offset, buf, tag)
            } else {
                expected.op = Op::Read;
                Request::read(handle, offset, buf, tag)
            }
        }
    };
    Some((request, expected))
}

/// A result a request may end with without moving a byte: the errors the
/// scripted engines and fault injection make.
pub(super) fn allowed_errno(result: i64) -> bool {
    [libc::EAGAIN, libc::EINTR, libc::EIO].contains(&(-result as i32))
}

/// Checks that `completion` answers `expected`: its operation, file,
/// offset and buffer window, a result within the request, a read's bytes.
pub(super) fn check(expected: &Expected, completion: &Completion) -> Result<(), TestCaseError> {
    let tag = completion.user_data;
    check!(
        completion.op == expected.op
            && completion.file == expected.file
            && completion.offset == expected.offset,
        "completion {tag} is not its request's: {completion:?} for {expected:?}"
    );
    let result = completion.result;
    if expected.op == Op::Fsync {
        check!(
            result == 0 || allowed_errno(result),
            "fsync {tag}: result {result}"
        );
        return Ok(());
    }
    let buf = &completion.buf;
    check!(
        buf.start() == expected.start && buf.len() == expected.len,
        "completion {tag}: buffer window {}..{} instead of {}..{}",
        buf.start(),
        buf.start() + buf.len(),
        expected.start,
        expected.start + expected.len
    );
    if let Some(mirror) = expected.mirror {
        check!(
            buf.pool_id() == 0 && buf.base_addr() == mirror,
            "completion {tag} of the caller's memory at {mirror:#x} carries another buffer: {buf:?} at {:#x}",
            buf.base_addr()
        );
    }
    check!(
        (result > 0 && result as usize <= expected.len) || (result < 0 && allowed_errno(result)),
        "completion {tag} of {} bytes: result {result}",
        expected.len
    );
    if expected.op == Op::Read && result > 0 {
        let bytes = &buf.as_slice()[..result as usize];
        let wrong = (0..bytes.len())
            .find(|&i| bytes[i] != byte_at(expected.salt, expected.offset + i as u64));
        check!(
            wrong.is_none(),
            "read {tag} at {}: wrong byte at +{}",
            expected.offset,
            wrong.unwrap_or(0)
        );
    }
    Ok(())
}
