//! What this system lets the engines do: probe first, then degrade.
//!
//! Kernels and containers may refuse io_uring (an old kernel, the
//! `kernel.io_uring_disabled` sysctl, a seccomp filter) and filesystems may
//! refuse `O_DIRECT` (tmpfs on older kernels, some FUSE filesystems). These
//! probes say so in words a user can act on, so callers can skip an engine
//! instead of failing mid-run.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use io_uring::{IoUring, Probe, opcode};

use crate::Error;
use crate::buf::{ALIGN, BufPool};
use crate::engine::EngineKind;
use crate::file::{self, OpenOptions};
use crate::sys;

/// Whether `kind` can run here; for io_uring and libaio the answer is probed
/// once per process.
pub fn engine_available(kind: EngineKind) -> Result<(), Error> {
    match kind {
        EngineKind::Sync | EngineKind::Psync | EngineKind::Null | EngineKind::Pool => Ok(()),
        // The adaptive engine falls back to libaio and the pool where io_uring is refused.
        EngineKind::Pvsync2 | EngineKind::Adaptive => Ok(()),
        EngineKind::Libaio => libaio_status()
            .clone()
            .map_err(|reason| Error::Unavailable {
                engine: EngineKind::Libaio.name(),
                reason,
            }),
        EngineKind::IoUring => io_uring_status()
            .clone()
            .map_err(|reason| Error::Unavailable {
                engine: EngineKind::IoUring.name(),
                reason,
            }),
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
    crate::sys::page_size()
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

/// The cached result of probing io_uring: `Err` holds the reason it is unusable.
fn io_uring_status() -> &'static Result<(), String> {
    static STATUS: OnceLock<Result<(), String>> = OnceLock::new();
    STATUS.get_or_init(probe_io_uring)
}

/// Opcodes the io_uring engine issues.
const REQUIRED_OPCODES: [(u8, &str); 5] = [
    (opcode::Read::CODE, "READ"),
    (opcode::Write::CODE, "WRITE"),
    (opcode::ReadFixed::CODE, "READ_FIXED"),
    (opcode::WriteFixed::CODE, "WRITE_FIXED"),
    (opcode::Fsync::CODE, "FSYNC"),
];

fn probe_io_uring() -> Result<(), String> {
    let ring = IoUring::new(2).map_err(|e| explain_setup_error(&e))?;
    let mut probe = Probe::new();
    ring.submitter().register_probe(&mut probe).map_err(|e| {
        format!(
            "IORING_REGISTER_PROBE failed: {} (the kernel predates Linux 5.6, whose io_uring lacks plain read/write)",
            describe(&e)
        )
    })?;
    let missing: Vec<&str> = REQUIRED_OPCODES
        .iter()
        .filter(|(code, _)| !probe.is_supported(*code))
        .map(|&(_, name)| name)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the kernel's io_uring lacks the opcodes {} (Linux 5.6 or later has them)",
            missing.join(", ")
        ))
    }
}

/// Why `io_uring_setup` failed, naming the cause where it can be found.
pub(crate) fn explain_setup_error(err: &io::Error) -> String {
    let what = describe(err);
    match err.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no io_uring (ENOSYS)".to_owned(),
        Some(libc::EPERM) => match read_io_uring_disabled() {
            Some(2) => format!(
                "io_uring_setup failed: {what} (io_uring is disabled by the kernel.io_uring_disabled sysctl = 2)"
            ),
            Some(1) => format!(
                "io_uring_setup failed: {what} (the kernel.io_uring_disabled sysctl = 1 allows io_uring only \
                 to members of the kernel.io_uring_group group and to CAP_SYS_ADMIN)"
            ),
            _ => format!(
                "io_uring_setup failed: {what} (blocked, probably by a seccomp filter such as a container's)"
            ),
        },
        Some(libc::ENOMEM) => {
            format!(
                "io_uring_setup failed: {what} (the locked-memory limit, `ulimit -l`, may be too low)"
            )
        }
        _ => format!("io_uring_setup failed: {what}"),
    }
}

/// `/proc/sys/kernel/io_uring_disabled`, if the kernel has it.
fn read_io_uring_disabled() -> Option<u32> {
    fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The cached result of probing native AIO (`io_setup(1)` and `io_destroy`):
/// `Err` holds the reason it is unusable.
fn libaio_status() -> &'static Result<(), String> {
    static STATUS: OnceLock<Result<(), String>> = OnceLock::new();
    STATUS.get_or_init(|| sys::aio::probe().map_err(|e| explain_aio_setup_error(&e)))
}

/// Why `io_setup` failed, naming the cause where it can be found.
pub(crate) fn explain_aio_setup_error(err: &io::Error) -> String {
    explain_aio_setup_error_at(err, 1)
}

