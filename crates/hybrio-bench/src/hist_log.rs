//! Percentiles over time: fio's histogram log (`write_hist_log`,
//! `log_hist_msec`, `log_hist_coarseness`) and each interval's own
//! percentiles, which fio has been asked for since 2015 (its issue #130)
//! and still reports only for the whole job.
//!
//! As fio: each direction's completion latencies go into a histogram of
//! fio's 1856 buckets; when an I/O completes at least `log_hist_msec` after
//! its direction's window opened (the first I/O opens the first), the
//! window's histogram is one line of `PREFIX_clat_hist.N.log`,
//! `time (ms), direction, block size, count, count, ...`, each count the
//! sum of `2^log_hist_coarseness` neighbouring buckets (fio's
//! `fiologparser_hist.py` reads it), and the next window opens where this
//! one should have closed. The part of a window left when the job ends is
//! not logged, as fio does not log it. hybrio keeps each window's
//! percentiles (the job's `percentile_list`, by fio's rules) for the JSON
//! report and the HTML page's chart, with or without the log file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::stats::{DataDir, LatHistogram};

/// One window's completion latencies in one direction.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalPercentiles {
    /// When the window closed: ms since the job started (the log's time).
    pub end_ms: u64,
    /// Its direction.
    pub dir: DataDir,
    /// I/Os completed in it.
    pub count: u64,
    /// `(percentile, ns)`, as the job's `percentile_list` asks.
    pub percentiles: Vec<(f64, u64)>,
}

/// A direction's open window.
#[derive(Debug)]
struct Window {
    /// When it opened (ms since the job started; fio's `hist_last`, with
    /// its 0 for "not yet").
    opened_ms: u64,
    latencies: LatHistogram,
}

/// A job's windows, and its histogram log if it writes one.
#[derive(Debug)]
pub struct HistWindows {
    every_ms: u64,
    /// Buckets summed per count: `2^log_hist_coarseness`.
    stride: usize,
    percentile_list: Vec<f64>,
    windows: [Window; 3],
    log: Option<(PathBuf, BufWriter<File>)>,
    intervals: Vec<IntervalPercentiles>,
}

impl HistWindows {
    /// Windows of `every_ms` (fio's `log_hist_msec`, at least 1), each
    /// logged to `log` if given.
    pub fn new(
        every_ms: u64,
        coarseness: u8,
        percentile_list: &[f64],
        log: Option<(PathBuf, File)>,
    ) -> HistWindows {
        let window = || Window {
            opened_ms: 0,
            latencies: LatHistogram::new(),
        };
        HistWindows {
            every_ms: every_ms.max(1),
            stride: 1 << coarseness.min(6),
            percentile_list: percentile_list.to_vec(),
            windows: [window(), window(), window()],
            log: log.map(|(path, file)| (path, BufWriter::with_capacity(1 << 16, file))),
            intervals: Vec::new(),
        }
    }

    /// Counts an I/O of `bytes` in `dir` that completed at `now_ns` (on the
    /// job's clock) after `clat_ns`; closes its direction's window if due.
    pub fn record(
        &mut self,
        now_ns: u64,
        dir: DataDir,
        bytes: u64,
        clat_ns: u64,
    ) -> std::io::Result<()> {
        let elapsed = now_ns / 1_000_000;
        let window = &mut self.windows[dir.index()];
        window.latencies.record(clat_ns);
        if window.opened_ms == 0 {
            window.opened_ms = elapsed;
        }
        let this_window = elapsed - window.opened_ms.min(elapsed);
        if this_window < self.every_ms {
            return Ok(());
        }
        // The next window opens where this one should have closed.
        window.opened_ms = elapsed - (this_window - self.every_ms);
        self.intervals.push(IntervalPercentiles {
            end_ms: elapsed,
            dir,
            count: window.latencies.total(),
            percentiles: window.latencies.percentiles(&self.percentile_list),
        });
        let written = match &mut self.log {
            Some((_, out)) => write_line(out, elapsed, dir, bytes, &window.latencies, self.stride),
            None => Ok(()),
        };
        window.latencies.reset();
        written
    }

