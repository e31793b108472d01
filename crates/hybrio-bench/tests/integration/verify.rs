//! fio's verify: hybrio checks what fio wrote and fio checks what hybrio
//! wrote, block by block; every engine reads back what it wrote; a changed
//! byte is found and reported as fio reports it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{Fio, engines, fios, hybrio, run_json};

/// Every kind hybrio writes, each with the words that ask for it: the
/// checksums, `meta`, and the pattern after a header (fio 3.40's
/// `pattern_hdr`, `verify_pattern` alone before) and without one.
const KINDS: [&str; 18] = [
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern_hdr",
    "pattern",
];
/// The layouts: sequential, random over the whole file, and random over a
/// quarter of it (which the two tools check alike only if they pick the
/// same blocks: fio's generator, seeds and random map).
const LAYOUTS: [&str; 3] = ["write", "randwrite", "randwrite-quarter"];

/// Runs `fio` with JSON output in `dir`; returns its first job.
pub(super) fn fio_job(fio: &Fio, args: &[&str], dir: &Path) -> Value {
    let out = Command::new(&fio.path)
        .args(args)
        .arg("--output-format=json")
        .current_dir(dir)
        .output()
        .expect("fio runs");
    // A job that failed has fio's error line before the document.
    let start = out.stdout.iter().position(|&b| b == b'{').unwrap_or(0);
    let doc: Value = serde_json::from_slice(&out.stdout[start..]).unwrap_or_else(|e| {
        panic!(
            "fio {} {args:?}: no JSON ({e}): {}{}",
            fio.version,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["jobs"][0].clone()
}

/// A job verifying with `kind`, as `fio` takes it (fio 3.33 has no
/// `pattern_hdr`: `verify_pattern` alone says it).
fn job_args(file: &str, kind: &str, layout: &str, fio: &Fio) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "--name=v".to_string(),
        format!("--filename={file}"),
        "--size=256k".into(),
        "--bs=4k".into(),
    ];
    match kind {
        "pattern_hdr" if fio.version == "3.33" => {}
        kind => args.push(format!("--verify={kind}")),
    }
    if kind.starts_with("pattern") {
        args.push("--verify_pattern=0x5a%o\"ab\"".into());
    }
    match layout.strip_suffix("-quarter") {
        Some(rw) => args.extend([format!("--rw={rw}"), "--filesize=1m".into()]),
        None => args.push(format!("--rw={layout}")),
    }
    args
}

/// hybrio's arguments for a job beside `fio`: the job's, speaking as it.
fn as_fio(args: &[String], fio: &Fio) -> Vec<String> {
    with(args, &[&format!("--fio-compat={}", fio.version)])
}

/// The offset of the `n`-th block (from 0) of 4 KiB that carries a verify
/// header (any block when blocks have none).
fn written_block(file: &Path, n: usize, headers: bool) -> usize {
    let bytes = std::fs::read(file).unwrap();
    bytes
        .chunks(4096)
        .enumerate()
        .filter(|(_, block)| !headers || block[..2] == [0xca, 0xac])
        .nth(n)
        .map(|(i, _)| i * 4096)
        .expect("enough written blocks")
}

fn with(args: &[String], more: &[&str]) -> Vec<String> {
    args.iter()
        .cloned()
        .chain(more.iter().map(|s| s.to_string()))
        .collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Flips one byte of `file` at `offset`.
fn corrupt(file: &Path, offset: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[offset] ^= 0x5a;
    std::fs::write(file, bytes).unwrap();
}

/// With each fio here (3.33 and 3.42) and every kind, sha512 included: what
/// fio writes hybrio checks, what hybrio writes (speaking as that fio) fio
/// checks, and a byte changed in a block is found by both. Every kind in
/// one layout, crc32c in all three.
#[test]
fn fio_and_hybrio_check_each_others_blocks() {
    let fios = fios();
    let dir = tempfile::tempdir().unwrap();
    for fio in &fios {
        for kind in KINDS {
            let layouts: &[&str] = if kind == "crc32c" {
                &LAYOUTS
            } else {
                &["randwrite"]
            };
            for layout in layouts {
                check_each_others(fio, kind, layout, dir.path());
            }
        }
    }
}

fn check_each_others(fio: &Fio, kind: &str, layout: &str, dir: &Path) {
    let case = format!("fio {} {kind} {layout}", fio.version);
    let headers = kind != "pattern";
    // fio writes, hybrio checks.
    let by_fio = format!("fio{}-{kind}-{layout}", fio.version);
    let args = job_args(&by_fio, kind, layout, fio);
    let written = fio_job(fio, &strs(&with(&args, &["--do_verify=0"])), dir);
    assert_eq!(written["error"], 0, "{case}: fio's write");
    // hybrio checks what either fio wrote speaking as 3.42, its default,
    // except where it must pick the blocks that fio picked.
    let reading = |args: &[String]| match layout {
        "randwrite-quarter" => as_fio(args, fio),
        _ => args.to_vec(),
    };
    let doc = run_json(&strs(&reading(&with(&args, &["--verify_only=1"]))), dir);
    let counts = &doc["hybrio"]["jobs"][0]["verify"];
    assert_eq!(counts["blocks"], 64, "{case}: hybrio checked fio's blocks");
    assert_eq!(counts["bad_blocks"], 0, "{case}");
    assert_eq!(
        doc["jobs"][0]["write"]["io_bytes"], 0,
        "{case}: verify_only writes nothing"
    );

    // hybrio writes (and checks itself), fio checks.
    let by_hybrio = format!("hybrio{}-{kind}-{layout}", fio.version);
    // Laid out whole first: fio 3.42 lays out again (zeros) a file shorter
    // than its filesize, which a random quarter leaves from hybrio.
    std::fs::File::create(dir.join(&by_hybrio))
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let args = as_fio(&job_args(&by_hybrio, kind, layout, fio), fio);
    let doc = run_json(&strs(&args), dir);
    let counts = &doc["hybrio"]["jobs"][0]["verify"];
    assert_eq!(counts["blocks"], 64, "{case}: hybrio read back its own");
    assert_eq!(counts["bad_blocks"], 0, "{case}");
    let fio_args = job_args(&by_hybrio, kind, layout, fio);
    let checked = fio_job(fio, &strs(&with(&fio_args, &["--verify_only=1"])), dir);
    assert_eq!(
        checked["error"], 0,
        "{case}: fio found a bad block of hybrio's"
    );
    assert_eq!(
        checked["read"]["io_bytes"],
        256 * 1024,
        "{case}: fio read it all back"
    );

    // A changed byte in the data (meta: in a header) is found by both.
    // fio 3.38's sha512 covers only the ends of the data: its last byte.
    let within = match kind {
        "meta" => 20,
        "sha512" => 4095,
        _ => 3000,
    };
    let at = written_block(&dir.join(&by_hybrio), 5, headers) + within;
    corrupt(&dir.join(&by_hybrio), at);
    let checked = fio_job(fio, &strs(&with(&fio_args, &["--verify_only=1"])), dir);
    assert_eq!(checked["error"], 84, "{case}: fio missed the change");
    let at = written_block(&dir.join(&by_fio), 5, headers) + within;
    corrupt(&dir.join(&by_fio), at);
    let args = reading(&job_args(&by_fio, kind, layout, fio));
    let out = hybrio(
        &strs(&with(&args, &["--verify_only=1", "--output-format=json"])),
        dir,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{case}: a bad block fails the run"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a report all the same");
    assert_eq!(doc["jobs"][0]["error"], 84, "{case}");
    assert_eq!(
        doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 1,
        "{case}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let check = match kind {
        "crc32c-intel" => "crc32c",
        kind if kind.starts_with("pattern") => "pattern",
        kind => kind,
    };
    let wanted = if kind == "meta" {
        "verify: bad header".to_string()
    } else {
        format!(
            "{check}: verify failed at file {by_fio} offset {}, length 4096",
            at - within
        )
    };
    assert!(stderr.contains(&wanted), "{case}: {stderr}");
}

/// A header whose version byte has its high bit set but is not fio 3.41's
/// 0x81 is refused, naming the version; fio 3.42 refuses the unversioned
/// headers of fio 3.40 and older, which hybrio takes whatever it speaks as.
#[test]
fn a_header_of_another_version_is_refused_with_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let job = [
        "--name=v",
        "--filename=d",
        "--size=64k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ];
    let written = hybrio(&job, dir.path());
    assert!(written.status.success());
    let file = dir.path().join("d");
    let mut bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes[4096 * 3 + 2], 0x81, "a versioned header");
    bytes[4096 * 3 + 2] = 0x82;
    std::fs::write(&file, &bytes).unwrap();
    let out = hybrio(&with_strs(&job, &["--verify_only=1"]), dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "verify: unsupported header version 82, wanted 81 (fio 3.41 to 3.42) or an unversioned header"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("at file d offset 12288"), "{stderr}");

    // Unversioned (as fio 3.33): hybrio checks it speaking as 3.42, fio 3.42 refuses it.
    let old = hybrio(&with_strs(&job, &["--fio-compat=3.33"]), dir.path());
    assert!(old.status.success());
    assert_eq!(std::fs::read(&file).unwrap()[2], 5, "an unversioned header");
    let doc = run_json(&with_strs(&job, &["--verify_only=1"]), dir.path());
    assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 0);
    for fio in fios().iter().filter(|f| f.version == "3.42") {
        let checked = fio_job(fio, &with_strs(&job, &["--verify_only=1"]), dir.path());
        assert_eq!(checked["error"], 84, "fio 3.42 took an unversioned header");
    }
}

