//! Reading jobs: fio's job-file language and its command-line form, into
//! ordered sections of `key=value` entries (values expanded, includes
//! followed), then into typed jobs through the option table. Both forms go
//! through the same code after tokenising.
//!
//! As in fio: `;` and `#` start a comment anywhere on a line; `include FILE`
//! inside a section reads FILE's options into it (FILE may not start
//! sections); each job file starts from the command line's global options,
//! not from another file's `[global]`.

mod expand;

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

pub use expand::{ExpandError, Keywords, launcher_rank};

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
    /// An option fio has and hybrio does not implement, and why.
    #[error("option '{name}' ({origin}): fio has this; hybrio does not, because {reason}")]
    Unsupported {
        /// The option.
        name: String,
        /// Where.
        origin: Origin,
        /// Why hybrio lacks it (`options::lacking_reason`).
        reason: Cow<'static, str>,
    },
    /// A value whose `${VAR}`, keyword or arithmetic cannot be expanded.
    #[error("option '{name}' ({origin}): {source}")]
    Expand {
        /// The option.
        name: String,
        /// Where.
        origin: Origin,
        /// What is wrong.
        source: ExpandError,
    },
    /// `--section=NAME` names no job.
    #[error("--section={0}: no job section of that name")]
    NoSuchSection(String),
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

/// Includes nested deeper than this are refused (a cycle is refused at once).
const MAX_INCLUDE_DEPTH: usize = 16;

/// A job file larger than this is refused unread (fio's biggest examples
/// are a few KiB).
const MAX_JOB_FILE_BYTES: u64 = 16 << 20;

/// Reads a job file into sections, following its includes.
pub fn read_job_file(path: &Path) -> Result<Vec<Section>, JobError> {
    let text = read_text(path)?;
    parse_job_file(path, &text)
}

/// Splits the text of the job file at `path` into sections. Includes are
/// read relative to the file's directory.
pub fn parse_job_file(path: &Path, text: &str) -> Result<Vec<Section>, JobError> {
    let mut reader = Reader {
        sections: Vec::new(),
        including: vec![path.to_path_buf()],
        keywords: Keywords::of_this_machine(),
    };
    reader.lines(path, text, false)?;
    Ok(reader.sections)
}

/// A job file's text: it must be UTF-8 without NUL bytes (a binary file
/// given by mistake is refused, not parsed into nonsense).
fn read_text(path: &Path) -> Result<String, JobError> {
    let not_text = |why: &str| JobError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string()),
    };
    let read_error = |source| JobError::Read {
        path: path.to_path_buf(),
        source,
    };
    // A device or a pipe named by mistake (`include /dev/zero`) would be
    // read forever: only regular files of a job file's size are read.
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_file() {
        return Err(not_text("not a regular file"));
    }
    if meta.len() > MAX_JOB_FILE_BYTES {
        return Err(not_text(&format!(
            "{} bytes, more than a job file's limit of {MAX_JOB_FILE_BYTES}",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(read_error)?;
    if bytes.contains(&0) {
        return Err(not_text("not a text file (it holds NUL bytes)"));
    }
    String::from_utf8(bytes).map_err(|_| not_text("not a text file (invalid UTF-8)"))
}

struct Reader {
    sections: Vec<Section>,
    /// The file being read and the files including it, outermost first.
    including: Vec<PathBuf>,
    keywords: Keywords,
}

impl Reader {
    fn lines(&mut self, path: &Path, text: &str, included: bool) -> Result<(), JobError> {
        for (index, raw) in text.lines().enumerate() {
            let origin = Origin::File {
                path: path.to_path_buf(),
                line: index + 1,
            };
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                let name = header
                    .strip_suffix(']')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| JobError::Syntax {
                        origin: origin.clone(),
                        message: format!("malformed section header '{line}'"),
                    })?;
                if included {
                    return Err(JobError::Syntax {
                        origin,
                        message: format!(
                            "an included file may hold options only, not a section ([{name}])"
                        ),
                    });
                }
                self.sections.push(Section {
                    name: name.to_string(),
                    entries: Vec::new(),
                });
                continue;
            }
            if let Some(target) = include_target(line) {
                self.include(path, target, origin)?;
                continue;
            }
            let entry = split_entry(line, origin.clone(), &self.keywords)?;
            match self.sections.last_mut() {
                Some(section) => section.entries.push(entry),
                None => {
                    return Err(JobError::Syntax {
                        origin,
                        message: format!("option '{}' appears before any [section]", entry.key),
                    });
                }
            }
        }
        Ok(())
    }

    /// Reads the options of `target` (relative to `from`'s directory) into
    /// the current section.
    fn include(&mut self, from: &Path, target: &str, origin: Origin) -> Result<(), JobError> {
        let refuse = |message: String| JobError::Syntax {
            origin: origin.clone(),
            message,
        };
        if self.sections.is_empty() {
            return Err(refuse(format!(
                "include {target} appears before any [section] (its options need one)"
            )));
        }
        let path = match from.parent() {
            Some(dir) if Path::new(target).is_relative() => dir.join(target),
            _ => PathBuf::from(target),
        };
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        if self.including.iter().any(|p| same(p, &path)) {
            return Err(refuse(format!(
                "include {target} includes itself (through {})",
                self.including
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            )));
        }
        if self.including.len() > MAX_INCLUDE_DEPTH {
            return Err(refuse(format!(
                "include {target}: includes nested more than {MAX_INCLUDE_DEPTH} deep"
            )));
        }
        let text = read_text(&path)?;
        self.including.push(path.clone());
        let result = self.lines(&path, &text, true);
        self.including.pop();
        result
    }
}

/// fio ends a line at its first `;` or `#`, wherever it is.
fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// The file named by an `include FILE` line.
fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    let target = rest.trim();
    (rest.starts_with([' ', '\t']) && !target.is_empty() && !target.contains('=')).then_some(target)
}

