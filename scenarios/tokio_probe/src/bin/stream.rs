//! A cold sequential read of FILE in 1 MiB requests, one at a time, by one
//! task of a 2-worker runtime, its page cache dropped first: hybrio-tokio
//! against `tokio::fs::File` (read) and `spawn_blocking` (a `pread` a
//! request), in turn, ROUNDS rounds after a warm-up round.
//!
//!   stream FILE [ROUNDS]     (FILE on a device: not tmpfs)
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::AsyncReadExt;
use tprobe::{Figure, Rounds, cpu_ns, print_inline, runtime, timing_inline};

const CHUNK: usize = 1 << 20;
const WAYS: [&str; 3] = ["hybrio-tokio", "tokio::fs", "spawn_blocking"];

fn drop_cache(file: &std::fs::File) {
    // SAFETY: no memory is passed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise(DONTNEED)");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: stream FILE [ROUNDS]").clone();
    let rounds: usize = args.get(2).map_or(3, |s| s.parse().expect("rounds"));
    let std_file = Arc::new(std::fs::File::open(&path).expect("open FILE"));
    let len = std_file.metadata().expect("stat FILE").len();
    let rt = runtime();
    let mut results = Rounds::new(&WAYS, "MiB/s");
    let mut inline_ns = Vec::new();
    // Round 0 is a warm-up, not counted (see `Rounds::forget`).
    for round in 0..=rounds {
        if round == 1 {
            results.forget();
            inline_ns.clear();
        }
        println!("round {round}");
        for way in tprobe::in_turn(WAYS.len(), round) {
            let name = WAYS[way];
            drop_cache(&std_file);
            let cpu = cpu_ns();
            let started = Instant::now();
            let (latencies, read) = rt.block_on(async {
                let std_file = std_file.clone();
                let path = path.clone();
                let mut inline = Vec::new();
                let done = tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    let mut buf = vec![0u8; CHUNK];
                    let mut at = 0u64;
                    let hybrio = hybrio_tokio::fs::File::open(&path)
                        .await
                        .expect("open FILE");
                    let mut tokio_file = tokio::fs::File::open(&path).await.expect("open FILE");
                    loop {
                        let began = Instant::now();
                        let n = match way {
                            0 => {
                                let (result, back) =
                                    timing_inline(hybrio.read_at(buf, at), &mut inline).await;
                                buf = back;
                                result.expect("read")
                            }
                            1 => {
                                let mut filled = 0;
                                while filled < CHUNK {
                                    let n =
                                        tokio_file.read(&mut buf[filled..]).await.expect("read");
                                    if n == 0 {
                                        break;
                                    }
                                    filled += n;
                                }
                                filled
                            }
                            _ => {
                                let std_file = std_file.clone();
                                let (n, back) = tokio::task::spawn_blocking(move || {
                                    let mut buf = buf;
                                    let n = std_file.read_at(&mut buf, at).expect("pread");
                                    (n, buf)
                                })
                                .await
                                .expect("the blocking pool ran it");
                                buf = back;
                                n
                            }
                        };
                        latencies.push(began.elapsed().as_nanos() as u32);
                        if n == 0 {
                            break;
                        }
                        at += n as u64;
                    }
                    if way == 0 {
                        println!("  hybrio-tokio's reads: {:?}", hybrio.counts());
                    }
                    (latencies, at, inline)
                })
                .await
                .expect("the task");
                inline_ns.extend(done.2);
                (done.0, done.1)
            });
            assert_eq!(read, len, "{name}: the whole file");
            let secs = started.elapsed().as_secs_f64();
            let requests = latencies.len() as f64;
            results.record(
                way,
                Figure {
                    rate: len as f64 / secs / (1 << 20) as f64,
                    latencies,
                    cpu_ns_per_op: (cpu_ns() - cpu) as f64 / requests,
                },
            );
        }
    }
    results.print_ratios(0);
    print_inline("hybrio-tokio's reads", &mut inline_ns);
}
