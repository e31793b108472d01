//! The engine's file table: files are added once and named by a small integer.
//!
//! A lookup is an index into a `Vec` (seeds/001: a per-request O(n) lookup ate
//! 30% CPU at 512 contexts). Freed slots are reused, lowest first, so handles stay
//! dense, which io_uring's registered-file table needs.

mod atomic;
mod handle;

pub use atomic::{AtomicWriteUnits, atomic_write_units};
pub use handle::FileHandle;

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::request::Op;
use crate::sys::{self, host};

/// One open file.
#[derive(Debug)]
pub struct FileEntry {
    /// The file, or `None` for an alias: a descriptor another table owns
    /// ([`FileTable::insert_alias`]).
    file: Option<File>,
    path: PathBuf,
    fd: RawFd,
    direct: bool,
    socket: bool,
    block_device: bool,
    caching: Caching,
    /// The `RWF_*` flags its writes carry beyond its caching's
    /// (`RWF_ATOMIC` once [`Engine::set_atomic_writes`](crate::engine::Engine::set_atomic_writes)
    /// took it).
    write_flags: i32,
}

/// Whether a file's data goes through the page cache, and stays there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Caching {
    /// Buffered I/O, the data kept in the page cache (the default: cache
    /// residency is the caller's intent).
    #[default]
    Cached,
    /// Uncached buffered I/O (`RWF_DONTCACHE`, Linux 6.14): through the page
    /// cache, with buffered I/O's semantics (any size and alignment, readers
    /// see the data), but the pages a request brings in are dropped once
    /// it is done (a write's after writeback, which it starts at once).
    Uncached,
    /// The engine may choose, per class of request: the adaptive engine
    /// writes a file uncached once its writes stream sequentially past what
    /// the page cache takes without writing back (a share of the kernel's
    /// background threshold), and keeps it cached while they do not, or
    /// while what was written is read again (see the adaptive engine's
    /// docs). Reads stay cached, and once they stream, a
    /// thread of the engine's reads ahead of them. Never an error: where
    /// uncached I/O cannot go (a filesystem that refuses it, `O_DIRECT`, a
    /// socket), or on an engine that does not choose (all but adaptive),
    /// it is [`Cached`](Caching::Cached).
    Auto,
}

impl FileEntry {
    /// The open file; `None` for an alias of a descriptor another table
    /// owns (the engines inside the adaptive engine share the caller's).
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// Its raw descriptor (cached: no call per request).
    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// The path it was opened by, for error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it was opened with `O_DIRECT` when it was added.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// Whether it is a socket (added by [`Engine::add_socket`](crate::engine::Engine::add_socket),
    /// or a socket's descriptor added as a file).
    pub fn is_socket(&self) -> bool {
        self.socket
    }

    /// True when the file is a block device (a trim is then a discard).
    pub fn is_block_device(&self) -> bool {
        self.block_device
    }

    /// How its data goes through the page cache
    /// ([`Engine::set_caching`](crate::engine::Engine::set_caching)).
    pub fn caching(&self) -> Caching {
        self.caching
    }

    /// Whether its writes are torn-write protected (`RWF_ATOMIC`;
    /// [`Engine::set_atomic_writes`](crate::engine::Engine::set_atomic_writes)).
    pub fn atomic_writes(&self) -> bool {
        self.write_flags & libc::RWF_ATOMIC != 0
    }

    /// The `RWF_*` flags a request of `op` on it carries: its caching's,
    /// and for a write, its own.
    #[inline]
    pub(crate) fn rw_flags(&self, op: Op) -> i32 {
        let caching = match self.caching {
            Caching::Cached | Caching::Auto => 0,
            Caching::Uncached => libc::RWF_DONTCACHE,
        };
        if op == Op::Write {
            caching | self.write_flags
        } else {
            caching
        }
    }
}

/// Handle-indexed table of open files.
#[derive(Debug, Default)]
pub struct FileTable {
    slots: Vec<Option<FileEntry>>,
    free: Vec<u32>,
}