/// Splits `key=value` and expands the value.
fn split_entry(text: &str, origin: Origin, keywords: &Keywords) -> Result<Entry, JobError> {
    let Some((key, value)) = text.split_once('=') else {
        return Ok(Entry {
            key: text.trim().to_string(),
            value: None,
            origin,
        });
    };
    let key = key.trim().to_string();
    if key.is_empty() {
        return Err(JobError::Syntax {
            origin,
            message: format!("'{}' has no option name before its '='", text.trim()),
        });
    }
    let env = |name: &str| std::env::var(name).ok();
    match expand::expand(value.trim(), keywords, &env) {
        Ok(value) => Ok(Entry {
            key,
            value: Some(value),
            origin,
        }),
        Err(source) => Err(JobError::Expand {
            name: key,
            origin,
            source,
        }),
    }
}

/// Turns command-line job options (`--name=a --rw=read --name=b ...`) into
/// sections: options before the first `--name` form a leading `global` section.
pub fn sections_from_args<'a>(
    args: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Section>, JobError> {
    let mut sections = vec![Section {
        name: "global".into(),
        entries: Vec::new(),
    }];
    let keywords = Keywords::of_this_machine();
    for arg in args {
        let entry = split_entry(arg.trim_start_matches('-'), Origin::CommandLine, &keywords)?;
        if entry.key == "name" {
            let name = entry.value.clone().unwrap_or_default();
            if name.trim().is_empty() {
                // As fio: a job needs a name.
                return Err(JobError::Syntax {
                    origin: Origin::CommandLine,
                    message: "option 'name' needs a value".into(),
                });
            }
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
    Ok(sections)
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

/// The most jobs (clones counted) one run may have: fio's `REAL_MAX_JOBS`.
pub const MAX_JOBS: u64 = 4096;

/// Resolves the command line's sections and each job file's into jobs, as
/// fio 3.33 does (its `parse_options()` resets the defaults before every job
/// file but the first): the command line's global options apply to its own
/// jobs and the first job file's only; each later job file starts from the
/// defaults, and its first job from a stonewall (a new reporting group that
/// waits for the jobs above). `[global]` sections apply to the jobs below
/// them in their own file. The global options returned are the last unit's
/// (fio's JSON `global options`). With `only` non-empty, just the jobs of
/// those names are kept (fio's `--section`; the stonewall goes to a later
/// file's first job kept).
pub fn resolve(
    command_line: &[Section],
    files: &[Vec<Section>],
    only: &[String],
) -> Result<(Vec<JobDef>, GlobalOptions), JobError> {
    let mut defaults = JobOptions::default();
    let mut globals = Vec::new();
    let mut unit = Unit {
        only,
        names: Vec::new(),
        jobs: Vec::new(),
        stonewall_first: false,
    };
    unit.resolve(command_line, &mut defaults, &mut globals)?;
    for (index, file) in files.iter().enumerate() {
        if index > 0 {
            defaults = JobOptions::default();
            globals.clear();
            unit.stonewall_first = true;
        }
        unit.resolve(file, &mut defaults, &mut globals)?;
    }
    if let Some(missing) = only.iter().find(|name| !unit.names.contains(name)) {
        return Err(JobError::NoSuchSection(missing.clone()));
    }
    if unit.jobs.is_empty() {
        return Err(JobError::NoJobs);
    }
    // As fio (REAL_MAX_JOBS): each clone is a thread with its buffers, so a
    // numjobs of billions would exhaust memory before any limit is checked.
    let mut clones = 0u64;
    for job in &unit.jobs {
        clones += u64::from(job.options.numjobs);
        if clones > MAX_JOBS {
            return Err(JobError::Invalid {
                job: job.options.name.clone(),
                message: format!(
                    "numjobs={}: the run would have {clones} jobs, and fio runs at most {MAX_JOBS}",
                    job.options.numjobs
                ),
            });
        }
    }
    let options: Vec<&JobOptions> = unit.jobs.iter().map(|j| &j.options).collect();
    if let Err((job, message)) = crate::options::check_across_jobs(&options) {
        return Err(JobError::Invalid { job, message });
    }
    // As fio: a job waits for one defined before it, so that it can start.
    for (index, job) in unit.jobs.iter().enumerate() {
        if let Some(waitee) = &job.options.wait_for
            && !unit.jobs[..index].iter().any(|j| &j.options.name == waitee)
        {
            return Err(JobError::Invalid {
                job: job.options.name.clone(),
                message: format!("wait_for={waitee}: no job of that name before this one"),
            });
        }
    }
    Ok((unit.jobs, globals))
}

/// What resolving each file's sections (and the command line's) adds to.
struct Unit<'a> {
    only: &'a [String],
    /// Every job section's name, kept or not.
    names: Vec<String>,
    jobs: Vec<JobDef>,
    /// The unit's first job kept starts with a stonewall.
    stonewall_first: bool,
}

impl Unit<'_> {
    /// One unit's sections, from `defaults`, which its `[global]` sections
    /// change for the jobs below them.
    fn resolve(
        &mut self,
        sections: &[Section],
        defaults: &mut JobOptions,
        globals: &mut GlobalOptions,
    ) -> Result<(), JobError> {
        // A job that needs hardware or a service this machine lacks (an RDMA
        // card, a zoned disk, a Ceph cluster) is refused for that, whatever
        // option above it hybrio lacks too: that is what the user must know.
        for section in sections {
            if !section.is_global() && !self.only.is_empty() && !self.only.contains(&section.name) {
                continue;
            }
            for entry in &section.entries {
                let value = entry.value.as_deref().unwrap_or_default().trim();
                let needs_hardware = match entry.key.as_str() {
                    "ioengine" => crate::options::fio_engine_needs_hardware(value),
                    "zonemode" => value == "zbd",
                    _ => false,
                };
                if needs_hardware {
                    apply_entry(&mut JobOptions::default(), entry)?;
                }
            }
        }
        for section in sections {
            // Under the option's own name, an alias's too, as fio's
            // add_to_dump_list() lists it for the JSON's options.
            let as_given = |e: &Entry| {
                let name = crate::options::find(&e.key).map_or(e.key.as_str(), |o| o.name);
                (name.to_string(), e.value.clone().unwrap_or_default())
            };
            if section.is_global() {
                for entry in in_apply_order(&section.entries) {
                    apply_entry(defaults, entry)?;
                }
                globals.extend(section.entries.iter().map(as_given));
                continue;
            }
            self.names.push(section.name.clone());
            // As fio's skip_this_section(): a job --section leaves out is not
            // read at all, so that one using what hybrio lacks does not stop
            // the others.
            if !self.only.is_empty() && !self.only.contains(&section.name) {
                continue;
            }
            let mut job = defaults.clone();
            job.name = section.name.clone();
            for entry in in_apply_order(&section.entries) {
                apply_entry(&mut job, entry)?;
            }
            if job.time_based && job.runtime.is_none() {
                // As fio: a warning, and the job runs without time_based.
                eprintln!(
                    "hybrio: job '{}': time_based needs runtime=; it runs without time_based, as fio's does",
                    job.name
                );
                job.time_based = false;
            }
            if job.iolog.read.is_some() && job.iolog.write.take().is_some() {
                // As fio: a warning, and the replay logs nothing.
                eprintln!(
                    "hybrio: job '{}': read_iolog overrides write_iolog, as in fio",
                    job.name
                );
            }
            validate(&job)?;
            if std::mem::take(&mut self.stonewall_first) {
                job.stonewall = true;
            }
            // As fio: `--name=` given on the command line is one of the job's options.
            let own = section.entries.iter().map(as_given).collect();
            self.jobs.push(JobDef {
                options: job,
                own_options: own,
            });
        }
        Ok(())
    }
}

/// The command line equivalent to the command line's global options and
/// one file's sections (`--showcmd`). A `[global]` below a job cannot be
/// written as global options there (they would belong to the job above), so
/// its options are repeated in each job below it.
pub fn showcmd(command_line: &[Section], file: &[Section]) -> String {
    let mut words = vec!["hybrio".to_string()];
    let mut later_globals: Vec<&Entry> = Vec::new();
    let mut seen_job = false;
    let option = |entry: &Entry| match &entry.value {
        Some(value) => format!("--{}={}", entry.key, shell_quote(value)),
        None => format!("--{}", entry.key),
    };
    for section in command_line.iter().filter(|s| s.is_global()).chain(file) {
        if section.is_global() {
            if seen_job {
                later_globals.extend(&section.entries);
            } else {
                words.extend(section.entries.iter().map(option));
            }
            continue;
        }
        seen_job = true;
        let own = section.entries.iter().filter(|e| e.key != "name");
        words.push(format!("--name={}", shell_quote(&section.name)));
        words.extend(later_globals.iter().copied().chain(own).map(option));
    }
    words.join(" ")
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:,=+%@^".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A section's entries in the order they take effect: `kb_base` first, as
/// fio sorts it before the sizes it governs, then the rest as written.
fn in_apply_order(entries: &[Entry]) -> impl Iterator<Item = &Entry> {
    let first = |e: &&Entry| e.key == "kb_base";
    entries
        .iter()
        .filter(first)
        .chain(entries.iter().filter(move |e| !first(e)))
}

fn apply_entry(job: &mut JobOptions, entry: &Entry) -> Result<(), JobError> {
    let option = options::find(&entry.key)
        .ok_or_else(|| JobError::not_an_option(&entry.key, entry.origin.clone()))?;
    let bad = |source| JobError::BadValue {
        name: entry.key.clone(),
        origin: entry.origin.clone(),
        source,
    };
    let value = match (&entry.value, option.kind) {
        (Some(v), _) => v.as_str(),
        (None, Kind::Bool) => "1",
        (None, Kind::OptionalText) => "",
        (None, _) => return Err(bad(ValueError::Int(String::new())).with_message("needs a value")),
    };
    option.apply(job, value).map_err(bad)
}

impl JobError {
    /// The error for `name`, which hybrio does not know: why, if fio has it; a
    /// did-you-mean otherwise.
    pub fn not_an_option(name: &str, origin: Origin) -> JobError {
        match options::lacking_reason(name) {
            Some(reason) => JobError::Unsupported {
                name: name.to_string(),
                origin,
                reason,
            },
            // A name of fio's that nobody explained yet is still fio's, not a typo
            // (options::lacking's test keeps this from happening).
            None if options::is_fio_option(name) => JobError::Unsupported {
                name: name.to_string(),
                origin,
                reason: Cow::Borrowed("it is not implemented by hybrio yet"),
            },
            None => JobError::UnknownOption {
                name: name.to_string(),
                origin,
                suggestion: options::suggest(name),
            },
        }
    }

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

/// Refuses a job whose options do not go together.
fn validate(job: &JobOptions) -> Result<(), JobError> {
    let invalid = |message: String| JobError::Invalid {
        job: job.name.clone(),
        message,
    };
    if job.size_percent.is_some() && job.filename.is_none() && job.filesize.is_none() {
        return Err(invalid(
            "size=N% is a share of the job's files: give filename= of existing files, or filesize="
                .into(),
        ));
    }
    crate::options::check_pseudo_engine(job).map_err(invalid)?;
    crate::options::check_cmdprio(job).map_err(invalid)?;
    job.steady.check().map_err(invalid)?;
    // cpuio and exec have no files; a replay's files are its log's.
    let no_files =
        crate::options::PseudoEngine::named(&job.ioengine).is_some() || job.iolog.read.is_some();
    if !no_files
        && job.filename.is_none()
        && job.directory.is_none()
        && job.size.is_none()
        && job.size_percent.is_none()
        && job.filesize.is_none()
    {
        return Err(invalid(
            "give size= (or filesize=), or a filename= of an existing file".into(),
        ));
    }
    let sizes = job.bs.iter().chain(job.bs_max.iter().flatten()).copied();
    let split_sizes = job.bssplit.iter().flatten().map(|s| s.size);
    if let Some(bad) = sizes.chain(split_sizes).find(|bs| bs % 512 != 0)
        && job.direct
    {
        return Err(invalid(format!(
            "direct=1 needs block sizes that are multiples of 512, got {bad}"
        )));
    }
    if job.zones.strided && job.zones.size == 0 {
        return Err(invalid("zonemode=strided needs zonesize=".into()));
    }
    if !job.zones.strided && job.zones.size > 0 {
        return Err(invalid(
            "zonesize= needs zonemode=strided (fio: zonemode=none and zonesize are not compatible)"
                .into(),
        ));
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
    if let Some(kind) = job.verify.kind {
        if job.network().is_some() {
            return Err(invalid(format!(
                "verify={} needs files: a network job has no blocks to read back",
                kind.name()
            )));
        }
        // fio asserts (verify.c's `pattern_size != 0`) where hybrio would
        // check nothing: a mistake either way.
        use crate::verify::VerifyKind;
        if matches!(kind, VerifyKind::Pattern | VerifyKind::PatternNoHeader)
            && job.verify.pattern.is_none()
        {
            return Err(invalid(format!(
                "verify={} needs verify_pattern: it checks the blocks against that pattern",
                if kind == VerifyKind::Pattern {
                    "pattern_hdr"
                } else {
                    "pattern"
                }
            )));
        }
        // Whether the header fits waits for `--fio-compat`: `validate_as_fio`.
    }
    if job.log_issue_time && (job.write_lat_log.is_none() || !job.log_offset) {
        return Err(invalid(
            "log_issue_time needs write_lat_log and log_offset (as fio)".into(),
        ));
    }
    if job.hipri && !job.direct {
        return Err(invalid(
            "hipri needs direct=1 (polled completions only exist for O_DIRECT)".into(),
        ));
    }
    // fio has `nowait` only on the engines that pass RWF_NOWAIT (it says
    // "unrecognized option" on the others); elsewhere it would change
    // nothing but leave EAGAIN unretried.
    if job.nowait
        && !matches!(
            job.ioengine.as_str(),
            "pvsync2" | "libaio" | "io_uring" | "adaptive"
        )
    {
        return Err(invalid(format!(
            "nowait (RWF_NOWAIT) is an option of pvsync2, libaio, io_uring and adaptive: ioengine={} passes no per-request flags",
            job.ioengine
        )));
    }
    // fio has `atomic` on pvsync2, libaio and io_uring; hybrio's pool and
    // adaptive pass the flag too. The kernel's atomic writes are O_DIRECT's:
    // a buffered one is refused at its first write (EOPNOTSUPP).
    if job.atomic && job.rw.writes() {
        if !matches!(
            job.ioengine.as_str(),
            "pvsync2" | "libaio" | "io_uring" | "pool" | "adaptive"
        ) {
            return Err(invalid(format!(
                "atomic (RWF_ATOMIC) is an option of pvsync2, libaio, io_uring, pool and adaptive: ioengine={} passes no flags with its writes",
                job.ioengine
            )));
        }
        if !job.direct {
            return Err(invalid(
                "atomic needs direct=1: the kernel's atomic writes (RWF_ATOMIC) are O_DIRECT writes"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Refuses a job whose verify header does not fit its blocks as the fio it
/// speaks as writes it (`fio_compat`, once `--fio-compat` is applied: the
/// caller's to run after [`resolve`]).
pub(crate) fn validate_as_fio(job: &JobOptions) -> Result<(), JobError> {
    let layout = crate::verify::Layout::written_by(job.fio_compat);
    let invalid = |message: String| JobError::Invalid {
        job: job.name.clone(),
        message,
    };
    let Some(kind) = job.verify.kind else {
        return Ok(());
    };
    let interval = job.verify_interval();
    let header = kind.header_len(layout) as u64;
    // fio's smallest verify_offset is its header's size.
    if job.verify.header_offset > 0 && job.verify.header_offset < layout.bytes() as u64 {
        return Err(invalid(format!(
            "verify_offset={} is inside fio {}'s {}-byte verify header: it must be 0 or at least {}",
            job.verify.header_offset,
            job.fio_compat,
            layout.bytes(),
            layout.bytes()
        )));
    }
    if header > 0 && interval <= header {
        return Err(invalid(format!(
            "verify={} needs blocks larger than its {header}-byte header: the verify interval is {interval} bytes",
            kind.name()
        )));
    }
    if job.verify.header_offset > 0 && job.verify.header_offset + header > interval {
        return Err(invalid(format!(
            "verify_offset={} puts the {header}-byte header past the end of its {interval}-byte block",
            job.verify.header_offset
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
