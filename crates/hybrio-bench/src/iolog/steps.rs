//! What the rest of the module shares: the actions a log records, the
//! steps a replay takes, and why a log cannot be written or replayed.

use std::path::{Path, PathBuf};

use crate::options::JobOptions;

/// The first line of an iolog fio 3.42 writes (version 3).
pub const HEADER_V3: &str = "fio version 3 iolog";

/// What a logged I/O did (fio's `io_ddir_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A trim.
    Trim,
    /// An fsync.
    Sync,
    /// An fdatasync.
    Datasync,
}

impl Action {
    /// The word fio writes for it.
    pub fn word(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Write => "write",
            Action::Trim => "trim",
            Action::Sync => "sync",
            Action::Datasync => "datasync",
        }
    }
}

/// Why a log could not be written or replayed.
#[derive(Debug, thiserror::Error)]
pub enum IologError {
    /// A system call on a log failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The log.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A line of a text log that cannot be replayed.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The log.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A blktrace record that cannot be read.
    #[error("{} at byte {offset}: {message}", path.display())]
    Trace {
        /// The capture.
        path: PathBuf,
        /// Where the record starts.
        offset: u64,
        /// What is wrong with it.
        message: String,
    },
    /// A log as a whole that cannot be replayed.
    #[error("{}: {message}", path.display())]
    Log {
        /// The log.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// One step of a replay, with the time to wait before it (microseconds
/// after the I/O before it was issued, as fio's `iolog_delay` waits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Microseconds to wait first.
    pub delay_us: u64,
    /// What to do then.
    pub what: What,
}

/// What a replay step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// An I/O to the replay's file `file`.
    Io {
        /// Read, write, trim, sync or datasync.
        action: Action,
        /// Index into [`Replay::files`].
        file: usize,
        /// Where (bytes).
        offset: u64,
        /// How much (bytes; 0 for a sync).
        len: u64,
    },
    /// Nothing but its delay: a file opened, added or closed (the replay's
    /// files stay open from its start to its end).
    FileAction,
    /// Version 2's `wait`: until this many milliseconds after the job began.
    WaitUntilMs(u64),
}

/// What a job replays: its files and its steps, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replay {
    /// The files, as the log names them (or `replay_redirect`).
    pub files: Vec<PathBuf>,
    /// The steps.
    pub steps: Vec<Step>,
    /// The queue depth a blktrace capture shows (fio replays at it unless
    /// `iodepth` is given).
    pub depth: Option<u32>,
}

impl Replay {
    /// The largest I/O, which the job's buffers must hold.
    pub fn largest(&self) -> u64 {
        self.ios().map(|(_, _, _, len)| len).max().unwrap_or(0)
    }

    /// Whether any step writes or trims (the files are opened to write).
    pub fn modifies(&self) -> bool {
        self.ios()
            .any(|(action, ..)| matches!(action, Action::Write | Action::Trim))
    }

    /// Whether any step reads.
    pub fn reads(&self) -> bool {
        self.ios().any(|(action, ..)| action == Action::Read)
    }

    /// Each file's end: the furthest byte an I/O reaches in it.
    pub fn ends(&self) -> Vec<u64> {
        let mut ends = vec![0; self.files.len()];
        for (_, file, offset, len) in self.ios() {
            ends[file] = ends[file].max(offset.saturating_add(len));
        }
        ends
    }

    fn ios(&self) -> impl Iterator<Item = (Action, usize, u64, u64)> + '_ {
        self.steps.iter().filter_map(|step| match step.what {
            What::Io {
                action,
                file,
                offset,
                len,
            } => Some((action, file, offset, len)),
            _ => None,
        })
    }
}

/// The time between two log times, in the log's unit, as fio's
/// `delay_since_ttime` has it: none before the first time that is not 0,
/// none backwards, and none with `replay_no_stall`; else scaled by
/// `replay_time_scale`.
pub(crate) fn delay_since(options: &JobOptions, last: u64, time: u64) -> u64 {
    if last == 0 || options.iolog.no_stall || time < last {
        0
    } else if options.iolog.time_scale == 100 {
        time - last
    } else {
        ((time - last) as f64 * (100.0 / f64::from(options.iolog.time_scale))) as u64
    }
}

/// A replayed offset, as fio maps it: divided by `replay_scale`, then
/// rounded down to `replay_align`.
pub(crate) fn map_offset(options: &JobOptions, offset: u64) -> u64 {
    let scaled = match options.iolog.scale {
        0 => offset,
        scale => offset / scale,
    };
    match options.iolog.align {
        0 => scaled,
        align => scaled & !(align - 1),
    }
}

/// Where a file the log names lies: under `directory` when it is relative
/// and the job has one, as fio adds a job's files.
pub(crate) fn file_path(options: &JobOptions, name: &str) -> PathBuf {
    match &options.directory {
        Some(dir) if Path::new(name).is_relative() => Path::new(dir).join(name),
        _ => PathBuf::from(name),
    }
}
