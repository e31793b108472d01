//! What a user would pick instead: compio and monoio, each a runtime per
//! thread (2 threads of 32 tasks), against hybrio-tokio in a 2-worker tokio
//! runtime (64 tasks), on 4 KiB random reads of a cached file, or with
//! `direct` of the file opened `O_DIRECT` (the device's reads), in turn,
//! ROUNDS rounds.
//!
//!   others FILE READS_PER_TASK [ROUNDS [direct]]     (FILE cached, or on a device)
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::Instant;

use tprobe::{Rounds, cpu_ns, figure, read_loop, runtime};

/// compio's and monoio's read buffers are their own traits' (a `Vec`
/// here): for `O_DIRECT`, a `Vec` of this capacity is read into from its
/// first 4 KiB-aligned byte on, through each crate's slice of a range.
const ALIGNABLE: usize = 8192;

/// Where the 4 KiB-aligned part of `buf` starts (its capacity never changes).
fn aligned_start(buf: &[u8]) -> usize {
    buf.as_ptr().align_offset(4096)
}

/// The first offset seed of `task` on `thread`.
fn seed(thread: usize, task: usize) -> u64 {
    0x9E37_79B9 ^ ((thread * 1000 + task) as u64 + 1)
}

const TASKS: usize = 64;
const WAYS: [&str; 3] = ["hybrio-tokio", "compio", "monoio"];

/// 32 tasks on a compio runtime of this thread, each reading `reads` blocks.
fn compio_thread(path: String, thread: usize, reads: usize, blocks: u64, direct: bool) -> Vec<u32> {
    let rt = compio::runtime::Runtime::new().expect("a compio runtime");
    rt.block_on(async move {
        let mut options = compio::fs::OpenOptions::new();
        options.read(true);
        if direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = std::rc::Rc::new(options.open(&path).await.expect("open"));
        let tasks: Vec<_> = (0..TASKS / 2)
            .map(|task| {
                let file = file.clone();
                compio::runtime::spawn(read_loop(
                    reads,
                    blocks,
                    seed(thread, task),
                    Vec::with_capacity(if direct { ALIGNABLE } else { 4096 }),
                    move |mut buf: Vec<u8>, at| {
                        use compio::buf::{IntoInner, IoBuf};
                        use compio::io::AsyncReadAt;
                        let file = file.clone();
                        async move {
                            if direct {
                                let start = aligned_start(&buf);
                                buf.resize(start, 0);
                                let compio::BufResult(result, slice) =
                                    file.read_at(buf.slice(start..start + 4096), at).await;
                                (result, slice.into_inner())
                            } else {
                                buf.clear();
                                let compio::BufResult(result, buf) = file.read_at(buf, at).await;
                                (result, buf)
                            }
                        }
                    },
                ))
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            use compio::runtime::ResumeUnwind;
            all.extend(task.await.resume_unwind().expect("a task"));
        }
        all
    })
}

/// 32 tasks on a monoio runtime of this thread, each reading `reads` blocks.
fn monoio_thread(path: String, thread: usize, reads: usize, blocks: u64, direct: bool) -> Vec<u32> {
    let mut rt = monoio::RuntimeBuilder::<monoio::FusionDriver>::new()
        .build()
        .expect("a monoio runtime");
    rt.block_on(async move {
        let mut options = monoio::fs::OpenOptions::new();
        options.read(true);
        if direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = std::rc::Rc::new(options.open(&path).await.expect("open"));
        let tasks: Vec<_> = (0..TASKS / 2)
            .map(|task| {
                let file = file.clone();
                monoio::spawn(read_loop(
                    reads,
                    blocks,
                    seed(thread, task),
                    Vec::with_capacity(if direct { ALIGNABLE } else { 4096 }),
                    move |mut buf: Vec<u8>, at| {
                        use monoio::buf::IoBufMut;
                        let file = file.clone();
                        async move {
                            if direct {
                                let start = aligned_start(&buf);
                                buf.resize(start, 0);
                                let (result, slice) =
                                    file.read_at(buf.slice_mut(start..start + 4096), at).await;
                                (result, slice.into_inner())
                            } else {
                                buf.clear();
                                file.read_at(buf, at).await
                            }
                        }
                    },
                ))
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await);
        }
        all
    })
}

/// `reads` random reads of `file` into `buf` (see [`read_loop`]).
async fn hybrio_reads<B: hybrio_tokio::IoBufMut + Unpin>(
    file: Arc<hybrio_tokio::fs::File>,
    reads: usize,
    blocks: u64,
    seed: u64,
    buf: B,
) -> Vec<u32> {
    read_loop(reads, blocks, seed, buf, move |buf, at| {
        let file = file.clone();
        async move { file.read_at(buf, at).await }
    })
    .await
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: others FILE READS_PER_TASK [ROUNDS [direct]]")
        .clone();
    let reads: usize = args
        .get(2)
        .map_or(2000, |s| s.parse().expect("reads a task"));
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().expect("rounds"));
    let direct = match args.get(4).map(String::as_str) {
        None => false,
        Some("direct") => true,
        Some(other) => panic!("the fourth argument is `direct` or nothing, not {other:?}"),
    };
    let blocks = std::fs::metadata(&path).expect("stat FILE").len() / 4096;
    let rt = runtime();
    let hybrio = Arc::new(
        rt.block_on(
            hybrio_tokio::fs::File::options()
                .read(true)
                .direct(direct)
                .open(&path),
        )
        .expect("open"),
    );
    let pool = Arc::new(hybrio::buf::BufPool::new(TASKS, 4096).expect("aligned buffers"));
    let mut results = Rounds::new(&WAYS, "reads/s");
    for round in 0..rounds {
        println!("round {round}");
        for way in tprobe::in_turn(WAYS.len(), round) {
            let cpu = cpu_ns();
            let started = Instant::now();
            let latencies: Vec<u32> = match way {
                0 => rt.block_on(async {
                    let tasks: Vec<_> = (0..TASKS)
                        .map(|task| {
                            let (hybrio, pool) = (hybrio.clone(), pool.clone());
                            let seed = seed(0, task);
                            tokio::spawn(async move {
                                if direct {
                                    let buf = pool.take().expect("an aligned buffer a task");
                                    hybrio_reads(hybrio, reads, blocks, seed, buf).await
                                } else {
                                    // hybrio-tokio reads a buffer's length, not its capacity.
                                    let buf = vec![0u8; 4096];
                                    hybrio_reads(hybrio, reads, blocks, seed, buf).await
                                }
                            })
                        })
                        .collect();
                    tprobe::joined(tasks).await
                }),
                _ => {
                    let threads: Vec<_> = (0..2)
                        .map(|thread| {
                            let path = path.clone();
                            std::thread::spawn(move || {
                                if way == 1 {
                                    compio_thread(path, thread, reads, blocks, direct)
                                } else {
                                    monoio_thread(path, thread, reads, blocks, direct)
                                }
                            })
                        })
                        .collect();
                    threads
                        .into_iter()
                        .flat_map(|t| t.join().expect("a runtime's thread"))
                        .collect()
                }
            };
            results.record(way, figure((TASKS * reads) as f64, started, cpu, latencies));
        }
        let _ = round;
    }
    results.print_ratios(0);
}
