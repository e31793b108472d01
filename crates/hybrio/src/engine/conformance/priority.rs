//! The suite's priority part: a request's own I/O priority
//! ([`Request::ioprio`]) reaches the kernel on the engines that send one
//! (io_uring, libaio), seen by the kernel's answer to a class it does not
//! know; a known class reads the right bytes.

use super::{errno, io_flavours, run_one};
use crate::buf::BufPool;
use crate::engine::EngineKind;
use crate::engine::testkit::{add, data_file, read_write, scratch, take};
use crate::request::Request;

/// `IOPRIO_PRIO_VALUE(class, level)`.
fn ioprio(class: u16, level: u16) -> u16 {
    class << 13 | level
}

#[test]
fn a_requests_priority_reaches_the_kernel_on_io_uring_and_libaio() {
    let mut checked = 0;
    for flavour in io_flavours() {
        let sends = matches!(flavour.kind, EngineKind::IoUring | EngineKind::Libaio)
            && flavour.config.completion_latency.is_none()
            && flavour.config.inject.is_none();
        if !sends {
            continue;
        }
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 8192);
        let handle = add(engine.as_mut(), &path, &read_write());
        // The idle class, level 7: read as any other read.
        let mut idle = Request::read(handle, 4096, take(&pool, 4096), 1);
        idle.ioprio = ioprio(3, 7);
        let done = run_one(engine.as_mut(), idle);
        assert_eq!(done.result, 4096, "{name}");
        assert!(done.buf.as_slice() == &contents[4096..], "{name}");
        // Class 5 does not exist: the kernel says so, so it saw it.
        let mut unknown = Request::read(handle, 0, take(&pool, 4096), 2);
        unknown.ioprio = ioprio(5, 0);
        let done = run_one(engine.as_mut(), unknown);
        assert_eq!(errno(&done), Some(libc::EINVAL), "{name}");
        drop(done);
        drop(engine.remove_file(handle).unwrap());
        checked += 1;
    }
    assert!(checked > 0, "no io_uring or libaio flavour ran");
}
