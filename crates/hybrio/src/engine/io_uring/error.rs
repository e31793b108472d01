//! The io_uring engine's errors, named by the step that failed.

use std::io;

use crate::Error;

const ENGINE: &str = "io_uring";

/// The kernel refused step `op`.
pub(super) fn engine_error(op: &'static str, source: io::Error) -> Error {
    Error::Engine {
        engine: ENGINE,
        op,
        source,
    }
}

/// `op`, or a hint when the kernel refused a SINGLE_ISSUER ring from the wrong thread.
pub(super) fn enter_op(err: &io::Error, op: &'static str) -> &'static str {
    if err.raw_os_error() == Some(libc::EEXIST) {
        "io_uring_enter from another thread than the one that first committed (the ring is SINGLE_ISSUER)"
    } else {
        op
    }
}
