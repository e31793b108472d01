//! The job's files: their names and sizes, and laying them out before the run
//! as fio does (a job that reads needs a file full of data; a job that only
//! writes starts from whatever is there and extends it).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::options::{JobOptions, Preallocate};

/// A file the job will use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePlan {
    /// Where.
    pub path: PathBuf,
    /// The part of it the job does I/O to: from `start`, `size` bytes.
    pub size: u64,
    /// Where that part starts (fio's `offset`, plus `offset_increment` per clone).
    pub start: u64,
}

/// A job's file, opened for its engine (or, past `openfiles`, to be opened
/// when the job reaches it).
#[derive(Debug)]
pub struct JobFile {
    /// The open file; `None` until the job reaches it (`openfiles`).
    pub file: Option<File>,
    /// Its path.
    pub path: PathBuf,
    /// Bytes the job uses.
    pub size: u64,
    /// Where they start.
    pub start: u64,
}

/// Why the files could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Neither a size nor an existing file.
    #[error(
        "job '{job}': {path}: no size given and the file does not exist (set size= or filesize=)"
    )]
    NoSize {
        /// The job.
        job: String,
        /// The file.
        path: String,
    },
    /// A file smaller than one block.
    #[error("job '{job}': {path}: {size} bytes is smaller than the block size {bs}")]
    TooSmall {
        /// The job.
        job: String,
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The block size.
        bs: u64,
    },
    /// A region that ends past the largest offset a file can have.
    #[error(
        "job '{job}': {path}: {} ends past the largest file offset ({max}, 8 EiB)",
        match start {
            Some(start) => format!("the region from offset {start}"),
            None => "the clone's offset (offset + offset_increment)".to_string(),
        },
        max = crate::units::MAX_VALUE
    )]
    PastEnd {
        /// The job.
        job: String,
        /// The file.
        path: String,
        /// Where the region starts, when that is still an offset.
        start: Option<u64>,
    },
    /// A file that does not exist, with `allow_file_create=0`.
    #[error("job '{job}': {path} does not exist, and allow_file_create=0 says not to create it")]
    NoFile {
        /// The job.
        job: String,
        /// The file.
        path: String,
    },
    /// A file of another type than `filetype` says.
    #[error("job '{job}': filetype={said}, but {path} is {found}")]
    OtherType {
        /// The job.
        job: String,
        /// The file.
        path: String,
        /// What `filetype` said.
        said: &'static str,
        /// What the file is.
        found: &'static str,
    },
    /// A system call failed.
    #[error("{0}")]
    Io(#[from] hybrio::Error),
}

/// fio 3.41's `filetype`: what a job says its files are; fio takes it on
/// trust to spare a stat per file. hybrio looks each file up to lay it
/// out anyway, so it checks instead: a file of another type is refused
/// (a file not there yet will be a regular one).
pub fn check_file_type(
    job: &str,
    path: &Path,
    said: crate::options::FileType,
) -> Result<(), LayoutError> {
    use crate::options::FileType;
    use std::os::unix::fs::FileTypeExt;
    if said == FileType::Any {
        return Ok(());
    }
    let found = match std::fs::metadata(path) {
        Err(_) => FileType::File,
        Ok(m) if m.file_type().is_block_device() => FileType::Block,
        Ok(m) if m.file_type().is_char_device() => FileType::Char,
        Ok(m) if m.is_file() => FileType::File,
        Ok(_) => {
            return Err(LayoutError::OtherType {
                job: job.to_string(),
                path: path.display().to_string(),
                said: said.name(),
                found: "neither a file nor a device",
            });
        }
    };
    if said == found {
        return Ok(());
    }
    Err(LayoutError::OtherType {
        job: job.to_string(),
        path: path.display().to_string(),
        said: said.name(),
        found: found.described(),
    })
}

/// fio's `setup_dirs` for `dirstat` and `dirdelete`: makes the directory
/// (0700), unless it exists.
pub fn make_directory(path: &Path) -> Result<(), hybrio::Error> {
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            Err(hybrio::Error::io("mkdir", path, e))
        }
        _ => Ok(()),
    }
}