impl FileTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The descriptors of the sockets in the table.
    pub(crate) fn socket_fds(&self) -> impl Iterator<Item = RawFd> + '_ {
        self.slots
            .iter()
            .flatten()
            .filter(|entry| entry.is_socket())
            .map(FileEntry::fd)
    }

    /// Adds a file; returns its handle (the lowest free slot).
    pub fn insert(&mut self, file: File, path: PathBuf) -> FileHandle {
        let fd = file.as_raw_fd();
        self.insert_entry(Self::entry(Some(file), fd, path, None))
    }

    /// Adds `file`'s descriptor, which another table owns, as an alias at `handle`
    /// (the owner's handle, so that a request and its completion name the
    /// file alike in both tables): requests name it by its number, and the
    /// table never closes it. Whoever adds it keeps the owner open until the
    /// alias is removed ([`discard`](Self::discard)) and no request of it is
    /// in flight: the adaptive engine, whose engines inside it share the
    /// caller's one descriptor per file. `direct`: whether the owner opened
    /// it `O_DIRECT` (the emulated device clears the flag on the descriptor,
    /// and keeps `O_DIRECT`'s alignment rules for such a file). Fails with
    /// [`Error::BadHandle`] if `handle` holds a file already.
    pub(crate) fn insert_alias(
        &mut self,
        handle: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        let index = handle.index();
        if self.slots.get(index).is_some_and(Option::is_some) {
            return Err(Error::BadHandle(handle.0));
        }
        if self.slots.len() <= index {
            // The slots skipped over are free.
            self.free.extend(self.slots.len() as u32..handle.0);
            self.slots.resize_with(index + 1, || None);
        } else {
            self.free.retain(|&free| free != handle.0);
        }
        let entry = Self::entry(None, file.as_raw_fd(), path.to_owned(), Some(direct));
        self.slots[index] = Some(entry);
        Ok(())
    }

    /// Adds `entry` at the lowest free handle.
    fn insert_entry(&mut self, entry: FileEntry) -> FileHandle {
        if let Some(pos) = self
            .free
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| **s)
            .map(|(i, _)| i)
        {
            let slot = self.free.swap_remove(pos);
            self.slots[slot as usize] = Some(entry);
            FileHandle(slot)
        } else {
            self.slots.push(Some(entry));
            FileHandle((self.slots.len() - 1) as u32)
        }
    }

    /// The entry for `fd` (owned as `file`, or an alias), `O_DIRECT` as its
    /// flags say unless `direct` says.
    fn entry(file: Option<File>, fd: RawFd, path: PathBuf, direct: Option<bool>) -> FileEntry {
        // A descriptor fcntl cannot read is a bad one; its requests will say so.
        let direct = direct.unwrap_or_else(|| sys::is_direct(fd).unwrap_or(false));
        let socket = sys::is_socket(fd).unwrap_or(false);
        let block_device = sys::is_block_device(fd).unwrap_or(false);
        FileEntry {
            file,
            path,
            fd,
            direct,
            socket,
            block_device,
            caching: Caching::Cached,
            write_flags: 0,
        }
    }

    /// Takes the file just inserted at `handle` out again, to hand it back
    /// to the caller in an [`Error::FileRefused`] with the reason `why`
    /// gives for its path (an alias, which has no file to hand back: the
    /// reason alone).
    pub(crate) fn refuse(&mut self, handle: FileHandle, why: impl FnOnce(&Path) -> Error) -> Error {
        match self.remove(handle) {
            Some(entry) => {
                let path = entry.path().to_owned();
                let reason = why(&path);
                match entry.into_file() {
                    Some(file) => Error::FileRefused {
                        file,
                        path,
                        reason: Box::new(reason),
                    },
                    None => reason,
                }
            }
            None => Error::BadHandle(handle.0),
        }
    }

    /// Removes a file and gives it back, unless `in_flight` requests are
    /// queued or in flight: one of them may name the descriptor, which the
    /// next file opened could reuse.
    /// An alias has no file to give back: it stays, and the answer is
    /// [`Error::BadHandle`] (the engine that added it removes it otherwise).
    pub fn remove_idle(&mut self, handle: FileHandle, in_flight: usize) -> Result<File, Error> {
        if in_flight > 0 {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight,
            });
        }
        if self.get(handle).is_some_and(FileEntry::is_alias) {
            return Err(Error::BadHandle(handle.0));
        }
        self.remove(handle)
            .and_then(FileEntry::into_file)
            .ok_or(Error::BadHandle(handle.0))
    }

    /// Removes the entry at `handle`, unless `in_flight` requests are
    /// queued or in flight: an alias leaves its descriptor open, a file of
    /// the table's own is closed.
    pub(crate) fn discard(&mut self, handle: FileHandle, in_flight: usize) -> Result<(), Error> {
        if in_flight > 0 {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight,
            });
        }
        self.remove(handle)
            .map(drop)
            .ok_or(Error::BadHandle(handle.0))
    }

    /// Removes a file and gives it back; `None` if the handle is not open.
    pub fn remove(&mut self, handle: FileHandle) -> Option<FileEntry> {
        let entry = self.slots.get_mut(handle.index())?.take()?;
        self.free.push(handle.0);
        Some(entry)
    }

    /// The entry at `handle`, to change.
    fn entry_mut(&mut self, handle: FileHandle) -> Result<&mut FileEntry, Error> {
        self.slots
            .get_mut(handle.index())
            .and_then(Option::as_mut)
            .ok_or(Error::BadHandle(handle.0))
    }

    /// Sets the caching of the file at `handle`, after checking that it can
    /// take it: a socket, an emulated device's file (`emulated`) or a file
    /// whose filesystem refuses `RWF_DONTCACHE` cannot be uncached, and an
    /// `O_DIRECT` file is uncached already (nothing changes).
    pub(crate) fn set_caching(
        &mut self,
        handle: FileHandle,
        caching: Caching,
        emulated: bool,
    ) -> Result<(), Error> {
        let entry = self.entry_mut(handle)?;
        if caching == Caching::Uncached && !entry.direct {
            let refuse = |reason: String| Error::UncachedRefused {
                path: entry.path.clone(),
                reason,
            };
            if entry.socket {
                return Err(refuse("a socket has no page cache".into()));
            }
            if emulated {
                return Err(refuse(
                    "the emulated device keeps its files' data in the page cache".into(),
                ));
            }
            sys::probe_uncached(entry.fd).map_err(|e| refuse(uncached_refusal(entry.fd, &e)))?;
        }
        entry.caching = caching;
        Ok(())
    }

    /// Makes the writes of the file at `handle` torn-write protected
    /// (`RWF_ATOMIC`), or not, after checking that it can take them: an
    /// `O_DIRECT` file whose filesystem offers them (`statx`), not a socket
    /// or an emulated device's file (`emulated`).
    pub(crate) fn set_atomic_writes(
        &mut self,
        handle: FileHandle,
        atomic: bool,
        emulated: bool,
    ) -> Result<(), Error> {
        let entry = self.entry_mut(handle)?;
        if !atomic {
            entry.write_flags &= !libc::RWF_ATOMIC;
            return Ok(());
        }
        let refuse = |reason: String| Error::AtomicRefused {
            path: entry.path.clone(),
            reason,
        };
        if entry.socket {
            return Err(refuse("a socket has no torn writes to protect".into()));
        }
        if emulated {
            return Err(refuse(
                "the emulated device writes through the page cache".into(),
            ));
        }
        let units = atomic::units_of(entry.fd)
            .map_err(|e| refuse(format!("statx cannot say which it takes: {e}")))?
            .ok_or_else(|| refuse(atomic::refusal(entry.fd, entry.block_device)))?;
        if !entry.direct {
            return Err(refuse(format!(
                "it takes them ({units}) only with O_DIRECT (direct=1): the kernel's units are direct I/O's"
            )));
        }
        entry.write_flags |= libc::RWF_ATOMIC;
        Ok(())
    }

    /// The file behind a handle.
    #[inline]
    pub fn get(&self, handle: FileHandle) -> Option<&FileEntry> {
        self.slots.get(handle.index()).and_then(Option::as_ref)
    }

    /// Number of slots (open or free): the size a registered-file table needs.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Number of open files.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// True when no file is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl FileEntry {
    /// Takes the file out of the entry; `None` for an alias, which owns none.
    pub fn into_file(self) -> Option<File> {
        self.file
    }

    /// Whether it is an alias of a descriptor another table owns.
    pub fn is_alias(&self) -> bool {
        self.file.is_none()
    }
}

