//! What this host is and allows, read from the kernel: its release, page
//! size, sysctls, filesystems' names, and whether io_uring works here, with
//! the words that explain a refusal. Facts only, with nothing of the
//! library's above them, so that anything from the file table up can ask.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use io_uring::{IoUring, Probe, opcode};

/// The cached result of probing io_uring: `Err` holds the reason it is unusable.
pub(crate) fn io_uring_status() -> &'static Result<(), String> {
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

/// A number from `/proc/sys/`, if the kernel has it.
pub(crate) fn read_sysctl(name: &str) -> Option<u64> {
    fs::read_to_string(Path::new("/proc/sys").join(name))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The page cache's dirty state, machine-wide, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirtyState {
    /// Dirty pages and pages being written back.
    pub(crate) dirty: u64,
    /// The dirty pages at which the kernel starts writing back in the
    /// background, as it computes it now: `vm.dirty_background_bytes`, or
    /// `vm.dirty_background_ratio` of the memory it could dirty (it moves
    /// with free memory).
    pub(crate) background_threshold: u64,
}

/// The page cache's dirty state now, from `/proc/vmstat` (`nr_dirty`,
/// `nr_writeback`, `nr_dirty_background_threshold`); `None` if it does not
/// say.
pub(crate) fn dirty_state() -> Option<DirtyState> {
    let vmstat = fs::read_to_string("/proc/vmstat").ok()?;
    let (mut dirty, mut writeback, mut threshold) = (None, None, None);
    for line in vmstat.lines() {
        let Some((name, value)) = line.split_once(' ') else {
            continue;
        };
        let slot = match name {
            "nr_dirty" => &mut dirty,
            "nr_writeback" => &mut writeback,
            "nr_dirty_background_threshold" => &mut threshold,
            _ => continue,
        };
        *slot = value.trim().parse::<u64>().ok();
    }
    let page = page_size() as u64;
    Some(DirtyState {
        dirty: (dirty? + writeback?) * page,
        background_threshold: threshold? * page,
    })
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

/// Bytes per memory page.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf only reads a system constant: no pointers, no
    // preconditions (libc's promise for every `_SC_` name it defines).
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|s| *s > 0)
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