/// fio's `pre_read`: reads the region of a file once, so that the job
/// finds it in the page cache.
pub fn pre_read(plan: &FilePlan) -> Result<(), hybrio::Error> {
    use std::io::{Read, Seek, SeekFrom};
    let io_error = |op, offset, e| hybrio::Error::io_at(op, &plan.path, offset, e);
    let mut file = File::open(&plan.path).map_err(|e| io_error("open", 0, e))?;
    file.seek(SeekFrom::Start(plan.start))
        .map_err(|e| io_error("seek", plan.start, e))?;
    let mut chunk = vec![0u8; 1 << 20];
    let mut done = 0;
    while done < plan.size {
        let want = (plan.size - done).min(chunk.len() as u64) as usize;
        let got = file
            .read(&mut chunk[..want])
            .map_err(|e| io_error("read", plan.start + done, e))?;
        if got == 0 {
            break;
        }
        done += got as u64;
    }
    Ok(())
}

/// Names and sizes the job's files: `filename` (`:`-separated, `\:` escapes a
/// colon) under `directory`, or `directory/jobname.jobnum.0`.
pub fn plan_files(options: &JobOptions, job_number: u32) -> Result<Vec<FilePlan>, LayoutError> {
    size_files(options, file_names(options, job_number), job_number)
}

/// The job's file paths, without looking at the files (they may not exist yet).
pub fn file_names(options: &JobOptions, job_number: u32) -> Vec<PathBuf> {
    let directory = options.directory.as_deref().map(Path::new);
    match &options.filename {
        Some(list) => split_filenames(list)
            .into_iter()
            .map(|name| match directory {
                Some(dir) if Path::new(&name).is_relative() => dir.join(name),
                _ => PathBuf::from(name),
            })
            .collect(),
        // fio's filename_format, `$jobname.$jobnum.$filenum` unless set,
        // for each of the job's `nrfiles` files.
        None => (0..options.nrfiles.max(1))
            .map(|filenum| {
                let name = options
                    .filename_format
                    .as_deref()
                    .unwrap_or("$jobname.$jobnum.$filenum")
                    .replace("$jobname", &options.name)
                    .replace("$jobnum", &job_number.to_string())
                    .replace("$filenum", &filenum.to_string())
                    // fio's client number; under MPI the rank (0 elsewhere).
                    .replace(
                        "$clientuid",
                        &crate::jobfile::launcher_rank()
                            .map_or(0, |(rank, _)| rank)
                            .to_string(),
                    );
                let dir = directory.unwrap_or(Path::new("."));
                if Path::new(&name).is_absolute() {
                    PathBuf::from(name)
                } else {
                    dir.join(name)
                }
            })
            .collect(),
    }
}

/// What `fill_device` fills: a block device's whole size, or a share (one
/// of `count` files) of the free space of the filesystem a file is on
/// (`statvfs`, the space an unprivileged writer may take).
fn fill_size(path: &Path, count: u64) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.file_type().is_block_device()
    {
        let file = File::open(path).ok()?;
        return std::io::Seek::seek(&mut &file, std::io::SeekFrom::End(0)).ok();
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let fs = rustix::fs::statvfs(dir).ok()?;
    let existing = std::fs::metadata(path).map_or(0, |m| m.len());
    Some((fs.f_bavail * fs.f_frsize / count.max(1)) + existing)
}

