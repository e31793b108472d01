//! What the probe's workloads share: a 2-worker runtime, CPU time, rounds
//! of ways in turn with medians of per-round ratios, and the timing of the
//! calls that completed at their first poll (inline).

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::Instant;

/// The process's user and system CPU time so far, in nanoseconds.
pub fn cpu_ns() -> u64 {
    // SAFETY: rusage is plain integers; all zeros is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// A multi-thread runtime of 2 workers, as the workloads ask.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The `q` quantile of sorted `values`.
pub fn quantile(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize] as f64
}

pub fn median(values: &[f64]) -> f64 {
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Awaits `future`; if it was ready at its first poll (it completed in the
/// polling task: inline), its time in that poll goes to `inline_ns`.
pub async fn timing_inline<F: Future>(future: F, inline_ns: &mut Vec<u32>) -> F::Output {
    let mut future = pin!(future);
    let started = Instant::now();
    let first = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(output) => {
            inline_ns.push(started.elapsed().as_nanos().min(u32::MAX as u128) as u32);
            output
        }
        Poll::Pending => future.await,
    }
}

/// One round's figure of one way.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Operations (or bytes) a second.
    pub rate: f64,
    /// Per operation, sorted, in nanoseconds.
    pub latencies: Vec<u32>,
    pub cpu_ns_per_op: f64,
}

/// Each way's figures, round by round.
/// The ways' indices in the order they run in `round`: each round starts one
/// further along, so that no way always runs first (right after whatever the
/// machine did before: a file just written, another workload's page cache
/// to reclaim) or always last.
pub fn in_turn(ways: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..ways).map(move |k| (k + round) % ways)
}

#[derive(Debug)]
pub struct Rounds {
    pub ways: Vec<&'static str>,
    pub figures: Vec<Vec<Figure>>,
    pub unit: &'static str,
}

impl Rounds {
    pub fn new(ways: &[&'static str], unit: &'static str) -> Rounds {
        Rounds {
            ways: ways.to_vec(),
            figures: ways.iter().map(|_| Vec::new()).collect(),
            unit,
        }
    }

    /// Forgets the figures recorded so far (a warm-up round's).
    ///
    /// The workloads on a device run a round first that is not counted: on
    /// this virtual machine, a read the guest's page cache misses goes to the
    /// host's, and the first way to read a file after other work pays for the
    /// host's misses. `O_DIRECT` reads of the first way ran at 0.76-0.81 of
    /// its later rounds; the first cold stream and Parquet scans at 0.28-0.35
    /// of the other ways' in the same round.
    pub fn forget(&mut self) {
        self.figures.iter_mut().for_each(Vec::clear);
        println!("  (not counted: a warm-up)");
    }

    pub fn record(&mut self, way: usize, mut figure: Figure) {
        figure.latencies.sort_unstable();
        let lat = &figure.latencies;
        println!(
            "  {:16} {:>12.0} {}  p50 {:>8.1} us  p99 {:>8.1} us  cpu {:>6.2} us/op",
            self.ways[way],
            figure.rate,
            self.unit,
            quantile(lat, 0.5) / 1000.0,
            quantile(lat, 0.99) / 1000.0,
            figure.cpu_ns_per_op / 1000.0,
        );
        self.figures[way].push(figure);
    }

    /// `way`'s rate over each other way's, round by round, and the medians.
    pub fn print_ratios(&self, way: usize) {
        for other in 0..self.ways.len() {
            if other == way {
                continue;
            }
            let ratios: Vec<f64> = self.figures[way]
                .iter()
                .zip(&self.figures[other])
                .map(|(a, b)| a.rate / b.rate)
                .collect();
            if ratios.is_empty() {
                continue;
            }
            let shown: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            println!(
                "{} / {}: median {:.2} (rounds: {})",
                self.ways[way],
                self.ways[other],
                median(&ratios),
                shown.join(", ")
            );
        }
    }
}

/// The p50, p99, p99.9 and largest of inline calls' times, in microseconds.
pub fn print_inline(label: &str, inline_ns: &mut [u32]) {
    inline_ns.sort_unstable();
    println!(
        "{label}: {} inline calls; p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us",
        inline_ns.len(),
        quantile(inline_ns, 0.5) / 1000.0,
        quantile(inline_ns, 0.99) / 1000.0,
        quantile(inline_ns, 0.999) / 1000.0,
        inline_ns.last().copied().unwrap_or(0) as f64 / 1000.0,
    );
}

/// Every task's latencies, in one list.
pub async fn joined(tasks: Vec<tokio::task::JoinHandle<Vec<u32>>>) -> Vec<u32> {
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("a task"));
    }
    all
}

/// The next number of a xorshift64 sequence (the probe's random offsets).
pub fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A run of `ops` operations that started at `started` with the process's
/// CPU time at `cpu`, and their latencies.
pub fn figure(ops: f64, started: std::time::Instant, cpu: u64, latencies: Vec<u32>) -> Figure {
    Figure {
        rate: ops / started.elapsed().as_secs_f64(),
        latencies,
        cpu_ns_per_op: (cpu_ns() - cpu) as f64 / ops,
    }
}

/// `reads` random 4 KiB reads of a file of `blocks` blocks through `read`
/// (which takes a buffer and an offset and gives back what it read and the
/// buffer), each checked to be whole; their latencies.
pub async fn read_loop<B, F, Fut>(
    reads: usize,
    blocks: u64,
    mut seed: u64,
    mut buf: B,
    mut read: F,
) -> Vec<u32>
where
    F: FnMut(B, u64) -> Fut,
    Fut: Future<Output = (std::io::Result<usize>, B)>,
{
    let mut latencies = Vec::with_capacity(reads);
    for _ in 0..reads {
        let at = xorshift(&mut seed) % blocks * 4096;
        let began = Instant::now();
        let (result, back) = read(buf, at).await;
        assert_eq!(result.expect("read"), 4096);
        buf = back;
        latencies.push(began.elapsed().as_nanos() as u32);
    }
    latencies
}
