//! The command line: hybrio's own flags, then fio's job options in fio's
//! order-sensitive form (`--name=` starts a job), then job files.

use std::iter::Peekable;
use std::path::PathBuf;
use std::slice::Iter;

use hybrio::engine::EngineKind;

use crate::jobfile::{self, GlobalOptions, JobDef, JobError, Section};
use crate::options::{self, Kind};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's human-readable text.
    Normal,
    /// fio's JSON.
    Json,
    /// fio's semicolon-separated terse lines, version 3.
    Terse,
    /// fio's JSON with each latency histogram's buckets (`bins`).
    JsonPlus,
    /// One self-contained HTML page with the latency pictures.
    Html,
}

/// What the user asked for.
#[derive(Debug)]
pub enum Command {
    /// Run jobs.
    Run {
        /// The jobs.
        jobs: Vec<JobDef>,
        /// What `[global]` set.
        globals: GlobalOptions,
        /// Output formats, in order.
        formats: Vec<Format>,
        /// Write the report here instead of stdout.
        output: Option<PathBuf>,
        /// Only check the jobs.
        parse_only: bool,
        /// `--mpi`: one run across the ranks of `mpirun`.
        mpi: bool,
        /// `--status-interval`: a report of the figures so far this often.
        status_interval: Option<std::time::Duration>,
        /// `--bandwidth-log[=NAME]`: the jobs' bandwidth together, in
        /// `NAME-{read,write,trim}_bw.log`.
        bandwidth_log: Option<String>,
        /// What the user should know of how the jobs were read (stderr).
        notes: Vec<String>,
    },
    /// `hybrio compare`: the jobs' reporting groups on each engine, side by side.
    Compare {
        /// The jobs.
        jobs: Vec<JobDef>,
        /// The engines, in the order they run.
        engines: Vec<EngineKind>,
        /// Rounds of alternation.
        rounds: usize,
        /// The output format (one).
        format: Format,
        /// Write the report here instead of stdout.
        output: Option<PathBuf>,
        /// `--mpi`: every run across the ranks of `mpirun`.
        mpi: bool,
        /// What the user should know of how the jobs were read (stderr).
        notes: Vec<String>,
    },
    /// `hybrio compare --help`.
    CompareHelp,
    /// `hybrio report FILE... [-o OUT]`: the HTML page of saved JSON reports.
    Report {
        /// The JSON documents (hybrio's or fio's; json+ for the charts).
        inputs: Vec<PathBuf>,
        /// Where the page goes (standard output when not given).
        output: Option<PathBuf>,
        /// `--svg`: one `hybrio compare` document as one SVG chart, not a page.
        svg: bool,
        /// `--figure`: what the SVG chart shows (iops, p99 or mean).
        figure: String,
    },
    /// `--showcmd`: the jobs as command lines (one per job file), checked.
    ShowCmd(String),
    /// The default engine comparison on a temporary file.
    DefaultComparison {
        /// Seconds per cell.
        seconds: f64,
        /// Where to put the temporary file.
        directory: Option<PathBuf>,
    },
    /// Usage text.
    Help,
    /// Version.
    Version,
    /// Help for one option, or all.
    CmdHelp(Option<String>),
    /// The engines and whether this system allows each.
    EngHelp,
}

/// A command-line mistake.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A job option or job file problem.
    #[error("{0}")]
    Job(#[from] JobError),
    /// A bad value for one of hybrio's own flags.
    #[error("option --{flag}: {message}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        message: String,
    },
    /// `hybrio compare` without anything to compare.
    #[error(
        "compare: no jobs given (give fio job options such as --name=JOB --rw=randread --size=64m, or a job file; see hybrio compare --help)"
    )]
    NoCompareJobs,
}

/// Seconds per cell of the default comparison: 4 workloads x 3 engines x 3
/// rounds plus the null engine stay under a minute.
pub const DEFAULT_COMPARE_SECONDS: f64 = 1.0;

/// Rounds of `hybrio compare` unless `--rounds` says otherwise.
pub const DEFAULT_COMPARE_ROUNDS: usize = 3;

/// hybrio's usage text.
pub const USAGE: &str = "\
usage: hybrio [OPTIONS] [--name=JOB --OPTION=VALUE ...] [JOBFILE ...]
       hybrio compare [COMPARE OPTIONS] [--name=JOB --OPTION=VALUE ...] [JOBFILE ...]
       hybrio report REPORT.json... [-o REPORT.html]
       hybrio report --svg [--figure=iops|p99|mean] COMPARE.json [-o CHART.svg]

With no arguments, hybrio compares every engine this system allows (the adaptive
one included) on a temporary file in the current directory and prints a side-by-side
table, with each engine's ratio to the best and the adaptive engine's choices.