/// Sizes the job's files; see [`plan_files`].
fn size_files(
    options: &JobOptions,
    names: Vec<PathBuf>,
    clone: u32,
) -> Result<Vec<FilePlan>, LayoutError> {
    let count = names.len() as u64;
    names
        .into_iter()
        .map(|path| {
            let existing = || {
                std::fs::metadata(&path)
                    .map(|m| m.len())
                    .map_err(|_| LayoutError::NoSize {
                        job: options.name.clone(),
                        path: path.display().to_string(),
                    })
            };
            // fio's offset: bytes, or a share of the file (`offset=50%`);
            // each clone further on by offset_increment.
            let offset = match options.offset {
                crate::options::Offset::Bytes(bytes) => bytes,
                crate::options::Offset::Percent(pct) => {
                    let whole = match (options.filesize, options.size) {
                        (Some(size), _) => size,
                        (None, Some(total)) => total / count,
                        (None, None) => existing()?,
                    };
                    // Aligned down to the block size, as fio aligns it.
                    let at = (whole as f64 * pct / 100.0) as u64;
                    at - at % options.min_block_size().max(1)
                }
            };
            let past_end = |start: Option<u64>| LayoutError::PastEnd {
                job: options.name.clone(),
                path: path.display().to_string(),
                start,
            };
            let start = u64::from(clone)
                .checked_mul(options.offset_increment)
                .and_then(|increment| increment.checked_add(offset))
                .filter(|&start| start <= crate::units::MAX_VALUE)
                .ok_or_else(|| past_end(None))?;
            let size = match (options.filesize, options.size) {
                (Some(size), _) => size,
                (None, Some(total)) => total / count,
                // fill_device: the free space of the filesystem the file is
                // on (shared by the job's files), or all of a device.
                (None, None) if options.fill_device => fill_size(&path, count)
                    .ok_or_else(|| LayoutError::NoSize {
                        job: options.name.clone(),
                        path: path.display().to_string(),
                    })?
                    .saturating_sub(start),
                // An existing file: what lies past the start.
                (None, None) => existing()?.saturating_sub(start),
            };
            // size=N%: that share of the file, whole blocks.
            let size = match options.size_percent {
                Some(pct) => {
                    let whole = match options.filesize {
                        Some(size) => size,
                        None => existing()?,
                    };
                    let share = (whole as f64 * pct / 100.0) as u64;
                    share - share % options.min_block_size().max(1)
                }
                None => size,
            };
            // With offset=N% the region is what is left of the file past it.
            let size = match options.offset {
                crate::options::Offset::Percent(_) => size.saturating_sub(start),
                crate::options::Offset::Bytes(_) => size,
            };
            // As fio ("you need to specify valid offset="): no file can
            // reach past the largest offset, 8 EiB.
            if start
                .checked_add(size)
                .is_none_or(|end| end > crate::units::MAX_VALUE)
            {
                return Err(past_end(Some(start)));
            }
            let bs = options.min_block_size();
            if size < bs && options.ioengine != "null" {
                return Err(LayoutError::TooSmall {
                    job: options.name.clone(),
                    path: path.display().to_string(),
                    size,
                    bs,
                });
            }
            Ok(FilePlan { path, size, start })
        })
        .collect()
}

