//! Torn-write protection (`RWF_ATOMIC`): the sizes a file takes, as the
//! kernel reports them.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

use crate::sys::{self, host};

/// The sizes a file takes torn-write protected writes of (`RWF_ATOMIC`,
/// Linux 6.11): a write either lands whole or not at all, across a crash or
/// a power failure. A write must be `O_DIRECT`, a power of two long between
/// `unit_min` and `unit_max`, and at an offset that is a multiple of its
/// length; the kernel refuses any other with `EINVAL`. What the kernel
/// reports for the file (`statx`'s `STATX_WRITE_ATOMIC`), read by
/// [`atomic_write_units`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicWriteUnits {
    /// The shortest write, in bytes.
    pub unit_min: u32,
    /// The longest write, in bytes.
    pub unit_max: u32,
    /// How many buffers one write may gather (1: one buffer).
    pub segments_max: u32,
}

impl AtomicWriteUnits {
    /// Whether a write of `len` bytes at `offset` is one the kernel takes
    /// whole: a power of two within the units, at a multiple of itself.
    pub fn fits(&self, offset: u64, len: u64) -> bool {
        len.is_power_of_two()
            && (u64::from(self.unit_min)..=u64::from(self.unit_max)).contains(&len)
            && offset.is_multiple_of(len)
    }
}

impl std::fmt::Display for AtomicWriteUnits {
    /// "4096 to 1048576 bytes".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} to {} bytes", self.unit_min, self.unit_max)
    }
}

/// The torn-write protected writes `file` takes, as the kernel reports them
/// for it (`statx(STATX_WRITE_ATOMIC)`); `None` when it takes none (a
/// filesystem or device without them, or a kernel before 6.11). The units
/// are those of `O_DIRECT` writes, whichever way `file` was opened.
pub fn atomic_write_units(file: &File) -> io::Result<Option<AtomicWriteUnits>> {
    units_of(file.as_raw_fd())
}

/// [`atomic_write_units`] of a descriptor.
pub(crate) fn units_of(fd: RawFd) -> io::Result<Option<AtomicWriteUnits>> {
    Ok(
        sys::atomic_write_units(fd)?.map(|(unit_min, unit_max, segments_max)| AtomicWriteUnits {
            unit_min,
            unit_max,
            segments_max,
        }),
    )
}

/// Why the file at `fd` takes no atomic writes, for a refusal: its
/// filesystem (or that it is a device) and the kernel.
pub(crate) fn refusal(fd: RawFd, block_device: bool) -> String {
    let what = if block_device {
        "the device"
    } else {
        sys::filesystem_type(fd)
            .map(host::filesystem_name)
            .unwrap_or("its filesystem")
    };
    let kernel = host::kernel_release();
    format!(
        "{what} on Linux {kernel} offers none for it (statx STATX_WRITE_ATOMIC); XFS (with reflink, its default) offers them on any device from Linux 6.16, anything else only where the device has them"
    )
}
