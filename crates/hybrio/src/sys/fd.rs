//! Plain file-descriptor calls: read/write at the current position, lseek,
//! pread/pwrite, fsync/fdatasync, posix_fadvise, fallocate, ftruncate,
//! a block device's discard.
//!
//! They take a `RawFd` the caller keeps open. Passing a stale or foreign
//! descriptor cannot break memory safety: the kernel only ever touches the
//! slice handed in, and reports a bad descriptor as `EBADF`.

use std::io;
use std::os::fd::RawFd;

/// Converts a `-1`-on-error syscall return into `io::Result`.
#[inline]
pub(super) fn check(ret: libc::ssize_t) -> io::Result<usize> {
    // A non-negative ssize_t always fits in usize.
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// A file offset as `off_t`; offsets past `i64::MAX` are `EINVAL`, as the kernel would say.
#[inline]
fn to_off(offset: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `read(2)` into `buf` at the descriptor's current position.
#[inline]
pub(crate) fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is a live, exclusively borrowed slice, so the kernel may
    // write up to `buf.len()` bytes at its start.
    check(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })
}

/// `write(2)` of `buf` at the descriptor's current position.
#[inline]
pub(crate) fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is a live slice; the kernel reads at most `buf.len()` bytes of it.
    check(unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) })
}

/// `lseek(fd, offset, SEEK_SET)`; returns the new position.
#[inline]
pub(crate) fn lseek_set(fd: RawFd, offset: u64) -> io::Result<u64> {
    let offset = to_off(offset)?;
    // SAFETY: lseek takes no pointers; any descriptor value is safe to pass.
    let ret = unsafe { libc::lseek(fd, offset, libc::SEEK_SET) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as u64)
    }
}

/// `pread(2)` into `buf` at `offset`.
#[inline]
pub(crate) fn pread(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let offset = to_off(offset)?;
    // SAFETY: `buf` is a live, exclusively borrowed slice, so the kernel may
    // write up to `buf.len()` bytes at its start.
    check(unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), offset) })
}

/// `pwrite(2)` of `buf` at `offset`.
#[inline]
pub(crate) fn pwrite(fd: RawFd, buf: &[u8], offset: u64) -> io::Result<usize> {
    let offset = to_off(offset)?;
    // SAFETY: `buf` is a live slice; the kernel reads at most `buf.len()` bytes of it.
    check(unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), offset) })
}

/// `fsync(2)`.
pub(crate) fn fsync(fd: RawFd) -> io::Result<()> {
    // SAFETY: fsync takes no pointers; any descriptor value is safe to pass.
    check(unsafe { libc::fsync(fd) } as libc::ssize_t).map(drop)
}

/// `fdatasync(2)`.
pub(crate) fn fdatasync(fd: RawFd) -> io::Result<()> {
    // SAFETY: fdatasync takes no pointers; any descriptor value is safe to pass.
    check(unsafe { libc::fdatasync(fd) } as libc::ssize_t).map(drop)
}

/// Advice for [`fadvise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advice {
    /// `POSIX_FADV_DONTNEED`: drop the clean cached pages of the range.
    DontNeed,
    /// `POSIX_FADV_NORMAL`: the default readahead.
    Normal,
    /// `POSIX_FADV_SEQUENTIAL`: twice the readahead.
    Sequential,
    /// `POSIX_FADV_RANDOM`: no readahead.
    Random,
    /// `POSIX_FADV_WILLNEED`: read the range into the page cache now (the
    /// kernel's readahead, run in the caller).
    WillNeed,
    /// `POSIX_FADV_NOREUSE`: the data is read once (since Linux 6.3, a
    /// hint to the page cache's LRU).
    NoReuse,
}

/// `posix_fadvise(2)` over `len` bytes from `offset` (`len == 0`: to the end of the file).
pub(crate) fn fadvise(fd: RawFd, offset: u64, len: u64, advice: Advice) -> io::Result<()> {
    let offset = to_off(offset)?;
    let len = to_off(len)?;
    let advice = match advice {
        Advice::DontNeed => libc::POSIX_FADV_DONTNEED,
        Advice::Normal => libc::POSIX_FADV_NORMAL,
        Advice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::WillNeed => libc::POSIX_FADV_WILLNEED,
        Advice::NoReuse => libc::POSIX_FADV_NOREUSE,
    };
    // SAFETY: posix_fadvise takes no pointers; any descriptor value is safe to pass.
    let err = unsafe { libc::posix_fadvise(fd, offset, len, advice) };
    // posix_fadvise returns the error number instead of setting errno.
    if err == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(err))
    }
}