/// A `:`-separated list of names (`\:` keeps a colon in a name), as fio splits
/// `filename` and `read_iolog`.
pub(crate) fn split_filenames(list: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => names
                .last_mut()
                .expect("never empty")
                .push(chars.next().expect("peeked")),
            ':' => names.push(String::new()),
            c => names.last_mut().expect("never empty").push(c),
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// Gives a new file a job writes its space as fio's `fallocate` says:
/// from 0 to the end of the job's region.
fn preallocate_file(
    file: &File,
    plan: &FilePlan,
    preallocate: Preallocate,
) -> Result<(), hybrio::Error> {
    use rustix::fs::FallocateFlags;
    let end = plan.start + plan.size;
    let done = match preallocate {
        Preallocate::None => return Ok(()),
        Preallocate::Allocate => rustix::fs::fallocate(file, FallocateFlags::empty(), 0, end),
        Preallocate::KeepSize => rustix::fs::fallocate(file, FallocateFlags::KEEP_SIZE, 0, end),
        Preallocate::Truncate => rustix::fs::ftruncate(file, end),
    };
    done.map_err(|e| hybrio::Error::io("fallocate", &plan.path, e.into()))
}

/// Makes a file ready: a job that reads gets a file holding at least `size`
/// bytes of data (written now if missing); a write-only job gets the file
/// created, its space given as `preallocate` says (fio's `fallocate`).
/// Returns true when data was written. Block devices and character devices
/// are used as they are.
pub fn lay_out(
    plan: &FilePlan,
    job_reads: bool,
    preallocate: Preallocate,
) -> Result<bool, hybrio::Error> {
    let existing = std::fs::metadata(&plan.path).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        return Ok(false);
    }
    let have = existing.map_or(0, |m| m.len());
    if !job_reads {
        if have == 0 {
            let opts = hybrio::file::OpenOptions {
                read: false,
                write: true,
                create: true,
                direct: false,
                ..Default::default()
            };
            let file = hybrio::file::open(&plan.path, &opts)?;
            preallocate_file(&file, plan, preallocate)?;
        }
        return Ok(false);
    }
    // The data must reach the region's end; what lies before the file's
    // current end is left as it is (data before `offset` is not touched).
    let end = plan.start + plan.size;
    if have >= end {
        return Ok(false);
    }
    let opts = hybrio::file::OpenOptions {
        read: false,
        write: true,
        create: true,
        direct: false,
        ..Default::default()
    };
    let mut file = hybrio::file::open(&plan.path, &opts)?;
    let io_error = |op, offset, e| hybrio::Error::io_at(op, &plan.path, offset, e);
    file.set_len(end)
        .map_err(|e| io_error("truncate", end, e))?;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(have))
        .map_err(|e| io_error("seek", have, e))?;
    let mut rng = crate::offsets::Rng::new(end);
    let mut chunk = vec![0u8; 1 << 20];
    let mut written = have;
    while written < end {
        if hybrio::interrupt::requested() {
            let interrupted = std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted while laying out the file",
            );
            return Err(io_error("write", written, interrupted));
        }
        for word in chunk.chunks_mut(8) {
            word.copy_from_slice(&rng.next_u64().to_ne_bytes());
        }
        let len = (end - written).min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..len])
            .map_err(|e| io_error("write", written, e))?;
        written += len as u64;
    }
    file.sync_all().map_err(|e| io_error("fsync", 0, e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_follow_fio() {
        let job = JobOptions {
            name: "t".into(),
            size: Some(8 << 20),
            directory: Some("/d".into()),
            ..JobOptions::default()
        };
        assert_eq!(
            plan_files(&job, 3).unwrap(),
            vec![FilePlan {
                path: "/d/t.3.0".into(),
                size: 8 << 20,
                start: 0,
            }]
        );
        let job = JobOptions {
            filename: Some("a:b\\:c:/abs".into()),
            ..job
        };
        let plans = plan_files(&job, 0).unwrap();
        let paths: Vec<_> = plans.iter().map(|p| p.path.display().to_string()).collect();
        assert_eq!(paths, ["/d/a", "/d/b:c", "/abs"]);
        assert!(plans.iter().all(|p| p.size == (8 << 20) / 3));
    }

    #[test]
    fn read_jobs_get_data_written_jobs_get_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let plan = FilePlan {
            path: dir.path().join("r"),
            size: 3 << 20,
            start: 0,
        };
        assert!(lay_out(&plan, true, Preallocate::None).unwrap());
        assert_eq!(std::fs::metadata(&plan.path).unwrap().len(), 3 << 20);
        let data = std::fs::read(&plan.path).unwrap();
        assert!(
            data.iter().filter(|&&b| b == 0).count() < data.len() / 100,
            "layout must write data, not holes"
        );
        assert!(
            !lay_out(&plan, true, Preallocate::None).unwrap(),
            "an existing file of the right size is reused"
        );
        let plan = FilePlan {
            path: dir.path().join("w"),
            size: 1 << 20,
            start: 0,
        };
        assert!(!lay_out(&plan, false, Preallocate::None).unwrap());
        assert_eq!(std::fs::metadata(&plan.path).unwrap().len(), 0);
    }

    #[test]
    fn sizes_are_checked() {
        let job = JobOptions {
            name: "t".into(),
            filename: Some("/nonexistent/x".into()),
            ..JobOptions::default()
        };
        assert!(matches!(
            plan_files(&job, 0),
            Err(LayoutError::NoSize { .. })
        ));
        let job = JobOptions {
            size: Some(1000),
            ..job
        };
        assert!(matches!(
            plan_files(&job, 0),
            Err(LayoutError::TooSmall { .. })
        ));
    }

    #[test]
    fn laying_out_a_region_past_the_end_leaves_what_is_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        let plan = FilePlan {
            path: path.clone(),
            size: 8192,
            start: 8192,
        };
        assert!(lay_out(&plan, true, Preallocate::None).unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 16384);
        assert!(
            bytes[..4096].iter().all(|&b| b == 7),
            "the old data is untouched"
        );
        assert!(
            bytes[8192..].iter().any(|&b| b != 0),
            "the region holds data"
        );
        assert!(
            !lay_out(&plan, true, Preallocate::None).unwrap(),
            "nothing more to write"
        );
    }
}
