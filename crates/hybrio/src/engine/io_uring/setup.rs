//! How the io_uring engine's ring is set up: the ladder of task-running
//! modes tried best first, the ring built on the first rung the kernel
//! accepts, and the error when it accepts none.

use std::io;

use rustix::io_uring as kernel;

use super::error::engine_error;
use crate::Error;
use crate::engine::api::{EngineConfig, EngineKind};
use crate::sys::uring::RawRing;

/// Smallest CQ of a ring whose sockets receive through multishot receives.
const MULTISHOT_CQ_ENTRIES: u32 = 4096;

/// How long an idle SQPOLL thread spins before it sleeps (the kernel's default too).
const SQPOLL_IDLE_MS: u32 = 1000;

/// How completions get run in the submitting task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskRun {
    /// `SINGLE_ISSUER|DEFER_TASKRUN`: only inside `io_uring_enter(GETEVENTS)` (Linux 6.1).
    Deferred,
    /// `COOP_TASKRUN|TASKRUN_FLAG`: at the next kernel entry, flagged in the SQ ring (Linux 5.19).
    Cooperative,
    /// On any return to user space, interrupting the task if need be.
    Interrupting,
}

/// One rung of the setup ladder, tried in order until the kernel accepts one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Setup {
    pub(super) taskrun: TaskRun,
    /// `R_DISABLED` (Linux 5.10): enabled at the first commit.
    pub(super) disabled: bool,
}

impl Setup {
    const LADDER: [Setup; 4] = [
        Setup {
            taskrun: TaskRun::Deferred,
            disabled: true,
        },
        Setup {
            taskrun: TaskRun::Cooperative,
            disabled: true,
        },
        Setup {
            taskrun: TaskRun::Interrupting,
            disabled: true,
        },
        Setup {
            taskrun: TaskRun::Interrupting,
            disabled: false,
        },
    ];

    /// SQPOLL submits from a kernel thread, so the submitting-task modes do not apply.
    const SQPOLL_LADDER: [Setup; 2] = [
        Setup {
            taskrun: TaskRun::Interrupting,
            disabled: true,
        },
        Setup {
            taskrun: TaskRun::Interrupting,
            disabled: false,
        },
    ];

    /// The rungs to try for `config`, best first.
    pub(super) fn ladder(config: &EngineConfig) -> &'static [Setup] {
        if config.sq_thread_poll {
            &Setup::SQPOLL_LADDER
        } else if config.reaped_elsewhere {
            // Completions must not wait for the submitting thread's next
            // kernel entry: another thread waits for them.
            &Setup::LADDER[2..]
        } else if config.any_thread {
            // Not the first: DEFER_TASKRUN needs SINGLE_ISSUER.
            &Setup::LADDER[1..]
        } else {
            &Setup::LADDER
        }
    }
}

/// Tries the setup ladder until the kernel accepts a rung; only `EINVAL`
/// (a flag this kernel does not know) moves on to the next.
pub(super) fn build_ring(
    config: &EngineConfig,
    sq_entries: u32,
    ladder: &[Setup],
) -> Result<(RawRing, Setup), Error> {
    let mut refusal = None;
    for &setup in ladder {
        let mut params = kernel::io_uring_params::default();
        // A standing receive posts a CQE per arrival, up to one per provided
        // buffer before they are taken: a larger CQ keeps them off the
        // kernel's overflow list.
        params.cq_entries = if config.recv_multishot {
            sq_entries.saturating_mul(2).max(MULTISHOT_CQ_ENTRIES)
        } else {
            sq_entries.saturating_mul(2)
        };
        let mut flags = kernel::IoringSetupFlags::CQSIZE | kernel::IoringSetupFlags::CLAMP;
        if config.sq_thread_poll {
            flags |= kernel::IoringSetupFlags::SQPOLL;
            params.sq_thread_idle = SQPOLL_IDLE_MS;
        }
        if config.hipri {
            flags |= kernel::IoringSetupFlags::IOPOLL;
        }
        match setup.taskrun {
            TaskRun::Deferred => {
                flags |= kernel::IoringSetupFlags::SINGLE_ISSUER
                    | kernel::IoringSetupFlags::DEFER_TASKRUN;
            }
            TaskRun::Cooperative => {
                flags |=
                    kernel::IoringSetupFlags::COOP_TASKRUN | kernel::IoringSetupFlags::TASKRUN_FLAG;
            }
            TaskRun::Interrupting => {}
        }
        if setup.disabled {
            flags |= kernel::IoringSetupFlags::R_DISABLED;
        }
        params.flags = flags;
        match RawRing::setup(sq_entries, params) {
            Ok(ring) => return Ok((ring, setup)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => refusal = Some(e),
            Err(e) => return Err(setup_error(config, e)),
        }
    }
    let refusal = refusal.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL));
    Err(setup_error(config, refusal))
}

/// The error for a ring the kernel would not build.
fn setup_error(config: &EngineConfig, err: io::Error) -> Error {
    if matches!(
        err.raw_os_error(),
        Some(libc::EPERM | libc::ENOSYS | libc::ENOMEM)
    ) {
        // If even a plain ring is refused, io_uring as a whole is unavailable,
        // and the probe knows how to say why.
        match crate::sys::host::io_uring_status() {
            Err(reason) => Error::Unavailable {
                engine: EngineKind::IoUring.name(),
                reason: reason.clone(),
            },
            Ok(()) => specific_setup_error(config, err),
        }
    } else {
        specific_setup_error(config, err)
    }
}

/// Setup failed although plain rings work: blame the features asked for.
fn specific_setup_error(config: &EngineConfig, err: io::Error) -> Error {
    let op = match (config.sq_thread_poll, config.hipri) {
        (true, true) => "io_uring_setup (SQPOLL|IOPOLL)",
        (true, false) => "io_uring_setup (SQPOLL)",
        (false, true) => "io_uring_setup (IOPOLL)",
        (false, false) => "io_uring_setup",
    };
    engine_error(op, err)
}
