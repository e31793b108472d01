//! Opening a job's files: how, and how many at once (`openfiles`).

use std::path::Path;

use hybrio::file::FileHandle;

use crate::layout::JobFile;
use crate::options::JobOptions;

/// The handle of a job's file that is not open now (`openfiles`).
pub(crate) const NOT_OPEN: FileHandle = FileHandle(u32::MAX);

/// `openfiles`: how many of a job's `files` may be open at once, when
/// fewer than all of them.
pub fn open_limit(options: &JobOptions, files: usize) -> Option<usize> {
    options
        .openfiles
        .map(|n| (n as usize).max(1))
        .filter(|&n| n < files)
}

/// How a job opens its files (not the null engine's, which is /dev/null).
pub(crate) fn open_options(options: &JobOptions) -> hybrio::file::OpenOptions {
    let space_engine = crate::options::SpaceEngine::named(&options.ioengine).is_some();
    hybrio::file::OpenOptions {
        read: true,
        // fio's falloc engine opens its files to write whatever the job does.
        write: options.rw.writes() || space_engine,
        create: options.rw.writes() || space_engine,
        direct: options.direct,
        ..Default::default()
    }
}

/// Opens the job's files for the engine (after layout): all of them, or the
/// first `openfiles` (the others when the job reaches them).
pub fn open_files(
    options: &JobOptions,
    files: &[crate::layout::FilePlan],
) -> Result<Vec<JobFile>, hybrio::Error> {
    let limit = open_limit(options, files.len()).unwrap_or(files.len());
    files
        .iter()
        .enumerate()
        .map(|(i, plan)| {
            // The null engine does no I/O, so, as in fio, it needs no real file.
            let (path, opts) = if options.ioengine == "null" {
                (Path::new("/dev/null"), hybrio::file::OpenOptions::default())
            } else {
                (plan.path.as_path(), open_options(options))
            };
            let file = if i < limit {
                Some(hybrio::file::open(path, &opts)?)
            } else {
                None
            };
            Ok(JobFile {
                file,
                path: plan.path.clone(),
                size: plan.size,
                start: plan.start,
            })
        })
        .collect()
}
