//! fio's `e4defrag` engine: each write of the job moves the extents under
//! its range from a donor file into the job's file (ext4's online
//! defragmentation, `EXT4_IOC_MOVE_EXT`), as e4defrag(8) does; the data
//! stays what it was. With `inplace=1` the donor's blocks are allocated for
//! each move and freed after it; else the donor holds the whole region from
//! the start. Reads and trims are refused (`EINVAL`), as fio refuses them.

use std::fs::File;
use std::path::PathBuf;

use hybrio::engine::{Engine, EngineCounters, EngineKind, QueueOutcome};
use hybrio::file::{Caching, FileHandle};
use hybrio::request::{Completion, Op, Request};
use rustix::io::Errno;

/// The job's engine, with each write turned into a move of extents.
#[derive(Debug)]
pub struct DefragEngine {
    inner: Box<dyn Engine>,
    donor: File,
    donor_path: PathBuf,
    inplace: bool,
    /// The filesystem's block size (the donor's `st_blksize`).
    block: u64,
    /// The job's files, as the engine took them (for the ioctl).
    files: Vec<Option<(File, PathBuf)>>,
}

impl DefragEngine {
    /// Opens (creating) the donor file and, unless `inplace`, allocates
    /// `start..end` of it.
    pub fn new(
        inner: Box<dyn Engine>,
        donor_path: PathBuf,
        inplace: bool,
        (start, end): (u64, u64),
    ) -> Result<DefragEngine, hybrio::Error> {
        let opts = hybrio::file::OpenOptions {
            read: false,
            write: true,
            create: true,
            direct: false,
            ..Default::default()
        };
        let donor = hybrio::file::open(&donor_path, &opts)?;
        let io = |op, at, e: rustix::io::Errno| hybrio::Error::io_at(op, &donor_path, at, e.into());
        if !inplace && end > start {
            rustix::fs::fallocate(
                &donor,
                rustix::fs::FallocateFlags::empty(),
                start,
                end - start,
            )
            .map_err(|e| io("fallocate the donor", start, e))?;
        }
        let block = rustix::fs::fstat(&donor)
            .map_err(|e| io("fstat the donor", 0, e))?
            .st_blksize
            .max(512) as u64;
        Ok(DefragEngine {
            inner,
            donor,
            donor_path,
            inplace,
            block,
            files: Vec::new(),
        })
    }

    /// Moves the extents under a write's range; bytes moved or a negative errno.
    fn defragment(&mut self, request: &Request) -> i64 {
        if request.op != Op::Write {
            return -i64::from(Errno::INVAL.raw_os_error());
        }
        let Some(Some((file, path))) = self.files.get(request.file.index()) else {
            return -i64::from(Errno::BADF.raw_os_error());
        };
        let len = request.len() as u64;
        let errno = |e: &hybrio::Error| match e {
            hybrio::Error::Io { source, .. } => -i64::from(source.raw_os_error().unwrap_or(5)),
            _ => -5,
        };
        if self.inplace {
            let allocated = rustix::fs::fallocate(
                &self.donor,
                rustix::fs::FallocateFlags::empty(),
                request.offset,
                len,
            );
            if let Err(e) = allocated {
                return -i64::from(e.raw_os_error());
            }
        }
        let first = request.offset / self.block;
        let blocks = (request.offset + len).div_ceil(self.block) - first;
        let result = match hybrio::file::move_extents(file, &self.donor, path, first, blocks) {
            // As fio: the bytes of the write that moved; none at all means
            // the range was past the file's end.
            Ok(0) => -i64::from(Errno::INVAL.raw_os_error()),
            Ok(moved) => (moved * self.block).min(len) as i64,
            Err(e) => errno(&e),
        };
        if self.inplace
            && let Err(e) = rustix::fs::ftruncate(&self.donor, 0)
            && result >= 0
        {
            return -i64::from(e.raw_os_error());
        }
        result
    }
}

impl Engine for DefragEngine {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, hybrio::Error> {
        let own = file
            .try_clone()
            .map_err(|e| hybrio::Error::io("dup", &path, e))?;
        let handle = self.inner.add_file(file, path.clone())?;
        if self.files.len() <= handle.index() {
            self.files.resize_with(handle.index() + 1, || None);
        }
        self.files[handle.index()] = Some((own, path));
        Ok(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, hybrio::Error> {
        if let Some(slot) = self.files.get_mut(handle.index()) {
            *slot = None;
        }
        self.inner.remove_file(handle)
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), hybrio::Error> {
        self.inner.set_caching(handle, caching)
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), hybrio::Error> {
        self.inner.set_atomic_writes(handle, atomic)
    }

    fn queue(&mut self, request: Request) -> QueueOutcome {
        let result = self.defragment(&request);
        QueueOutcome::Completed(request.complete(result))
    }

    fn commit(&mut self) -> Result<usize, hybrio::Error> {
        Ok(0)
    }

    fn reap(
        &mut self,
        _min: usize,
        _max: usize,
        _out: &mut Vec<Completion>,
    ) -> Result<usize, hybrio::Error> {
        Ok(0)
    }

    fn in_flight(&self) -> usize {
        0
    }

    fn is_synchronous(&self) -> bool {
        true
    }

    fn description(&self) -> String {
        format!(
            "e4defrag (EXT4_IOC_MOVE_EXT from {}{})",
            self.donor_path.display(),
            if self.inplace { ", in place" } else { "" }
        )
    }

    fn counters(&self) -> EngineCounters {
        self.inner.counters()
    }
}
