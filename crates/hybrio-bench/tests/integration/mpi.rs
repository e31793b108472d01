//! `hybrio --mpi` under Open MPI's `mpirun`, four ranks on this machine
//! standing in for hosts (a build with the `mpi` feature; skipped, saying
//! so, where `mpirun` is missing).

use std::collections::BTreeMap;
use std::process::Command;

use hybrio_bench::stats::fio_percentile_rank;
use serde_json::Value;

pub(super) const RANKS: usize = 4;

/// `hybrio --mpi ARGS` under `mpirun` on RANKS ranks, or `None` (with the
/// reason printed) where `mpirun` is missing.
pub(super) fn mpirun(args: &[&str]) -> Option<std::process::Output> {
    let mut all = vec!["--mpi"];
    all.extend_from_slice(args);
    ranks_run(&all)
}

/// `hybrio ARGS` under `mpirun` on RANKS ranks, or `None` where `mpirun` is missing.
fn ranks_run(args: &[&str]) -> Option<std::process::Output> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("skipped: no mpirun (apt-get install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let output = Command::new("mpirun")
        // Root in CI containers; more ranks than this machine's two cores.
        .args(["--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(RANKS.to_string())
        .arg(env!("CARGO_BIN_EXE_hybrio"))
        .args(args)
        .output()
        .expect("mpirun runs");
    Some(output)
}

/// The one line of stderr that is hybrio's (mpirun and MPI add their own).
fn the_one_hybrio_line(stderr: &str) -> &str {
    let named: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("hybrio: "))
        .collect();
    assert_eq!(named.len(), 1, "{stderr}");
    named[0]
}

/// The value at fio's percentile `p` of the pooled buckets (value: count).
fn pooled_percentile(bins: &BTreeMap<u64, u64>, p: f64) -> u64 {
    let total: u64 = bins.values().sum();
    let rank = fio_percentile_rank(p, total);
    let mut sum = 0;
    for (&value, &count) in bins {
        sum += count;
        if sum >= rank {
            return value;
        }
    }
    panic!("no bucket reaches rank {rank} of {total}");
}

#[test]
fn every_rank_runs_its_own_files_and_rank_0_reports_them_merged_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("ranks.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=psync\nbs=4k\nsize=2m\nfilename={}/f.$rank.of.$nranks\n\
             [lay]\nrw=write\n[read]\nstonewall\nrw=randread\nloops=6\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let Some(output) = mpirun(&["--output-format=json+", job.to_str().unwrap()]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "mpirun: {stderr}");
    for rank in 0..RANKS {
        let file = dir.path().join(format!("f.{rank}.of.{RANKS}"));
        assert_eq!(
            std::fs::metadata(&file).map(|m| m.len()).ok(),
            Some(2 << 20),
            "rank {rank}'s own file"
        );
    }
    // Rank 0 alone writes: one document, in fio's client-mode shape: every
    // rank's jobs (hostname, port = rank), then all ranks merged.
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert!(doc.get("jobs").is_none() && doc.get("timestamp_ms").is_none());
    let entries = doc["client_stats"].as_array().expect("client_stats");
    assert_eq!(
        entries.len(),
        RANKS * 2 + 2,
        "two jobs a rank, then two merged"
    );
    let mut pooled = BTreeMap::new();
    let mut ios = 0;
    let mut slowest = 0;
    for rank in 0..RANKS {
        let (lay, read) = (&entries[rank * 2], &entries[rank * 2 + 1]);
        assert_eq!(
            (lay["jobname"].as_str(), read["jobname"].as_str()),
            (Some("lay"), Some("read"))
        );
        assert_eq!(read["port"], rank);
        assert!(read["hostname"].as_str().is_some_and(|h| !h.is_empty()));
        let mine = &read["read"];
        assert_eq!(
            mine["total_ios"],
            6 * 512,
            "rank {rank}: six passes over 2 MiB"
        );
        ios += mine["total_ios"].as_u64().unwrap();
        slowest = slowest.max(mine["runtime"].as_u64().unwrap());
        for (value, count) in mine["clat_ns"]["bins"].as_object().unwrap() {
            *pooled.entry(value.parse::<u64>().unwrap()).or_insert(0) += count.as_u64().unwrap();
        }
    }
    let all = &entries[RANKS * 2 + 1];
    assert_eq!(all["jobname"], "All clients");
    let read = &all["read"];
    // The aggregate is the sum of the ranks' own counts, its time the slowest rank's...
    assert_eq!(read["total_ios"].as_u64(), Some(ios));
    assert_eq!(read["runtime"].as_u64(), Some(slowest));
    let merged: BTreeMap<u64, u64> = read["clat_ns"]["bins"]
        .as_object()
        .expect("json+ bins")
        .iter()
        .map(|(v, c)| (v.parse().unwrap(), c.as_u64().unwrap()))
        .collect();
    assert_eq!(merged, pooled, "the merged histogram is the pooled one");
    // ...and its percentiles are those of every rank's latencies pooled.
    for (label, p) in [
        ("50.000000", 50.0),
        ("99.000000", 99.0),
        ("99.990000", 99.99),
    ] {
        assert_eq!(
            read["clat_ns"]["percentile"][label].as_u64(),
            Some(pooled_percentile(&pooled, p)),
            "p{p}"
        );
    }
    // Each rank's devices, named by its client as fio's client mode does
    // (where the files are on a block device, as a temporary directory is).
    let disks = doc["disk_util"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if disks.is_empty() {
        eprintln!(
            "note: no block device under {}: no disk_util",
            dir.path().display()
        );
    } else {
        let mut ports: Vec<u64> = disks.iter().map(|d| d["port"].as_u64().unwrap()).collect();
        ports.dedup();
        assert_eq!(ports, [0, 1, 2, 3], "{disks:?}");
        assert!(
            disks
                .iter()
                .all(|d| d["hostname"].as_str().is_some_and(|h| !h.is_empty()))
        );
    }
}

#[test]
fn the_normal_output_has_a_line_per_rank() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/g.$rank", dir.path().display());
    let Some(output) = mpirun(&[
        "--name=w",
        "--ioengine=psync",
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        &file,
    ]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  rank "))
        .collect();
    assert_eq!(lines.len(), RANKS, "{stdout}");
    for (rank, line) in lines.iter().enumerate() {
        assert!(line.starts_with(&format!("  rank {rank} (")), "{line}");
        assert!(line.contains("w write: IOPS="), "{line}");
    }
    // The group line: all four ranks' 1 MiB.
    assert!(stdout.contains("io=4096KiB"), "{stdout}");
}

#[test]
fn a_rank_that_cannot_start_a_group_ends_the_run_everywhere_named() {
    let dir = tempfile::tempdir().unwrap();
    // The second group reads g.$rank: rank 2's is a directory.
    std::fs::create_dir(dir.path().join("g.2")).unwrap();
    let job = dir.path().join("fails.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=psync\nbs=4k\nsize=1m\n\
             [lay]\nrw=write\nfilename={0}/f.$rank\n\
             [again]\nstonewall\nrw=write\nfilename={0}/g.$rank\nruntime=60\ntime_based\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let Some(output) = mpirun(&["--output-format=json", job.to_str().unwrap()]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Far from both a failure's second or two and the second group's 60 s.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{stderr}"
    );
    assert!(!output.status.success(), "{stderr}");
    let named = the_one_hybrio_line(&stderr);
    assert!(
        named.starts_with("hybrio: rank 2 (") && named.contains("g.2"),
        "{stderr}"
    );
    // What ran: the first group, on every rank, the failed one included.
    // The second starts nowhere: its I/O starts together on all ranks or
    // on none.
    let doc: Value = serde_json::from_slice(&output.stdout).expect("rank 0's report");
    let entries = doc["client_stats"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["jobname"] != "again"), "{doc}");
    let ports: Vec<u64> = entries[..RANKS]
        .iter()
        .map(|e| e["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [0, 1, 2, 3]);
    assert_eq!(entries[RANKS]["jobname"], "All clients");
    assert_eq!(entries[RANKS]["write"]["total_ios"], RANKS * 256);
}

/// RANKS ranks under `mpirun` (with `launcher_args` too) writing their
/// own files for 60 s in `dir`, their JSON piped; `None` without mpirun.
fn start_long_write(
    dir: &std::path::Path,
    launcher_args: &[&str],
) -> Option<(std::path::PathBuf, std::process::Child)> {
    let job = dir.join("long.fio");
    std::fs::write(
        &job,
        format!(
            "[long]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\nfilename={}/l.$rank\n\
             runtime=60\ntime_based\n",
            dir.display()
        ),
    )
    .unwrap();
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("skipped: no mpirun");
        return None;
    }
    let child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe"])
        .args(launcher_args)
        .arg("-np")
        .arg(RANKS.to_string())
        .arg(env!("CARGO_BIN_EXE_hybrio"))
        .args(["--mpi", "--output-format=json", job.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    Some((job, child))
}

/// Sends rank 2 `signal` 1 s into its I/O, then waits for the ranks'
/// end: their output, and when the signal was sent.
fn signal_rank_2(
    job: &std::path::Path,
    ranks: std::process::Child,
    signal: &str,
) -> (std::process::Output, std::time::Instant) {
    let rank_2 = rank_pid(job, 2);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let sent = std::time::Instant::now();
    Command::new("kill")
        .args([signal, &rank_2.to_string()])
        .status()
        .unwrap();
    (ranks.wait_with_output().unwrap(), sent)
}

#[test]
fn a_rank_interrupted_mid_group_stops_the_others_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let Some((job, child)) = start_long_write(dir.path(), &[]) else {
        return;
    };
    let (output, _) = signal_rank_2(&job, child, "-INT");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The others stopped long before their 60 s, and rank 0 reported (the
    // bound is far from both, so that a busy machine cannot break it).
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&output.stdout).expect("rank 0's report");
    let all = &doc["client_stats"][RANKS];
    assert_eq!(all["jobname"], "All clients", "{doc}");
    assert!(all["write"]["runtime"].as_u64().unwrap() < 30_000, "{doc}");
}

/// The process of `rank` running `job` (found by the job file in its
/// command line and MPI's rank in its environment), waiting up to 5 s for it.
fn rank_pid(job: &std::path::Path, rank: usize) -> u32 {
    let rank_var = format!("OMPI_COMM_WORLD_RANK={rank}");
    (0..100)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            std::fs::read_dir("/proc")
                .ok()?
                .flatten()
                .find_map(|entry| {
                    let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
                    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
                    let mine = String::from_utf8_lossy(&cmdline).contains(job.to_str().unwrap())
                        && environ.split(|&b| b == 0).any(|v| v == rank_var.as_bytes());
                    mine.then_some(pid)
                })
        })
        .unwrap_or_else(|| panic!("rank {rank} runs"))
}

/// A rank killed outright (SIGKILL: no goodbye) under `mpirun
/// --enable-recovery`, which lets the others live on: rank 0 stops hearing
/// from it, names it, stops the others' jobs, and they report without it,
/// all long before their runtime (about 4 s after the kill here). Over
/// shared memory, and over TCP (as between hosts), where a message to the
/// dead rank is refused.
#[test]
fn a_rank_killed_outright_is_named_and_the_others_report_without_it() {
    let tcp = [
        "--mca",
        "btl",
        "tcp,self",
        "--mca",
        "btl_tcp_if_include",
        "lo",
    ];
    for transport in [&[][..], &tcp[..]] {
        let mut launcher = vec!["--enable-recovery"];
        launcher.extend_from_slice(transport);
        if !killed_rank_2_is_left_out(&launcher) {
            return;
        }
    }
}

/// Kills rank 2 of a run under `mpirun` with `launcher` options and checks
/// the others' report; false where there is no mpirun.
fn killed_rank_2_is_left_out(launcher: &[&str]) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let Some((job, child)) = start_long_write(dir.path(), launcher) else {
        return false;
    };
    let (output, killed) = signal_rank_2(&job, child, "-KILL");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // About 4 s here; the others would otherwise write for their 60 s.
    assert!(
        killed.elapsed() < std::time::Duration::from_secs(30),
        "{launcher:?}: {:?} after the kill: {stderr}",
        killed.elapsed()
    );
    let named = the_one_hybrio_line(&stderr);
    assert!(
        named.starts_with("hybrio: rank 2 (") && named.contains("not heard from"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&output.stdout).expect("rank 0's report");
    let entries = doc["client_stats"].as_array().unwrap();
    let ports: Vec<u64> = entries[..RANKS - 1]
        .iter()
        .map(|e| e["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [0, 1, 3], "{doc}");
    let all = &entries[RANKS - 1];
    assert_eq!(all["jobname"], "All clients", "{doc}");
    let sum: u64 = entries[..RANKS - 1]
        .iter()
        .map(|e| e["write"]["total_ios"].as_u64().unwrap())
        .sum();
    assert!(sum > 0);
    assert_eq!(all["write"]["total_ios"].as_u64(), Some(sum));
    let lost = &doc["hybrio"]["mpi"]["lost"];
    assert_eq!(lost.as_array().map(Vec::len), Some(1), "{doc}");
    assert_eq!(lost[0]["rank"], 2);
    true
}

/// The first byte of each 4 KiB block of `path`, checking the block is that byte throughout.
fn block_owners(path: &std::path::Path) -> Vec<u8> {
    let data = std::fs::read(path).unwrap();
    data.chunks(4096)
        .map(|block| {
            assert!(
                block.iter().all(|&b| b == block[0]),
                "a block written by two ranks"
            );
            block[0]
        })
        .collect()
}

#[test]
fn ranks_share_one_file_segmented_and_strided_by_rank_keywords() {
    let dir = tempfile::tempdir().unwrap();
    // IOR's two shared-file layouts in fio's options: each rank writes its
    // rank + 1 in every byte, so the file shows which rank wrote each block.
    let layouts = [
        (
            "segmented",
            "offset=($rank*64)k\nsize=64k\n",
            (0..64)
                .map(|block| (block / 16) as u8 + 1)
                .collect::<Vec<u8>>(),
        ),
        (
            "strided",
            "offset=($rank*4)k\nsize=(256-$rank*4)k\nio_size=64k\nzonemode=strided\n\
             zonesize=4k\nzonerange=4k\nzoneskip=(($nranks-1)*4)k\n",
            (0..64).map(|block| (block % 4) as u8 + 1).collect(),
        ),
    ];
    for (name, layout, expected) in layouts {
        let shared = dir.path().join(name);
        let job = dir.path().join(format!("{name}.fio"));
        std::fs::write(
            &job,
            format!(
                "[{name}]\nioengine=psync\nrw=write\nbs=4k\nfilename={}\n{layout}buffer_pattern=($rank+1)\n",
                shared.display()
            ),
        )
        .unwrap();
        let Some(output) = mpirun(&["--output-format=json", job.to_str().unwrap()]) else {
            return;
        };
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(block_owners(&shared), expected, "{name}");
        let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
        let all = &doc["client_stats"][RANKS];
        assert_eq!(all["jobname"], "All clients");
        assert_eq!(
            all["write"]["io_bytes"],
            256 * 1024,
            "{name}: every block once"
        );
    }
}

#[test]
fn a_rank_far_behind_the_median_is_named_and_the_clocks_are_measured() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/s.$rank", dir.path().display());
    // 64 reads each; rank 3 at a quarter of the others' rate ($rank/3 is 0 below 3).
    let job = [
        "--name=paced",
        "--ioengine=psync",
        "--rw=read",
        "--bs=4k",
        "--size=256k",
        "--rate_iops=(1000-750*($rank/3))",
        &file,
    ];
    let Some(normal) = mpirun(&job) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&normal.stdout);
    assert!(
        normal.status.success(),
        "{}",
        String::from_utf8_lossy(&normal.stderr)
    );
    let stragglers: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("straggler:"))
        .collect();
    assert_eq!(stragglers.len(), 1, "{stdout}");
    assert!(
        stragglers[0].starts_with("  straggler: rank 3 ("),
        "{stdout}"
    );
    assert!(stragglers[0].contains("paced read"), "{stdout}");
    let ranks: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  rank "))
        .collect();
    assert!(ranks.iter().all(|l| l.contains("; clock ")), "{stdout}");
    let mut args = vec!["--output-format=json"];
    args.extend(job);
    let Some(json) = mpirun(&args) else {
        return;
    };
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let mpi = &doc["hybrio"]["mpi"];
    let offsets = mpi["clocks"]["offsets"].as_array().unwrap();
    assert_eq!(offsets.len(), RANKS);
    for (rank, offset) in offsets.iter().enumerate() {
        assert_eq!(offset["rank"], rank);
        // One machine, one clock: every offset within its round trip's
        // uncertainty, and that well under a second.
        let trip = offset["round_trip_ns"].as_i64().unwrap();
        assert!((0..1_000_000_000).contains(&trip), "{offset}");
        assert!(
            offset["offset_ns"].as_i64().unwrap().abs() <= trip / 2 + 1,
            "{offset}"
        );
    }
    assert_eq!(mpi["stragglers"][0]["rank"], 3, "{mpi}");
}

#[test]
fn compare_switches_engines_together_on_every_rank_and_rank_0_reports() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/c.$rank", dir.path().display());
    let Some(output) = ranks_run(&[
        "compare",
        "--mpi",
        "--engines=psync,sync",
        "--rounds=2",
        "--output-format=json",
        "--name=r",
        "--rw=read",
        "--bs=4k",
        "--size=256k",
        &file,
    ]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // Rank 0 alone tells the progress: one line a run, 2 engines x 2 rounds.
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("round ")).count(),
        4,
        "{stderr}"
    );
    for rank in 0..RANKS {
        assert!(
            dir.path().join(format!("c.{rank}")).exists(),
            "rank {rank} ran"
        );
    }
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one document, rank 0's");
    let results = doc["cells"][0]["results"].as_array().unwrap();
    let engines: Vec<&str> = results
        .iter()
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["psync", "sync"]);
    for result in results {
        let samples = result["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2);
        assert!(samples.iter().all(|s| s["iops"].as_f64().unwrap() > 0.0));
    }
}

#[test]
fn a_build_with_mpi_refuses_status_reports_in_one_line() {
    let output = Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args([
            "--mpi",
            "--status-interval=1s",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--status-interval"), "{stderr}");
}
