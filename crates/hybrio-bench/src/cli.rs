//! The command line: hybrio's own flags, then fio's job options in fio's
//! order-sensitive form (`--name=` starts a job), then job files.

use std::path::PathBuf;

use crate::jobfile::{self, GlobalOptions, JobDef, JobError, Section};
use crate::options::{self, Kind};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's human-readable text.
    Normal,
    /// fio's JSON.
    Json,
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
    },
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
}

/// Seconds per cell of the default comparison: 4 workloads x 3 engines x 3
/// rounds plus the null engine stay under a minute.
pub const DEFAULT_COMPARE_SECONDS: f64 = 1.0;

/// hybrio's usage text.
pub const USAGE: &str = "\
usage: hybrio [OPTIONS] [--name=JOB --OPTION=VALUE ...] [JOBFILE ...]

With no arguments, hybrio compares its engines (sync, psync, io_uring, null) on a
temporary file in the current directory and prints a side-by-side table.

hybrio options:
  --output-format=FORMAT   normal (default) or json, or both: normal,json
  --output=FILE            write the report to FILE instead of standard output
  --parse-only             check the jobs and exit
  --cmdhelp[=OPTION]       list job options (or describe one)
  --enghelp                list the engines and whether this system allows each
  --compare-seconds=SECS   seconds per cell of the default comparison (default 1.0)
  --compare-dir=DIR        directory for the default comparison's file (default .)
  --version, --help

Job options are fio's: --name=JOB starts a job and the options after it apply to
it; options before the first --name apply to every job. Job files use fio's ini
format ([global] and [job] sections).";

/// Reads the command line (without the program name).
pub fn parse(args: &[String]) -> Result<Command, CliError> {
    if args.is_empty() {
        return Ok(Command::DefaultComparison {
            seconds: DEFAULT_COMPARE_SECONDS,
            directory: None,
        });
    }
    let mut formats = vec![Format::Normal];
    let mut output = None;
    let mut parse_only = false;
    let mut compare: Option<(f64, Option<PathBuf>)> = None;
    let mut job_args: Vec<String> = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        let Some(flag) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-').filter(|_| arg.len() > 1))
        else {
            files.push(PathBuf::from(arg));
            continue;
        };
        let (key, inline_value) = match flag.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (flag, None),
        };
        let mut value_for = |flag: &'static str| -> Result<String, CliError> {
            inline_value
                .clone()
                .or_else(|| iter.next().cloned())
                .ok_or(CliError::Flag {
                    flag,
                    message: "needs a value".into(),
                })
        };
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
            "output" => output = Some(PathBuf::from(value_for("output")?)),
            "output-format" => formats = parse_formats(&value_for("output-format")?)?,
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
            _ => {
                // A job option: keep it in order; `--opt value` takes the next argument
                // unless the option is a boolean switch.
                let takes_value = options::find(key).is_some_and(|o| o.kind != Kind::Bool);
                let value = match inline_value {
                    Some(v) => Some(v),
                    None if takes_value
                        && iter.peek().is_some_and(|next| !next.starts_with('-')) =>
                    {
                        iter.next().cloned()
                    }
                    None => None,
                };
                job_args.push(match value {
                    Some(v) => format!("{key}={v}"),
                    None => key.to_string(),
                });
            }
        }
    }
    if let Some((seconds, directory)) = compare
        && job_args.is_empty()
        && files.is_empty()
    {
        return Ok(Command::DefaultComparison { seconds, directory });
    }
    let mut sections: Vec<Section> =
        jobfile::sections_from_args(job_args.iter().map(String::as_str));
    for path in &files {
        let text = std::fs::read(path).map_err(|source| JobError::Read {
            path: path.clone(),
            source,
        })?;
        let text = String::from_utf8(text).map_err(|_| JobError::Read {
            path: path.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a text file (invalid UTF-8)",
            ),
        })?;
        // Options given before the first --name on the command line are
        // defaults for the job files too, as in fio.
        sections.extend(jobfile::parse_job_file(path, &text)?);
    }
    let (jobs, globals) = jobfile::resolve(&sections)?;
    Ok(Command::Run {
        jobs,
        globals,
        formats,
        output,
        parse_only,
    })
}

fn parse_formats(text: &str) -> Result<Vec<Format>, CliError> {
    let mut formats = Vec::new();
    for word in text.split(',') {
        let format = match word.trim() {
            "normal" => Format::Normal,
            "json" => Format::Json,
            "json+" | "terse" => {
                return Err(CliError::Flag {
                    flag: "output-format",
                    message: format!(
                        "'{word}' is not supported by hybrio yet (use normal or json)"
                    ),
                });
            }
            other => {
                return Err(CliError::Flag {
                    flag: "output-format",
                    message: format!("unknown format '{other}' (allowed: normal, json)"),
                });
            }
        };
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    Ok(formats)
}

/// `--enghelp` text: every engine, and why this system refuses any it refuses.
pub fn enghelp() -> String {
    hybrio::engine::EngineKind::ALL
        .iter()
        .map(|kind| match hybrio::probe::engine_available(*kind) {
            Ok(()) => format!("{:<10} available", kind.name()),
            Err(reason) => format!("{:<10} unavailable: {reason}", kind.name()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--cmdhelp` text: every option, or one.
pub fn cmdhelp(option: Option<&str>) -> Result<String, CliError> {
    match option {
        None => Ok(options::OPTIONS
            .iter()
            .map(|o| o.help_line())
            .collect::<Vec<_>>()
            .join("\n")),
        Some(name) => options::find(name).map(|o| o.help_line()).ok_or_else(|| {
            CliError::Job(JobError::UnknownOption {
                name: name.to_string(),
                origin: jobfile::Origin::CommandLine,
                suggestion: options::suggest(name),
            })
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
    fn no_arguments_is_the_default_comparison() {
        assert!(matches!(
            parse(&[]).unwrap(),
            Command::DefaultComparison { .. }
        ));
        assert!(cmdhelp(None).unwrap().contains("iodepth_batch_submit"));
        assert!(cmdhelp(Some("bs")).unwrap().starts_with("bs "));
        assert!(
            enghelp()
                .lines()
                .any(|l| l.starts_with("psync") && l.ends_with("available"))
        );
        assert_eq!(
            enghelp().lines().count(),
            hybrio::engine::EngineKind::ALL.len()
        );
    }
}
