//! fio's per-job logs: `write_lat_log` (`PREFIX_lat`, `_clat`, `_slat`),
//! `write_bw_log` (`_bw`) and `write_iops_log` (`_iops`), in fio 3.33's
//! format, so that tools that plot fio's logs (fio-plot, fio's own
//! `fiologparser.py`) read them: one line per entry,
//! `time (ms), value, direction (0 read, 1 write), block size, offset`,
//! with a sixth column, the priority (0 here), when `log_offset` is on.
//!
//! Without `log_avg_msec` every I/O has its line: latencies in ns, its
//! bandwidth (bytes per ms, as fio computes it) and an I/O count of 1, the
//! offset only with `log_offset`. With `log_avg_msec=N` each direction has a
//! line per window of N ms: the window's mean latency (rounded as fio
//! rounds it), its bandwidth in KiB/s and its IOPS, block size and offset 0;
//! the last, partial window is written for latencies only, as fio writes it.
//! `log_window_value=max` logs the window's largest latency instead,
//! `both` the mean and then the largest (a column more; bandwidth and IOPS
//! twice). `log_issue_time` (fio 3.38) ends each line with the I/O's issue
//! time in ns since the job's start: in the `clat` and `slat` logs of
//! single I/Os, 0 elsewhere (as fio).
//!
//! Files are `PREFIX_KIND.N.log`, N the job's number in the run from 1
//! (`per_job_logs=0`: `PREFIX_KIND.log`, shared by the jobs as fio shares it:
//! here each job appends its lines when it ends).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::options::{JobOptions, WindowValue};
use crate::stats::DataDir;

/// A log could not be written.
#[derive(Debug, thiserror::Error)]
#[error("log {path}: {source}")]
pub struct LogError {
    /// The log's file.
    pub path: String,
    /// What failed.
    #[source]
    pub source: std::io::Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Lat,
    Clat,
    Slat,
    Bw,
    Iops,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Lat => "lat",
            Kind::Clat => "clat",
            Kind::Slat => "slat",
            Kind::Bw => "bw",
            Kind::Iops => "iops",
        }
    }
}

/// One window's sums for one direction.
#[derive(Debug, Default, Clone, Copy)]
struct Window {
    sum: u128,
    count: u64,
    bytes: u64,
    max: u64,
}

#[derive(Debug)]
struct Log {
    kind: Kind,
    path: PathBuf,
    out: BufWriter<File>,
    windows: [Window; 3],
}

/// One job's open logs.
#[derive(Debug)]
pub struct JobLogs {
    logs: Vec<Log>,
    avg_ns: u64,
    /// End of the current averaging window (ns on the job's clock).
    window_end: u64,
    with_offset: bool,
    /// `log_prio`.
    with_prio: bool,
    /// `log_window_value`.
    window_value: WindowValue,
    /// `log_issue_time`.
    with_issue_time: bool,
    /// `log_hist_msec`'s windows (and `write_hist_log`'s file).
    hist: Option<crate::hist_log::HistWindows>,
}

