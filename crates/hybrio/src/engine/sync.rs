//! `sync`: `lseek` + `read`/`write` on the descriptor, one request at a time,
//! as fio's `sync` engine.

use std::io;
use std::os::fd::RawFd;

use super::api::{EngineConfig, EngineKind};
use super::inline::{InlineCalls, InlineEngine};
use crate::buf::Buf;
use crate::file::FileHandle;
use crate::request::Op;
use crate::sys::{self, retry_on_interrupt};

/// File position not known: the next transfer seeks.
const UNKNOWN_POSITION: u64 = u64::MAX;

/// Every request inline with `lseek(2)` then `read(2)`/`write(2)`.
pub(crate) type SyncEngine = InlineEngine<SyncCalls>;

/// `lseek` + `read`/`write`.
///
/// Like fio, it remembers where each descriptor's position is after a
/// transfer and skips the `lseek` when the next request starts there, so a
/// sequential stream costs one system call per request. The cached position
/// assumes nothing else moves it: do not share the file's description (e.g.
/// through [`File::try_clone`](std::fs::File::try_clone)) with other readers or writers.
#[derive(Debug, Default)]
pub(crate) struct SyncCalls {
    /// Known file position per handle.
    positions: Vec<u64>,
}

impl SyncEngine {
    /// A sync engine; of `config`, only the emulated device applies.
    pub(crate) fn new(config: &EngineConfig) -> Self {
        InlineEngine::with_calls(SyncCalls::default(), config)
    }
}

impl InlineCalls for SyncCalls {
    const KIND: EngineKind = EngineKind::Sync;

    #[inline]
    fn transfer(
        &mut self,
        fd: RawFd,
        handle: FileHandle,
        op: Op,
        buf: &mut Buf,
        offset: u64,
        _flags: i32,
    ) -> io::Result<usize> {
        // read/write carry no flags; sync refuses uncached files.
        let position = &mut self.positions[handle.index()];
        let seeked = if *position == offset {
            Ok(offset)
        } else {
            retry_on_interrupt(|| sys::lseek_set(fd, offset))
        };
        let moved = seeked.and_then(|_| match op {
            Op::Read => retry_on_interrupt(|| sys::read(fd, buf.as_mut_slice())),
            _ => retry_on_interrupt(|| sys::write(fd, buf.as_slice())),
        });
        *position = match moved {
            Ok(n) => offset + n as u64,
            Err(_) => UNKNOWN_POSITION,
        };
        moved
    }

    fn file_added(&mut self, handle: FileHandle) {
        if self.positions.len() <= handle.index() {
            self.positions.resize(handle.index() + 1, UNKNOWN_POSITION);
        }
        // Whatever the file was used for before, its position is not ours to know.
        self.positions[handle.index()] = UNKNOWN_POSITION;
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;
    use crate::buf::BufPool;
    use crate::engine::{Engine, QueueOutcome};
    use crate::request::Request;

    /// The cached position must never make a read land elsewhere than asked.
    #[test]
    fn skipped_seeks_never_misplace_a_transfer() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let path = dir.path().join("f");
        let contents: Vec<u8> = (0..5 * 4096)
            .map(|i| (i / 4096 * 37 + i % 251) as u8)
            .collect();
        std::fs::write(&path, &contents).unwrap();
        let pool = BufPool::new(1, 4096).unwrap();
        let mut engine = SyncEngine::new(&EngineConfig::default());
        let handle = engine
            .add_file(File::open(&path).unwrap(), path.clone())
            .unwrap();
        let mut buf = pool.take().unwrap();
        // Sequential, back to the start, past EOF, then where the EOF read left off.
        for (offset, expected) in [
            (0, 4096),
            (4096, 4096),
            (8192, 4096),
            (0, 4096),
            (1 << 20, 0),
            (12288, 4096),
        ] {
            let QueueOutcome::Completed(done) = engine.queue(Request::read(handle, offset, buf, 0))
            else {
                panic!("sync completes inline");
            };
            assert_eq!(done.result, expected, "read at {offset}");
            buf = done.buf;
            if expected > 0 {
                let at = offset as usize;
                assert!(
                    buf.as_slice() == &contents[at..at + 4096],
                    "data at {offset}"
                );
            }
        }
    }
}
