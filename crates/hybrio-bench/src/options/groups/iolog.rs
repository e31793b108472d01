//! fio's I/O logs: `write_iolog` records each I/O a job issues, and
//! `read_iolog` replays such a log (or a blktrace capture) in place of the
//! job's own workload, with the `replay_*` and `merge_blktrace_*` options.

/// A job's I/O log options, as given.
#[derive(Debug, Clone, PartialEq)]
pub struct IologOptions {
    /// `write_iolog`: the file the job's I/Os are logged to.
    pub write: Option<String>,
    /// `read_iolog`: the log (or `:`-separated logs, one per clone) to replay.
    pub read: Option<String>,
    /// `read_iolog_chunked`: accepted; hybrio reads the whole log up front,
    /// which replays the same I/Os.
    pub chunked: bool,
    /// `replay_no_stall`: replay as fast as possible, ignoring the log's times.
    pub no_stall: bool,
    /// `replay_time_scale`: the log's time between I/Os, in percent.
    pub time_scale: u32,
    /// `replay_redirect`: every I/O goes to this file or device.
    pub redirect: Option<String>,
    /// `replay_scale`: offsets are divided by it.
    pub scale: u64,
    /// `replay_align`: offsets are rounded down to a multiple of it.
    pub align: u64,
    /// `replay_skip`: the kinds of I/O left out.
    pub skip: ReplaySkip,
    /// `merge_blktrace_file`: the blktrace captures of `read_iolog` are
    /// merged into this file, which is then replayed.
    pub merge_file: Option<String>,
    /// `merge_blktrace_scalars`: each capture's time, in percent.
    pub merge_scalars: Vec<f64>,
    /// `merge_blktrace_iters`: how many times each capture repeats.
    pub merge_iters: Vec<f64>,
}

impl Default for IologOptions {
    fn default() -> IologOptions {
        IologOptions {
            write: None,
            read: None,
            chunked: false,
            no_stall: false,
            time_scale: 100,
            redirect: None,
            scale: 1,
            align: 0,
            skip: ReplaySkip::default(),
            merge_file: None,
            merge_scalars: Vec::new(),
            merge_iters: Vec::new(),
        }
    }
}

/// `replay_skip`: what a replay leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplaySkip {
    /// Reads.
    pub read: bool,
    /// Writes.
    pub write: bool,
    /// Trims (discards).
    pub trim: bool,
    /// Syncs (flushes); a `datasync` line is never skipped, as in fio.
    pub sync: bool,
}
