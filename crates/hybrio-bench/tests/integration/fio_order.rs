//! The same job file touches the same offsets in the same order in fio and
//! in hybrio: random offsets from fio's generators and seeds, fio's random
//! map, a mixed job's directions as fio picks them, the offset modifiers
//! (`rw=read:-8k`, `rw=randread:8`), regions (`offset`, `offset_increment`,
//! `io_size`, `number_ios`, strided zones), block sizes that vary, the
//! non-uniform distributions, trims (`trim`, `randtrim`, `trimwrite`,
//! `randtrimwrite`, on a loop device). Compared through each
//! tool's latency log with `log_offset` (direction and offset per I/O).
//! Against each fio here (3.33 and 3.42), hybrio speaking as that fio.

use std::path::Path;
use std::process::Command;

use super::{Fio, fios, hybrio};

/// Each log of a run, as (direction, size and offset) per line, by job number.
fn logs(dir: &Path, prefix: &str) -> Vec<Vec<(String, String)>> {
    (1..)
        .map(|n| dir.join(format!("{prefix}_lat.{n}.log")))
        .take_while(|path| path.exists())
        .map(|path| {
            std::fs::read_to_string(path)
                .unwrap()
                .lines()
                .map(|line| {
                    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
                    (
                        fields[2].to_string(),
                        format!("{} at {}", fields[3], fields[4]),
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn random_jobs_touch_fios_offsets_in_fios_order() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        std::fs::File::create(dir.path().join(name))
            .unwrap()
            .set_len(2 << 20)
            .unwrap();
    }
    for case in [
        "--filename=a --rw=randread",
        "--filename=a --rw=randwrite --norandommap",
        "--filename=a --rw=randread --random_generator=tausworthe64",
        "--filename=a --rw=randrw --rwmixread=70",
        "--filename=a --rw=rw --rwmixread=30",
        "--filename=a --rw=randread --numjobs=2",
        "--filename=a:b --rw=randread",
        "--filename=a --rw=randrw --loops=2",
        "--filename=a --rw=randread --randrepeat=0 --randseed=1234",
        "--filename=a --rw=randread --bs=16k",
        "--filename=a --rw=read:-8k",
        "--filename=a --rw=write:112k --bs=16k",
        "--filename=a --rw=randread:8",
        "--filename=a --rw=randrw:4 --rw_sequencer=identical",
        "--filename=a --rw=randread --offset=1m --size=1m",
        "--filename=a --rw=randread --size=512k --offset_increment=1m --numjobs=2",
        "--filename=a --rw=randread --size=512k --io_size=1536k",
        "--filename=a --rw=read --number_ios=10",
        "--filename=a --rw=randrw --blockalign=16k,8k",
        "--filename=a --rw=randread --random_generator=lfsr",
        "--filename=a --rw=randrw --random_generator=lfsr --loops=2",
        "--rw=randread --nrfiles=4",
        "--rw=read --nrfiles=4 --file_service_type=sequential",
        "--rw=randread --nrfiles=4 --file_service_type=roundrobin:3",
        "--rw=read --nrfiles=4 --file_service_type=roundrobin:3",
        "--rw=read --nrfiles=4 --file_service_type=random:2",
        "--rw=randread --nrfiles=3 --loops=2",
        "--rw=read --nrfiles=4 --openfiles=1",
        "--rw=write --nrfiles=4 --openfiles=3 --file_service_type=roundrobin:2",
        "--filename=a --rw=randread --random_distribution=zipf:1.2",
        "--filename=a --rw=randrw --random_distribution=pareto:0.2",
        "--filename=a --rw=randread --random_distribution=normal:10",
        "--filename=a --rw=randread --random_distribution=zipf:0.8:0.25",
        "--filename=a --rw=randread --random_distribution=zoned:60/10:30/20:8/30:2/40",
        "--filename=a --rw=randread --random_distribution=zoned_abs:60/512k:40/1536k",
        "--filename=a --rw=randread --bsrange=4k-16k --loops=2",
        "--filename=a --rw=read --bsrange=4k-16k",
        "--filename=a --rw=randread --bssplit=4k/50:16k/50 --random_generator=tausworthe64",
        "--filename=a --rw=write --bssplit=4k/30:8k/30:64k/40",
        "--filename=a --rw=randrw --bsrange=4k-64k --norandommap",
        "--filename=a --rw=randwrite --bsrange=4k-16k --verify=crc32c --do_verify=0",
        "--filename=a --rw=read --bs=64k --zonemode=strided --zonesize=256k --zoneskip=256k",
        "--filename=a --rw=randread --zonemode=strided --zonesize=256k --zonerange=128k --zoneskip=64k",
        "--filename=a --rw=randread --randseed=1234",
        "--filename=a --rw=randread --randseed=99 --random_distribution=zipf:1.1 --loops=2",
    ] {
        for fio in fios() {
            compare_with_fio(dir.path(), &fio, case);
        }
    }
}

/// Runs `case` (more options after the common ones) in `fio` and in hybrio
/// speaking as it in `dir`, and asserts that every job's I/Os go the same
/// way in the same order.
fn compare_with_fio(dir: &Path, fio: &Fio, case: &str) {
    for prefix in ["fio", "hybrio"] {
        for old in std::fs::read_dir(dir).unwrap().flatten() {
            if old
                .file_name()
                .to_string_lossy()
                .starts_with(&format!("{prefix}_"))
            {
                std::fs::remove_file(old.path()).unwrap();
            }
        }
    }
    let mut args = vec!["--name=j", "--size=2m", "--bs=4k", "--log_offset=1"];
    args.extend(case.split(' '));
    let ran = Command::new(&fio.path)
        .args(&args)
        .args(["--write_lat_log=fio", "--output=/dev/null"])
        .current_dir(dir)
        .status()
        .unwrap();
    let case = format!("fio {}: {case}", fio.version);
    assert!(ran.success(), "{case}: fio failed");
    let compat = format!("--fio-compat={}", fio.version);
    args.extend([
        compat.as_str(),
        "--write_lat_log=hybrio",
        "--output-format=terse",
    ]);
    let out = hybrio(&args, dir);
    assert!(
        out.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (by_fio, by_hybrio) = (logs(dir, "fio"), logs(dir, "hybrio"));
    assert!(!by_fio.is_empty(), "{case}: fio wrote no log");
    assert_eq!(by_fio.len(), by_hybrio.len(), "{case}: jobs");
    for (job, (f, h)) in by_fio.iter().zip(&by_hybrio).enumerate() {
        assert_eq!(f.len(), h.len(), "{case}: I/Os of job {}", job + 1);
        if let Some(at) = f.iter().zip(h).position(|(a, b)| a != b) {
            panic!(
                "{case}: job {} differs at I/O {at}: fio {:?}, hybrio {:?}",
                job + 1,
                f[at],
                h[at]
            );
        }
    }
}

/// A loop device over a file, detached when dropped.
struct LoopDevice(String);

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["--detach", &self.0]).status();
    }
}

#[test]
fn trimming_jobs_trim_fios_blocks_in_fios_order() {
    // fio trims only block devices (BLKDISCARD): a loop device over a file.
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let attached = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&backing)
        .output();
    let device = match attached {
        Ok(out) if out.status.success() => {
            LoopDevice(String::from_utf8_lossy(&out.stdout).trim().to_string())
        }
        _ => {
            eprintln!("skipping: no loop device can be attached here (needs root)");
            return;
        }
    };
    for case in [
        "--rw=trim",
        "--rw=randtrim",
        "--rw=trimwrite --bs=64k",
        "--rw=randtrimwrite --bs=64k",
        "--rw=randtrim --bs=16k",
    ] {
        for fio in fios() {
            compare_with_fio(dir.path(), &fio, &format!("--filename={} {case}", device.0));
        }
    }
}

/// Whether the kernel takes I/O priority hints (`IOPRIO_HINT`, Linux 6.5).
fn kernel_takes_priority_hints() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (6, 5)
}

