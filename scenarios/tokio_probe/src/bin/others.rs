//! What a user would pick instead: compio and monoio, each a runtime per
//! thread (2 threads of 32 tasks), against hybrio-tokio in a 2-worker tokio
//! runtime (64 tasks), on 4 KiB random reads of a cached file, in turn,
//! ROUNDS rounds. (`O_DIRECT` is left out: their reads take buffers of
//! their own traits, which would need an aligned type written for each.)
//!
//!   others FILE READS_PER_TASK [ROUNDS]     (FILE cached)
use std::sync::Arc;
use std::time::Instant;

use tprobe::{Rounds, cpu_ns, figure, read_loop, runtime};

/// The first offset seed of `task` on `thread`.
fn seed(thread: usize, task: usize) -> u64 {
    0x9E37_79B9 ^ ((thread * 1000 + task) as u64 + 1)
}

const TASKS: usize = 64;
const WAYS: [&str; 3] = ["hybrio-tokio", "compio", "monoio"];

/// 32 tasks on a compio runtime of this thread, each reading `reads` blocks.
fn compio_thread(path: String, thread: usize, reads: usize, blocks: u64) -> Vec<u32> {
    let rt = compio::runtime::Runtime::new().expect("a compio runtime");
    rt.block_on(async move {
        let file = std::rc::Rc::new(compio::fs::File::open(&path).await.expect("open"));
        let tasks: Vec<_> = (0..TASKS / 2)
            .map(|task| {
                let file = file.clone();
                compio::runtime::spawn(read_loop(
                    reads,
                    blocks,
                    seed(thread, task),
                    move |mut buf: Vec<u8>, at| {
                        use compio::io::AsyncReadAt;
                        let file = file.clone();
                        buf.clear();
                        async move {
                            let compio::BufResult(result, buf) = file.read_at(buf, at).await;
                            (result, buf)
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
fn monoio_thread(path: String, thread: usize, reads: usize, blocks: u64) -> Vec<u32> {
    let mut rt = monoio::RuntimeBuilder::<monoio::FusionDriver>::new()
        .build()
        .expect("a monoio runtime");
    rt.block_on(async move {
        let file = std::rc::Rc::new(monoio::fs::File::open(&path).await.expect("open"));
        let tasks: Vec<_> = (0..TASKS / 2)
            .map(|task| {
                let file = file.clone();
                monoio::spawn(read_loop(
                    reads,
                    blocks,
                    seed(thread, task),
                    move |mut buf: Vec<u8>, at| {
                        let file = file.clone();
                        buf.clear();
                        async move { file.read_at(buf, at).await }
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: others FILE READS_PER_TASK [ROUNDS]")
        .clone();
    let reads: usize = args
        .get(2)
        .map_or(2000, |s| s.parse().expect("reads a task"));
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().expect("rounds"));
    let blocks = std::fs::metadata(&path).expect("stat FILE").len() / 4096;
    let rt = runtime();
    let hybrio = Arc::new(
        rt.block_on(hybrio_tokio::fs::File::open(&path))
            .expect("open"),
    );
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
                            let hybrio = hybrio.clone();
                            tokio::spawn(read_loop(
                                reads,
                                blocks,
                                seed(0, task),
                                move |mut buf: Vec<u8>, at| {
                                    let hybrio = hybrio.clone();
                                    // hybrio-tokio reads a buffer's length, not its capacity.
                                    buf.resize(4096, 0);
                                    async move { hybrio.read_at(buf, at).await }
                                },
                            ))
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
                                    compio_thread(path, thread, reads, blocks)
                                } else {
                                    monoio_thread(path, thread, reads, blocks)
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