/// How [`open`] opens a file: `std::fs::OpenOptions`'s everyday choices
/// and `O_DIRECT`, as fields or as a builder:
///
/// ```
/// use hybrio::file::OpenOptions;
/// let copy_target = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600);
/// assert!(copy_target.truncate && !copy_target.read);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Open for reading.
    pub read: bool,
    /// Open for writing.
    pub write: bool,
    /// Create the file (with [`mode`](OpenOptions::mode)) if it does not
    /// exist; needs `write`.
    pub create: bool,
    /// Cut the file to length 0 when it opens (a copy onto a longer file
    /// would otherwise keep its tail); needs `write`.
    pub truncate: bool,
    /// The permissions of a file `create` makes, before the umask (0o644 by
    /// default).
    pub mode: u32,
    /// `O_DIRECT`: bypass the page cache. Buffers, offsets and lengths must then
    /// be aligned (to the logical block size; [`BufPool`](crate::buf::BufPool)
    /// buffers are 4096-aligned).
    pub direct: bool,
}

impl Default for OpenOptions {
    /// Read only, buffered.
    fn default() -> Self {
        OpenOptions {
            read: true,
            write: false,
            create: false,
            truncate: false,
            mode: 0o644,
            direct: false,
        }
    }
}

impl OpenOptions {
    /// Nothing asked yet: not even reading (unlike [`Default`], which reads).
    pub fn new() -> Self {
        OpenOptions {
            read: false,
            ..OpenOptions::default()
        }
    }

