//! What a job writes when it does not verify, against fio on the same job:
//! a compressible share, a deduplicated share, a pattern, zeros, and by
//! default random bytes changed a little in every write.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use super::hybrio;

/// Distinct 4 KiB blocks of a file, and its zero bytes.
fn shape(path: &Path) -> (usize, usize) {
    let bytes = std::fs::read(path).unwrap();
    let blocks: HashSet<&[u8]> = bytes.chunks(4096).collect();
    (blocks.len(), bytes.iter().filter(|&&b| b == 0).count())
}

#[test]
fn written_bytes_have_fios_shape() {
    let fio_found = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let dir = tempfile::tempdir().unwrap();
    for case in [
        "--buffer_compress_percentage=50",
        "--dedupe_percentage=50",
        "--dedupe_percentage=25 --buffer_compress_percentage=40",
        "--dedupe_percentage=50 --dedupe_mode=working_set --dedupe_working_set_percentage=10",
        "--buffer_pattern=0xdeadbeef",
        "--zero_buffers=1",
        "--scramble_buffers=1",
    ] {
        let mut args = vec!["--name=b", "--size=2m", "--bs=4k", "--rw=write"];
        args.extend(case.split(' '));
        let out = hybrio(
            &[
                &args[..],
                &["--filename=by-hybrio", "--output-format=terse"],
            ]
            .concat(),
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (blocks, zeros) = shape(&dir.path().join("by-hybrio"));
        match case {
            "--buffer_pattern=0xdeadbeef" | "--zero_buffers=1" => assert_eq!(blocks, 1, "{case}"),
            "--scramble_buffers=1" => assert_eq!(blocks, 512, "{case}: every write differs"),
            _ => {}
        }
        if !fio_found {
            continue;
        }
        let status = Command::new("fio")
            .args(&args)
            .args(["--filename=by-fio", "--output=/dev/null"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "{case}: fio");
        let (fio_blocks, fio_zeros) = shape(&dir.path().join("by-fio"));
        assert_eq!(blocks, fio_blocks, "{case}: distinct blocks");
        if !case.contains("compress") {
            continue;
        }
        // The compressible share is zeros: as many as fio's, give or take
        // the random part's own zero bytes.
        let (a, b) = (zeros as f64, fio_zeros as f64);
        assert!(
            (a - b).abs() <= 0.01 * b.max(1.0) + 64.0,
            "{case}: {zeros} zero bytes, fio {fio_zeros}"
        );
    }
}

#[test]
fn a_global_working_set_is_shared_by_the_jobs_as_fios_is() {
    if !super::fio_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let each = [
        "--size=2m",
        "--bs=4k",
        "--rw=write",
        "--dedupe_percentage=50",
        "--dedupe_mode=working_set",
        "--dedupe_working_set_percentage=10",
        "--dedupe_global=1",
    ];
    let jobs = |tool: &str| -> Vec<String> {
        ["a", "b"]
            .iter()
            .flat_map(|job| {
                let mut args = vec![format!("--name={job}"), format!("--filename={tool}-{job}")];
                args.extend(each.iter().map(|s| s.to_string()));
                args
            })
            .collect()
    };
    let out = hybrio(
        &[
            jobs("hybrio")
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            vec!["--output-format=terse"],
        ]
        .concat(),
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = Command::new("fio")
        .args(jobs("fio"))
        .arg("--output=/dev/null")
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    // Distinct blocks of each job, and those both jobs wrote.
    let blocks = |path: &str| -> std::collections::HashSet<Vec<u8>> {
        std::fs::read(dir.path().join(path))
            .unwrap()
            .chunks(4096)
            .map(<[u8]>::to_vec)
            .collect()
    };
    let shared = |tool: &str| {
        let (a, b) = (blocks(&format!("{tool}-a")), blocks(&format!("{tool}-b")));
        (a.len(), b.len(), a.intersection(&b).count())
    };
    let (by_hybrio, by_fio) = (shared("hybrio"), shared("fio"));
    assert!(by_hybrio.2 > 0, "the jobs share no block: {by_hybrio:?}");
    assert_eq!(by_hybrio, by_fio, "(distinct in a, in b, in both)");
}

#[test]
fn a_pattern_file_is_written_whole_as_fio_3_34_on_writes_it() {
    // fio's own t0027: a 16 KiB pattern file; fio before 3.34 kept 512 bytes of it.
    let dir = tempfile::tempdir().unwrap();
    let pattern: Vec<u8> = (0..16384u32).map(|i| (i * 7 + i / 256) as u8).collect();
    std::fs::write(dir.path().join("pattern"), &pattern).unwrap();
    for (compat, expected) in [
        ("3.42", pattern.clone()),
        ("3.33", pattern[..512].repeat(32)),
    ] {
        let name = format!("by-{compat}");
        let out = hybrio(
            &[
                "--name=p",
                "--rw=write",
                "--bs=16k",
                "--size=16k",
                "--buffer_pattern='pattern'",
                &format!("--filename={name}"),
                &format!("--fio-compat={compat}"),
                "--output-format=terse",
            ],
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let written = std::fs::read(dir.path().join(&name)).unwrap();
        assert!(
            written == expected,
            "fio {compat}: the file is not the pattern as that fio writes it"
        );
    }
}