hybrio options:
  --output-format=FORMAT   normal (default), json, json+, terse or html, or several: normal,json
                           (html with others: the page goes to OUTPUT's name with .html)
  --minimal                the same as --output-format=terse
  --status-interval=TIME   also report the figures so far every TIME (json: one
                           document per line, JSON Lines)
  --output=FILE            write the report to FILE instead of standard output
  --parse-only             check the jobs and exit
  --max-jobs=N             accepted and ignored, as fio does
  --bandwidth-log[=NAME]   log all the jobs' bandwidth together every 500 ms, per direction,
                           in NAME-read_bw.log, NAME-write_bw.log, NAME-trim_bw.log (NAME: agg)
  --fio-compat=VERSION     behave as fio VERSION (3.33 to 3.42; default 3.42) where fio's
                           versions differ: random offsets' seeds (3.35), sha512 (3.39),
                           the verify header (3.41); every job (one job: fio_compat=)
  --mpi                    under mpirun: every rank runs the jobs ($rank, $nranks name
                           each rank's files), each group starts together on every rank,
                           rank 0 reports all ranks merged and a line per rank
                           (a build with --features mpi)
  --showcmd                print each job file as the equivalent command line
  --section=NAME           run only the job NAME (repeat for several)
  --cmdhelp[=OPTION]       list job options (or describe one)
  --enghelp                list the engines and whether this system allows each
  --compare-seconds=SECS   seconds per cell of the default comparison (default 1.0)
  --compare-dir=DIR        directory for the default comparison's file (default .)
  --version, --help

hybrio compare runs each reporting group of the jobs (a group ends where a job
has stonewall or new_group) once per engine, in alternation, for several rounds,
and prints the median figures of each engine side by side (hybrio compare --help).

Job options are fio's: --name=JOB starts a job and the options after it apply to
it; options before the first --name apply to every job. Job files use fio's ini
format: [global] sections apply to the jobs below them in the same file, ';' and
'#' start comments, 'include FILE' reads options into a section, and values may
use ${VAR}, $ncpus, $pagesize, $mb_memory, $rank and $nranks (under mpirun) and
arithmetic in parentheses.";

/// `hybrio compare --help`.
pub const COMPARE_USAGE: &str = "\
usage: hybrio compare [COMPARE OPTIONS] [--name=JOB --OPTION=VALUE ...] [JOBFILE ...]

Runs the jobs on each engine side by side. Each reporting group of the jobs is a
cell (a group ends where a job has stonewall or new_group; jobs without either are
one cell and run together, as in a normal run). Every cell runs once per engine,
cells and engines in alternation (round 1: cell A on each engine, cell B on each
engine; round 2: ...), with the jobs' ioengine replaced; the engines' order
changes from round to round so that each runs right after every other equally
often, and each run starts 20 ms after the last (whose engine's teardown in the
kernel would otherwise slow it down). Buffered reads with
invalidate=0 re-read their files through the page cache before each run.

Per cell and engine: IOPS and bandwidth summed over the cell's jobs; total latency
(mean weighted by I/O count, p50 and p99 of the merged histograms); CPU per I/O of
the job threads and of the whole process; each a median over the rounds. Then IOPS
and p99 against the engine with the best IOPS, the spread of the rounds' IOPS, and
the adaptive engine's inline/async split; with adaptive among the engines, a line
setting it against the best other engine.

compare options:
  --engines=E1,E2,...      engines to compare (default: every engine this system
                           allows but null and pvsync2)
  --rounds=N               rounds of alternation, N >= 1 (default 3)
  --output-format=FORMAT   normal (markdown tables, default), json (one document) or
                           html (a page: engines side by side, each round, the adaptive
                           engine's choices over time)
  --output=FILE            write the report to FILE instead of standard output
  --mpi                    under mpirun: every run across the ranks (all switch engines
                           together), figures of all ranks merged; rank 0 reports
                           (a build with --features mpi)
  --fio-compat=VERSION     behave as fio VERSION (3.33 to 3.42) where fio's versions differ
  --help

Progress goes to standard error; Ctrl-C stops between runs.

example:
  hybrio compare --engines=psync,io_uring --rounds=5 --name=r --rw=randread \\
      --bs=4k --size=64m --runtime=2 --time_based
  hybrio compare scenarios/seed003-sync-vs-async.fio";

/// Reads the command line (without the program name).
pub fn parse(args: &[String]) -> Result<Command, CliError> {
    if args.is_empty() {
        return Ok(Command::DefaultComparison {
            seconds: DEFAULT_COMPARE_SECONDS,
            directory: None,
        });
    }
    if args[0] == "compare" {
        return parse_compare(&args[1..]);
    }
    if args[0] == "report" {
        return parse_report(&args[1..]);
    }
    let mut formats = vec![Format::Normal];
    let mut output = None;
    let mut parse_only = false;
    let mut mpi = false;
    let mut status_interval = None;
    let mut bandwidth_log = None;
    let mut compare: Option<(f64, Option<PathBuf>)> = None;
    let mut job_args = JobArgs::default();
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        let Some((key, inline_value)) = split_flag(arg) else {
            job_args.files.push(PathBuf::from(arg));
            continue;
        };
        let mut value_for = |flag: &'static str| flag_value(flag, inline_value.clone(), &mut iter);
        match key {
            "help" | "h" => return Ok(Command::Help),
            "version" => return Ok(Command::Version),
            "enghelp" => return Ok(Command::EngHelp),
            "cmdhelp" => {
                return Ok(Command::CmdHelp(
                    inline_value.filter(|v| !v.is_empty() && v != "all"),
                ));
            }
            "parse-only" => parse_only = true,
            // fio takes it and ignores it (since 3.x, "we don't track/need
            // this anymore"); its own test harness passes --max-jobs=16.
            "max-jobs" => drop(value_for("max-jobs")?),
            "fio-compat" => job_args.set_fio_compat(&value_for("fio-compat")?)?,
            "mpi" => mpi = true,
            // As fio's getopt: a name only after '=' (`--bandwidth-log NAME`
            // is the flag and a job file).
            "bandwidth-log" => {
                bandwidth_log = Some(
                    inline_value
                        .filter(|v| !v.is_empty())
                        .unwrap_or("agg".into()),
                )
            }
            "showcmd" => job_args.showcmd = true,
            "section" => job_args.only.push(value_for("section")?),
            "output" => output = Some(PathBuf::from(value_for("output")?)),
            "output-format" => formats = parse_formats(&value_for("output-format")?)?,
            "minimal" => formats = vec![Format::Terse],
            "status-interval" => {
                let text = value_for("status-interval")?;
                let every = crate::units::parse_time(&text, std::time::Duration::from_secs(1))
                    .ok()
                    .filter(|d| *d >= std::time::Duration::from_millis(100))
                    .ok_or(CliError::Flag {
                        flag: "status-interval",
                        message: format!("'{text}' is not a time of at least 100ms, e.g. 1s"),
                    })?;
                status_interval = Some(every);
            }
            "compare-seconds" => {
                let text = value_for("compare-seconds")?;
                let seconds = text
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0 && s.is_finite())
                    .ok_or(CliError::Flag {
                        flag: "compare-seconds",
                        message: format!("'{text}' is not a positive number of seconds"),
                    })?;
                compare.get_or_insert((DEFAULT_COMPARE_SECONDS, None)).0 = seconds;
            }
            "compare-dir" => {
                compare.get_or_insert((DEFAULT_COMPARE_SECONDS, None)).1 =
                    Some(PathBuf::from(value_for("compare-dir")?))
            }
            _ => job_args.push_option(key, inline_value, &mut iter),
        }
    }
    if let Some((seconds, directory)) = compare
        && job_args.is_empty()
    {
        return Ok(Command::DefaultComparison { seconds, directory });
    }
    let (jobs, globals) = job_args.resolve()?;
    if job_args.showcmd {
        return Ok(Command::ShowCmd(job_args.showcmd_text()?));
    }
    let mut notes = job_args.notes()?;
    notes.extend(auto_caching_notes(&jobs));
    Ok(Command::Run {
        jobs,
        globals,
        formats,
        output,
        parse_only,
        mpi,
        status_interval,
        bandwidth_log,
        notes,
    })
}

/// `uncached=auto` lets the adaptive engine choose; every other engine
/// keeps the file cached, without error (the option allows, never asks).
/// Said once per engine, naming its jobs, so a user comparing engines by
/// hand knows which ran cached.
fn auto_caching_notes(jobs: &[JobDef]) -> Vec<String> {
    let mut by_engine: Vec<(&str, Vec<&str>)> = Vec::new();
    for job in jobs {
        let options = &job.options;
        if options.uncached != hybrio::file::Caching::Auto
            || options.ioengine == crate::compare::ADAPTIVE
        {
            continue;
        }
        match by_engine
            .iter_mut()
            .find(|(engine, _)| *engine == options.ioengine)
        {
            Some((_, names)) => names.push(&options.name),
            None => by_engine.push((&options.ioengine, vec![&options.name])),
        }
    }
    by_engine
        .into_iter()
        .map(|(engine, names)| {
            format!(
                "uncached=auto: only the adaptive engine chooses the caching; {engine} keeps {} cached",
                names.join(", ")
            )
        })
        .collect()
}

/// `hybrio compare`'s arguments (after the word `compare`): its own flags
/// anywhere, the rest job options and job files as in a run.
fn parse_compare(args: &[String]) -> Result<Command, CliError> {
    let mut engines = None;
    let mut rounds = DEFAULT_COMPARE_ROUNDS;
    let mut format = Format::Normal;
    let mut output = None;
    let mut mpi = false;
    let mut job_args = JobArgs::default();
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        let Some((key, inline_value)) = split_flag(arg) else {
            job_args.files.push(PathBuf::from(arg));
            continue;
        };
        let mut value_for = |flag: &'static str| flag_value(flag, inline_value.clone(), &mut iter);
        match key {
            "help" | "h" => return Ok(Command::CompareHelp),
            "mpi" => mpi = true,
            "fio-compat" => job_args.set_fio_compat(&value_for("fio-compat")?)?,
            "engines" => engines = Some(parse_engines(&value_for("engines")?)?),
            "rounds" => rounds = parse_rounds(&value_for("rounds")?)?,
            "section" => job_args.only.push(value_for("section")?),
            "output" => output = Some(PathBuf::from(value_for("output")?)),
            "output-format" => {
                format = match parse_formats(&value_for("output-format")?)?[..] {
                    [one @ (Format::Normal | Format::Json | Format::Html)] => one,
                    _ => {
                        return Err(CliError::Flag {
                            flag: "output-format",
                            message: "compare writes one format: normal, json or html".into(),
                        });
                    }
                }
            }
            _ => job_args.push_option(key, inline_value, &mut iter),
        }
    }
    if job_args.is_empty() {
        return Err(CliError::NoCompareJobs);
    }
    let (jobs, _globals) = job_args.resolve()?;
    Ok(Command::Compare {
        jobs,
        engines: engines.unwrap_or_else(crate::compare::default_engines),
        rounds,
        format,
        output,
        mpi,
        notes: job_args.notes()?,
    })
}