/// fio 3.40's verify options, against fio 3.42: a pattern started again
/// every `verify_pattern_interval` bytes checked both ways, and a header's
/// seed and sequence number checked on request in a `verify_only` run (the
/// seeds drawn again, as fio draws them).
#[test]
fn fio_3_40s_verify_options_do_what_fio_3_42s_do() {
    let Some(fio) = fios().into_iter().find(|f| f.version == "3.42") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for file in ["by-fio", "by-hybrio"] {
        let job = [
            "--name=p",
            &format!("--filename={file}"),
            "--size=64k",
            "--bs=4k",
            "--rw=write",
            "--verify=pattern_hdr",
            "--verify_pattern=0xab%o",
            "--verify_pattern_interval=512",
            "--verify_interval=1k",
        ];
        if file == "by-fio" {
            let written = fio_job(&fio, &with_strs(&job, &["--do_verify=0"]), dir.path());
            assert_eq!(written["error"], 0);
        } else {
            let doc = run_json(&job, dir.path());
            assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 0);
        }
        let only = with_strs(&job, &["--verify_only=1"]);
        let doc = run_json(&only, dir.path());
        assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["blocks"], 64, "{file}");
        assert_eq!(
            doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 0,
            "{file}"
        );
        let checked = fio_job(&fio, &only, dir.path());
        assert_eq!(checked["error"], 0, "{file}: fio's check");
        // Once per I/O, the pattern's later intervals are not what was written.
        let mut once = only.clone();
        once.retain(|a| !a.starts_with("--verify_pattern_interval"));
        let out = hybrio(&once, dir.path());
        assert_eq!(out.status.code(), Some(1), "{file}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("pattern: verify failed"));
    }

    let job = [
        "--name=s",
        "--filename=seeded",
        "--size=64k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ];
    assert!(hybrio(&job, dir.path()).status.success());
    let asked = with_strs(
        &job,
        &[
            "--verify_only=1",
            "--verify_header_seed=1",
            "--verify_write_sequence=1",
        ],
    );
    let doc = run_json(&asked, dir.path());
    assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 0);
    let checked = fio_job(&fio, &asked, dir.path());
    assert_eq!(checked["error"], 0, "fio checked hybrio's seeds");
    // Another randseed draws other seeds: found when asked, not by default.
    let other = with_strs(&asked, &["--randseed=5"]);
    let out = hybrio(&other, dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("verify: bad header rand_seed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_default = with_strs(&job, &["--verify_only=1", "--randseed=5"]);
    let doc = run_json(&by_default, dir.path());
    assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 0);
}

