//! The job-file reader on arbitrary text: parsing, resolving the sections into
//! jobs and writing them back as a command line must return, never panic or
//! hang. The file is placed in a directory that does not exist, so that a
//! relative `include` fails as it would for a missing file.
#![no_main]

use std::path::Path;

use hybrio_bench::jobfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/nonexistent-hybrio-fuzz/job.fio");
    let Ok(sections) = jobfile::parse_job_file(path, text) else {
        return;
    };
    let _ = jobfile::showcmd(&[], &sections);
    let _ = jobfile::resolve(&[], &[sections], &[]);
});