/// `--engines=`: known names, each allowed by this system, in the order
/// given, each once.
fn parse_engines(text: &str) -> Result<Vec<EngineKind>, CliError> {
    let bad = |message: String| CliError::Flag {
        flag: "engines",
        message,
    };
    let mut engines = Vec::new();
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let kind = EngineKind::from_name(word).ok_or_else(|| {
            let known: Vec<&str> = EngineKind::ALL.iter().map(|k| k.name()).collect();
            bad(format!(
                "unknown engine '{word}' (known: {})",
                known.join(", ")
            ))
        })?;
        hybrio::probe::engine_available(kind).map_err(|e| bad(e.to_string()))?;
        if !engines.contains(&kind) {
            engines.push(kind);
        }
    }
    if engines.is_empty() {
        return Err(bad("needs at least one engine name".into()));
    }
    Ok(engines)
}

fn parse_rounds(text: &str) -> Result<usize, CliError> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| CliError::Flag {
            flag: "rounds",
            message: format!("'{text}' is not a whole number of rounds, 1 or more"),
        })
}

/// `--key=value`, `--key` or `-k` as (key, inline value); `None` for a job file.
fn split_flag(arg: &str) -> Option<(&str, Option<String>)> {
    let flag = arg
        .strip_prefix("--")
        .or_else(|| arg.strip_prefix('-').filter(|_| arg.len() > 1))?;
    Some(match flag.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (flag, None),
    })
}

