//! The command line's reader on arbitrary arguments (one per line of the
//! input): hybrio's flags, fio's options in their `--name=value` form, and job
//! file names must give a command or an error of one line, never a panic. Job
//! files named are read as the binary reads them; most names do not exist.
#![no_main]

use hybrio_bench::cli;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let args: Vec<String> = text.lines().map(str::to_string).collect();
    if let Err(error) = cli::parse(&args) {
        let line = cli::one_line(&error.to_string());
        assert!(!line.contains('\n'), "{line:?}");
    }
});
