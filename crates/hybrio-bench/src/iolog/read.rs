//! fio's text iologs, versions 2 and 3, read as fio 3.42's `read_iolog`
//! reads them. Version 1 (no header line) is refused, as fio refuses it.
//! A line fio would skip with a message is refused here, naming the line:
//! a replay that quietly leaves I/Os out is not the one asked for.

use std::path::Path;

use super::steps::{
    Action, HEADER_V3, IologError, Replay, Step, What, delay_since, file_path, map_offset,
};
use crate::options::JobOptions;

/// Version 2's header line.
pub const HEADER_V2: &str = "fio version 2 iolog";

/// Reads the iolog `bytes` (from `path`) into the job's replay.
pub fn read(options: &JobOptions, path: &Path, bytes: &[u8]) -> Result<Replay, IologError> {
    let text = std::str::from_utf8(bytes).map_err(|e| IologError::Log {
        path: path.to_path_buf(),
        message: format!(
            "not a text iolog (byte {} is not UTF-8) nor a blktrace capture",
            e.valid_up_to()
        ),
    })?;
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l).unwrap_or_default();
    // fio compares the start of the line only.
    let version = if header.starts_with(HEADER_V2) {
        2
    } else if header.starts_with(HEADER_V3) {
        3
    } else {
        return Err(IologError::Log {
            path: path.to_path_buf(),
            message: format!(
                "not an iolog of version 2 or 3 (its first line is not '{HEADER_V2}' nor '{}'); fio 3.42 no longer replays version 1",
                HEADER_V3
            ),
        });
    };
    let mut reader = Reader {
        options,
        path,
        version,
        replay: Replay::default(),
        names: Vec::new(),
        last_time: 0,
    };
    for (index, line) in lines {
        reader.line(index + 1, line)?;
    }
    let replay = reader.replay;
    if !replay
        .steps
        .iter()
        .any(|s| matches!(s.what, What::Io { .. } | What::WaitUntilMs(_)))
    {
        return Err(IologError::Log {
            path: path.to_path_buf(),
            message: "no I/O to replay in it".into(),
        });
    }
    Ok(replay)
}

struct Reader<'a> {
    options: &'a JobOptions,
    path: &'a Path,
    version: u32,
    replay: Replay,
    /// The names the log added, each with its file's index.
    names: Vec<(String, usize)>,
    /// The time of the line before (version 3).
    last_time: u64,
}