impl JobLogs {
    /// Opens the logs the job asks for (none: `None`). `number` is the job's
    /// number in the run, from 1.
    pub fn open(options: &JobOptions, number: usize) -> Result<Option<JobLogs>, LogError> {
        let mut wanted = Vec::new();
        let prefix = |p: &Option<String>| {
            p.as_ref().map(|p| {
                if p.is_empty() {
                    options.name.clone()
                } else {
                    p.clone()
                }
            })
        };
        if let Some(p) = prefix(&options.write_lat_log) {
            wanted.extend([Kind::Lat, Kind::Clat, Kind::Slat].map(|k| (k, p.clone())));
        }
        if let Some(p) = prefix(&options.write_bw_log) {
            wanted.push((Kind::Bw, p));
        }
        if let Some(p) = prefix(&options.write_iops_log) {
            wanted.push((Kind::Iops, p));
        }
        let hist_file = prefix(&options.write_hist_log);
        if wanted.is_empty() && hist_file.is_none() && options.log_hist_msec == 0 {
            return Ok(None);
        }
        let log_name = |prefix: &str, suffix: &str| {
            PathBuf::from(if options.per_job_logs {
                format!("{prefix}_{suffix}.{number}.log")
            } else {
                format!("{prefix}_{suffix}.log")
            })
        };
        let hist = if hist_file.is_some() || options.log_hist_msec > 0 {
            let file = match &hist_file {
                Some(prefix) => {
                    let path = log_name(prefix, "clat_hist");
                    let file = File::create(&path).map_err(|source| LogError {
                        path: path.display().to_string(),
                        source,
                    })?;
                    Some((path, file))
                }
                None => None,
            };
            // fio logs nothing without log_hist_msec; hybrio's windows for
            // the JSON report need it too.
            (options.log_hist_msec > 0).then(|| {
                crate::hist_log::HistWindows::new(
                    options.log_hist_msec,
                    options.log_hist_coarseness,
                    &options.percentile_list,
                    file,
                )
            })
        } else {
            None
        };
        let mut logs = Vec::with_capacity(wanted.len());
        for (kind, prefix) in wanted {
            let path = log_name(&prefix, kind.suffix());
            let file = if options.per_job_logs {
                File::create(&path)
            } else {
                OpenOptions::new().create(true).append(true).open(&path)
            }
            .map_err(|source| LogError {
                path: path.display().to_string(),
                source,
            })?;
            logs.push(Log {
                kind,
                path,
                out: BufWriter::with_capacity(1 << 16, file),
                windows: [Window::default(); 3],
            });
        }
        let avg_ns = options.log_avg_msec.saturating_mul(1_000_000);
        Ok(Some(JobLogs {
            logs,
            avg_ns,
            window_end: avg_ns,
            with_offset: options.log_offset,
            with_prio: options.cmdprio.log,
            window_value: options.log_window_value,
            with_issue_time: options.log_issue_time,
            hist,
        }))
    }

    /// Logs one completed I/O at `now` (ns on the job's clock).
    pub fn record(&mut self, now: u64, io: &LoggedIo) -> Result<(), LogError> {
        let LoggedIo {
            dir,
            bytes,
            offset,
            slat_ns,
            clat_ns,
            ioprio,
        } = *io;
        // fio's last column: the priority with log_prio, else whether it
        // was a realtime one.
        let prio = if self.with_prio {
            Prio::Value(ioprio)
        } else {
            Prio::Realtime(ioprio >> 13 == 1)
        };
        let d = dir.index();
        let lat_ns = clat_ns + slat_ns.unwrap_or(0);
        if let Some(hist) = &mut self.hist
            && let Err(source) = hist.record(now, dir, bytes, clat_ns)
        {
            let path = hist
                .log_path()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            return Err(LogError { path, source });
        }
        if self.avg_ns == 0 {
            let ms = now / 1_000_000;
            // The I/O went to the kernel (fio's issue time) clat before it
            // completed.
            let issued = now.saturating_sub(clat_ns);
            for log in &mut self.logs {
                let value = match log.kind {
                    Kind::Lat => lat_ns,
                    Kind::Clat => clat_ns,
                    Kind::Slat => match slat_ns {
                        Some(slat) => slat,
                        None => continue,
                    },
                    Kind::Bw => bytes.saturating_mul(1_000_000) / lat_ns.max(1),
                    Kind::Iops => 1,
                };
                let issue = self.with_issue_time.then_some(match log.kind {
                    Kind::Clat | Kind::Slat => issued,
                    Kind::Lat | Kind::Bw | Kind::Iops => 0,
                });
                let columns = Columns {
                    value,
                    value1: None,
                    dir: d,
                    bs: bytes,
                    offset: self.with_offset.then_some(offset),
                    prio,
                    issue,
                };
                line(&mut log.out, ms, columns).map_err(|e| log.error(e))?;
            }
            return Ok(());
        }
        while now >= self.window_end {
            self.close_window(self.window_end, true)?;
            self.window_end += self.avg_ns;
        }
        for log in &mut self.logs {
            let value = match log.kind {
                Kind::Lat => lat_ns,
                Kind::Clat => clat_ns,
                Kind::Slat => match slat_ns {
                    Some(slat) => slat,
                    None => continue,
                },
                Kind::Bw | Kind::Iops => 0,
            };
            let w = &mut log.windows[d];
            w.sum += u128::from(value);
            w.count += 1;
            w.bytes += bytes;
            w.max = w.max.max(value);
        }
        Ok(())
    }