    /// Opens for reading.
    pub fn read(mut self, read: bool) -> Self {
        self.read = read;
        self
    }

    /// Opens for writing.
    pub fn write(mut self, write: bool) -> Self {
        self.write = write;
        self
    }

    /// Creates the file if it does not exist.
    pub fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Cuts the file to length 0 when it opens.
    pub fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = truncate;
        self
    }

    /// The permissions of a created file, before the umask.
    pub fn mode(mut self, mode: u32) -> Self {
        self.mode = mode;
        self
    }

    /// `O_DIRECT`: bypasses the page cache.
    pub fn direct(mut self, direct: bool) -> Self {
        self.direct = direct;
        self
    }
}

/// Opens `path` as `opts` says. Errors carry the op "open" and the path.
pub fn open(path: &Path, opts: &OpenOptions) -> Result<File, Error> {
    let mut options = std::fs::OpenOptions::new();
    options
        .read(opts.read)
        .write(opts.write)
        .create(opts.create)
        .truncate(opts.truncate)
        .mode(opts.mode);
    if opts.direct {
        options.custom_flags(libc::O_DIRECT);
    }
    let file = options.open(path).map_err(|e| Error::io("open", path, e))?;
    // open(2) opens a directory for reading; its every request would fail.
    if sys::file_type(file.as_raw_fd()).is_ok_and(|kind| kind == libc::S_IFDIR) {
        return Err(Error::io(
            "open",
            path,
            std::io::Error::from_raw_os_error(libc::EISDIR),
        ));
    }
    Ok(file)
}

/// Drops the file's clean pages from the page cache (`posix_fadvise(DONTNEED)`
/// over the whole file), as fio's `invalidate=1` does before a job. Dirty pages
/// stay until written back: sync the file first for a cold read.
pub fn drop_page_cache(file: &File, path: &Path) -> Result<(), Error> {
    sys::fadvise(file.as_raw_fd(), 0, 0, sys::Advice::DontNeed)
        .map_err(|e| Error::io("posix_fadvise(DONTNEED)", path, e))
}

/// ext4's online defragmentation (`EXT4_IOC_MOVE_EXT`): the `blocks`
/// filesystem blocks of `file` from block `start` trade places with those
/// of `donor` at the same blocks, so that `file` takes the donor's
/// (contiguous) extents; its data is unchanged. Returns the blocks moved.
/// Both files must be on the same ext4 filesystem, the donor's blocks
/// allocated; any other filesystem answers `ENOTTY`, `path` names `file`
/// in the error.
pub fn move_extents(
    file: &File,
    donor: &File,
    path: &Path,
    start: u64,
    blocks: u64,
) -> Result<u64, Error> {
    sys::move_extents(file.as_raw_fd(), donor.as_raw_fd(), start, start, blocks)
        .map_err(|e| Error::io_at("move extents (EXT4_IOC_MOVE_EXT)", path, start, e))
}

