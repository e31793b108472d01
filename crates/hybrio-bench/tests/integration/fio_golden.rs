//! Job files and command lines read as fio 3.33 reads them: for each case of
//! `tests/fio-3.33/golden/`, hybrio's jobs must be fio's jobs. The fixtures are
//! what fio wrote for the same case (`tools/fio-golden.sh` made them):
//!
//! - its job lines (`name: (g=N): rw=..., bs=(R) ..., ioengine=..., iodepth=N`,
//!   `...` for clones), compared line for line: name, group, rw, every
//!   direction's block sizes, engine and depth as fio resolved them;
//! - its JSON: the jobs in order with their names, groups, options as given
//!   and depth, the global options, which directions moved bytes and how many
//!   (the job's size as fio resolved it);
//! - the files it laid out, with their sizes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-3.33/golden")
}

/// The inputs every case may read: job files, included files, argument and
/// environment files.
fn is_input(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("fio" | "inc" | "args" | "env")
    )
}

struct Case {
    name: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let stem = path.file_stem()?.to_str()?.to_string();
            let args = match path.extension()?.to_str()? {
                "fio" => vec![format!("{stem}.fio")],
                "args" => std::fs::read_to_string(&path)
                    .unwrap()
                    .lines()
                    .map(str::to_string)
                    .collect(),
                _ => return None,
            };
            let env = std::fs::read_to_string(path.with_extension("env"))
                .map(|text| {
                    text.lines()
                        .map(|line| {
                            let (key, value) = line.split_once('=').unwrap();
                            (key.to_string(), value.to_string())
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(Case {
                name: stem,
                args,
                env,
            })
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn fixture(case: &Case, extension: &str) -> String {
    let path = golden_dir().join(format!("{}.{extension}", case.name));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (tools/fio-golden.sh writes the fixtures)",
            path.display()
        )
    })
}

/// Runs hybrio on the case in a fresh directory holding a copy of the inputs;
/// returns its stdout and the directory.
fn run_case(case: &Case, format: &str) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        if is_input(&path) {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .arg(format!("--output-format={format}"))
        // What fio 3.33 wrote: its JSON leaves out options given bare.
        .arg("--fio-compat=3.33")
        .args(&case.args)
        .envs(case.env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: hybrio {:?} failed: {}",
        case.name,
        case.args,
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), dir)
}

/// The job lines at the top of a normal report, up to the version line.
fn job_lines<'a>(report: &'a str, version_prefix: &str) -> Vec<&'a str> {
    report
        .lines()
        .take_while(|line| !line.starts_with(version_prefix))
        .collect()
}

/// The JSON document in fio's stdout: fio writes notes such as "queue depth
/// will be capped at 1" ahead of it (fio issue #731), hybrio to stderr.
fn document(stdout: &str) -> Value {
    let start = stdout.find("\n{\n").map_or(0, |at| at + 1);
    serde_json::from_str(&stdout[start..]).unwrap()
}

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// What a job of the JSON says of how fio (or hybrio) read it.
#[derive(Debug, PartialEq)]
struct JobSeen {
    name: Value,
    group: Value,
    own_options: Option<Value>,
    depth: Value,
    directions_with_io: Vec<&'static str>,
}

fn seen(job: &Value) -> JobSeen {
    JobSeen {
        name: job["jobname"].clone(),
        group: job["groupid"].clone(),
        own_options: job.get("job options").cloned(),
        depth: job["latency_depth"].clone(),
        directions_with_io: DIRECTIONS
            .into_iter()
            .filter(|d| job[d]["io_bytes"].as_u64().unwrap() > 0)
            .collect(),
    }
}

fn bytes_moved(job: &Value) -> u64 {
    DIRECTIONS
        .iter()
        .map(|d| job[d]["io_bytes"].as_u64().unwrap())
        .sum()
}