/// `cachestat(2)`'s number (Linux 6.5 and later; elsewhere [`cached_pages`]
/// answers `ENOSYS`).
const SYS_CACHESTAT: Option<libc::c_long> = if cfg!(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)) {
    Some(451)
} else {
    None
};

/// `struct cachestat_range` of `<linux/mman.h>`.
#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

/// How many pages of `fd`'s file from `offset` over `len` bytes are in the
/// page cache (`cachestat(2)`, which looks and changes nothing: no
/// readahead, no access recorded). `ENOSYS` before Linux 6.5; pages past
/// the end of the file are not cached.
pub(crate) fn cached_pages(fd: RawFd, offset: u64, len: u64) -> io::Result<u64> {
    let Some(number) = SYS_CACHESTAT else {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    };
    let range = CachestatRange { off: offset, len };
    // `struct cachestat` of <linux/mman.h>: nr_cache, nr_dirty,
    // nr_writeback, nr_evicted, nr_recently_evicted.
    let mut stat = [0u64; 5];
    // SAFETY: cachestat(2) reads `range` and writes `stat`, both of the
    // layout <linux/mman.h> declares (five u64s for the answer) and alive
    // for the call (the kernel's ABI promise); any descriptor value is safe
    // to pass (EBADF).
    let ret = unsafe {
        libc::syscall(
            number,
            fd,
            &raw const range,
            stat.as_mut_ptr(),
            0 as libc::c_uint,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat[0])
}

/// How `fallocate(2)` changes a file's space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fallocate {
    /// Mode 0: allocate, growing the file past its end.
    Allocate,
    /// `FALLOC_FL_KEEP_SIZE`: allocate, the size unchanged.
    AllocateKeepSize,
    /// `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`: free the range, which
    /// then reads as zeros.
    PunchHole,
}

/// `fallocate(2)` over `len` bytes from `offset`.
pub(crate) fn fallocate(fd: RawFd, mode: Fallocate, offset: u64, len: u64) -> io::Result<()> {
    let offset = to_off(offset)?;
    let len = to_off(len)?;
    let mode = match mode {
        Fallocate::Allocate => 0,
        Fallocate::AllocateKeepSize => libc::FALLOC_FL_KEEP_SIZE,
        Fallocate::PunchHole => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
    };
    // SAFETY: fallocate takes no pointers; any descriptor value is safe to pass.
    check(unsafe { libc::fallocate(fd, mode, offset, len) } as libc::ssize_t).map(|_| ())
}

/// `ftruncate(2)`: the file's size becomes `size`.
pub(crate) fn ftruncate(fd: RawFd, size: u64) -> io::Result<()> {
    let size = to_off(size)?;
    // SAFETY: ftruncate takes no pointers; any descriptor value is safe to pass.
    check(unsafe { libc::ftruncate(fd, size) } as libc::ssize_t).map(|_| ())
}

/// `ioctl(BLKDISCARD)`: tells a block device that `len` bytes from `offset`
/// are no longer needed.
pub(crate) fn discard(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    // _IO(0x12, 119), from <linux/fs.h>; the libc crate does not carry it.
    const BLKDISCARD: libc::Ioctl = 0x1277;
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer it
    // is given (the kernel's contract for this ioctl); `range` is exactly
    // that and outlives the call. On anything but a block device the kernel
    // answers ENOTTY without reading it.
    check(unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) } as libc::ssize_t).map(|_| ())
}

/// `ioctl(EXT4_IOC_MOVE_EXT)`: ext4 swaps `blocks` blocks of `fd` from
/// block `orig_start` with those of `donor` from `donor_start` (online
/// defragmentation); returns the blocks moved.
pub(crate) fn move_extents(
    fd: RawFd,
    donor: RawFd,
    orig_start: u64,
    donor_start: u64,
    blocks: u64,
) -> io::Result<u64> {
    /// `struct move_extent` of `linux/ext4.h`.
    #[repr(C)]
    struct MoveExtent {
        reserved: u32,
        donor_fd: u32,
        orig_start: u64,
        donor_start: u64,
        len: u64,
        moved_len: u64,
    }
    // _IOWR('f', 15, struct move_extent): the libc crate does not carry it.
    const EXT4_IOC_MOVE_EXT: libc::Ioctl = 0xc028_660f;
    let mut request = MoveExtent {
        reserved: 0,
        donor_fd: donor as u32,
        orig_start,
        donor_start,
        len: blocks,
        moved_len: 0,
    };
    // SAFETY: EXT4_IOC_MOVE_EXT reads and writes one `struct move_extent`
    // at the pointer (ext4's contract for the ioctl); `request` has its
    // layout and outlives the call. Another filesystem answers ENOTTY
    // without touching it.
    let ret = unsafe { libc::ioctl(fd, EXT4_IOC_MOVE_EXT, &mut request as *mut MoveExtent) };
    check(ret as libc::ssize_t).map(|_| request.moved_len)
}