/// Why `io_setup(depth)` failed: the system-wide limit on events counts a
/// context's `depth` whole, so a depth above it is refused however few are
/// in use, and a depth within it when others hold the rest.
pub(crate) fn explain_aio_setup_error_at(err: &io::Error, depth: u32) -> String {
    let what = describe(err);
    match err.raw_os_error() {
        Some(libc::ENOSYS) => {
            "this kernel has no native AIO (io_setup: ENOSYS; it was built without CONFIG_AIO)"
                .to_owned()
        }
        Some(libc::EAGAIN) => match (read_sysctl("fs/aio-nr"), read_sysctl("fs/aio-max-nr")) {
            (_, Some(max)) if u64::from(depth) > max => format!(
                "io_setup failed: {what} (depth {depth} asks for more AIO events than the \
                 fs.aio-max-nr sysctl allows the whole system, {max}: lower the depth, or raise \
                 the limit with `sysctl -w fs.aio-max-nr=N`)"
            ),
            (used, max) => {
                let usage = match (used, max) {
                    (Some(used), Some(max)) if depth > 1 => format!(
                        "{used} of {max} events in use, and depth {depth} asks for {depth} more; "
                    ),
                    (Some(used), Some(max)) => format!("{used} of {max} events in use; "),
                    _ => String::new(),
                };
                format!(
                    "io_setup failed: {what} (the fs.aio-max-nr sysctl, the system-wide limit on \
                     AIO events, is exhausted: {usage}raise it with `sysctl -w fs.aio-max-nr=N`)"
                )
            }
        },
        Some(libc::EPERM) => format!(
            "io_setup failed: {what} (blocked, probably by a seccomp filter such as a container's)"
        ),
        _ => format!("io_setup failed: {what}"),
    }
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
        aio_events: read_sysctl("fs/aio-nr").zip(read_sysctl("fs/aio-max-nr")),
    }
}

/// A number from `/proc/sys/`, if the kernel has it.
fn read_sysctl(name: &str) -> Option<u64> {
    fs::read_to_string(Path::new("/proc/sys").join(name))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The dirty page cache at which the kernel starts writing it back in the
/// background: `vm.dirty_background_bytes`, or else
/// `vm.dirty_background_ratio` percent of the memory available (the kernel
/// takes the ratio of its free and reclaimable pages, which `MemAvailable`
/// is near). `None` if `/proc` does not say.
pub(crate) fn dirty_background_threshold() -> Option<u64> {
    if let Some(bytes) = read_sysctl("vm/dirty_background_bytes").filter(|&b| b > 0) {
        return Some(bytes);
    }
    let ratio = read_sysctl("vm/dirty_background_ratio")?;
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let available_kib: u64 = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(available_kib * 1024 / 100 * ratio)
}

/// The kernel's words for an error, without std's " (os error N)" suffix.
fn describe(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

/// The running kernel's release (`uname -r`), or "unknown".
pub(crate) fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|release| release.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// A filesystem's name from its `statfs` magic number, for messages.
pub(crate) fn filesystem_name(magic: i64) -> &'static str {
    match magic {
        libc::EXT4_SUPER_MAGIC => "ext4",
        libc::XFS_SUPER_MAGIC => "XFS",
        libc::BTRFS_SUPER_MAGIC => "btrfs",
        libc::TMPFS_MAGIC => "tmpfs",
        libc::OVERLAYFS_SUPER_MAGIC => "overlayfs",
        libc::NFS_SUPER_MAGIC => "NFS",
        libc::F2FS_SUPER_MAGIC => "f2fs",
        _ => "its filesystem",
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
    fn setup_errors_name_their_cause() {
        let enosys = explain_setup_error(&io::Error::from_raw_os_error(libc::ENOSYS));
        assert_eq!(enosys, "this kernel has no io_uring (ENOSYS)");
        let eperm = explain_setup_error(&io::Error::from_raw_os_error(libc::EPERM));
        assert!(
            eperm.starts_with("io_uring_setup failed: Operation not permitted ("),
            "{eperm}"
        );
        assert!(!eperm.contains("os error"), "{eperm}");
        let sysctl = read_io_uring_disabled();
        if sysctl == Some(2) {
            assert!(eperm.contains("io_uring_disabled sysctl = 2"), "{eperm}");
        } else if sysctl != Some(1) {
            assert!(eperm.contains("seccomp"), "{eperm}");
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
    fn aio_setup_errors_name_their_cause() {
        let enosys = explain_aio_setup_error(&io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(enosys.contains("CONFIG_AIO"), "{enosys}");
        let eagain = explain_aio_setup_error(&io::Error::from_raw_os_error(libc::EAGAIN));
        assert!(
            eagain.starts_with("io_setup failed: Resource temporarily unavailable ("),
            "{eagain}"
        );
        assert!(eagain.contains("fs.aio-max-nr"), "{eagain}");
        if read_sysctl("fs/aio-max-nr").is_some() {
            assert!(eagain.contains(" events in use; "), "{eagain}");
        }
        if read_sysctl("fs/aio-max-nr").is_some_and(|max| max >= 2) {
            let within = explain_aio_setup_error_at(&io::Error::from_raw_os_error(libc::EAGAIN), 2);
            assert!(within.contains("exhausted"), "{within}");
            assert!(within.contains("depth 2 asks for 2 more"), "{within}");
        }
        if let Some(max) = read_sysctl("fs/aio-max-nr")
            && let Ok(depth) = u32::try_from(max + 1)
        {
            let above =
                explain_aio_setup_error_at(&io::Error::from_raw_os_error(libc::EAGAIN), depth);
            assert!(
                above.contains(&format!("depth {depth} asks for more AIO events than")),
                "{above}"
            );
            assert!(!above.contains("exhausted"), "{above}");
        }
        let eperm = explain_aio_setup_error(&io::Error::from_raw_os_error(libc::EPERM));
        assert!(eperm.contains("seccomp"), "{eperm}");
        assert!(!eperm.contains("os error"), "{eperm}");
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