    /// The log's file, for an error's message.
    pub fn log_path(&self) -> Option<&std::path::Path> {
        self.log.as_ref().map(|(path, _)| path.as_path())
    }

    /// Flushes the log and hands back every window's percentiles.
    pub fn finish(mut self) -> std::io::Result<Vec<IntervalPercentiles>> {
        if let Some((_, out)) = &mut self.log {
            out.flush()?;
        }
        Ok(self.intervals)
    }
}

/// fio's line: `time, direction, block size, ` and the window's bucket
/// counts, `stride` buckets summed per count.
fn write_line(
    out: &mut impl Write,
    ms: u64,
    dir: DataDir,
    bytes: u64,
    latencies: &LatHistogram,
    stride: usize,
) -> std::io::Result<()> {
    write!(out, "{ms}, {}, {bytes}", dir.index())?;
    let counts: Vec<u64> = latencies.fio_counts().collect();
    for group in counts.chunks(stride) {
        write!(out, ", {}", group.iter().sum::<u64>())?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(every_ms: u64, coarseness: u8, dir: &std::path::Path) -> HistWindows {
        let path = dir.join("h_clat_hist.1.log");
        let file = File::create(&path).unwrap();
        HistWindows::new(every_ms, coarseness, &[50.0, 99.0], Some((path, file)))
    }

    #[test]
    fn a_window_closes_at_the_first_completion_past_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = windows(100, 0, dir.path());
        let ms = 1_000_000;
        // Reads at 5..=104 ms, 1 us to 100 us; the window opened at 5 ms
        // closes at the read of 105 ms, which it counts.
        for i in 0..=100u64 {
            w.record((5 + i) * ms, DataDir::Read, 4096, (i + 1) * 1000)
                .unwrap();
        }
        // A write at 50 ms opens the writes' window; nothing closes it.
        w.record(50 * ms, DataDir::Write, 8192, 7_000).unwrap();
        let intervals = w.finish().unwrap();
        assert_eq!(intervals.len(), 1);
        let first = &intervals[0];
        assert_eq!(
            (first.end_ms, first.dir, first.count),
            (105, DataDir::Read, 101)
        );
        // 51st of 101 values (51 us) and 100th (100 us), as fio's buckets
        // report them (the bucket's middle).
        let p50 = first.percentiles[0].1;
        let p99 = first.percentiles[1].1;
        assert!((50_700..=51_300).contains(&p50), "{p50}");
        assert!((99_500..=100_500).contains(&p99), "{p99}");
        let log = std::fs::read_to_string(dir.path().join("h_clat_hist.1.log")).unwrap();
        let line: Vec<&str> = log.lines().next().unwrap().split(", ").collect();
        assert_eq!(line[..3], ["105", "0", "4096"]);
        assert_eq!(line.len(), 3 + 1856);
        let counts: u64 = line[3..].iter().map(|c| c.parse::<u64>().unwrap()).sum();
        assert_eq!(counts, 101);
    }

    #[test]
    fn coarseness_sums_neighbouring_buckets_and_windows_keep_their_pace() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = windows(10, 3, dir.path());
        let ms = 1_000_000;
        // One read every 7 ms from 7 ms: windows open at 7, close at 21
        // (opened 7, 14 >= 10: the next opens at 17), 28 (11: next 27),
        // 42 (15: next 37), 49 (12: next 47), 63, ...
        for i in 1..=10u64 {
            w.record(i * 7 * ms, DataDir::Read, 4096, 200).unwrap();
        }
        let ends: Vec<u64> = w.intervals.iter().map(|i| i.end_ms).collect();
        assert_eq!(ends, [21, 28, 42, 49, 63, 70]);
        w.finish().unwrap();
        let log = std::fs::read_to_string(dir.path().join("h_clat_hist.1.log")).unwrap();
        for line in log.lines() {
            let fields: Vec<&str> = line.split(", ").collect();
            assert_eq!(fields.len(), 3 + 1856 / 8, "{line}");
        }
        // 200 ns is bucket 164 (fio's buckets of 2 from 128): the 21st count
        // of 8 buckets holds the first window's 3.
        let first: Vec<&str> = log.lines().next().unwrap().split(", ").collect();
        assert_eq!(first[3 + 20], "3");
    }
}