/// Whether `fd` is a block device (`fstat`).
pub(crate) fn is_block_device(fd: RawFd) -> io::Result<bool> {
    file_type(fd).map(|kind| kind == libc::S_IFBLK)
}

/// The type bits of `fd`'s mode (`st_mode & S_IFMT`, from `fstat`).
pub(crate) fn file_type(fd: RawFd) -> io::Result<libc::mode_t> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes one `struct stat` into the pointer it is given,
    // which points at enough space for one; it is read only on success.
    let ret = unsafe { libc::fstat(fd, stat.as_mut_ptr()) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat returned 0, so it filled the whole struct (its promise).
    let mode = unsafe { stat.assume_init() }.st_mode;
    Ok(mode & libc::S_IFMT)
}

/// Whether `fd` was opened with `O_DIRECT` (`fcntl(F_GETFL)`).
pub(crate) fn is_direct(fd: RawFd) -> io::Result<bool> {
    // SAFETY: F_GETFL takes no pointer; any descriptor value is safe to pass.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(flags & libc::O_DIRECT != 0)
    }
}

/// The status flags of `fd` (`fcntl(F_GETFL)`): access mode, `O_DIRECT`, ...
pub(crate) fn status_flags(fd: RawFd) -> io::Result<i32> {
    // SAFETY: F_GETFL takes no pointer; any descriptor value is safe to pass.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(flags)
    }
}