/// The value of one of hybrio's own flags: inline, or the next argument.
fn flag_value(
    flag: &'static str,
    inline_value: Option<String>,
    rest: &mut Peekable<Iter<'_, String>>,
) -> Result<String, CliError> {
    inline_value
        .or_else(|| rest.next().cloned())
        .ok_or(CliError::Flag {
            flag,
            message: "needs a value".into(),
        })
}

/// Job options (in order) and job files, as given on the command line.
#[derive(Debug, Default)]
struct JobArgs {
    options: Vec<String>,
    files: Vec<PathBuf>,
    /// `--section=NAME`s: run only these jobs.
    only: Vec<String>,
    /// `--showcmd`.
    showcmd: bool,
    /// `--fio-compat=VERSION`: every job behaves as that fio.
    fio_compat: Option<crate::fio_version::FioVersion>,
}

impl JobArgs {
    fn is_empty(&self) -> bool {
        self.options.is_empty() && self.files.is_empty()
    }

    /// Keeps a job option in order; `--opt value` takes the next argument
    /// unless the option is a boolean switch.
    fn push_option(
        &mut self,
        key: &str,
        inline_value: Option<String>,
        rest: &mut Peekable<Iter<'_, String>>,
    ) {
        let takes_value =
            options::find(key).is_some_and(|o| !matches!(o.kind, Kind::Bool | Kind::OptionalText));
        let value = match inline_value {
            Some(v) => Some(v),
            None if takes_value && rest.peek().is_some_and(|next| !next.starts_with('-')) => {
                rest.next().cloned()
            }
            None => None,
        };
        self.options.push(match value {
            Some(v) => format!("{key}={v}"),
            None => key.to_string(),
        });
    }

    /// The command line's sections, and each job file's.
    fn sections(&self) -> Result<(Vec<Section>, Vec<Vec<Section>>), CliError> {
        let command_line = self.command_line()?;
        let files = self
            .files
            .iter()
            .map(|path| jobfile::read_job_file(path))
            .collect::<Result<_, _>>()?;
        Ok((command_line, files))
    }

