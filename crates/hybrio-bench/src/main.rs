//! `hybrio`: a fio-compatible storage benchmark on the hybrio engine library.
#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;

use hybrio_bench::cli::{self, Command, Format};
use hybrio_bench::{compare, output, run};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match real_main(&args) {
        Ok(code) => code,
        Err(error) => {
            // One line: every error message carries its own context.
            eprintln!("hybrio: {}", cli::one_line(&error.to_string()));
            ExitCode::from(1)
        }
    }
}

fn real_main(args: &[String]) -> anyhow::Result<ExitCode> {
    match cli::parse(args)? {
        Command::Help => println!("{}", cli::USAGE),
        Command::Version => println!("{}", run::version()),
        Command::EngHelp => println!("{}", cli::enghelp()),
        Command::CmdHelp(option) => println!("{}", cli::cmdhelp(option.as_deref())?),
        Command::CompareHelp => println!("{}", cli::COMPARE_USAGE),
        Command::Report {
            inputs,
            output,
            svg,
            figure,
        } => {
            let mut documents = Vec::with_capacity(inputs.len());
            for input in &inputs {
                let name = input.display().to_string();
                let text = std::fs::read_to_string(input)
                    .map_err(|e| anyhow::anyhow!("cannot read {name}: {e}"))?;
                documents.push((name.clone(), json_document(&name, &text)?));
            }
            let text = if svg {
                let (name, doc) = &documents[0];
                output::html::results_svg(doc, &figure)
                    .map_err(|e| anyhow::anyhow!("{name}: {e}"))?
            } else {
                output::html::render_documents(&documents).map_err(anyhow::Error::msg)?
            };
            write_to(output.as_deref(), &text)?;
        }
        Command::ShowCmd(text) => println!("{text}"),
        Command::Compare {
            jobs,
            engines,
            rounds,
            format,
            output,
            mpi,
            notes,
        } => {
            for note in notes {
                eprintln!("hybrio: note: {note}");
            }
            hybrio::interrupt::catch_signals()?;
            let comparison = if mpi {
                // Rank 0 alone writes; the other ranks only run.
                match compare_across_ranks(&jobs, &engines, rounds)? {
                    Some(comparison) => comparison,
                    None => return Ok(ExitCode::SUCCESS),
                }
            } else {
                compare::compare(&jobs, &engines, rounds, &mut |line| eprintln!("{line}"))?
            };
            let text = match format {
                Format::Normal => comparison.text(),
                Format::Json => comparison.json(),
                // Drawn from the JSON document, as `hybrio report` draws a saved one.
                Format::Html => {
                    let doc = serde_json::from_str(&comparison.json())?;
                    output::html::render_documents(&[("hybrio compare".into(), doc)])
                        .map_err(anyhow::Error::msg)?
                }
                // The flag parser refuses it; kept an error, not a panic.
                Format::Terse | Format::JsonPlus => {
                    anyhow::bail!("compare writes normal, json or html")
                }
            };
            write_to(output.as_deref(), &text)?;
        }
        Command::DefaultComparison { seconds, directory } => {
            hybrio::interrupt::catch_signals()?;
            let directory = directory.unwrap_or_else(|| ".".into());
            let table =
                compare::default_comparison(&directory, seconds, &mut |line| eprintln!("{line}"))?;
            println!("{table}");
        }
        Command::Run {
            jobs,
            globals,
            formats,
            output,
            parse_only,
            mpi,
            status_interval,
            bandwidth_log,
            notes,
        } => {
            for note in notes {
                eprintln!("hybrio: note: {note}");
            }
            if parse_only {
                return Ok(ExitCode::SUCCESS);
            }
            if mpi {
                if status_interval.is_some() {
                    anyhow::bail!(
                        "--mpi takes no --status-interval: rank 0 reports once, at the end"
                    );
                }
                if bandwidth_log.is_some() {
                    anyhow::bail!(
                        "--mpi takes no --bandwidth-log: each rank's jobs log their own (write_bw_log)"
                    );
                }
                return run_across_ranks(&jobs, &globals, &formats, output.as_deref());
            }
            // With other formats, the page goes to a file of its own.
            let page_path = (formats.contains(&Format::Html) && formats.len() > 1)
                .then(|| page_beside(output.as_deref()));
            let out: Box<dyn Write> = match &output {
                Some(path) => Box::new(
                    std::fs::File::create(path)
                        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
                ),
                None => Box::new(std::io::stdout()),
            };
            // The report's writer is shared: fio's lines as the run goes
            // (normal output's "Laying out IO file") go to it too.
            let out = std::cell::RefCell::new(out);
            let normal = formats.contains(&Format::Normal);
            // fio starts its normal report with each job's line; with other
            // formats too (normal,json), but not without it.
            if normal {
                let mut out = out.borrow_mut();
                out.write_all(run::banners(&jobs).as_bytes())?;
                out.flush()?;
            }
            // With status reports, each JSON document is one line (JSON Lines), the
            // final one too, so that the whole output stays readable line by line.
            let json_lines = status_interval.is_some();
            let mut write_error = None;
            // The page is drawn once, from the final report; status reports
            // (`--status-interval`) go out in the other formats.
            let last = std::cell::Cell::new(false);
            let page_alone = formats == [Format::Html];
            let text_formats: Vec<Format> = formats
                .iter()
                .copied()
                .filter(|f| *f != Format::Html)
                .collect();
            let mut emit = |report: &output::RunReport| {
                let formats = match (page_alone, last.get()) {
                    (true, true) => vec![Format::Html],
                    (true, false) => Vec::new(),
                    (false, _) => text_formats.clone(),
                };
                let text = render(report, &formats, json_lines);
                let mut out = out.borrow_mut();
                if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                    write_error.get_or_insert(e);
                }
            };
            let mut notice = |notice: run::Notice<'_>| match notice {
                run::Notice::LayingOut(line) if normal => {
                    let mut out = out.borrow_mut();
                    // A failed write shows again, and is reported, with the report.
                    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
                }
                run::Notice::LayingOut(_) => {}
                run::Notice::Problem(line) => eprintln!("{line}"),
            };
            // Ctrl-C stops the jobs, which then report what they measured, as fio does.
            hybrio::interrupt::catch_signals()?;
            let status = status_interval.map(|every| run::StatusReports::new(every, &mut emit));
            let mut bandwidth_log = bandwidth_log
                .map(|name| hybrio_bench::logs::AggregateLog::create(&name))
                .transpose()?;
            let report =
                run::run_reporting(&jobs, &globals, &mut notice, status, bandwidth_log.as_mut())?;
            if let Some(log) = bandwidth_log {
                log.finish()?;
            }
            last.set(true);
            emit(&report);
            if let Some(path) = &page_path {
                write_to(Some(path), &output::html::render(&report))?;
                eprintln!("hybrio: report page written to {}", path.display());
            }
            if let Some(e) = write_error {
                let place = output
                    .as_ref()
                    .map_or("standard output".into(), |p| p.display().to_string());
                anyhow::bail!("cannot write {place}: {e}");
            }
            let failures = run::failures(&report);
            for failure in &failures {
                eprintln!("hybrio: {failure}");
            }
            if hybrio::interrupt::requested() {
                eprintln!("hybrio: interrupted: the report covers the run until the interrupt");
                return Ok(ExitCode::from(130));
            }
            if !failures.is_empty() {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `hybrio --mpi`: this rank's part of the run; rank 0 writes the report.
#[cfg(feature = "mpi")]
fn run_across_ranks(
    jobs: &[hybrio_bench::jobfile::JobDef],
    globals: &hybrio_bench::jobfile::GlobalOptions,
    formats: &[Format],
    output: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    use hybrio_bench::across_ranks;
    hybrio::interrupt::catch_signals()?;
    // Kept until the report is written: MPI ends when it is dropped.
    let cluster = across_ranks::join()?;
    let run = across_ranks::run_with(&cluster, jobs, globals, &mut |notice| match notice {
        run::Notice::LayingOut(line) | run::Notice::Problem(line) => eprintln!("{line}"),
    })?;
    // The other ranks end well once their figures are sent: rank 0 reports
    // (mpirun kills every rank as soon as one exits with an error).
    let Some(ranks) = run.merged else {
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(report) = &ranks.report {
        let mut text = render(report, formats, false);
        if formats.contains(&Format::Normal) {
            text.push_str(&across_ranks::rank_lines(report));
        }
        write_to(output, &text)?;
    }
    for failure in &ranks.failures {
        eprintln!("hybrio: {failure}");
    }
    // A failure first: another rank's stops this one's jobs as Ctrl-C does.
    Ok(if !ranks.failures.is_empty() || ranks.report.is_none() {
        ExitCode::from(1)
    } else if hybrio::interrupt::requested() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// What `--mpi` says in a build without MPI.
#[cfg(not(feature = "mpi"))]
const NO_MPI: &str = "--mpi: this hybrio was built without MPI (cargo build --release --features mpi, with Open MPI's libopenmpi-dev and libclang-dev installed)";

/// `hybrio compare --mpi`: this rank's part; the comparison at rank 0.
#[cfg(feature = "mpi")]
fn compare_across_ranks(
    jobs: &[hybrio_bench::jobfile::JobDef],
    engines: &[hybrio::engine::EngineKind],
    rounds: usize,
) -> anyhow::Result<Option<compare::Comparison>> {
    use hybrio_bench::across_ranks;
    let cluster = across_ranks::join()?;
    let root = cluster.rank() == 0;
    let mut runner = across_ranks::compare_runner(&cluster);
    let comparison = compare::compare_with(
        jobs,
        engines,
        rounds,
        &mut |line| {
            if root {
                eprintln!("{line}");
            }
        },
        &mut runner,
    )?;
    Ok(root.then_some(comparison))
}

/// `hybrio compare --mpi` in a build without MPI.
#[cfg(not(feature = "mpi"))]
fn compare_across_ranks(
    _jobs: &[hybrio_bench::jobfile::JobDef],
    _engines: &[hybrio::engine::EngineKind],
    _rounds: usize,
) -> anyhow::Result<Option<compare::Comparison>> {
    anyhow::bail!(NO_MPI)
}

/// `hybrio --mpi` in a build without MPI.
#[cfg(not(feature = "mpi"))]
fn run_across_ranks(
    _jobs: &[hybrio_bench::jobfile::JobDef],
    _globals: &hybrio_bench::jobfile::GlobalOptions,
    _formats: &[Format],
    _output: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    anyhow::bail!(NO_MPI)
}

/// `text` into `path`, or to standard output.
fn write_to(path: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Where the page goes when other formats take `--output` (or standard
/// output): that name with `.html`, or `hybrio-report.html`.
fn page_beside(output: Option<&std::path::Path>) -> std::path::PathBuf {
    match output {
        Some(path) if path.extension().is_some_and(|e| e == "html") => {
            let mut name = path.as_os_str().to_owned();
            name.push(".page.html");
            name.into()
        }
        Some(path) => path.with_extension("html"),
        None => "hybrio-report.html".into(),
    }
}

/// A saved JSON report: one document, or, written with `--status-interval`,
/// one per line (JSON Lines), of which the last is the run's.
fn json_document(name: &str, text: &str) -> anyhow::Result<serde_json::Value> {
    if let Ok(doc) = serde_json::from_str(text) {
        return Ok(doc);
    }
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or_else(|| anyhow::anyhow!("{name}: not a JSON report (nor JSON Lines)"))
}

/// One report in each of `formats`, in order; JSON on one line when `json_lines`.
fn render(report: &output::RunReport, formats: &[Format], json_lines: bool) -> String {
    let mut text = String::new();
    for format in formats {
        match format {
            Format::Normal => text.push_str(&output::normal::render(report)),
            Format::Json if json_lines => {
                text.push_str(&output::json_line(&output::json::render(report)));
                text.push('\n');
            }
            Format::Json => text.push_str(&output::json::render(report)),
            Format::JsonPlus if json_lines => {
                text.push_str(&output::json_line(&output::json::render_plus(report)));
                text.push('\n');
            }
            Format::JsonPlus => text.push_str(&output::json::render_plus(report)),
            Format::Terse => text.push_str(&output::terse::render(report)),
            Format::Html => text.push_str(&output::html::render(report)),
        }
    }
    text
}
