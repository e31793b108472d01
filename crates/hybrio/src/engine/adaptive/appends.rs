//! Which `O_DIRECT` files the adaptive engine hands to libaio rather than
//! io_uring: those it will write past their end, on a filesystem that cannot
//! start such a write without blocking.
//!
//! io_uring first tries every request without blocking. A direct write past
//! the end of a file needs the filesystem's inode lock exclusively and new
//! blocks (ext4 and XFS alike), so the try fails and io_uring hands the write
//! to a kernel worker; writes to one file go to one worker, one at a time,
//! each waiting for the device. libaio's `io_submit` starts the same write on
//! the device and returns. A 300 MiB copy to a new file with `O_DIRECT` at
//! depth 8 on ext4 took 1.3-1.5x as long through io_uring as through libaio;
//! running its writes inline instead was no better (the caller then waits
//! for each write, and its reads queue behind them).
//!
//! The filesystem is asked once per process, with the same try: a
//! nonblocking (`RWF_NOWAIT`) direct write to a new, empty, unnamed file
//! (`O_TMPFILE`) beside the caller's file fails with `EAGAIN` where io_uring
//! would hand such writes to a worker. A file counts as written past its end
//! when it is a regular file, empty when the engine gets it, open for
//! writing: a copy's or a log's output, not a file laid out before the job
//! (which fio and most databases do), whose overwrites io_uring starts
//! without blocking.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::buf::BufPool;

/// Bytes the probe writes: one block of any device this runs on.
const PROBE_BYTES: usize = 4096;

/// What each filesystem (device, type) answered, for the process.
fn answers() -> &'static Mutex<HashMap<(u64, i64), bool>> {
    static ANSWERS: OnceLock<Mutex<HashMap<(u64, i64), bool>>> = OnceLock::new();
    ANSWERS.get_or_init(Mutex::default)
}

/// Whether `file` (at `path`) is an `O_DIRECT` file the engine will write
/// past its end, on a filesystem that would make io_uring hand those writes
/// to a kernel worker. Anything that cannot be asked answers no: the file
/// then goes to io_uring, as every other.
pub(super) fn grows_by_direct_writes(file: &File, path: &Path) -> bool {
    let fd = file.as_raw_fd();
    let Ok(flags) = crate::sys::status_flags(fd) else {
        return false;
    };
    if flags & libc::O_DIRECT == 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return false;
    }
    let Ok(metadata) = file.metadata() else {
        return false;
    };
    if !metadata.is_file() || metadata.len() != 0 {
        return false;
    }
    let Ok(filesystem) = crate::sys::filesystem_type(fd) else {
        return false;
    };
    let key = (metadata.dev(), filesystem);
    let mut answers = answers()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *answers
        .entry(key)
        .or_insert_with(|| appends_would_block(path, metadata.dev()))
}

/// Asks the filesystem of `path`'s directory (device `device`) whether a
/// direct write past the end of a file would block: the answer is yes only
/// when it says so (`EAGAIN`).
fn appends_would_block(path: &Path, device: u64) -> bool {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let Ok(probe) = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_DIRECT)
        .open(directory)
    else {
        return false;
    };
    // Another filesystem mounted on the file itself, or a bind mount: not
    // the file's answer.
    if probe.metadata().map(|m| m.dev()).ok() != Some(device) {
        return false;
    }
    let Ok(pool) = BufPool::new(1, PROBE_BYTES) else {
        return false;
    };
    let Some(mut block) = pool.take() else {
        return false;
    };
    block.set_len(PROBE_BYTES);
    let answer = crate::sys::pwritev2(probe.as_raw_fd(), block.as_slice(), 0, libc::RWF_NOWAIT);
    matches!(answer, Err(e) if e.raw_os_error() == Some(libc::EAGAIN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path, direct: bool, write: bool) -> Option<File> {
        let mut options = OpenOptions::new();
        options.read(true).write(write).create(write);
        if direct {
            options.custom_flags(libc::O_DIRECT);
        }
        options.open(path).ok()
    }

    #[test]
    fn only_an_empty_direct_file_open_for_writing_on_a_filesystem_that_says_so() {
        let dir = tempfile::tempdir_in(".").expect("a scratch directory");
        let output = dir.path().join("output");
        let Some(empty) = open(&output, true, true) else {
            println!("skipped: O_DIRECT refused on this filesystem");
            return;
        };
        // What the filesystem says, asked here directly (ext4 and XFS say
        // yes; a filesystem without O_TMPFILE or RWF_NOWAIT, no).
        let says = appends_would_block(&output, empty.metadata().unwrap().dev());
        println!("this filesystem blocks direct writes past the end: {says}");
        let filesystem = crate::sys::filesystem_type(empty.as_raw_fd()).unwrap();
        const EXT4_MAGIC: i64 = 0xef53;
        const XFS_MAGIC: i64 = 0x5846_5342;
        if filesystem == EXT4_MAGIC || filesystem == XFS_MAGIC {
            assert!(
                says,
                "ext4 and XFS cannot start such a write without blocking"
            );
        }
        assert_eq!(grows_by_direct_writes(&empty, &output), says);
        // Buffered, read-only, or already holding data: never.
        let buffered = open(&output, false, true).unwrap();
        assert!(!grows_by_direct_writes(&buffered, &output));
        let read_only = open(&output, true, false).unwrap();
        assert!(!grows_by_direct_writes(&read_only, &output));
        std::fs::write(&output, vec![7u8; PROBE_BYTES]).unwrap();
        let full = open(&output, true, true).unwrap();
        assert!(!grows_by_direct_writes(&full, &output));
        // The probe wrote nothing the caller sees: the directory holds the
        // caller's file only.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
