//! A write-ahead log: 16 tasks append 8 KiB records to one file, each
//! record followed by `sync_data`, on a 2-worker runtime. hybrio-tokio
//! against `tokio::fs::File` (a handle per task, seek + write + sync_data)
//! and `spawn_blocking` (pwrite + fdatasync), in turn, ROUNDS rounds.
//!
//!   wal DIR RECORDS_PER_TASK [ROUNDS]
use std::io::SeekFrom;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::io::{AsyncSeekExt, AsyncWriteExt};
use tprobe::{Rounds, cpu_ns, figure, print_inline, runtime, timing_inline};

const TASKS: usize = 16;
const RECORD: usize = 8192;
const WAYS: [&str; 3] = ["hybrio-tokio", "tokio::fs", "spawn_blocking"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(
        args.get(1)
            .expect("usage: wal DIR RECORDS_PER_TASK [ROUNDS]"),
    );
    let records: usize = args
        .get(2)
        .map_or(200, |s| s.parse().expect("records a task"));
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().expect("rounds"));
    let rt = runtime();
    let mut results = Rounds::new(&WAYS, "records/s");
    let mut inline_ns = Vec::new();
    for round in 0..rounds {
        println!("round {round}");
        for way in tprobe::in_turn(WAYS.len(), round) {
            let name = WAYS[way];
            let path = dir.join(format!("wal-{name}").replace(':', "_"));
            let _ = std::fs::remove_file(&path);
            let next = Arc::new(AtomicU64::new(0));
            let cpu = cpu_ns();
            let started = Instant::now();
            let latencies: Vec<u32> = rt.block_on(async {
                let hybrio = Arc::new(
                    hybrio_tokio::fs::File::options()
                        .write(true)
                        .create(true)
                        .open(&path)
                        .await
                        .expect("open the log"),
                );
                let std_file = Arc::new(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .create(true)
                        .truncate(false)
                        .open(&path)
                        .expect("open the log"),
                );
                let tasks: Vec<_> = (0..TASKS)
                    .map(|task| {
                        let (hybrio, std_file, next, path) =
                            (hybrio.clone(), std_file.clone(), next.clone(), path.clone());
                        tokio::spawn(async move {
                            let mut latencies = Vec::with_capacity(records);
                            let mut inline = Vec::new();
                            let mut tokio_file = match way {
                                1 => Some(
                                    tokio::fs::OpenOptions::new()
                                        .write(true)
                                        .open(&path)
                                        .await
                                        .expect("open the log"),
                                ),
                                _ => None,
                            };
                            let mut record = vec![task as u8; RECORD];
                            for _ in 0..records {
                                let at = next.fetch_add(RECORD as u64, Ordering::Relaxed);
                                let began = Instant::now();
                                match way {
                                    0 => {
                                        let (result, back) = timing_inline(
                                            hybrio.write_all_at(record, at),
                                            &mut inline,
                                        )
                                        .await;
                                        result.expect("append");
                                        record = back;
                                        hybrio.sync_data().await.expect("sync_data");
                                    }
                                    1 => {
                                        let file = tokio_file.as_mut().expect("a handle");
                                        file.seek(SeekFrom::Start(at)).await.expect("seek");
                                        file.write_all(&record).await.expect("append");
                                        file.sync_data().await.expect("sync_data");
                                    }
                                    _ => {
                                        let std_file = std_file.clone();
                                        record = tokio::task::spawn_blocking(move || {
                                            std_file.write_all_at(&record, at).expect("append");
                                            std_file.sync_data().expect("fdatasync");
                                            record
                                        })
                                        .await
                                        .expect("the blocking pool ran it");
                                    }
                                }
                                latencies.push(began.elapsed().as_nanos() as u32);
                            }
                            (latencies, inline)
                        })
                    })
                    .collect();
                let mut all = Vec::new();
                for task in tasks {
                    let (latencies, inline) = task.await.expect("a task");
                    all.extend(latencies);
                    inline_ns.extend(inline);
                }
                all
            });
            let ops = TASKS * records;
            let run = figure(ops as f64, started, cpu, latencies);
            assert_eq!(
                std::fs::metadata(&path).expect("the log").len(),
                (ops * RECORD) as u64,
                "{name}: every record in the log"
            );
            results.record(way, run);
            let _ = std::fs::remove_file(&path);
        }
    }
    results.print_ratios(0);
    print_inline("hybrio-tokio's appends", &mut inline_ns);
}
