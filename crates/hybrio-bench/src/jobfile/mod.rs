//! Reading jobs: fio's job-file language and its command-line form, into
//! ordered sections of raw `key=value` entries, then into typed jobs through
//! the option table. Both forms go through the same code after tokenising.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::options::{self, JobOptions, Kind};
use crate::units::ValueError;

/// Where an option came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The command line.
    CommandLine,
    /// A job file and line (1-based).
    File {
        /// The job file.
        path: PathBuf,
        /// Its line.
        line: usize,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::CommandLine => f.write_str("command line"),
            Origin::File { path, line } => write!(f, "{}:{}", path.display(), line),
        }
    }
}

/// A mistake in the jobs, in one line naming where it is.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// An option nobody knows.
    #[error("unknown option '{name}' ({origin}){}", suggestion.map(|s| format!("; did you mean '{s}'?")).unwrap_or_default())]
    UnknownOption {
        /// What was written.
        name: String,
        /// Where.
        origin: Origin,
        /// The nearest known option.
        suggestion: Option<&'static str>,
    },
    /// A value that does not fit its option.
    #[error("option '{name}' ({origin}): {source}")]
    BadValue {
        /// The option.
        name: String,
        /// Where.
        origin: Origin,
        /// What is wrong.
        source: ValueError,
    },
    /// A line that is not an option, a section header or a comment.
    #[error("{origin}: {message}")]
    Syntax {
        /// Where.
        origin: Origin,
        /// What is wrong.
        message: String,
    },
    /// A job file that cannot be read.
    #[error("cannot read job file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Options that are each fine but do not go together.
    #[error("job '{job}': {message}")]
    Invalid {
        /// The job.
        job: String,
        /// What is wrong.
        message: String,
    },
    /// Nothing to run.
    #[error("no jobs defined (give --name=JOB with options, or a job file)")]
    NoJobs,
}

/// One `key[=value]` as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The option name as written.
    pub key: String,
    /// The value, `None` for a bare switch.
    pub value: Option<String>,
    /// Where it was written.
    pub origin: Origin,
}

/// A `[section]`: either `global` or a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section name.
    pub name: String,
    /// Its entries, in order.
    pub entries: Vec<Entry>,
}

impl Section {
    /// True for `[global]`.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Splits a job file into sections.
pub fn parse_job_file(path: &Path, text: &str) -> Result<Vec<Section>, JobError> {
    let mut sections: Vec<Section> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let origin = Origin::File {
            path: path.to_path_buf(),
            line: index + 1,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let name = header
                .strip_suffix(']')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| JobError::Syntax {
                    origin,
                    message: format!("malformed section header '{line}'"),
                })?;
            sections.push(Section {
                name: name.to_string(),
                entries: Vec::new(),
            });
            continue;
        }
        let entry = split_entry(line, origin.clone());
        match sections.last_mut() {
            Some(section) => section.entries.push(entry),
            None => {
                return Err(JobError::Syntax {
                    origin,
                    message: format!("option '{}' appears before any [section]", entry.key),
                });
            }
        }
    }
    Ok(sections)
}

fn split_entry(text: &str, origin: Origin) -> Entry {
    match text.split_once('=') {
        Some((key, value)) => Entry {
            key: key.trim().to_string(),
            value: Some(value.trim().to_string()),
            origin,
        },
        None => Entry {
            key: text.trim().to_string(),
            value: None,
            origin,
        },
    }
}

/// Turns command-line job options (`--name=a --rw=read --name=b ...`) into
/// sections: options before the first `--name` form a leading `global` section.
pub fn sections_from_args<'a>(args: impl IntoIterator<Item = &'a str>) -> Vec<Section> {
    let mut sections = vec![Section {
        name: "global".into(),
        entries: Vec::new(),
    }];
    for arg in args {
        let entry = split_entry(arg.trim_start_matches('-'), Origin::CommandLine);
        if entry.key == "name" {
            let name = entry.value.clone().unwrap_or_default();
            sections.push(Section {
                name,
                entries: Vec::new(),
            });
        }
        sections
            .last_mut()
            .expect("never empty")
            .entries
            .push(entry);
    }
    sections.retain(|s| !(s.is_global() && s.entries.is_empty()));
    sections
}