/// How a file will be read, for the kernel's readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessPattern {
    /// No particular order: the default readahead.
    Normal,
    /// Front to back: twice the readahead window.
    Sequential,
    /// Random: no readahead.
    Random,
    /// Read once: the page cache need not keep it (`POSIX_FADV_NOREUSE`;
    /// a hint to its LRU since Linux 6.3, nothing before).
    NoReuse,
}

/// Tells the kernel how the file will be read (`posix_fadvise` over the whole
/// file), as fio's `fadvise_hint` does before a job.
pub fn advise(file: &File, path: &Path, pattern: AccessPattern) -> Result<(), Error> {
    let (advice, op) = match pattern {
        AccessPattern::Normal => (sys::Advice::Normal, "posix_fadvise(NORMAL)"),
        AccessPattern::Sequential => (sys::Advice::Sequential, "posix_fadvise(SEQUENTIAL)"),
        AccessPattern::Random => (sys::Advice::Random, "posix_fadvise(RANDOM)"),
        AccessPattern::NoReuse => (sys::Advice::NoReuse, "posix_fadvise(NOREUSE)"),
    };
    sys::fadvise(file.as_raw_fd(), 0, 0, advice).map_err(|e| Error::io(op, path, e))
}

/// Why a file refuses uncached I/O: its filesystem and the kernel, or the error.
fn uncached_refusal(fd: RawFd, error: &std::io::Error) -> String {
    if error.raw_os_error() != Some(libc::EOPNOTSUPP) {
        return format!("probing it failed: {error}");
    }
    let filesystem = sys::filesystem_type(fd)
        .map(host::filesystem_name)
        .unwrap_or("its filesystem");
    let kernel = host::kernel_release();
    format!(
        "{filesystem} on Linux {kernel} does not take it (ext4, XFS and btrfs do from Linux 6.14; tmpfs does not)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::ScratchFs;

    /// open(2) opens a directory for reading; its requests would each fail
    /// with EISDIR (through the C API, which opens by path, too).
    #[test]
    fn a_directory_is_refused_when_it_opens() {
        let dir = tempfile::tempdir().unwrap();
        for options in [OpenOptions::default(), OpenOptions::new().read(true)] {
            match open(dir.path(), &options) {
                Err(Error::Io { op, source, .. }) => {
                    assert_eq!(op, "open");
                    assert_eq!(source.raw_os_error(), Some(libc::EISDIR));
                }
                other => panic!("a directory opened: {other:?}"),
            }
        }
    }

    #[test]
    fn moving_extents_keeps_the_data_and_moves_the_blocks() {
        use std::os::unix::fs::FileExt;
        // This machine's root ext4 refuses to move extents (EBUSY); a
        // fresh one takes it.
        let fs = match ScratchFs::mount("ext4", 64 << 20) {
            Ok(fs) => fs,
            Err(why) => {
                eprintln!("skipped: no ext4 filesystem can be made here ({why})");
                return;
            }
        };
        let (path, donor_path) = (fs.mount.join("orig"), fs.mount.join("donor"));
        let data: Vec<u8> = (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let rw = OpenOptions {
            read: true,
            write: true,
            create: true,
            direct: false,
            ..Default::default()
        };
        let file = open(&path, &rw).unwrap();
        file.sync_all().unwrap();
        let donor = open(&donor_path, &rw).unwrap();
        sys::fallocate(donor.as_raw_fd(), sys::Fallocate::Allocate, 0, 1 << 20).unwrap();
        let blocks = (1 << 20) / 4096;
        assert_eq!(
            move_extents(&file, &donor, &path, 0, blocks).unwrap(),
            blocks
        );
        let mut back = vec![0; 1 << 20];
        file.read_exact_at(&mut back, 0).unwrap();
        assert!(back == data, "the data changed when its blocks moved");
        // Anywhere else, the ioctl is refused in one error naming the file.
        let elsewhere = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
        let err = move_extents(elsewhere.as_file(), &donor, elsewhere.path(), 0, 1).unwrap_err();
        assert!(err.to_string().contains("EXT4_IOC_MOVE_EXT"), "{err}");
        drop((file, donor));
    }

    #[test]
    fn every_access_pattern_is_advised_and_a_bad_descriptor_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("advised");
        let file = File::create(&path).unwrap();
        for pattern in [
            AccessPattern::Normal,
            AccessPattern::Sequential,
            AccessPattern::Random,
            AccessPattern::NoReuse,
        ] {
            advise(&file, &path, pattern).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
        }
        // A pipe cannot be advised: the error names the call.
        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = File::from(std::os::fd::OwnedFd::from(reader));
        let err = advise(&pipe, Path::new("pipe"), AccessPattern::NoReuse).unwrap_err();
        assert!(err.to_string().contains("posix_fadvise(NOREUSE)"), "{err}");
    }

    #[test]
    fn drop_page_cache_empties_the_cache_of_a_clean_file() {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cached");
        let len = 1 << 20;
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.write_all(&vec![7u8; len]).unwrap();
        // Dirty pages are not dropped: write them back first.
        file.sync_all().unwrap();
        let mut back = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut back).unwrap();
        let pages = len / 4096;
        let resident = |file: &File| sys::resident_pages(file.as_raw_fd(), len).unwrap();
        let before = resident(&file);
        // The kernel's, not hybrio's: most of a file just read is cached.
        assert!(
            before > pages / 2,
            "{before} of {pages} pages cached after a read"
        );
        if sys::is_tmpfs(file.as_raw_fd()).unwrap() {
            // tmpfs pages are the file itself: nothing can be dropped.
            eprintln!("skipping: the temporary directory is on tmpfs");
            return;
        }
        // The kernel skips a page it cannot lock at once (a busy machine's
        // reclaim or writeback may hold one): drop again, a few times.
        let mut after = before;
        for _ in 0..20 {
            drop_page_cache(&file, &path).unwrap();
            after = resident(&file);
            if after <= pages / 4 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            after <= pages / 4,
            "{after} of {pages} pages still cached after DONTNEED"
        );
    }

    #[test]
    fn handles_are_dense_and_reused_lowest_first() {
        let mut table = FileTable::new();
        let open = || File::open("/dev/null").unwrap();
        let a = table.insert(open(), "a".into());
        let b = table.insert(open(), "b".into());
        let c = table.insert(open(), "c".into());
        assert_eq!((a.0, b.0, c.0), (0, 1, 2));
        assert!(table.remove(c).is_some());
        assert!(table.remove(a).is_some());
        assert!(table.remove(a).is_none(), "double remove must fail");
        assert!(table.get(a).is_none());
        assert_eq!(table.insert(open(), "d".into()).0, 0);
        assert_eq!(table.insert(open(), "e".into()).0, 2);
        assert_eq!(table.get(b).unwrap().path(), Path::new("b"));
        assert_eq!(table.len(), 3);
        assert_eq!(table.slot_count(), 3);
    }

    #[test]
    fn open_creates_with_the_asked_access() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let path = dir.path().join("f");
        let missing = open(&path, &OpenOptions::default()).unwrap_err();
        match missing {
            Error::Io { op, path: p, .. } => {
                assert_eq!((op, p.as_path()), ("open", path.as_path()))
            }
            other => panic!("expected Error::Io, got {other:?}"),
        }
        let rw = OpenOptions {
            read: true,
            write: true,
            create: true,
            direct: false,
            ..Default::default()
        };
        let file = open(&path, &rw).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, b"hello", 0).unwrap();
        drop_page_cache(&file, &path).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode & !0o644,
            0,
            "mode {mode:o}: 0644 less the umask at most"
        );
        assert_eq!(
            mode & 0o600,
            0o600,
            "mode {mode:o}: the owner reads and writes"
        );
        let read_only = open(&path, &OpenOptions::default()).unwrap();
        let mut back = [0u8; 5];
        std::os::unix::fs::FileExt::read_exact_at(&read_only, &mut back, 0).unwrap();
        assert_eq!(&back, b"hello");
    }
}
