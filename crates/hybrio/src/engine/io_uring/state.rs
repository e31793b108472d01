//! The io_uring engine's state: what its setup, its queue side and its
//! completion side share.

use super::setup::Setup;
use crate::device::EmulatedDevice;
use crate::engine::inject::Faults;
use crate::engine::retry::{Retry, Track};
use crate::file::FileTable;
use crate::request::Request;
use crate::sys::uring::Ring;

/// The io_uring engine. See the [module documentation](super).
///
/// Requests sit in the ring's slab from [`queue`](crate::engine::Engine::queue) until their
/// completion is reaped; dropping the engine waits for every request the
/// kernel has, so no buffer is freed while the kernel may still use it.
///
/// A request that comes back short, or told to try again, is sent again
/// from its slot where its completion is drained, by the
/// [rule](crate::engine::retry) every engine follows (fio's `io_u.c` requeues a
/// short transfer the same way): no layer above it keeps a second record
/// of the requests.
#[derive(Debug)]
pub struct IoUringEngine {
    // Declared first: dropping the ring waits for in-flight requests before
    // their files are closed.
    pub(super) ring: Ring,
    pub(super) files: FileTable,
    /// Size of the registered-file table; 0 when files are not registered.
    pub(super) registered_files: u32,
    pub(super) depth: usize,
    /// The depth the caller asked for, when the kernel's largest ring cut it.
    pub(super) asked_depth: usize,
    pub(super) setup: Setup,
    /// The emulated device the requests go to instead of their files, if any.
    pub(super) device: Option<EmulatedDevice>,
    /// Emulated device: requests queued, not yet committed (their data moves
    /// at commit, which is when the device receives them).
    pub(super) device_queue: Vec<Request>,
    /// Reaps that returned completions, and how many they returned.
    pub(super) reaps: u64,
    pub(super) reaped: u64,
    /// Sockets receive through standing multishot receives (`recv_multishot`).
    pub(super) multishot: bool,
    /// Short transfers and "try again" answers: what to do, and what was done.
    pub(super) retry: Retry,
    /// Per slot, the record of a request being sent again (`None` for one
    /// that never was, the common case).
    pub(super) tracks: Vec<Option<Track>>,
    /// The caller's requests a resubmission's submit handed to the kernel
    /// before the caller's commit: that commit counts them.
    pub(super) early: usize,
    /// Injected faults ([`inject`](crate::engine::inject)), if the caller asked.
    pub(super) faults: Option<Box<Faults>>,
    /// The depth less the completions `faults` holds back: what the ring
    /// may have in flight.
    pub(super) room: usize,
}
