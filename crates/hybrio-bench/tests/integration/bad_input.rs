//! Malformed job files and command lines: each is refused with exit status
//! 1 and one line on stderr that names what is wrong, never a panic.
//! The cases are in `tests/bad-input/cases.txt`; those too big or too binary
//! to commit are made here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-input")
}

fn hybrio(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("hybrio runs")
}

/// Why `out` is not a clean refusal containing `fragment`, if it is not.
/// Nothing may reach stdout unless the jobs were started (`ran`): fio too
/// prints each job's banner before a failure at run time.
fn refusal_problem(out: &Output, fragment: &str, ran: bool) -> Option<String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    if out.status.code() != Some(1) {
        return Some(format!(
            "exit status {:?}, stderr: {stderr}",
            out.status.code()
        ));
    }
    if lines.len() != 1 || lines[0].trim().is_empty() {
        return Some(format!("{} lines on stderr: {stderr}", lines.len()));
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        return Some(format!("a panic: {stderr}"));
    }
    if !ran && !out.stdout.is_empty() {
        return Some(format!(
            "output on stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    if !stderr.contains(fragment) {
        return Some(format!("no '{fragment}' in: {stderr}"));
    }
    None
}

#[test]
fn every_case_of_the_corpus_is_refused_in_one_line() {
    let manifest = std::fs::read_to_string(corpus().join("cases.txt")).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut cases = 0;
    let mut problems = Vec::new();
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (case, fragment) = line.split_once(" | ").unwrap_or((line, ""));
        let (case, fragment) = (case.trim(), fragment.trim());
        let words: Vec<&str> = case.split_whitespace().collect();
        let out = match words[0] {
            "args" => {
                let mut args = vec!["--parse-only"];
                args.extend(&words[1..]);
                hybrio(&args, scratch.path())
            }
            "run" => hybrio(&words[1..], scratch.path()),
            file => hybrio(&["--parse-only", file], &corpus()),
        };
        cases += 1;
        if let Some(problem) = refusal_problem(&out, fragment, words[0] == "run") {
            problems.push(format!("{case}: {problem}"));
        }
    }
    assert!(cases >= 60, "only {cases} cases");
    assert!(
        problems.is_empty(),
        "{} of {cases} cases:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn huge_binary_and_deep_inputs_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
    // A 1 MB value, a 1 MB option name, a 1 MB section name.
    let mut long = b"[job]\nsize=1m\nbs=".to_vec();
    long.extend(std::iter::repeat_n(b'9', 1 << 20));
    write("long-value.fio", &long);
    let mut long = b"[job]\nsize=1m\n".to_vec();
    long.extend(std::iter::repeat_n(b'x', 1 << 20));
    long.extend(b"=1\n");
    write("long-name.fio", &long);
    let mut long = b"[".to_vec();
    long.extend(std::iter::repeat_n(b'j', 1 << 20));
    write("long-section.fio", &long);
    // Bytes that are no text: seeded noise, NULs, invalid UTF-8.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    write("noise.fio", &noise);
    write("nul.fio", b"[job]\nsize=1m\0\n");
    write("latin1.fio", b"[job]\nsize=1m\nname=caf\xe9\n");
    // An include chain deeper than any job file needs.
    for i in 0..40 {
        let text = format!("bs=4k\ninclude chain{}.fio\n", i + 1);
        write(&format!("chain{i}.fio"), text.as_bytes());
    }
    write("deep.fio", b"[job]\nsize=1m\ninclude chain0.fio\n");
    let mut problems = Vec::new();
    for (case, fragment) in [
        ("long-value.fio", "long-value.fio:3"),
        ("long-name.fio", "long-name.fio:3"),
        ("long-section.fio", "long-section.fio:1"),
        ("noise.fio", "noise.fio"),
        ("nul.fio", "nul.fio"),
        ("latin1.fio", "latin1.fio"),
        ("deep.fio", "nested more than 16"),
    ] {
        let out = hybrio(&["--parse-only", case], dir.path());
        if let Some(problem) = refusal_problem(&out, fragment, false) {
            // The whole line, cut: a refusal must not echo a megabyte back.
            problems.push(format!(
                "{case}: {}",
                problem.chars().take(300).collect::<String>()
            ));
        }
        let stderr_len = out.stderr.len();
        if stderr_len > 4096 {
            problems.push(format!("{case}: {stderr_len} bytes of error"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// seeds/001 runs 512 jobs: each opens its file (and a ring or an AIO
/// context), so the process's open-file limit is reached first. The run
/// stops in one line naming the limit and how to raise it, before any job
/// has made an engine.
#[test]
fn jobs_past_the_open_file_limit_are_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("many.fio"),
        "[global]\nfilename=many.dat\nsize=64k\nrw=randread\nbs=4k\nioengine=psync\nthread\n\
         [j]\nnumjobs=64\n",
    )
    .unwrap();
    // Laid out beforehand: fio's layout note would be a second line.
    std::fs::write(dir.path().join("many.dat"), vec![7u8; 64 << 10]).unwrap();
    let out = Command::new("sh")
        .args(["-c", "ulimit -n 40 && exec \"$0\" many.fio"])
        .arg(env!("CARGO_BIN_EXE_hybrio"))
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    if let Some(problem) = refusal_problem(&out, "RLIMIT_NOFILE is 40", true) {
        panic!("{problem}");
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains("ulimit -Hn"));
}

/// The other side of the open-file limit: an io_uring or adaptive job's
/// ring gives its descriptor back before the jobs start (where the kernel
/// names rings by index, Linux 6.3), so jobs that need a file each fit
/// where a file and a ring each would not: 24 jobs under `ulimit -n 40`
/// each read their 16 blocks (their files stay cached, as seeds/001's: a
/// job that drops them keeps a second descriptor of each to do it with).
#[test]
fn ring_jobs_need_a_descriptor_for_their_file_only() {
    if !hybrio::probe::ring_gives_descriptor_back() {
        eprintln!("skipping: this kernel names a ring by its descriptor only (before Linux 6.3)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("many.dat"), vec![7u8; 64 << 10]).unwrap();
    for engine in ["io_uring", "adaptive"] {
        std::fs::write(
            dir.path().join("many.fio"),
            format!(
                "[global]\nfilename=many.dat\nsize=64k\nrw=randread\nbs=4k\nioengine={engine}\n\
                 invalidate=0\nthread\n[j]\nnumjobs=24\n"
            ),
        )
        .unwrap();
        let out = Command::new("sh")
            .args([
                "-c",
                "ulimit -n 40 && exec \"$0\" --output-format=json many.fio",
            ])
            .arg(env!("CARGO_BIN_EXE_hybrio"))
            .current_dir(dir.path())
            .output()
            .expect("sh runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{engine}: {stderr}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let jobs = doc["jobs"].as_array().unwrap();
        let ios: u64 = jobs
            .iter()
            .map(|job| job["read"]["total_ios"].as_u64().unwrap())
            .sum();
        assert_eq!(ios, 24 * 16, "{engine}: {stderr}");
    }
}

/// seeds/001's other system-wide limit: Linux AIO's events. Jobs that need
/// more than fs.aio-max-nr leaves are refused before anything starts (no
/// file is laid out), naming the sysctl and the value that would do.
#[test]
fn libaio_jobs_past_aio_max_nr_are_refused_before_the_run() {
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/proc/sys/fs/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (Some(used), Some(max)) = (read("aio-nr"), read("aio-max-nr")) else {
        eprintln!("skipping: no /proc/sys/fs/aio-max-nr here");
        return;
    };
    // 64 jobs whose depths together are past what is left (no sysctl is
    // changed: other tests use Linux AIO beside this one).
    let depth = (max.saturating_sub(used)) / 64 + 1;
    if depth > 65_536 {
        eprintln!("skipping: fs.aio-max-nr is too high to go past with 64 jobs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = format!(
        "[global]\nfilename=aio.dat\nsize=64k\nrw=randread\nbs=4k\nioengine=libaio\nthread\n\
         [j]\nnumjobs=64\niodepth={depth}\n"
    );
    std::fs::write(dir.path().join("aio.fio"), job).unwrap();
    let out = hybrio(&["aio.fio"], dir.path());
    if let Some(problem) = refusal_problem(&out, "sysctl -w fs.aio-max-nr=", true) {
        panic!("{problem}");
    }
    assert!(
        !dir.path().join("aio.dat").exists(),
        "the run laid out its file before it was refused"
    );
}

/// Uncached I/O (`uncached=1`) on an engine without per-request flags, and
/// on a filesystem that refuses it: one line each, before any I/O.
#[test]
fn uncached_io_where_it_cannot_go_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=x",
            "--size=1m",
            "--rw=write",
            "--ioengine=psync",
            "--uncached=1",
        ],
        dir.path(),
    );
    if let Some(problem) = refusal_problem(&out, "ioengine psync cannot do uncached I/O", true) {
        panic!("psync: {problem}");
    }
    let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("skipping the tmpfs case: no /dev/shm");
        return;
    };
    let file = shm.path().join("x");
    let filename = format!("--filename={}", file.display());
    let out = hybrio(
        &[
            "--name=x",
            &filename,
            "--size=1m",
            "--rw=write",
            "--ioengine=pvsync2",
            "--uncached=1",
        ],
        dir.path(),
    );
    if let Some(problem) = refusal_problem(&out, "tmpfs on Linux", true) {
        panic!("tmpfs: {problem}");
    }
}

#[test]
fn time_based_without_a_runtime_is_fios_warning_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=job",
            "--filename=f",
            "--size=1m",
            "--time_based",
            "--output-format=terse",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("time_based needs runtime=; it runs without time_based"),
        "{stderr}"
    );
}

/// `--mpi` in a build without the `mpi` feature: one line saying how to get one.
#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_in_a_build_without_it_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &["--mpi", "--name=x", "--ioengine=null", "--size=1m"],
        dir.path(),
    );
    if let Some(problem) = refusal_problem(&out, "--features mpi", false) {
        panic!("{problem}");
    }
}