    /// Logs one operation of a file-operation engine (`filecreate`,
    /// `dirstat`, ...) that took `latency_ns` and ended at `now`: as fio, a
    /// completion latency of block size 0 in the `clat` log alone.
    pub fn record_file_op(
        &mut self,
        now: u64,
        dir: DataDir,
        latency_ns: u64,
    ) -> Result<(), LogError> {
        let prio = if self.with_prio {
            Prio::Value(0)
        } else {
            Prio::Realtime(false)
        };
        let d = dir.index();
        while self.avg_ns > 0 && now >= self.window_end {
            self.close_window(self.window_end, true)?;
            self.window_end += self.avg_ns;
        }
        for log in self.logs.iter_mut().filter(|l| l.kind == Kind::Clat) {
            if self.avg_ns > 0 {
                let w = &mut log.windows[d];
                w.sum += u128::from(latency_ns);
                w.count += 1;
                w.max = w.max.max(latency_ns);
                continue;
            }
            let columns = Columns {
                value: latency_ns,
                value1: None,
                dir: d,
                bs: 0,
                offset: self.with_offset.then_some(0),
                prio,
                issue: self
                    .with_issue_time
                    .then_some(now.saturating_sub(latency_ns)),
            };
            line(&mut log.out, now / 1_000_000, columns).map_err(|e| log.error(e))?;
        }
        Ok(())
    }

    /// Writes each direction's line for the window ending at `end`;
    /// `complete` windows only for bandwidth and IOPS.
    fn close_window(&mut self, end: u64, complete: bool) -> Result<(), LogError> {
        let window_ms = (self.avg_ns / 1_000_000).max(1);
        let (with_offset, with_prio) = (self.with_offset, self.with_prio);
        for log in &mut self.logs {
            for (d, w) in log.windows.iter_mut().enumerate() {
                // fio rounds the mean half up; a rate is the window's only
                // sample, its own mean and largest value.
                let (mean, max) = match log.kind {
                    _ if w.count == 0 => {
                        *w = Window::default();
                        continue;
                    }
                    Kind::Lat | Kind::Clat | Kind::Slat => {
                        let count = u128::from(w.count);
                        (((w.sum + count / 2) / count) as u64, w.max)
                    }
                    Kind::Bw if complete => {
                        let rate = w.bytes / 1024 * 1000 / window_ms;
                        (rate, rate)
                    }
                    Kind::Iops if complete => {
                        let rate = w.count * 1000 / window_ms;
                        (rate, rate)
                    }
                    Kind::Bw | Kind::Iops => continue,
                };
                *w = Window::default();
                let (value, value1) = match self.window_value {
                    WindowValue::Avg => (mean, None),
                    WindowValue::Max => (max, None),
                    WindowValue::Both => (mean, Some(max)),
                };
                let columns = Columns {
                    value,
                    value1,
                    dir: d,
                    bs: 0,
                    offset: with_offset.then_some(0),
                    prio: if with_prio {
                        Prio::Value(0)
                    } else {
                        Prio::Realtime(false)
                    },
                    issue: self.with_issue_time.then_some(0),
                };
                line(&mut log.out, end / 1_000_000, columns)
                    .map_err(|e| JobLogs::error_of(&log.path, e))?;
            }
        }
        Ok(())
    }

