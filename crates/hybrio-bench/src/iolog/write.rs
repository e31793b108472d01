//! `write_iolog`: each I/O a job issues, as fio 3.42 logs it (iolog
//! version 3): a header line, an `add` line per file, `open` before a
//! file's first I/O, a line per I/O (time in microseconds since the log
//! began, file, action, offset, length) and `close` when the file is done.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::steps::{Action, HEADER_V3, IologError};

/// Bytes of lines held before they are written (fio holds 8 KiB; how
/// many changes only when lines reach the file, not what they say).
const BUFFERED: usize = 1 << 16;

/// One job's `write_iolog`.
#[derive(Debug)]
pub struct IologWriter {
    path: PathBuf,
    file: File,
    /// Whole lines not yet written: written together, so that jobs that
    /// share the log (clones) never split each other's lines.
    pending: Vec<u8>,
    /// When the log began: its times count from it.
    start: Instant,
    /// Each file's name as fio prints it, and whether its `open` is logged.
    files: Vec<(String, bool)>,
    /// The offset of the last read, write or trim: fio's sync reuses the
    /// request of an I/O before it, and logs that request's stale offset.
    last_offset: u64,
}

impl IologWriter {
    /// Starts the log at `path`, naming `files`. As fio, it appends: jobs
    /// that share a log each add theirs.
    pub fn create(path: &Path, files: &[String]) -> Result<IologWriter, IologError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| IologError::Io {
                op: "open",
                path: path.to_path_buf(),
                source,
            })?;
        let mut writer = IologWriter {
            path: path.to_path_buf(),
            file,
            pending: Vec::with_capacity(BUFFERED),
            start: Instant::now(),
            files: files.iter().map(|name| (name.clone(), false)).collect(),
            last_offset: 0,
        };
        writer.line(format_args!("{HEADER_V3}"))?;
        for i in 0..writer.files.len() {
            let at = writer.micros();
            writer.file_line(at, i, format_args!("add"))?;
        }
        Ok(writer)
    }

    fn micros(&self) -> u128 {
        self.start.elapsed().as_micros()
    }

    fn line(&mut self, text: std::fmt::Arguments<'_>) -> Result<(), IologError> {
        // Writing to a Vec cannot fail.
        let _ = writeln!(self.pending, "{text}");
        if self.pending.len() >= BUFFERED {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), IologError> {
        self.file
            .write_all(&self.pending)
            .map_err(|source| IologError::Io {
                op: "write",
                path: self.path.clone(),
                source,
            })?;
        self.pending.clear();
        Ok(())
    }

    /// A file's line: its time, its name, and what happened to it.
    fn file_line(
        &mut self,
        at: u128,
        file: usize,
        what: std::fmt::Arguments<'_>,
    ) -> Result<(), IologError> {
        let name = std::mem::take(&mut self.files[file].0);
        let written = self.line(format_args!("{at} {name} {what}"));
        self.files[file].0 = name;
        written
    }

    /// Logs an I/O to file `file` (the job's index), with its `open` first
    /// when it is the file's first since it was opened: fio opens a file
    /// when the job first goes to it. A sync's offset and length are fio's
    /// (the last I/O's offset, no length), whatever is passed.
    pub fn io(
        &mut self,
        file: usize,
        action: Action,
        offset: u64,
        len: u64,
    ) -> Result<(), IologError> {
        let at = self.micros();
        let (offset, len) = match action {
            Action::Sync | Action::Datasync => (self.last_offset, 0),
            _ => {
                self.last_offset = offset;
                (offset, len)
            }
        };
        if !self.files[file].1 {
            self.files[file].1 = true;
            self.file_line(at, file, format_args!("open"))?;
        }
        self.file_line(at, file, format_args!("{} {offset} {len}", action.word()))
    }

    /// Logs that the job closed file `file` (if it had logged it open).
    pub fn close(&mut self, file: usize) -> Result<(), IologError> {
        if !std::mem::replace(&mut self.files[file].1, false) {
            return Ok(());
        }
        let at = self.micros();
        self.file_line(at, file, format_args!("close"))
    }

    /// Closes the files still open, in the job's order as fio closes them
    /// at its end, and writes out what is buffered.
    pub fn finish(mut self) -> Result<(), IologError> {
        for i in 0..self.files.len() {
            self.close(i)?;
        }
        self.flush()
    }
}

/// The name fio gives a job's file in its logs: the path as the job names
/// it, without the `./` hybrio puts before a name it makes up itself.
pub fn file_label(path: &Path, made_up: bool) -> String {
    let text = path.display().to_string();
    match text.strip_prefix("./") {
        Some(rest) if made_up => rest.to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_open_before_the_first_io_and_close_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let names = ["a".to_string(), "b".to_string()];
        let mut log = IologWriter::create(&path, &names).unwrap();
        log.io(1, Action::Write, 4096, 512).unwrap();
        log.io(1, Action::Sync, 0, 0).unwrap();
        log.close(0).unwrap();
        log.finish().unwrap();
        // The times aside (each a count of microseconds).
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<String> = text
            .lines()
            .map(|l| match l.split_once(' ') {
                Some((time, rest)) if time.parse::<u64>().is_ok() => rest.to_string(),
                _ => l.to_string(),
            })
            .collect();
        assert_eq!(
            lines,
            [
                "fio version 3 iolog",
                "a add",
                "b add",
                "b open",
                "b write 4096 512",
                "b sync 4096 0",
                "b close"
            ]
        );
    }

    #[test]
    fn made_up_names_lose_their_dot_slash() {
        assert_eq!(file_label(Path::new("./job.0.0"), true), "job.0.0");
        assert_eq!(file_label(Path::new("./given"), false), "./given");
    }
}