/// One job to run: its typed options and what its own section set.
#[derive(Debug, Clone, PartialEq)]
pub struct JobDef {
    /// The typed options.
    pub options: JobOptions,
    /// The options its own section set, in order ("job options" in JSON).
    pub own_options: Vec<(String, String)>,
}

/// Options that `[global]` sections set, in order ("global options" in JSON).
pub type GlobalOptions = Vec<(String, String)>;

/// Applies `[global]` sections to the jobs below them, then each job's own
/// options, checking every option against the table.
pub fn resolve(sections: &[Section]) -> Result<(Vec<JobDef>, GlobalOptions), JobError> {
    let mut defaults = JobOptions::default();
    let mut globals = Vec::new();
    let mut jobs = Vec::new();
    for section in sections {
        if section.is_global() {
            for entry in &section.entries {
                apply_entry(&mut defaults, entry)?;
                globals.push((entry.key.clone(), entry.value.clone().unwrap_or_default()));
            }
            continue;
        }
        let mut job = defaults.clone();
        job.name = section.name.clone();
        let mut own = Vec::new();
        for entry in &section.entries {
            apply_entry(&mut job, entry)?;
            // As fio: `--name=` given on the command line is one of the job's options.
            own.push((entry.key.clone(), entry.value.clone().unwrap_or_default()));
        }
        validate(&job)?;
        jobs.push(JobDef {
            options: job,
            own_options: own,
        });
    }
    if jobs.is_empty() {
        return Err(JobError::NoJobs);
    }
    Ok((jobs, globals))
}

fn apply_entry(job: &mut JobOptions, entry: &Entry) -> Result<(), JobError> {
    let option = options::find(&entry.key).ok_or_else(|| JobError::UnknownOption {
        name: entry.key.clone(),
        origin: entry.origin.clone(),
        suggestion: options::suggest(&entry.key),
    })?;
    let bad = |source| JobError::BadValue {
        name: entry.key.clone(),
        origin: entry.origin.clone(),
        source,
    };
    let value = match (&entry.value, option.kind) {
        (Some(v), _) => v.as_str(),
        (None, Kind::Bool) => "1",
        (None, _) => return Err(bad(ValueError::Int(String::new())).with_message("needs a value")),
    };
    option.apply(job, value).map_err(bad)
}

impl JobError {
    fn with_message(self, message: &str) -> JobError {
        match self {
            JobError::BadValue { name, origin, .. } => JobError::Syntax {
                origin,
                message: format!("option '{name}' {message}"),
            },
            other => other,
        }
    }
}