    /// The command line's own sections (no job file read).
    fn command_line(&self) -> Result<Vec<Section>, CliError> {
        Ok(jobfile::sections_from_args(
            self.options.iter().map(String::as_str),
        )?)
    }

    /// Reads the job files and resolves every section into jobs.
    fn resolve(&self) -> Result<(Vec<JobDef>, GlobalOptions), CliError> {
        let (command_line, files) = self.sections()?;
        let (mut jobs, globals) = jobfile::resolve(&command_line, &files, &self.only)?;
        for job in &mut jobs {
            if let Some(version) = self.fio_compat {
                job.options.fio_compat = version;
            }
            // Once the fio is known (a job's own, or --fio-compat's): what
            // it keeps of the options, then what it allows.
            job.options.fit_fio_compat();
            jobfile::validate_as_fio(&job.options)?;
        }
        Ok((jobs, globals))
    }

    fn set_fio_compat(&mut self, text: &str) -> Result<(), CliError> {
        let version = crate::fio_version::FioVersion::parse(text).map_err(|e| CliError::Flag {
            flag: "fio-compat",
            message: e.to_string(),
        })?;
        self.fio_compat = Some(version);
        Ok(())
    }

    /// `--showcmd`: a command line for the command line's own jobs, and one
    /// per job file (the command line's global options in the first only,
    /// as they apply to it only).
    fn showcmd_text(&self) -> Result<String, CliError> {
        let (command_line, files) = self.sections()?;
        let mut lines = Vec::new();
        if command_line.iter().any(|s| !s.is_global()) {
            lines.push(jobfile::showcmd(&[], &command_line));
        }
        for (index, file) in files.iter().enumerate() {
            let globals = if index == 0 { &command_line[..] } else { &[] };
            lines.push(jobfile::showcmd(globals, file));
        }
        Ok(lines.join("\n"))
    }

    /// fio applies the command line's global options to the first job file
    /// only, which a user giving `--runtime=10 a.fio b.fio` may not expect:
    /// said on stderr, naming the files they miss.
    fn notes(&self) -> Result<Vec<String>, CliError> {
        let command_line = self.command_line()?;
        let given: Vec<String> = command_line
            .iter()
            .take_while(|s| s.is_global())
            .flat_map(|s| &s.entries)
            .map(|e| match &e.value {
                Some(value) => format!("--{}={value}", e.key),
                None => format!("--{}", e.key),
            })
            .collect();
        if given.is_empty() || self.files.len() < 2 {
            return Ok(Vec::new());
        }
        let later: Vec<String> = self.files[1..]
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        Ok(vec![format!(
            "as in fio, {} applies to {} only, not to {}",
            given.join(" "),
            self.files[0].display(),
            later.join(", ")
        )])
    }
}

/// An error message as one line of sensible length: line breaks become
/// spaces, and a message over 600 characters (a megabyte-long value echoed
/// back) keeps its start and its end, where the reason stands.
pub fn one_line(message: &str) -> String {
    const HEAD: usize = 300;
    const TAIL: usize = 200;
    let flat: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let count = flat.chars().count();
    if count <= HEAD + TAIL + 100 {
        return flat;
    }
    let head: String = flat.chars().take(HEAD).collect();
    let tail: String = flat.chars().skip(count - TAIL).collect();
    format!(
        "{head} [... {} characters cut ...] {tail}",
        count - HEAD - TAIL
    )
}

/// `hybrio report FILE... [-o OUT | --output=OUT]`.
fn parse_report(args: &[String]) -> Result<Command, CliError> {
    let mut inputs = Vec::new();
    let mut output = None;
    let mut svg = false;
    let mut figure = "iops".to_string();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--svg" {
            svg = true;
        } else if let Some(value) = arg.strip_prefix("--figure=") {
            figure = value.to_string();
        } else if arg == "-o" || arg == "--output" {
            let value = iter.next().ok_or(CliError::Flag {
                flag: "output",
                message: "needs a file name".into(),
            })?;
            output = Some(PathBuf::from(value));
        } else if let Some(value) = arg.strip_prefix("--output=") {
            output = Some(PathBuf::from(value));
        } else if arg.starts_with('-') {
            return Err(CliError::Flag {
                flag: "report",
                message: format!(
                    "unknown flag '{arg}' (hybrio report FILE.json... [-o OUT.html], \
                     hybrio report --svg [--figure=iops|p99|mean] COMPARE.json [-o OUT.svg])"
                ),
            });
        } else {
            inputs.push(PathBuf::from(arg));
        }
    }
    if inputs.is_empty() {
        return Err(CliError::Flag {
            flag: "report",
            message: "give the JSON reports to draw (hybrio report FILE.json... [-o OUT.html])"
                .into(),
        });
    }
    if svg && inputs.len() != 1 {
        return Err(CliError::Flag {
            flag: "svg",
            message:
                "draws one hybrio compare document (hybrio report --svg COMPARE.json [-o OUT.svg])"
                    .into(),
        });
    }
    Ok(Command::Report {
        inputs,
        output,
        svg,
        figure,
    })
}