/// Turns `O_DIRECT` off on `fd`, so that its I/O goes through the page cache.
pub(crate) fn clear_direct(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL take integers; any descriptor value is safe to pass.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `preadv2(2)` of one buffer at `offset` with `RWF_*` flags.
#[inline]
pub(crate) fn preadv2(fd: RawFd, buf: &mut [u8], offset: u64, flags: i32) -> io::Result<usize> {
    let offset = to_off(offset)?;
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: the one iovec describes `buf`, a live, exclusively borrowed
    // slice, so the kernel may write up to `buf.len()` bytes at its start;
    // `iov` outlives the call.
    check(unsafe { libc::preadv2(fd, &iov, 1, offset, flags) })
}

/// `pwritev2(2)` of one buffer at `offset` with `RWF_*` flags.
#[inline]
pub(crate) fn pwritev2(fd: RawFd, buf: &[u8], offset: u64, flags: i32) -> io::Result<usize> {
    let offset = to_off(offset)?;
    let iov = libc::iovec {
        iov_base: buf.as_ptr().cast_mut().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: the one iovec describes `buf`, a live slice the kernel only
    // reads (a write never stores through iov_base); `iov` outlives the call.
    check(unsafe { libc::pwritev2(fd, &iov, 1, offset, flags) })
}

/// How many 4 KiB pages of the first `len` bytes of `fd` are in the page
/// cache: `mincore` over a mapping that is never touched, so counting faults
/// nothing in.
#[cfg(test)]
pub(crate) fn resident_pages(fd: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: a fresh read-only shared mapping chosen by the kernel; no
    // existing memory is affected, and the result is checked before use.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut pages = vec![0u8; len.div_ceil(4096)];
    // SAFETY: `map` is a live mapping of `len` bytes, and `pages` has one
    // byte per 4 KiB page of it, as mincore(2) requires.
    let ret = unsafe { libc::mincore(map, len, pages.as_mut_ptr()) };
    let outcome = if ret == 0 {
        Ok(pages.iter().filter(|&&b| b & 1 == 1).count())
    } else {
        Err(io::Error::last_os_error())
    };
    // SAFETY: unmaps exactly the mapping made above, which nothing else uses.
    unsafe { libc::munmap(map, len) };
    outcome
}

/// Whether `fd`'s file takes uncached I/O (`RWF_DONTCACHE`): a one-byte
/// uncached read at offset 0 through a read-only descriptor of the same file
/// (so a write-only one can be asked too), which changes nothing. The kernel
/// checks the flag before it looks at the data: `EOPNOTSUPP` when the
/// filesystem (or the kernel, before 6.14) does not take it.
pub(crate) fn probe_uncached(fd: RawFd) -> io::Result<()> {
    let reader = std::fs::File::open(format!("/proc/self/fd/{fd}"))?;
    let mut byte = [0u8; 1];
    preadv2(
        std::os::fd::AsRawFd::as_raw_fd(&reader),
        &mut byte,
        0,
        libc::RWF_DONTCACHE,
    )
    .map(drop)
}

/// The sizes `fd`'s file takes torn-write protected (`RWF_ATOMIC`) direct
/// writes of, as `statx(STATX_WRITE_ATOMIC)` gives them: `(unit_min,
/// unit_max, segments_max)`, or `None` when the file offers none (the
/// `STATX_ATTR_WRITE_ATOMIC` attribute unset, as before Linux 6.11 or on a
/// filesystem without them).
pub(crate) fn atomic_write_units(fd: RawFd) -> io::Result<Option<(u32, u32, u32)>> {
    use rustix::fs::{AtFlags, StatxAttributes, StatxFlags};
    // The uapi's STATX_WRITE_ATOMIC and STATX_ATTR_WRITE_ATOMIC (Linux 6.11),
    // which rustix leaves unnamed.
    const WRITE_ATOMIC: u32 = 0x0001_0000;
    const ATTR_WRITE_ATOMIC: u64 = 0x0040_0000;
    // SAFETY: the caller's descriptor stays open for the call (rustix's
    // BorrowedFd only promises that much, and statx keeps nothing).
    let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
    let stat = rustix::fs::statx(
        fd,
        c"",
        AtFlags::EMPTY_PATH,
        StatxFlags::from_bits_retain(WRITE_ATOMIC),
    )?;
    let offered = stat.stx_mask & WRITE_ATOMIC != 0
        && stat
            .stx_attributes
            .contains(StatxAttributes::from_bits_retain(ATTR_WRITE_ATOMIC))
        && stat.stx_atomic_write_unit_max > 0;
    Ok(offered.then_some((
        stat.stx_atomic_write_unit_min,
        stat.stx_atomic_write_unit_max,
        stat.stx_atomic_write_segments_max,
    )))
}

/// The type of the filesystem `fd` is on (`fstatfs`'s magic number).
pub(crate) fn filesystem_type(fd: RawFd) -> io::Result<i64> {
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs writes one statfs into `fs`, which is large enough; any
    // descriptor value is safe to pass.
    if unsafe { libc::fstatfs(fd, fs.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatfs returned 0, so it filled `fs`.
    let fs = unsafe { fs.assume_init() };
    Ok(fs.f_type)
}

/// Whether `fd` is on tmpfs (`fstatfs`).
#[cfg(test)]
pub(crate) fn is_tmpfs(fd: RawFd) -> io::Result<bool> {
    Ok(filesystem_type(fd)? == libc::TMPFS_MAGIC)
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;

    #[test]
    fn cachestat_counts_the_written_pages_of_a_tmpfs_file_and_not_its_hole() {
        // tmpfs keeps every page written (there is nowhere to evict it to
        // without swap, and a page in swap is not counted cached: skipped).
        let Ok(file) = tempfile::tempfile_in("/dev/shm") else {
            eprintln!("skipping: no /dev/shm here");
            return;
        };
        if !is_tmpfs(file.as_raw_fd()).unwrap_or(false) {
            eprintln!("skipping: /dev/shm is not tmpfs here");
            return;
        }
        let page = crate::sys::host::page_size() as u64;
        let written = 64 * page;
        pwrite(file.as_raw_fd(), &vec![1u8; written as usize], 0).unwrap();
        file.set_len(2 * written).unwrap();
        let fd = file.as_raw_fd();
        match cached_pages(fd, 0, written) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                eprintln!("skipping: the kernel answers no cachestat here ({e})");
            }
            answer => {
                assert_eq!(answer.unwrap(), 64, "every page written");
                assert_eq!(cached_pages(fd, written, written).unwrap(), 0, "the hole");
                assert_eq!(cached_pages(fd, written - page, 2 * page).unwrap(), 1);
                assert_eq!(
                    cached_pages(fd, 4 * written, page).unwrap(),
                    0,
                    "past the end"
                );
                assert!(cached_pages(-1, 0, page).is_err(), "a bad descriptor");
            }
        }
    }
}