fn validate(job: &JobOptions) -> Result<(), JobError> {
    let invalid = |message: String| JobError::Invalid {
        job: job.name.clone(),
        message,
    };
    if job.filename.is_none()
        && job.directory.is_none()
        && job.size.is_none()
        && job.filesize.is_none()
    {
        return Err(invalid(
            "give size= (or filesize=), or a filename= of an existing file".into(),
        ));
    }
    if job.direct && job.bs.iter().any(|bs| bs % 512 != 0) {
        return Err(invalid(format!(
            "direct=1 needs block sizes that are multiples of 512, got bs={}",
            job.bs[0]
        )));
    }
    if job.time_based && job.runtime.is_none() {
        return Err(invalid("time_based needs runtime=".into()));
    }
    // With O_DIRECT there is no page cache to drop; the emulated device must
    // keep its data cached, or the real disk would sit under it. Either way
    // the option could only mislead, so it is refused rather than ignored.
    if job.drop_cache_after.is_some() && job.direct {
        return Err(invalid(
            "drop_cache_after has nothing to drop with direct=1 (O_DIRECT bypasses the page cache)"
                .into(),
        ));
    }
    if job.drop_cache_after.is_some() && job.completion_latency.is_some() {
        return Err(invalid(
            "drop_cache_after does not apply to the emulated device (completion_latency), whose data stays in the page cache".into(),
        ));
    }
    if job.hipri && !job.direct {
        return Err(invalid(
            "hipri needs direct=1 (polled completions only exist for O_DIRECT)".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::RwMode;

    fn file(text: &str) -> Result<Vec<JobDef>, JobError> {
        resolve(&parse_job_file(Path::new("t.fio"), text)?).map(|(jobs, _)| jobs)
    }

    #[test]
    fn globals_apply_only_to_jobs_below_them() {
        let jobs = file(
            "; comment\n[global]\nbs=8k\nsize=1m\n\n[a]\nrw=randread\n# another\n[global]\niodepth=4\n[b]\ntime_based\nruntime=2\n",
        )
        .unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(
            (
                jobs[0].options.name.as_str(),
                jobs[0].options.bs[0],
                jobs[0].options.iodepth
            ),
            ("a", 8192, 1)
        );
        assert_eq!(jobs[0].options.rw, RwMode::RandRead);
        assert_eq!(
            (jobs[1].options.iodepth, jobs[1].options.time_based),
            (4, true)
        );
        assert_eq!(
            jobs[1].own_options,
            vec![
                ("time_based".to_string(), String::new()),
                ("runtime".into(), "2".into())
            ]
        );
    }

    #[test]
    fn command_line_form_equals_job_file() {
        let args = [
            "--bs=8k",
            "--name=a",
            "--rw=write",
            "--size=1m",
            "--name=b",
            "--size=2m",
        ];
        let (jobs, globals) = resolve(&sections_from_args(args)).unwrap();
        assert_eq!(globals, vec![("bs".to_string(), "8k".to_string())]);
        assert_eq!(jobs[0].options.rw, RwMode::Write);
        assert_eq!(jobs[1].options.rw, RwMode::Read);
        assert_eq!(jobs[1].options.bs[1], 8192);
        assert_eq!(jobs[1].options.size, Some(2 << 20));
    }

    #[test]
    fn errors_name_file_line_and_option() {
        let err = file("[a]\nsize=1m\nbs=abc\n").unwrap_err().to_string();
        assert!(
            err.contains("'bs'") && err.contains("t.fio:3") && err.contains("abc"),
            "{err}"
        );
        let err = file("[a]\nsize=1m\niodepht=4\n").unwrap_err().to_string();
        assert!(
            err.contains("unknown option 'iodepht'") && err.contains("did you mean 'iodepth'"),
            "{err}"
        );
        let err = file("size=1m\n[a]\n").unwrap_err().to_string();
        assert!(
            err.contains("t.fio:1") && err.contains("before any [section]"),
            "{err}"
        );
        let err = file("[a\nsize=1m\n").unwrap_err().to_string();
        assert!(err.contains("malformed section header"), "{err}");
        assert!(matches!(file("[global]\nbs=4k\n"), Err(JobError::NoJobs)));
        assert!(
            file("[a]\nrw=read\n")
                .unwrap_err()
                .to_string()
                .contains("size=")
        );
        assert!(
            file("[a]\nsize=1m\nbs\n").is_err(),
            "a bare non-boolean option needs a value"
        );
        assert!(!err.contains('\n'));
    }

    #[test]
    fn drop_cache_after_is_refused_where_there_is_no_cache_to_drop() {
        assert!(file("[a]\nsize=1m\ndrop_cache_after=1\n").is_ok());
        let err = file("[a]\nsize=1m\ndirect=1\ndrop_cache_after=1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("drop_cache_after") && err.contains("direct=1"),
            "{err}"
        );
        let err = file("[a]\nsize=1m\ncompletion_latency=30us\ndrop_cache_after=1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("completion_latency"), "{err}");
        let err = file("[a]\nsize=1m\nstartdelay=1-5\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'startdelay'") && err.contains("t.fio:3"),
            "{err}"
        );
    }
}
