//! What this system lets the engines do: probe first, then degrade.
//!
//! Kernels and containers may refuse io_uring (an old kernel, the
//! `kernel.io_uring_disabled` sysctl, a seccomp filter) and filesystems may
//! refuse `O_DIRECT` (tmpfs on older kernels, some FUSE filesystems). These
//! probes say so in words a user can act on, so callers can skip an engine
//! instead of failing mid-run.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;
use crate::buf::{ALIGN, BufPool};
use crate::engine::EngineKind;
use crate::file::{self, OpenOptions};
use crate::sys::{self, host};

/// Whether `kind` can run here; for io_uring and libaio the answer is probed
/// once per process.
pub fn engine_available(kind: EngineKind) -> Result<(), Error> {
    match kind {
        EngineKind::Sync | EngineKind::Psync | EngineKind::Null | EngineKind::Pool => Ok(()),
        // The C library does POSIX AIO with its own threads.
        EngineKind::Posixaio => Ok(()),
        // The adaptive engine falls back to libaio and the pool where io_uring is refused.
        EngineKind::Pvsync2 | EngineKind::Adaptive => Ok(()),
        EngineKind::Libaio => sys::aio::status()
            .clone()
            .map_err(|reason| Error::Unavailable {
                engine: EngineKind::Libaio.name(),
                reason,
            }),
        EngineKind::IoUring => {
            host::io_uring_status()
                .clone()
                .map_err(|reason| Error::Unavailable {
                    engine: EngineKind::IoUring.name(),
                    reason,
                })
        }
    }
}

/// The engines that can run here, in [`EngineKind::ALL`] order.
pub fn available_engines() -> Vec<EngineKind> {
    EngineKind::ALL
        .into_iter()
        .filter(|&kind| engine_available(kind).is_ok())
        .collect()
}

/// Bytes per memory page (what fio's `$pagesize` stands for).
pub fn page_size() -> usize {
    host::page_size()
}

/// Whether files in `dir` can be opened with `O_DIRECT` and do one aligned
/// 4096-byte write and read. Creates and removes a small file in `dir`.
pub fn o_direct_supported(dir: &Path) -> bool {
    static PROBE_COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = PROBE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(".hybrio-odirect-probe-{}-{n}", std::process::id()));
    let direct_rw = OpenOptions {
        read: true,
        write: true,
        create: true,
        direct: true,
        ..Default::default()
    };
    let Ok(file) = file::open(&path, &direct_rw) else {
        return false;
    };
    let works = aligned_round_trip(&file);
    drop(file);
    // Best effort: a leftover probe file is harmless.
    let _ = fs::remove_file(&path);
    works
}

/// One aligned write and read-back through `file`.
fn aligned_round_trip(file: &fs::File) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(pool) = BufPool::new(2, ALIGN) else {
        return false;
    };
    let (Some(mut out), Some(mut back)) = (pool.take(), pool.take()) else {
        return false;
    };
    for (i, byte) in out.as_mut_slice().iter_mut().enumerate() {
        *byte = (i % 251) as u8;
    }
    let fd = file.as_raw_fd();
    let wrote = sys::retry_on_interrupt(|| sys::pwrite(fd, out.as_slice(), 0));
    let read = sys::retry_on_interrupt(|| sys::pread(fd, back.as_mut_slice(), 0));
    matches!((wrote, read), (Ok(ALIGN), Ok(ALIGN))) && out.as_slice() == back.as_slice()
}

/// What the system lets this process hold at once: the limits a run of
/// hundreds of engine contexts meets (seeds/001), read now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `RLIMIT_NOFILE`, soft and hard (`u64::MAX`: none).
    pub open_files: Option<(u64, u64)>,
    /// `RLIMIT_MEMLOCK`, soft and hard, bytes (`u64::MAX`: none): what
    /// io_uring's registered buffers pin (and its rings, before Linux 5.12),
    /// for a process without `CAP_IPC_LOCK`.
    pub locked_memory: Option<(u64, u64)>,
    /// Linux AIO events in use system-wide (`fs.aio-nr`) and the limit
    /// (`fs.aio-max-nr`): a libaio engine of depth `d` takes `d` of them.
    pub aio_events: Option<(u64, u64)>,
}

/// Whether an io_uring ring that stays on one thread gives its descriptor
/// back once bound to it (at its first commit, even with nothing queued):
/// the kernel names a ring by its index among the thread's registered
/// rings in every call from Linux 6.3 (`IORING_FEAT_REG_REG_RING`), and the
/// ring must be `SINGLE_ISSUER|DEFER_TASKRUN` (not built for
/// [`EngineConfig::any_thread`](crate::engine::EngineConfig::any_thread),
/// nor with SQPOLL). Then an io_uring or adaptive engine holds no
/// descriptor beyond its files. False where io_uring is unavailable.
pub fn ring_gives_descriptor_back() -> bool {
    static GIVES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GIVES.get_or_init(|| {
        use rustix::io_uring::{IoringFeatureFlags, IoringSetupFlags, io_uring_params};
        if host::io_uring_status().is_err() {
            return false;
        }
        let mut params = io_uring_params::default();
        params.flags = IoringSetupFlags::SINGLE_ISSUER
            | IoringSetupFlags::DEFER_TASKRUN
            | IoringSetupFlags::R_DISABLED;
        crate::sys::uring::RawRing::setup(2, params).is_ok_and(|ring| {
            ring.params()
                .features
                .contains(IoringFeatureFlags::REG_REG_RING)
        })
    })
}

/// The process's and the system's limits, as they are now.
pub fn limits() -> Limits {
    let infinite = |(soft, hard): (u64, u64)| {
        let open = |v: u64| {
            if v == libc::RLIM_INFINITY {
                u64::MAX
            } else {
                v
            }
        };
        (open(soft), open(hard))
    };
    Limits {
        open_files: sys::open_file_limit().ok().map(infinite),
        locked_memory: sys::locked_memory_limit().ok().map(infinite),
        aio_events: host::read_sysctl("fs/aio-nr").zip(host::read_sysctl("fs/aio-max-nr")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_engines_are_always_available() {
        for kind in [EngineKind::Sync, EngineKind::Psync, EngineKind::Null] {
            engine_available(kind).unwrap();
        }
        let available = available_engines();
        assert!(available.contains(&EngineKind::Sync) && available.contains(&EngineKind::Null));
        assert_eq!(
            available.contains(&EngineKind::IoUring),
            engine_available(EngineKind::IoUring).is_ok()
        );
    }

    #[test]
    fn io_uring_answer_is_stable() {
        let first = engine_available(EngineKind::IoUring).map_err(|e| e.to_string());
        let second = engine_available(EngineKind::IoUring).map_err(|e| e.to_string());
        assert_eq!(first, second);
        if let Err(reason) = first {
            eprintln!("io_uring unavailable here: {reason}");
        }
    }

    #[test]
    fn libaio_answer_is_stable() {
        let first = engine_available(EngineKind::Libaio).map_err(|e| e.to_string());
        let second = engine_available(EngineKind::Libaio).map_err(|e| e.to_string());
        assert_eq!(first, second);
        match first {
            Ok(()) => assert!(available_engines().contains(&EngineKind::Libaio)),
            Err(reason) => eprintln!("libaio unavailable here: {reason}"),
        }
    }

    #[test]
    fn o_direct_probe_cleans_up() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let supported = o_direct_supported(dir.path());
        eprintln!("O_DIRECT in {}: {supported}", dir.path().display());
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "probe file left behind"
        );
        assert!(
            !o_direct_supported(&dir.path().join("missing")),
            "a missing directory cannot support it"
        );
    }
}