pub(super) fn with_strs<'a>(args: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(more).copied().collect()
}

#[test]
fn every_engine_reads_back_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    for engine in engines() {
        for depth in ["1", "8"] {
            // The null engine moves no data: as fio, it reads back and
            // pretends (checks nothing).
            let checked = if engine == "null" { 0 } else { 256 };
            let args = [
                "--name=v",
                "--filename=data",
                "--size=512k",
                "--bs=8k",
                "--rw=randwrite",
                "--verify=crc32c",
                "--verify_interval=2k",
                &format!("--ioengine={engine}"),
                &format!("--iodepth={depth}"),
            ];
            let doc = run_json(&args, dir.path());
            let job = &doc["jobs"][0];
            let counts = &doc["hybrio"]["jobs"][0]["verify"];
            // 64 writes of 8 KiB, four 2 KiB blocks each.
            assert_eq!(counts["blocks"], checked, "{engine} depth {depth}");
            assert_eq!(counts["bad_blocks"], 0, "{engine} depth {depth}");
            assert_eq!(job["write"]["total_ios"], 64, "{engine} depth {depth}");
            assert_eq!(
                job["read"]["total_ios"], 64,
                "{engine} depth {depth}: the read-back"
            );
        }
    }
}

#[test]
fn a_header_that_does_not_fit_its_block_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=v",
            "--filename=d",
            "--size=64k",
            "--bs=512",
            "--verify_interval=128",
            "--verify=sha512",
            "--rw=write",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("verify=sha512 needs blocks larger than its 176-byte header: the verify interval is 128 bytes"),
        "{stderr}"
    );
    let out = hybrio(
        &[
            "--name=v",
            "--filename=d",
            "--size=64k",
            "--bs=4k",
            "--verify=md5",
            "--verify_offset=4090",
            "--rw=write",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("verify_offset=4090"));
    // fio 3.42's header is 48 bytes: an offset inside it is refused, and
    // taken as fio 3.33's 40-byte one ends there.
    let at = |compat: &str| {
        hybrio(
            &[
                "--name=v",
                "--filename=d",
                "--size=64k",
                "--bs=4k",
                "--verify=meta",
                "--verify_offset=40",
                "--rw=write",
                compat,
            ],
            dir.path(),
        )
    };
    let out = at("--fio-compat=3.42");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("verify_offset=40 is inside fio 3.42's 48-byte verify header"),
        "{stderr}"
    );
    assert!(at("--fio-compat=3.33").status.success());
    // A pattern kind without its pattern would check nothing (fio asserts).
    let out = hybrio(
        &[
            "--name=v",
            "--filename=d",
            "--size=64k",
            "--verify=pattern_hdr",
            "--rw=write",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("verify=pattern_hdr needs verify_pattern"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Every corruption injected into a read is found, on every engine and
/// with every checksum; runs without corruption find nothing.
#[test]
fn every_injected_corruption_is_found_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    for engine in engines().into_iter().filter(|e| *e != "null") {
        for kind in ["crc32c", "md5", "xxhash", "sha256", "sha512"] {
            for (inject, case) in [("none", "clean"), ("corrupt:0.3,seed:7", "corrupted")] {
                let args = [
                    "--name=v",
                    "--filename=data",
                    "--size=256k",
                    "--bs=4k",
                    "--rw=randwrite",
                    "--iodepth=4",
                    "--continue_on_error=verify",
                    &format!("--verify={kind}"),
                    &format!("--ioengine={engine}"),
                    &format!("--inject={inject}"),
                ];
                let doc = run_json(&args, dir.path());
                let job = &doc["hybrio"]["jobs"][0];
                let injected = job["injected"]["corrupt"].as_u64().unwrap();
                let found = job["verify"]["bad_blocks"].as_u64().unwrap();
                assert_eq!(job["verify"]["blocks"], 64, "{engine} {kind} {case}");
                assert_eq!(
                    found, injected,
                    "{engine} {kind} {case}: found against injected"
                );
                if case == "corrupted" {
                    assert!(injected > 5, "{engine} {kind}: only {injected} corruptions");
                } else {
                    assert_eq!(found, 0, "{engine} {kind}: a false alarm");
                }
            }
        }
    }
}

/// verify_async's checker threads and experimental_verify's replayed
/// read-back find what the plain read-back finds.
#[test]
fn async_checkers_and_a_replayed_read_back_find_every_corruption() {
    let dir = tempfile::tempdir().unwrap();
    for how in ["--verify_async=2", "--experimental_verify=1"] {
        let args = [
            "--name=v",
            "--filename=data",
            // A quarter of the file: reading back anything but the blocks
            // written finds blocks never written.
            "--filesize=2m",
            "--size=512k",
            "--bs=4k",
            "--rw=randwrite",
            "--iodepth=8",
            "--ioengine=io_uring",
            "--verify=xxhash",
            "--continue_on_error=verify",
            "--inject=corrupt:0.25,seed:11",
            how,
        ];
        if super::io_uring_reason().is_some() {
            eprintln!("skipping: io_uring unavailable");
            return;
        }
        let doc = run_json(&args, dir.path());
        let job = &doc["hybrio"]["jobs"][0];
        assert_eq!(job["verify"]["blocks"], 128, "{how}");
        let injected = job["injected"]["corrupt"].as_u64().unwrap();
        assert!(injected > 10, "{how}: {injected}");
        assert_eq!(job["verify"]["bad_blocks"], injected, "{how}");
        assert_eq!(doc["jobs"][0]["read"]["total_ios"], 128, "{how}");
    }
}

#[test]
fn offloaded_submission_writes_and_reads_back_every_block() {
    // io_submit_mode=offload: the engine in a thread of its own; every
    // block written is read back and checked, at a rate and without one.
    let dir = tempfile::tempdir().unwrap();
    for (engine, rate) in [
        ("io_uring", None),
        ("libaio", Some("--rate_iops=2000")),
        ("psync", None),
    ] {
        let mut args = vec![
            "--name=o",
            "--filename=f",
            "--size=2m",
            "--bs=4k",
            "--rw=randwrite",
            "--iodepth=8",
            "--io_submit_mode=offload",
            "--verify=crc32c",
            "--verify_state_save=0",
        ];
        let engine_arg = format!("--ioengine={engine}");
        args.push(&engine_arg);
        args.extend(rate);
        let doc = run_json(&args, dir.path());
        assert_eq!(doc["jobs"][0]["error"], 0, "{engine}");
        assert_eq!(doc["jobs"][0]["write"]["total_ios"], 512, "{engine}");
        let counts = &doc["hybrio"]["jobs"][0]["verify"];
        assert_eq!(counts["blocks"], 512, "{engine}");
        assert_eq!(counts["bad_blocks"], 0, "{engine}");
    }
}