    /// Writes what is left (the last, partial window) and flushes the
    /// files; hands back `log_hist_msec`'s windows' percentiles.
    pub fn finish(
        mut self,
        now: u64,
    ) -> Result<Vec<crate::hist_log::IntervalPercentiles>, LogError> {
        if self.avg_ns > 0 {
            self.close_window(now, false)?;
        }
        for log in &mut self.logs {
            log.out
                .flush()
                .map_err(|e| JobLogs::error_of(&log.path, e))?;
        }
        match self.hist.take() {
            Some(hist) => {
                let path = hist
                    .log_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                hist.finish().map_err(|source| LogError { path, source })
            }
            None => Ok(Vec::new()),
        }
    }

    fn error_of(path: &std::path::Path, source: std::io::Error) -> LogError {
        LogError {
            path: path.display().to_string(),
            source,
        }
    }
}

impl Log {
    fn error(&self, source: std::io::Error) -> LogError {
        JobLogs::error_of(&self.path, source)
    }
}

/// A log line's columns after its time, each present or not as fio
/// writes them.
struct Columns {
    value: u64,
    /// `log_window_value=both`: the window's largest value.
    value1: Option<u64>,
    dir: usize,
    bs: u64,
    offset: Option<u64>,
    prio: Prio,
    issue: Option<u64>,
}

fn line(out: &mut impl Write, ms: u64, columns: Columns) -> std::io::Result<()> {
    let Columns {
        value,
        value1,
        dir,
        bs,
        offset,
        prio,
        issue,
    } = columns;
    write!(out, "{ms}, {value}")?;
    if let Some(value1) = value1 {
        write!(out, ", {value1}")?;
    }
    write!(out, ", {dir}, {bs}")?;
    if let Some(offset) = offset {
        write!(out, ", {offset}")?;
    }
    match prio {
        Prio::Value(value) => write!(out, ", 0x{value:04x}")?,
        Prio::Realtime(rt) => write!(out, ", {}", u8::from(rt))?,
    }
    if let Some(issue) = issue {
        write!(out, ", {issue}")?;
    }
    writeln!(out)
}

/// A log line's last column, as fio writes it.
#[derive(Debug, Clone, Copy)]
enum Prio {
    /// `log_prio`: the I/O's priority value.
    Value(u16),
    /// Whether the I/O went in the realtime class.
    Realtime(bool),
}

/// One completed I/O, as the logs take it.
#[derive(Debug, Clone, Copy)]
pub struct LoggedIo {
    /// Its direction.
    pub dir: DataDir,
    /// Bytes it moved.
    pub bytes: u64,
    /// Where.
    pub offset: u64,
    /// Its submission latency, if taken.
    pub slat_ns: Option<u64>,
    /// Its completion latency.
    pub clat_ns: u64,
    /// Its I/O priority (0: the thread's).
    pub ioprio: u16,
}

/// fio's `--bandwidth-log[=NAME]`: the bandwidth of all the run's jobs
/// together, per direction, every 500 ms (fio's default `bwavgtime`; hybrio
/// has no `bwavgtime`), in `NAME-read_bw.log`, `NAME-write_bw.log` and
/// `NAME-trim_bw.log` (`NAME`: `agg`): `time (ms since the run's start),
/// KiB/s, direction, 0, 0`, as fio writes them.
#[derive(Debug)]
pub struct AggregateLog {
    files: [(PathBuf, BufWriter<File>); 3],
    started: std::time::Instant,
    last: std::time::Instant,
    /// The run's bytes at the last line.
    last_bytes: [u64; 3],
    /// The bytes of the groups that ended (each group's jobs count from 0).
    done_before: [u64; 3],
}