fn parse_formats(text: &str) -> Result<Vec<Format>, CliError> {
    let mut formats = Vec::new();
    for word in text.split(',') {
        let format = match word.trim() {
            "normal" => Format::Normal,
            "json" => Format::Json,
            "terse" => Format::Terse,
            "json+" => Format::JsonPlus,
            "html" => Format::Html,
            other => {
                return Err(CliError::Flag {
                    flag: "output-format",
                    message: format!(
                        "unknown format '{other}' (allowed: normal, json, json+, terse, html)"
                    ),
                });
            }
        };
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    Ok(formats)
}

/// fio's engines the benchmark runs over the library's, with what they do.
const BENCH_ENGINES: &[(&str, &str)] = &[
    (
        "net",
        "fio's network engine: recv/send through psync's calls",
    ),
    (
        "falloc",
        "each I/O a fallocate (reads keep the size, trims punch holes)",
    ),
    ("ftruncate", "each write sets the file's size to its offset"),
    ("filecreate", "each I/O creates a file (open O_CREAT)"),
    (
        "filestat",
        "each I/O looks a file up (stat_type=stat|lstat|statx)",
    ),
    ("filedelete", "each I/O deletes a file (unlink)"),
    ("dircreate", "each I/O creates a directory (mkdir)"),
    (
        "dirstat",
        "each I/O looks a directory up (stat_type=stat, lstat or statx)",
    ),
    ("dirdelete", "each I/O deletes a directory (rmdir)"),
    ("cpuio", "no I/O: keeps cpuload percent of a CPU busy"),
    ("exec", "no I/O: runs a program for the job's runtime"),
    (
        "e4defrag",
        "each write moves a donor's extents under it (ext4, EXT4_IOC_MOVE_EXT)",
    ),
];

/// `--enghelp` text: every engine, and why this system refuses any it refuses.
pub fn enghelp() -> String {
    hybrio::engine::EngineKind::ALL
        .iter()
        .map(|kind| match hybrio::probe::engine_available(*kind) {
            Ok(()) => format!("{:<10} available", kind.name()),
            Err(reason) => format!("{:<10} unavailable: {reason}", kind.name()),
        })
        .chain(
            BENCH_ENGINES
                .iter()
                .map(|(name, what)| format!("{name:<10} available: {what}")),
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--cmdhelp` text: every option, or one.
pub fn cmdhelp(option: Option<&str>) -> Result<String, CliError> {
    match option {
        None => Ok(options::all()
            .map(|o| o.help_line())
            .collect::<Vec<_>>()
            .join("\n")),
        Some(name) => options::find(name).map(|o| o.help_line()).ok_or_else(|| {
            CliError::Job(JobError::not_an_option(name, jobfile::Origin::CommandLine))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn fio_command_line_form() {
        let cmd = parse(&args(&[
            "--output-format=json",
            "--name=t",
            "--rw=write",
            "--bs",
            "8k",
            "--size=1m",
            "--time_based",
            "--runtime=1",
        ]))
        .unwrap();
        let Command::Run { jobs, formats, .. } = cmd else {
            panic!("expected a run")
        };
        assert_eq!(formats, vec![Format::Json]);
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].options.bs[1], 8192);
        assert!(jobs[0].options.time_based);
    }

    #[test]
    fn max_jobs_is_taken_and_ignored_as_fio_does() {
        let jobs_of = |list: &[&str]| {
            let Command::Run { jobs, .. } = parse(&args(list)).unwrap() else {
                panic!("expected a run")
            };
            jobs.iter()
                .map(|job| (job.options.name.clone(), job.options.numjobs))
                .collect::<Vec<_>>()
        };
        let plain = jobs_of(&["--name=t", "--size=1m", "--numjobs=4"]);
        assert_eq!(plain, vec![("t".to_string(), 4)]);
        // fio 3.42's harness passes it before the job file; fio ignores even
        // fewer jobs than the run has.
        assert_eq!(
            jobs_of(&["--max-jobs=16", "--name=t", "--size=1m", "--numjobs=4"]),
            plain
        );
        assert_eq!(
            jobs_of(&["--max-jobs", "1", "--name=t", "--size=1m", "--numjobs=4"]),
            plain
        );
        let err = parse(&args(&["--name=t", "--size=1m", "--max-jobs"])).unwrap_err();
        assert!(err.to_string().starts_with("option --max-jobs:"), "{err}");
    }

    #[test]
    fn bandwidth_log_takes_a_name_after_equals_only() {
        let name = |list: &[&str]| match parse(&args(list)).unwrap() {
            Command::Run { bandwidth_log, .. } => bandwidth_log,
            other => panic!("{other:?}"),
        };
        let job = ["--name=a", "--size=1m"];
        assert_eq!(name(&job), None);
        assert_eq!(
            name(&[&["--bandwidth-log"], &job[..]].concat()),
            Some("agg".into())
        );
        assert_eq!(
            name(&[&["--bandwidth-log=run1"], &job[..]].concat()),
            Some("run1".into())
        );
    }

    #[test]
    fn fio_compat_applies_to_every_job_and_names_what_it_takes() {
        use crate::fio_version::FioVersion;
        let versions = |list: &[&str]| match parse(&args(list)).unwrap() {
            Command::Run { jobs, .. } => jobs
                .iter()
                .map(|j| j.options.fio_compat.to_string())
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        let two = ["--name=a", "--size=1m", "--name=b", "--size=1m"];
        assert_eq!(versions(&two), ["3.42", "3.42"]);
        let mut older = vec!["--fio-compat=3.33"];
        older.extend(two);
        assert_eq!(versions(&older), ["3.33", "3.33"]);
        assert_eq!(
            versions(&[
                "--name=a",
                "--size=1m",
                "--fio_compat=3.36",
                "--name=b",
                "--size=1m"
            ]),
            ["3.36", "3.42"]
        );
        let err = parse(&args(&["--fio-compat=3.30", "--name=a", "--size=1m"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "option --fio-compat: {}",
                FioVersion::parse("3.30").unwrap_err()
            )
        );
        let err = parse(&args(&["--name=a", "--size=1m", "--fio_compat=2.0"])).unwrap_err();
        assert!(err.to_string().contains("3.33 to 3.42"), "{err}");
    }

    #[test]
    fn uncached_auto_on_a_fixed_engine_is_noted_once_per_engine() {
        let notes = |list: &[&str]| {
            let Command::Run { notes, .. } = parse(&args(list)).unwrap() else {
                panic!("expected a run")
            };
            notes
        };
        let base = ["--size=1m", "--uncached=auto"];
        let jobs = [
            "--name=a",
            "--ioengine=io_uring",
            "--name=b",
            "--ioengine=io_uring",
            "--name=c",
            "--ioengine=adaptive",
            "--name=d",
            "--ioengine=pvsync2",
        ];
        let all: Vec<&str> = base.iter().chain(&jobs).copied().collect();
        assert_eq!(
            notes(&all),
            [
                "uncached=auto: only the adaptive engine chooses the caching; io_uring keeps a, b cached",
                "uncached=auto: only the adaptive engine chooses the caching; pvsync2 keeps d cached",
            ]
        );
        assert!(
            notes(&[
                "--size=1m",
                "--uncached=auto",
                "--name=c",
                "--ioengine=adaptive"
            ])
            .is_empty()
        );
        assert!(
            notes(&[
                "--size=1m",
                "--uncached=1",
                "--name=d",
                "--ioengine=pvsync2"
            ])
            .is_empty()
        );
    }

    #[test]
    fn long_messages_keep_their_start_and_end_on_one_line() {
        assert_eq!(one_line("short\nmessage"), "short message");
        let long = format!(
            "option 'bs' (t.fio:3): '{}' is out of range",
            "9".repeat(1 << 20)
        );
        let line = one_line(&long);
        assert!(line.len() < 700, "{}", line.len());
        assert!(
            line.starts_with("option 'bs' (t.fio:3): '999") && line.ends_with("' is out of range")
        );
        assert!(line.contains("characters cut"));
    }

    #[test]
    fn mistakes_are_one_line_errors() {
        for bad in [
            &["--name=t", "--size=1m", "--bs=abc"][..],
            &["--name=t", "--size=1m", "--rw=sideways"],
            &["--name=t", "--size=1m", "--frobnicate=1"],
            &["--output-format=xml", "--name=t", "--size=1m"],
            &["--name=t", "--size=1m", "--output"],
            &["/nonexistent/job.fio"],
        ] {
            let err = parse(&args(bad)).expect_err("must fail").to_string();
            assert!(!err.contains('\n') && !err.is_empty(), "{bad:?}: {err}");
        }
        let err = parse(&args(&["--name=t", "--size=1m", "--bs=abc"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("'bs'"), "{err}");
    }

    #[test]
    fn compare_takes_its_flags_and_the_jobs() {
        let cmd = parse(&args(&[
            "compare",
            "--engines=psync, null,psync",
            "--rounds",
            "5",
            "--name=t",
            "--rw=randread",
            "--size=1m",
            "--name=u",
            "--stonewall",
            "--size=1m",
            "--output-format=json",
            "--output=r.json",
        ]))
        .unwrap();
        let Command::Compare {
            jobs,
            engines,
            rounds,
            format,
            output,
            ..
        } = cmd
        else {
            panic!("expected compare")
        };
        assert_eq!(engines, [EngineKind::Psync, EngineKind::Null]);
        assert_eq!((rounds, format), (5, Format::Json));
        assert_eq!(output, Some(PathBuf::from("r.json")));
        assert_eq!(jobs.len(), 2);
        assert!(jobs[1].options.stonewall && !jobs[0].options.stonewall);

        let Command::Compare {
            engines, rounds, ..
        } = parse(&args(&["compare", "--name=t", "--size=1m"])).unwrap()
        else {
            panic!("expected compare")
        };
        assert_eq!(rounds, DEFAULT_COMPARE_ROUNDS);
        assert_eq!(engines, crate::compare::default_engines());
        assert!(engines.contains(&EngineKind::Psync));
        assert!(!engines.contains(&EngineKind::Null) && !engines.contains(&EngineKind::Pvsync2));
        assert!(matches!(
            parse(&args(&["compare", "--name=t", "--help"])).unwrap(),
            Command::CompareHelp
        ));
    }

    #[test]
    fn compare_mistakes_are_one_line_errors() {
        let error = |list: &[&str]| {
            let mut all = vec!["compare"];
            all.extend_from_slice(list);
            let err = parse(&args(&all)).expect_err("must fail").to_string();
            assert!(!err.contains('\n') && !err.is_empty(), "{list:?}: {err}");
            err
        };
        for bad in ["--rounds=0", "--rounds=-1", "--rounds=x", "--rounds="] {
            let err = error(&[bad, "--name=t", "--size=1m"]);
            assert!(err.starts_with("option --rounds:"), "{err}");
        }
        let err = error(&["--engines=psync,warp", "--name=t", "--size=1m"]);
        assert!(
            err.contains("unknown engine 'warp'") && err.contains("io_uring"),
            "{err}"
        );
        let err = error(&["--engines=,", "--name=t", "--size=1m"]);
        assert!(err.starts_with("option --engines:"), "{err}");
        let err = error(&["--output-format=normal,json", "--name=t", "--size=1m"]);
        assert!(err.starts_with("option --output-format:"), "{err}");
        for nothing in [&[][..], &["--engines=psync"], &["--rounds=2"]] {
            let err = error(nothing);
            assert!(err.contains("no jobs given"), "{err}");
        }
        let err = error(&["--name=t", "--size=1m", "--bs=abc"]);
        assert!(err.contains("'bs'"), "{err}");
    }

    #[test]
    fn no_arguments_is_the_default_comparison() {
        assert!(matches!(
            parse(&[]).unwrap(),
            Command::DefaultComparison { .. }
        ));
        assert!(cmdhelp(None).unwrap().contains("iodepth_batch_submit"));
        assert!(cmdhelp(Some("bs")).unwrap().starts_with("bs "));
        // An option fio has and hybrio lacks: the reason a job would get.
        let why = "fio has this; hybrio does not, because laying out the files without running \
                   the job: not implemented by hybrio yet";
        let err = cmdhelp(Some("create_only")).unwrap_err().to_string();
        assert_eq!(err, format!("option 'create_only' (command line): {why}"));
        let err = parse(&args(&["--name=t", "--size=1m", "--create_only=1"]))
            .unwrap_err()
            .to_string();
        assert_eq!(err, format!("option 'create_only' (command line): {why}"));
        let err = cmdhelp(Some("bss")).unwrap_err().to_string();
        assert!(err.starts_with("unknown option 'bss'"), "{err}");
        assert!(
            enghelp()
                .lines()
                .any(|l| l.starts_with("psync") && l.ends_with("available"))
        );
        assert_eq!(
            enghelp().lines().count(),
            hybrio::engine::EngineKind::ALL.len() + BENCH_ENGINES.len()
        );
        assert!(enghelp().lines().any(|l| l.starts_with("e4defrag ")));
    }

    #[test]
    fn command_line_options_missing_later_job_files_are_noted() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, "[j]\nsize=1m\n").unwrap();
            path.display().to_string()
        };
        let (a, b) = (file("a.fio"), file("b.fio"));
        let notes = |words: &[&str]| match parse(&args(words)).unwrap() {
            Command::Run { notes, .. } => notes,
            other => panic!("expected a run, got {other:?}"),
        };
        let said = notes(&["--iodepth=2", "--direct", &a, &b]);
        assert_eq!(
            said,
            [format!(
                "as in fio, --iodepth=2 --direct applies to {a} only, not to {b}"
            )]
        );
        assert!(notes(&["--iodepth=2", &a]).is_empty());
        assert!(notes(&[&a, &b]).is_empty());
        // Options of a command-line job are its own: nothing to say.
        assert!(notes(&["--name=x", "--size=1m", &a, &b]).is_empty());
    }
}