/// A job mixing directions of different block sizes moves an amount that
/// depends on the order its random generator picks them in (and fio's random
/// map ends such a job early: 244 KiB of a 1 MiB randrw job with bs=4k,16k,
/// the full 1 MiB and one I/O more with norandommap), so its total says
/// nothing of how its size was read.
fn total_is_determined(job: &Value) -> bool {
    let sizes: Vec<(u64, u64)> = DIRECTIONS
        .iter()
        .filter(|d| job[**d]["io_bytes"].as_u64().unwrap() > 0)
        .map(|d| {
            let dir = &job[*d];
            (
                dir["io_bytes"].as_u64().unwrap(),
                dir["total_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    sizes.len() <= 1
        || sizes
            .windows(2)
            .all(|pair| pair[0].0 * pair[1].1 == pair[1].0 * pair[0].1)
}

/// "name size" for each file the run laid out, as `find -printf '%P %s'`
/// prints them, sorted.
fn files_laid_out(dir: &Path) -> String {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::metadata(&path).unwrap();
            if meta.is_dir() {
                pending.push(path);
            } else if !is_input(&path) {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.insert(name, meta.len());
            }
        }
    }
    files
        .iter()
        .map(|(name, size)| format!("{name} {size}\n"))
        .collect()
}

fn check(case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let fio_report = fixture(case, "out");
    let (report, _dir) = run_case(case, "normal");
    let (theirs, ours) = (
        job_lines(&fio_report, "fio-"),
        job_lines(&report, "hybrio-"),
    );
    if theirs.is_empty() {
        problems.push("no job lines in fio's report".to_string());
    }
    if theirs != ours {
        problems.push(format!(
            "job lines:\n  fio:    {}\n  hybrio: {}",
            theirs.join("\n          "),
            ours.join("\n          ")
        ));
    }
    // fio's "Laying out IO file" lines: in the normal report, not elsewhere.
    let laying_out = |report: &str| -> Vec<String> {
        report
            .lines()
            .filter(|line| line.contains(": Laying out IO file"))
            .map(str::to_string)
            .collect()
    };
    if laying_out(&fio_report) != laying_out(&report) {
        problems.push(format!(
            "layout lines: fio {:?}, hybrio {:?}",
            laying_out(&fio_report),
            laying_out(&report)
        ));
    }

    let fio = document(&fixture(case, "json"));
    let (stdout, dir) = run_case(case, "json");
    let hybrio = document(&stdout);
    if fio.get("global options") != hybrio.get("global options") {
        problems.push(format!(
            "global options: fio {:?}, hybrio {:?}",
            fio.get("global options"),
            hybrio.get("global options")
        ));
    }
    let (fio_jobs, jobs) = (
        fio["jobs"].as_array().unwrap(),
        hybrio["jobs"].as_array().unwrap(),
    );
    if fio_jobs.len() != jobs.len() {
        problems.push(format!(
            "{} jobs in fio's JSON, {} in hybrio's",
            fio_jobs.len(),
            jobs.len()
        ));
    }
    for (theirs, ours) in fio_jobs.iter().zip(jobs) {
        let (fio_seen, hybrio_seen) = (seen(theirs), seen(ours));
        if fio_seen != hybrio_seen {
            problems.push(format!(
                "job:\n  fio:    {fio_seen:?}\n  hybrio: {hybrio_seen:?}"
            ));
        } else if total_is_determined(theirs) && bytes_moved(theirs) != bytes_moved(ours) {
            problems.push(format!(
                "job {}: fio moved {} bytes, hybrio {}",
                theirs["jobname"],
                bytes_moved(theirs),
                bytes_moved(ours)
            ));
        }
    }

    let (fio_files, files) = (fixture(case, "files"), files_laid_out(dir.path()));
    if fio_files != files {
        problems.push(format!("files laid out: fio\n{fio_files}hybrio\n{files}"));
    }
    problems
}

#[test]
fn jobs_read_from_job_files_and_command_lines_are_fios_jobs() {
    let cases = cases();
    assert!(cases.len() >= 10, "only {} golden cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|case| {
            check(case)
                .into_iter()
                .map(move |problem| format!("{}: {problem}", case.name))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
