//! The suite's space part: trims, allocations and truncations through every
//! engine, checked by the bytes read back and the file's size; and a trim on
//! a block device (a loop device, where this machine lets the test make one)
//! that is a discard.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{all_flavours, errno, io_flavours, run_one};
use crate::buf::BufPool;
use crate::engine::EngineKind;
use crate::engine::testkit::{add, data_file, read_write, scratch, take};
use crate::request::Request;

const LEN: usize = 64 << 10;
const BLOCK: usize = 4096;

/// Reads the whole file at `path` back through the engine, in blocks.
fn read_back(engine: &mut dyn crate::engine::Engine, pool: &BufPool, path: &Path) -> Vec<u8> {
    let handle = add(engine, path, &read_write());
    let mut bytes = Vec::new();
    for block in 0..LEN / BLOCK {
        let done = run_one(
            engine,
            Request::read(handle, (block * BLOCK) as u64, take(pool, BLOCK), 0),
        );
        let buf = &done.buf;
        bytes.extend_from_slice(&buf.as_slice()[..done.result.max(0) as usize]);
    }
    drop(engine.remove_file(handle).unwrap());
    bytes
}

#[test]
fn trims_allocations_and_truncations_do_what_they_say_on_every_engine() {
    for flavour in all_flavours() {
        let pool = BufPool::new(2, BLOCK).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let null = flavour.kind == EngineKind::Null;
        let dir = scratch();
        let (path, mut expected) = data_file(dir.path(), "f", LEN);
        let handle = add(engine.as_mut(), &path, &read_write());

        // A hole in the middle: its bytes read as zeros, the size unchanged.
        let trim = run_one(engine.as_mut(), Request::trim(handle, 8192, 3 * 4096, 1));
        assert_eq!(trim.result, 3 * 4096, "{name}: trim");
        assert_eq!(
            trim.buf.capacity(),
            0,
            "{name}: a trim carries the empty buffer"
        );
        expected[8192..8192 + 3 * 4096].fill(0);

        // Space past the end, the size kept, then grown.
        let keep = run_one(
            engine.as_mut(),
            Request::allocate(handle, LEN as u64, 8192, true, 2),
        );
        assert_eq!(keep.result, 8192, "{name}: fallocate keep size");
        let size_after_keep = fs::metadata(&path).unwrap().len();
        let grow = run_one(
            engine.as_mut(),
            Request::allocate(handle, LEN as u64, 8192, false, 3),
        );
        assert_eq!(grow.result, 8192, "{name}: fallocate");
        let size_after_grow = fs::metadata(&path).unwrap().len();

        // Back to the original length.
        let truncate = run_one(engine.as_mut(), Request::truncate(handle, LEN as u64, 4));
        assert_eq!(truncate.result, 0, "{name}: ftruncate");
        drop(engine.remove_file(handle).unwrap());
        if null {
            // The null engine does nothing: the file is as it was written.
            assert_eq!(size_after_grow, LEN as u64, "{name}");
            continue;
        }
        assert_eq!(
            size_after_keep, LEN as u64,
            "{name}: KEEP_SIZE grew the file"
        );
        assert_eq!(
            size_after_grow,
            LEN as u64 + 8192,
            "{name}: mode 0 kept the size"
        );
        assert_eq!(fs::metadata(&path).unwrap().len(), LEN as u64, "{name}");
        assert!(
            read_back(engine.as_mut(), &pool, &path) == expected,
            "{name}: the bytes after a trim differ from the file with a hole"
        );
    }
}

#[test]
fn space_requests_that_cannot_be_done_fail_with_the_kernels_error() {
    for flavour in io_flavours() {
        let Some(mut engine) = flavour.open(None) else {
            continue;
        };
        let name = flavour.name();
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", LEN);
        // Opened read-only: the kernel refuses to change its space.
        let read_only = crate::file::OpenOptions {
            read: true,
            ..crate::file::OpenOptions::default()
        };
        let handle = add(engine.as_mut(), &path, &read_only);
        let trim = run_one(engine.as_mut(), Request::trim(handle, 0, 4096, 1));
        assert_eq!(errno(&trim), Some(libc::EBADF), "{name}: trim");
        let truncate = run_one(engine.as_mut(), Request::truncate(handle, 0, 2));
        assert!(
            matches!(errno(&truncate), Some(libc::EBADF | libc::EINVAL)),
            "{name}: ftruncate of a read-only descriptor gave {:?}",
            errno(&truncate)
        );
        assert_eq!(fs::metadata(&path).unwrap().len(), LEN as u64, "{name}");
        drop(engine.remove_file(handle).unwrap());
    }
}

/// A loop device over a file, detached when dropped.
struct LoopDevice {
    device: PathBuf,
}

impl LoopDevice {
    /// Attaches `backing`, or says why it cannot here.
    fn attach(backing: &Path) -> Result<LoopDevice, String> {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        let device = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok(LoopDevice {
            device: PathBuf::from(device),
        })
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup")
            .arg("--detach")
            .arg(&self.device)
            .status();
    }
}

#[test]
fn a_trim_on_a_block_device_is_a_discard() {
    let dir = scratch();
    let (backing, mut expected) = data_file(dir.path(), "backing", LEN);
    let device = match LoopDevice::attach(&backing) {
        Ok(device) => device,
        Err(why) => {
            eprintln!("skipped: no loop device here ({why})");
            return;
        }
    };
    let pool = BufPool::new(2, BLOCK).unwrap();
    let mut trimmed = 0;
    for flavour in io_flavours() {
        // The emulated device keeps the rule of a file; one flavour each
        // of the engines' own paths is enough.
        if flavour.config.completion_latency.is_some() || flavour.config.depth == 1 {
            continue;
        }
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let handle = add(engine.as_mut(), &device.device, &read_write());
        let offset = (trimmed % 8) * 2 * BLOCK;
        let trim = run_one(
            engine.as_mut(),
            Request::trim(handle, offset as u64, BLOCK as u64, 1),
        );
        assert_eq!(trim.result, BLOCK as i64, "{name}: discard");
        expected[offset..offset + BLOCK].fill(0);
        drop(engine.remove_file(handle).unwrap());
        // A loop device discards by punching a hole in its file.
        let got = read_back(engine.as_mut(), &pool, &device.device);
        assert!(got == expected, "{name}: the discarded range is not zeros");
        trimmed += 1;
    }
    assert!(trimmed > 0, "no engine ran on the loop device");
}
