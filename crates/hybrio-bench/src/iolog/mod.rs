//! fio's I/O logs: [`write`](mod@write) records each I/O a job issues
//! (`write_iolog`); [`read`] and [`blktrace`] load what a job replays
//! instead of its own workload (`read_iolog`: fio's iolog versions 2 and
//! 3, or a blktrace capture), into a [`Replay`] the I/O loop takes its
//! I/Os from.

pub mod blktrace;
mod cursor;
pub mod read;
mod steps;
pub mod write;

use std::path::{Path, PathBuf};

use crate::options::JobOptions;
pub use cursor::Cursor;
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

/// The files a replay goes to, as the job's file plans: each as it is (no
/// layout), its region reaching the furthest byte the replay does. A file
/// the replay writes is created if missing, as fio opens it; one it only
/// reads must be there.
pub fn file_plans(
    options: &JobOptions,
    replay: &Replay,
) -> Result<Vec<crate::layout::FilePlan>, IologError> {
    let writes = replay.modifies();
    let unit = options.max_block_size().max(1);
    replay
        .files
        .iter()
        .zip(replay.ends())
        .map(|(path, end)| {
            let have = match std::fs::metadata(path) {
                Ok(meta) => meta.len(),
                Err(_) if writes && options.allow_file_create => {
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .map_err(|source| IologError::Io {
                            op: "create",
                            path: path.clone(),
                            source,
                        })?;
                    0
                }
                Err(source) => {
                    return Err(IologError::Io {
                        op: "open the replayed file",
                        path: path.clone(),
                        source,
                    });
                }
            };
            Ok(crate::layout::FilePlan {
                path: path.clone(),
                size: have.max(end).max(unit),
                start: 0,
            })
        })
        .collect()
}

/// What a replay makes of its job, as fio's `read_iolog` does: it reads
/// and writes as the log does (its files opened to write when the log
/// writes or trims), and a blktrace capture's depth is the job's unless
/// `iodepth` is given.
pub fn shape_job(options: &mut JobOptions, replay: &Replay) {
    use crate::options::RwMode;
    options.rw = match (replay.reads(), replay.modifies()) {
        (_, false) => RwMode::Read,
        (false, true) => RwMode::Write,
        (true, true) => RwMode::ReadWrite,
    };
    if let Some(depth) = replay.depth
        && !options.iodepth_given
    {
        options.iodepth = depth;
        options.iodepth_low = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_shapes_its_job() {
        let replay = Replay {
            files: vec!["f".into()],
            steps: vec![Step {
                delay_us: 0,
                what: What::Io {
                    action: Action::Trim,
                    file: 0,
                    offset: 0,
                    len: 4096,
                },
            }],
            depth: Some(6),
        };
        let mut options = JobOptions::default();
        shape_job(&mut options, &replay);
        assert_eq!(options.rw, crate::options::RwMode::Write);
        assert_eq!(options.iodepth, 6);
        let mut given = JobOptions::default();
        crate::options::find("iodepth")
            .unwrap()
            .apply(&mut given, "2")
            .unwrap();
        shape_job(&mut given, &replay);
        assert_eq!(given.iodepth, 2);
    }
}
