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