#[test]
fn cmdprio_gives_fios_ios_their_priorities() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("a"))
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    // Priority hints came with fio 3.36 (3.33 refuses them) and Linux 6.5.
    let hints = kernel_takes_priority_hints();
    if !hints {
        eprintln!("skipping the priority hint cases: Linux before 6.5 refuses hints");
    }
    for (fio, case) in [
        (
            "--cmdprio_percentage=30 --cmdprio_class=1 --cmdprio=3",
            false,
        ),
        ("--cmdprio_bssplit=4k/50/3/2:4k/20/1/0:64k/100/2/5", false),
        (
            "--cmdprio_percentage=40 --cmdprio_class=2 --cmdprio_hint=3",
            true,
        ),
        ("--cmdprio_bssplit=4k/50/3/2/5:4k/20/1/0", true),
        ("--priohint=2", true),
        ("--prioclass=3 --priohint=1 --cmdprio_percentage=50", true),
    ]
    .iter()
    .flat_map(|(case, hinted)| {
        fios()
            .into_iter()
            .filter(move |fio| !hinted || (hints && fio.version != "3.33"))
            .map(move |fio| (fio, *case))
    }) {
        let compat = format!("--fio-compat={}", fio.version);
        let mut args = vec![
            "--name=j",
            "--filename=a",
            "--size=2m",
            "--rw=randread",
            "--ioengine=io_uring",
            "--log_prio=1",
            "--log_offset=1",
        ];
        args.extend(case.split(' '));
        let last_column = |prefix: &str| -> Vec<String> {
            std::fs::read_to_string(dir.path().join(format!("{prefix}_lat.1.log")))
                .unwrap()
                .lines()
                .map(|l| l.rsplit(',').next().unwrap_or_default().trim().to_string())
                .collect()
        };
        let ran = Command::new(&fio.path)
            .args(&args)
            .args(["--write_lat_log=fio", "--output=/dev/null"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        let case = format!("fio {}: {case}", fio.version);
        assert!(ran.success(), "{case}: fio failed");
        let out = hybrio(
            &[
                &args[..],
                &[
                    compat.as_str(),
                    "--write_lat_log=hybrio",
                    "--output-format=terse",
                ],
            ]
            .concat(),
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (by_fio, by_hybrio) = (last_column("fio"), last_column("hybrio"));
        assert!(
            by_fio.iter().any(|p| p != "0x0000"),
            "{case}: no priority in fio's log"
        );
        assert_eq!(by_fio, by_hybrio, "{case}: priorities, I/O by I/O");
    }
}

#[test]
fn serialize_overlap_holds_back_writes_to_the_same_bytes() {
    if let Some(reason) = super::io_uring_reason() {
        eprintln!("skipping: {reason}");
        return;
    }
    // rw=write:-4k writes block 0 sixteen times: with serialize_overlap no
    // two are ever in flight together, whatever the depth allows.
    let dir = tempfile::tempdir().unwrap();
    let doc = super::run_json(
        &[
            "--name=o",
            "--ioengine=io_uring",
            "--filename=same",
            "--size=64k",
            "--bs=4k",
            "--iodepth=4",
            "--rw=write:-4k",
            "--serialize_overlap=1",
        ],
        dir.path(),
    );
    let job = &doc["jobs"][0];
    assert_eq!(job["write"]["total_ios"], 16);
    assert_eq!(job["iodepth_level"]["1"], 100.0, "{}", job["iodepth_level"]);
}
