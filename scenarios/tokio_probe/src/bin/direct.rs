//! 4 KiB `O_DIRECT` random reads, 32 in flight across tasks on a 2-worker
//! runtime: hybrio-tokio against `spawn_blocking` + `pread`, and fio's
//! io_uring engine at `--iodepth=32` on the same file (the device's limit;
//! when `fio` is on the PATH), in turn, ROUNDS rounds after a warm-up round. (`tokio::fs` cannot
//! read `O_DIRECT`: it reads into a buffer of its own, not aligned.)
//!
//!   direct FILE READS_PER_TASK [ROUNDS]     (FILE on a device: not tmpfs)
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::Instant;

use hybrio::buf::BufPool;
use tprobe::{Figure, Rounds, cpu_ns, runtime};

const TASKS: usize = 32;
const WAYS: [&str; 3] = ["hybrio-tokio", "spawn_blocking", "fio io_uring"];

/// fio's IOPS on the same reads (`None` without fio).
fn fio(path: &str, seconds: f64) -> Option<f64> {
    let out = std::process::Command::new("fio")
        .args([
            "--name=direct",
            &format!("--filename={path}"),
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--time_based",
            &format!("--runtime={}ms", (seconds * 1000.0).max(1000.0) as u64),
            "--output-format=json",
        ])
        .output()
        .ok()?;
    let json = String::from_utf8_lossy(&out.stdout);
    // The first "iops" is the read side's.
    let at = json.find("\"iops\" :")? + "\"iops\" :".len();
    json[at..]
        .trim_start()
        .split([',', '\n'])
        .next()?
        .trim()
        .parse()
        .ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: direct FILE READS_PER_TASK [ROUNDS]")
        .clone();
    let reads: usize = args
        .get(2)
        .map_or(500, |s| s.parse().expect("reads a task"));
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().expect("rounds"));
    let blocks = std::fs::metadata(&path).expect("stat FILE").len() / 4096;
    let rt = runtime();
    let pool = Arc::new(BufPool::new(TASKS, 4096).expect("aligned buffers"));
    let hybrio = Arc::new(
        rt.block_on(
            hybrio_tokio::fs::File::options()
                .read(true)
                .direct(true)
                .open(&path),
        )
        .expect("open FILE with O_DIRECT"),
    );
    let std_file = Arc::new(
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .expect("open FILE with O_DIRECT"),
    );
    let mut results = Rounds::new(&WAYS, "reads/s");
    // Round 0 is a warm-up, not counted (see `Rounds::forget`).
    for round in 0..=rounds {
        if round == 1 {
            results.forget();
        }
        println!("round {round}");
        let mut seconds = 1.0;
        for way in tprobe::in_turn(WAYS.len(), round) {
            let cpu = cpu_ns();
            let started = Instant::now();
            if way == 2 {
                match fio(&path, seconds) {
                    Some(iops) => results.record(
                        way,
                        Figure {
                            rate: iops,
                            latencies: Vec::new(),
                            cpu_ns_per_op: f64::NAN,
                        },
                    ),
                    None => println!("  (no fio on the PATH: left out)"),
                }
                continue;
            }
            let latencies: Vec<u32> = rt.block_on(async {
                let tasks: Vec<_> = (0..TASKS)
                    .map(|task| {
                        let (hybrio, std_file, pool) =
                            (hybrio.clone(), std_file.clone(), pool.clone());
                        tokio::spawn(async move {
                            let mut seed =
                                0x9E37_79B9_7F4A_7C15 ^ (task as u64 + 1) ^ (round as u64) << 32;
                            let mut buf = pool.take().expect("a buffer a task");
                            let mut latencies = Vec::with_capacity(reads);
                            for _ in 0..reads {
                                let at = tprobe::xorshift(&mut seed) % blocks * 4096;
                                let began = Instant::now();
                                buf = if way == 0 {
                                    let (result, back) = hybrio.read_at(buf, at).await;
                                    assert_eq!(result.expect("read"), 4096);
                                    back
                                } else {
                                    let std_file = std_file.clone();
                                    tokio::task::spawn_blocking(move || {
                                        let mut buf = buf;
                                        let n = std::os::unix::fs::FileExt::read_at(
                                            &*std_file,
                                            buf.as_mut_slice(),
                                            at,
                                        )
                                        .expect("pread");
                                        assert_eq!(n, 4096);
                                        buf
                                    })
                                    .await
                                    .expect("the blocking pool ran it")
                                };
                                latencies.push(began.elapsed().as_nanos() as u32);
                            }
                            latencies
                        })
                    })
                    .collect();
                tprobe::joined(tasks).await
            });
            let secs = started.elapsed().as_secs_f64();
            seconds = secs;
            let ops = (TASKS * reads) as f64;
            results.record(
                way,
                Figure {
                    rate: ops / secs,
                    latencies,
                    cpu_ns_per_op: (cpu_ns() - cpu) as f64 / ops,
                },
            );
        }
    }
    results.print_ratios(0);
    println!("hybrio-tokio's reads: {:?}", hybrio.counts());
}