impl AggregateLog {
    /// How often a line is due.
    pub const EVERY: std::time::Duration = std::time::Duration::from_millis(500);

    /// Creates the three files (`name`: `agg` unless given).
    pub fn create(name: &str) -> Result<AggregateLog, LogError> {
        let open = |dir: &str| {
            let path = PathBuf::from(format!("{name}-{dir}_bw.log"));
            File::create(&path)
                .map(|f| (path.clone(), BufWriter::new(f)))
                .map_err(|source| JobLogs::error_of(&path, source))
        };
        let now = std::time::Instant::now();
        Ok(AggregateLog {
            files: [open("read")?, open("write")?, open("trim")?],
            started: now,
            last: now,
            last_bytes: [0; 3],
            done_before: [0; 3],
        })
    }

    /// Whether a line is due at `now`.
    pub fn due(&self, now: std::time::Instant) -> bool {
        now.duration_since(self.last) > Self::EVERY
    }

    /// Writes each direction's rate since the last line, from the running
    /// group's byte totals (reads, writes, trims) at `now`.
    pub fn sample(&mut self, now: std::time::Instant, group: [u64; 3]) -> Result<(), LogError> {
        let bytes: [u64; 3] = std::array::from_fn(|d| self.done_before[d] + group[d]);
        let ms = now.duration_since(self.last).as_millis() as u64;
        let since_start = now.duration_since(self.started).as_millis();
        for (dir, (path, out)) in self.files.iter_mut().enumerate() {
            let diff = bytes[dir].saturating_sub(self.last_bytes[dir]);
            // fio's calc_rate: KiB/s, truncated at each step.
            let rate = (1000 * diff).checked_div(ms).unwrap_or(0) / 1024;
            writeln!(out, "{since_start}, {rate}, {dir}, 0, 0")
                .map_err(|e| JobLogs::error_of(path, e))?;
        }
        self.last = now;
        self.last_bytes = bytes;
        Ok(())
    }

    /// Counts a group's final byte totals into the run's.
    pub fn end_group(&mut self, group: [u64; 3]) {
        for (done, bytes) in self.done_before.iter_mut().zip(group) {
            *done += bytes;
        }
    }