impl Reader<'_> {
    fn bad(&self, line: usize, message: String) -> IologError {
        IologError::Line {
            path: self.path.to_path_buf(),
            line,
            message,
        }
    }

    fn number(&self, line: usize, what: &str, text: &str) -> Result<u64, IologError> {
        text.parse()
            .map_err(|_| self.bad(line, format!("{what} '{text}' is not a whole number")))
    }

    fn line(&mut self, line: usize, text: &str) -> Result<(), IologError> {
        let mut fields: Vec<&str> = text.split_whitespace().collect();
        if fields.is_empty() {
            return Ok(());
        }
        let mut delay_us = 0;
        if self.version == 3 {
            let time = self.number(line, "time", fields[0])?;
            delay_us = delay_since(self.options, self.last_time, time);
            self.last_time = time;
            fields.remove(0);
        }
        let (name, action) = match fields.as_slice() {
            [name, action, ..] => (*name, *action),
            _ => {
                return Err(self.bad(
                    line,
                    format!("expected {}file action [offset length]", self.time_word()),
                ));
            }
        };
        match fields.len() {
            2 => self.file_action(line, name, action, delay_us),
            4 => {
                let offset = self.number(line, "offset", fields[2])?;
                let len = self.number(line, "length", fields[3])?;
                self.io(line, name, action, offset, len, delay_us)
            }
            n => Err(self.bad(
                line,
                format!(
                    "{n} fields{}; expected 2 (file action) or 4 (file action offset length)",
                    if self.version == 3 {
                        " after the time"
                    } else {
                        ""
                    }
                ),
            )),
        }
    }

    fn time_word(&self) -> &'static str {
        if self.version == 3 { "time " } else { "" }
    }

    /// The file a line names: `replay_redirect` whatever it names.
    fn target(&self, name: &str) -> String {
        self.options
            .iolog
            .redirect
            .clone()
            .unwrap_or_else(|| name.to_string())
    }

    fn file_action(
        &mut self,
        line: usize,
        name: &str,
        action: &str,
        delay_us: u64,
    ) -> Result<(), IologError> {
        let name = self.target(name);
        match action {
            "add" => {
                if !self.names.iter().any(|(n, _)| *n == name) {
                    self.replay.files.push(file_path(self.options, &name));
                    self.names.push((name, self.replay.files.len() - 1));
                }
            }
            "open" | "close" => {
                self.index(line, &name)?;
            }
            _ => {
                return Err(self.bad(
                    line,
                    format!("unknown file action '{action}' (add, open, close)"),
                ));
            }
        }
        self.replay.steps.push(Step {
            delay_us,
            what: What::FileAction,
        });
        Ok(())
    }

    fn index(&self, line: usize, name: &str) -> Result<usize, IologError> {
        self.names
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, i)| *i)
            .ok_or_else(|| self.bad(line, format!("file '{name}' was not added before")))
    }

    fn io(
        &mut self,
        line: usize,
        name: &str,
        action: &str,
        offset: u64,
        len: u64,
        delay_us: u64,
    ) -> Result<(), IologError> {
        let skip = self.options.iolog.skip;
        let action = match action {
            "wait" if self.version == 3 => {
                return Err(self.bad(line, "'wait' is version 2's; version 3 has times".into()));
            }
            "wait" => {
                if !self.options.iolog.no_stall {
                    self.replay.steps.push(Step {
                        delay_us: 0,
                        what: What::WaitUntilMs(offset),
                    });
                }
                return Ok(());
            }
            "read" if skip.read => return Ok(()),
            "write" if skip.write => return Ok(()),
            "trim" if skip.trim => return Ok(()),
            "sync" if skip.sync => return Ok(()),
            "read" => Action::Read,
            "write" => Action::Write,
            "trim" => Action::Trim,
            "sync" => Action::Sync,
            "datasync" => Action::Datasync,
            _ => {
                return Err(self.bad(
                    line,
                    format!("unknown action '{action}' (read, write, trim, sync, datasync, wait)"),
                ));
            }
        };
        if len > u64::from(u32::MAX) {
            return Err(self.bad(line, format!("length {len} is past fio's 4 GiB - 1")));
        }
        let file = self.index(line, &self.target(name))?;
        self.replay.steps.push(Step {
            delay_us,
            what: What::Io {
                action,
                file,
                offset: map_offset(self.options, offset),
                len,
            },
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn replay(text: &str, set: impl FnOnce(&mut JobOptions)) -> Result<Replay, IologError> {
        let mut options = JobOptions::default();
        set(&mut options);
        read(&options, Path::new("t.log"), text.as_bytes())
    }

    fn ios(replay: &Replay) -> Vec<(u64, Action, usize, u64, u64)> {
        replay
            .steps
            .iter()
            .filter_map(|s| match s.what {
                What::Io {
                    action,
                    file,
                    offset,
                    len,
                } => Some((s.delay_us, action, file, offset, len)),
                _ => None,
            })
            .collect()
    }

    const V3: &str = "fio version 3 iolog\n0 a add\n5 b add\n10 a open\n110 a write 4096 512\n90 b read 8192 4096\n400 a sync 0 0\n";

    #[test]
    fn version_3_delays_are_the_time_between_lines_as_fio_counts_it() {
        let r = replay(V3, |_| {}).unwrap();
        assert_eq!(r.files, [PathBuf::from("a"), PathBuf::from("b")]);
        // No delay after a time of 0 (fio's first time), none backwards.
        assert_eq!(
            ios(&r),
            [
                (100, Action::Write, 0, 4096, 512),
                (0, Action::Read, 1, 8192, 4096),
                (310, Action::Sync, 0, 0, 0),
            ]
        );
        let halved = replay(V3, |o| o.iolog.time_scale = 200).unwrap();
        assert_eq!(ios(&halved)[0].0, 50);
        let none = replay(V3, |o| o.iolog.no_stall = true).unwrap();
        assert!(ios(&none).iter().all(|io| io.0 == 0));
    }

    #[test]
    fn offsets_scale_and_align_and_files_redirect() {
        let r = replay(V3, |o| {
            o.iolog.scale = 3;
            o.iolog.align = 1024;
            o.iolog.redirect = Some("dev".into());
        })
        .unwrap();
        assert_eq!(r.files, [PathBuf::from("dev")]);
        // 4096 / 3 = 1365, down to 1024; 8192 / 3 = 2730, down to 2048.
        let offsets: Vec<(usize, u64)> = ios(&r).iter().map(|io| (io.2, io.3)).collect();
        assert_eq!(offsets, [(0, 1024), (0, 2048), (0, 0)]);
    }

    #[test]
    fn version_2_waits_and_skips() {
        let text = "fio version 2 iolog\nf add\nf write 0 4096\nf wait 250 0\nf read 0 4096\nf trim 0 4096\n";
        let r = replay(text, |o| o.iolog.skip.read = true).unwrap();
        assert_eq!(r.steps[2].what, What::WaitUntilMs(250));
        let actions: Vec<Action> = ios(&r).iter().map(|io| io.1).collect();
        assert_eq!(actions, [Action::Write, Action::Trim]);
    }

    #[test]
    fn a_bad_line_names_its_file_and_line() {
        let err = replay("fio version 2 iolog\nf add\nf scribble 0 1\n", |_| {}).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.log:3: unknown action 'scribble' (read, write, trim, sync, datasync, wait)"
        );
        let err = replay("f add\n", |_| {}).unwrap_err();
        assert!(err.to_string().contains("version 1"), "{err}");
        let err = replay("fio version 3 iolog\n1 f add\n2 f wait 1 0\n", |_| {}).unwrap_err();
        assert!(err.to_string().starts_with("t.log:3: 'wait'"), "{err}");
    }
}
