//! fio's I/O logs: [`write`](mod@write) records each I/O a job issues
//! (`write_iolog`); [`read`] and [`blktrace`] load what a job replays
//! instead of its own workload (`read_iolog`: fio's iolog versions 2 and
//! 3, or a blktrace capture), into a [`Replay`] the I/O loop takes its
//! I/Os from.

pub mod blktrace;
pub mod read;
mod steps;
pub mod write;

use std::path::{Path, PathBuf};

use crate::options::JobOptions;
pub use steps::{Action, IologError, Replay, Step, What};
pub use write::IologWriter;

/// The log clone `clone` (from 0) of the job replays: `read_iolog` names
/// one, or one per clone (`:`-separated, taken in turn). A blktrace list
/// with `merge_blktrace_file` is merged into that file first.
pub fn log_for(options: &JobOptions, clone: u32) -> Option<Result<PathBuf, IologError>> {
    let list = options.iolog.read.as_deref()?;
    if let Some(merged) = &options.iolog.merge_file {
        let inputs: Vec<PathBuf> = crate::layout::split_filenames(list)
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let merged = PathBuf::from(merged);
        return Some(blktrace::merge(options, &inputs, &merged).map(|()| merged));
    }
    let names = crate::layout::split_filenames(list);
    if names.is_empty() {
        return None;
    }
    Some(Ok(PathBuf::from(&names[clone as usize % names.len()])))
}

/// Loads what clone `clone` of the job replays, if it replays.
pub fn load(options: &JobOptions, clone: u32) -> Result<Option<Replay>, IologError> {
    let Some(path) = log_for(options, clone) else {
        return Ok(None);
    };
    let path = path?;
    let bytes = read_all(&path)?;
    let replay = if blktrace::is_blktrace(&bytes) {
        blktrace::read(options, &path, &bytes)?
    } else {
        read::read(options, &path, &bytes)?
    };
    Ok(Some(replay))
}

/// The whole log; `-` is standard input, as in fio.
fn read_all(path: &Path) -> Result<Vec<u8>, IologError> {
    let wrap = |source| IologError::Io {
        op: "read",
        path: path.to_path_buf(),
        source,
    };
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map_err(wrap)?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(wrap)
}