    /// Flushes the files.
    pub fn finish(mut self) -> Result<(), LogError> {
        for (path, out) in &mut self.files {
            out.flush().map_err(|e| JobLogs::error_of(path, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &std::path::Path, avg: u64, offset: bool) -> JobOptions {
        let prefix = dir.join("t").display().to_string();
        JobOptions {
            name: "t".into(),
            write_lat_log: Some(prefix.clone()),
            write_bw_log: Some(prefix.clone()),
            write_iops_log: Some(prefix),
            log_avg_msec: avg,
            log_offset: offset,
            ..JobOptions::default()
        }
    }

    fn read(dir: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    #[test]
    fn every_io_has_its_line_as_fio_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut logs = JobLogs::open(&options(dir.path(), 0, true), 3)
            .unwrap()
            .unwrap();
        let ms = 1_000_000;
        logs.record(
            2 * ms,
            &LoggedIo {
                dir: DataDir::Read,
                bytes: 4096,
                offset: 8192,
                slat_ns: None,
                clat_ns: 100_000,
                ioprio: 0,
            },
        )
        .unwrap();
        logs.record(
            5 * ms,
            &LoggedIo {
                dir: DataDir::Write,
                bytes: 8192,
                offset: 0,
                slat_ns: Some(1_000),
                clat_ns: 49_000,
                ioprio: 0,
            },
        )
        .unwrap();
        logs.finish(6 * ms).unwrap();
        assert_eq!(
            read(dir.path(), "t_lat.3.log"),
            "2, 100000, 0, 4096, 8192, 0\n5, 50000, 1, 8192, 0, 0\n"
        );
        assert_eq!(
            read(dir.path(), "t_clat.3.log"),
            "2, 100000, 0, 4096, 8192, 0\n5, 49000, 1, 8192, 0, 0\n"
        );
        // A read without a submission latency has no slat line.
        assert_eq!(read(dir.path(), "t_slat.3.log"), "5, 1000, 1, 8192, 0, 0\n");
        // 4096 bytes in 0.1 ms: 40960 bytes per ms.
        assert!(read(dir.path(), "t_bw.3.log").starts_with("2, 40960, 0, 4096, 8192, 0\n"));
        assert!(read(dir.path(), "t_iops.3.log").starts_with("2, 1, 0, 4096"));
    }

    #[test]
    fn windows_average_and_rate() {
        let dir = tempfile::tempdir().unwrap();
        let mut logs = JobLogs::open(&options(dir.path(), 100, false), 1)
            .unwrap()
            .unwrap();
        let ms = 1_000_000;
        // Window 0-100 ms: 10 reads of 4 KiB, latencies 10..19 us.
        for i in 0..10u64 {
            logs.record(
                i * 10 * ms,
                &LoggedIo {
                    dir: DataDir::Read,
                    bytes: 4096,
                    offset: 0,
                    slat_ns: None,
                    clat_ns: (10 + i) * 1000,
                    ioprio: 0,
                },
            )
            .unwrap();
        }
        // Window 100-200 ms: 2 writes; then the run ends at 250 ms with one read.
        logs.record(
            120 * ms,
            &LoggedIo {
                dir: DataDir::Write,
                bytes: 4096,
                offset: 0,
                slat_ns: None,
                clat_ns: 40_000,
                ioprio: 0,
            },
        )
        .unwrap();
        logs.record(
            150 * ms,
            &LoggedIo {
                dir: DataDir::Write,
                bytes: 4096,
                offset: 0,
                slat_ns: None,
                clat_ns: 60_000,
                ioprio: 0,
            },
        )
        .unwrap();
        logs.record(
            230 * ms,
            &LoggedIo {
                dir: DataDir::Read,
                bytes: 4096,
                offset: 0,
                slat_ns: None,
                clat_ns: 7_000,
                ioprio: 0,
            },
        )
        .unwrap();
        logs.finish(250 * ms).unwrap();
        assert_eq!(
            read(dir.path(), "t_lat.1.log"),
            "100, 14500, 0, 0, 0\n200, 50000, 1, 0, 0\n250, 7000, 0, 0, 0\n"
        );
        // 40 KiB in 100 ms = 400 KiB/s; 10 I/Os = 100 IOPS; no partial window.
        assert_eq!(
            read(dir.path(), "t_bw.1.log"),
            "100, 400, 0, 0, 0\n200, 80, 1, 0, 0\n"
        );
        assert_eq!(
            read(dir.path(), "t_iops.1.log"),
            "100, 100, 0, 0, 0\n200, 20, 1, 0, 0\n"
        );
    }

    fn read_io(clat_ns: u64) -> LoggedIo {
        LoggedIo {
            dir: DataDir::Read,
            bytes: 4096,
            offset: 4096,
            slat_ns: Some(500),
            clat_ns,
            ioprio: 0,
        }
    }

    #[test]
    fn windows_log_the_mean_rounded_the_largest_or_both() {
        let ms = 1_000_000;
        let logged = |value: WindowValue| {
            let dir = tempfile::tempdir().unwrap();
            let options = JobOptions {
                log_window_value: value,
                ..options(dir.path(), 100, true)
            };
            let mut logs = JobLogs::open(&options, 1).unwrap().unwrap();
            for (at, clat) in [(10, 10_000), (20, 10_001), (130, 3_000)] {
                logs.record(at * ms, &read_io(clat)).unwrap();
            }
            logs.finish(150 * ms).unwrap();
            ["clat", "iops"].map(|kind| read(dir.path(), &format!("t_{kind}.1.log")))
        };
        // 10,000.5 ns rounds up, as fio rounds its mean.
        assert_eq!(
            logged(WindowValue::Avg),
            [
                "100, 10001, 0, 0, 0, 0\n150, 3000, 0, 0, 0, 0\n",
                "100, 20, 0, 0, 0, 0\n"
            ]
        );
        assert_eq!(
            logged(WindowValue::Max)[0],
            "100, 10001, 0, 0, 0, 0\n150, 3000, 0, 0, 0, 0\n"
        );
        assert_eq!(
            logged(WindowValue::Both),
            [
                "100, 10001, 10001, 0, 0, 0, 0\n150, 3000, 3000, 0, 0, 0, 0\n",
                "100, 20, 20, 0, 0, 0, 0\n"
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let options = JobOptions {
            log_window_value: WindowValue::Max,
            ..options(dir.path(), 100, false)
        };
        let mut logs = JobLogs::open(&options, 1).unwrap().unwrap();
        for (at, clat) in [(10, 9_000), (20, 12_000), (30, 10_000)] {
            logs.record(at * ms, &read_io(clat)).unwrap();
        }
        logs.finish(100 * ms).unwrap();
        assert_eq!(read(dir.path(), "t_clat.1.log"), "100, 12000, 0, 0, 0\n");
    }

    #[test]
    fn issue_times_end_the_lines_of_clat_and_slat() {
        let ms = 1_000_000;
        let dir = tempfile::tempdir().unwrap();
        let options = JobOptions {
            log_issue_time: true,
            ..options(dir.path(), 0, true)
        };
        let mut logs = JobLogs::open(&options, 2).unwrap().unwrap();
        logs.record(7 * ms, &read_io(250_000)).unwrap();
        logs.finish(8 * ms).unwrap();
        // Issued 0.25 ms before it completed at 7 ms.
        let issued = 7 * ms - 250_000;
        assert_eq!(
            read(dir.path(), "t_clat.2.log"),
            format!("7, 250000, 0, 4096, 4096, 0, {issued}\n")
        );
        assert_eq!(
            read(dir.path(), "t_slat.2.log"),
            format!("7, 500, 0, 4096, 4096, 0, {issued}\n")
        );
        assert_eq!(
            read(dir.path(), "t_lat.2.log"),
            "7, 250500, 0, 4096, 4096, 0, 0\n"
        );
        assert!(read(dir.path(), "t_iops.2.log").ends_with(", 0\n"));
        assert_eq!(read(dir.path(), "t_iops.2.log").matches(", ").count(), 6);
    }

    #[test]
    fn the_bandwidth_log_rates_all_jobs_across_groups_as_fio() {
        let dir = tempfile::tempdir().unwrap();
        let name = dir.path().join("run").display().to_string();
        let mut log = AggregateLog::create(&name).unwrap();
        let start = log.started;
        let at = |ms: u64| start + std::time::Duration::from_millis(ms);
        assert!(!log.due(at(500)) && log.due(at(501)));
        // 1 MiB read in the first 512 ms: 2000 KiB/s.
        log.sample(at(512), [1 << 20, 0, 0]).unwrap();
        // The first group ends with 2 MiB read; the second writes 1 MiB
        // and trims 512 KiB in the next 1024 ms.
        log.end_group([2 << 20, 0, 0]);
        log.sample(at(1536), [0, 1 << 20, 512 << 10]).unwrap();
        log.finish().unwrap();
        let read =
            |dir_name: &str| std::fs::read_to_string(format!("{name}-{dir_name}_bw.log")).unwrap();
        assert_eq!(read("read"), "512, 2000, 0, 0, 0\n1536, 1000, 0, 0, 0\n");
        assert_eq!(read("write"), "512, 0, 1, 0, 0\n1536, 1000, 1, 0, 0\n");
        assert_eq!(read("trim"), "512, 0, 2, 0, 0\n1536, 500, 2, 0, 0\n");
    }
}
