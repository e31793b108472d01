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
            eprintln!("hybrio: {error}");
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
        Command::ShowCmd(text) => println!("{text}"),
        Command::Compare {
            jobs,
            engines,
            rounds,
            format,
            output,
        } => {
            hybrio::interrupt::catch_signals()?;
            let comparison =
                compare::compare(&jobs, &engines, rounds, &mut |line| eprintln!("{line}"))?;
            let text = match format {
                Format::Normal => comparison.text(),
                Format::Json => comparison.json(),
                // The flag parser refuses it; kept an error, not a panic.
                Format::Terse => anyhow::bail!("compare writes normal or json, not terse"),
            };
            match &output {
                Some(path) => std::fs::write(path, &text)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
                None => print!("{text}"),
            }
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
        } => {
            if parse_only {
                return Ok(ExitCode::SUCCESS);
            }
            let mut text = String::new();
            let to_stdout = output.is_none();
            if formats == [Format::Normal] && to_stdout {
                print!("{}", run::banners(&jobs));
                std::io::stdout().flush().ok();
            }
            // Ctrl-C stops the jobs, which then report what they measured, as fio does.
            hybrio::interrupt::catch_signals()?;
            let report = run::run(&jobs, &globals, &mut |line| eprintln!("{line}"))?;
            for format in &formats {
                match format {
                    Format::Normal => text.push_str(&output::normal::render(&report)),
                    Format::Json => text.push_str(&output::json::render(&report)),
                    Format::Terse => text.push_str(&output::terse::render(&report)),
                }
            }
            match &output {
                Some(path) => std::fs::write(path, &text)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
                None => print!("{text}"),
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
