//! The one option table: every job option hybrio knows, with its type, default
//! and help. It drives the command line, job files, `--cmdhelp` and validation,
//! so there is one parser and one place where an option is defined.

mod fio_names;
mod net;

pub use net::{NetOptions, Protocol};

use hybrio::engine::AdaptiveMemory;
use std::time::Duration;

use crate::units::{self, ValueError};

/// The type of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text.
    Text,
    /// 0/1; a bare option (`time_based`) means 1.
    Bool,
    /// A whole number.
    Int,
    /// Bytes, with fio's suffixes.
    Size,
    /// A duration; bare numbers are seconds.
    Time,
    /// Text that may be left out (`write_lat_log` alone: the job's name).
    OptionalText,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
}

impl Kind {
    fn describe(self) -> String {
        match self {
            Kind::Text => "text".into(),
            Kind::OptionalText => "text, optional".into(),
            Kind::Bool => "boolean".into(),
            Kind::Int => "integer".into(),
            Kind::Size => "size".into(),
            Kind::Time => "time".into(),
            Kind::Choice(words) => words.join("|"),
        }
    }
}

/// How `rw` lays out the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes.
    ReadWrite,
    /// Random mixed reads and writes.
    RandReadWrite,
}

impl RwMode {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandReadWrite => "randrw",
        }
    }

    /// True when offsets are random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead | RwMode::RandWrite | RwMode::RandReadWrite
        )
    }

    /// True when the job reads.
    pub fn reads(self) -> bool {
        !matches!(self, RwMode::Write | RwMode::RandWrite)
    }

    /// True when the job writes.
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }
}

/// One size per direction: reads, writes, trims (fio's `bs=read,write,trim`).
pub type BlockSizes = [u64; 3];

/// One direction's share of a `bssplit`: I/Os of `size` bytes make `percent`
/// of that direction's I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSplit {
    /// Bytes per I/O.
    pub size: u64,
    /// Share of the direction's I/Os, in percent.
    pub percent: u32,
}

/// One job's options, typed. Built by applying `[global]` sections and then the
/// job's own section, in order, through [`OPTIONS`].
#[derive(Debug, Clone, PartialEq)]
pub struct JobOptions {
    /// Job name.
    pub name: String,
    /// Free-text description.
    pub description: String,
    /// Engine name as given (validated when the job starts).
    pub ioengine: String,
    /// I/O pattern.
    pub rw: RwMode,
    /// Percentage of reads in a mixed workload.
    pub rwmixread: u32,
    /// Block size per direction.
    pub bs: BlockSizes,
    /// Largest block size per direction when `bs` gave a range (then `bs`
    /// holds the smallest).
    pub bs_max: Option<BlockSizes>,
    /// `bssplit`, per direction: when set, it decides each I/O's size.
    pub bssplit: [Vec<BlockSplit>; 3],
    /// How sizes read `k`, `m`...: fio's `kb_base`, 1024 or 1000.
    pub kb_base: u32,
    /// Total bytes of I/O per job (and the file size when `filesize` is unset).
    pub size: Option<u64>,
    /// Size of each file.
    pub filesize: Option<u64>,
    /// Explicit file names, `:`-separated.
    pub filename: Option<String>,
    /// Directory for generated file names.
    pub directory: Option<String>,
    /// Run time limit.
    pub runtime: Option<Duration>,
    /// Keep going until `runtime` even when `size` is done.
    pub time_based: bool,
    /// Time to run before recording statistics.
    pub ramp_time: Duration,
    /// How long after the start of the run the job starts its I/O (fio's `startdelay`).
    pub startdelay: Duration,
    /// hybrio: drop the files' page cache once, this long after the job's I/O started.
    pub drop_cache_after: Option<Duration>,
    /// fio's `rate`: bytes per second, per direction (reads, writes, trims).
    pub rate: [Option<u64>; 3],
    /// fio's `rate_iops`: I/Os per second, per direction.
    pub rate_iops: [Option<u64>; 3],
    /// fio's `rate_process`: evenly spaced I/Os, or Poisson arrivals.
    pub rate_poisson: bool,
    /// `write_lat_log`, `write_bw_log`, `write_iops_log`: the logs' file
    /// prefix ("" for the job's name).
    pub write_lat_log: Option<String>,
    /// See `write_lat_log`.
    pub write_bw_log: Option<String>,
    /// See `write_lat_log`.
    pub write_iops_log: Option<String>,
    /// `log_avg_msec`: average the logs over windows of this many ms (0: every I/O).
    pub log_avg_msec: u64,
    /// `log_offset`: the logs carry each I/O's offset.
    pub log_offset: bool,
    /// `per_job_logs`: one log file per job (numbered), or one shared.
    pub per_job_logs: bool,
    /// Passes over the workload.
    pub loops: u32,
    /// Number of clones of the job.
    pub numjobs: u32,
    /// Threads rather than processes (hybrio always uses threads).
    pub thread: bool,
    /// Requests in flight.
    pub iodepth: u32,
    /// Requests queued before one commit (0 = iodepth).
    pub iodepth_batch_submit: u32,
    /// Fewest completions to wait for in one reap (0 = poll).
    pub iodepth_batch_complete_min: u32,
    /// Most completions to take in one reap (default: iodepth_batch_complete_min, at least 1).
    pub iodepth_batch_complete_max: Option<u32>,
    /// Depth to drain to before refilling (default: iodepth).
    pub iodepth_low: Option<u32>,
    /// O_DIRECT.
    pub direct: bool,
    /// fsync after this many writes (0 = never).
    pub fsync: u32,
    /// fdatasync after this many writes (0 = never).
    pub fdatasync: u32,
    /// fsync each file when the job's writes are done.
    pub end_fsync: bool,
    /// Report the group as one job.
    pub group_reporting: bool,
    /// Wait for the jobs above to finish before starting; starts a new reporting group.
    pub stonewall: bool,
    /// Start a new reporting group.
    pub new_group: bool,
    /// Seed the random generator the same way every run.
    pub randrepeat: bool,
    /// The random seed.
    pub randseed: u64,
    /// Random offsets may repeat within a pass.
    pub norandommap: bool,
    /// How random offsets are spread (fio's `random_distribution`), per
    /// direction: reads, writes, trims.
    pub random_distribution: [Distribution; 3],
    /// Drop the page cache of the files before the job.
    pub invalidate: bool,
    /// io_uring: registered buffers.
    pub fixedbufs: bool,
    /// io_uring: registered files.
    pub registerfiles: bool,
    /// io_uring: kernel submission-queue polling thread.
    pub sqthread_poll: bool,
    /// Polled completions.
    pub hipri: bool,
    /// `RWF_NOWAIT`: EAGAIN instead of blocking (pvsync2, libaio, io_uring).
    pub nowait: bool,
    /// Readahead advice for the files (fio's `fadvise_hint`): `None` gives none.
    pub fadvise_hint: Option<FadviseHint>,
    /// Replace the files' medium by an emulated device with this service time.
    pub completion_latency: Option<Duration>,
    /// What the adaptive engine's classes start from (hybrio's `adaptive_memory`).
    pub adaptive_memory: AdaptiveMemory,
    /// Fault injection plan (hybrio's `inject`), as given.
    pub inject: Option<String>,
    /// Which failed requests do not stop the job (fio's `continue_on_error`).
    pub continue_on_error: ContinueOnError,
    /// How the report shows the directions.
    pub unified_rw_reporting: UnifiedRw,
    /// Report completion-latency percentiles.
    pub clat_percentiles: bool,
    /// Report total-latency percentiles.
    pub lat_percentiles: bool,
    /// Report submission-latency percentiles.
    pub slat_percentiles: bool,
    /// Which percentiles to report.
    pub percentile_list: Vec<f64>,
    /// fio's `net` engine options.
    pub net: NetOptions,
}

/// fio's `fadvise_hint`: what the job tells the kernel about its access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FadviseHint {
    /// Random for random workloads, sequential otherwise (fio's default `1`).
    Workload,
    /// `POSIX_FADV_NORMAL`.
    Normal,
    /// `POSIX_FADV_SEQUENTIAL`.
    Sequential,
    /// `POSIX_FADV_RANDOM`.
    Random,
}

/// How random offsets are spread over a file (fio's `random_distribution`).
/// Every model but `Uniform` turns fio's random map off: offsets repeat.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Distribution {
    /// Every block alike.
    #[default]
    Uniform,
    /// Zipf with exponent `theta`: block ranks by popularity, the hottest
    /// scattered over the file.
    Zipf {
        /// The Zipf exponent (fio's theta).
        theta: f64,
        /// Where the hottest block lies, as a fraction of the file (fio's
        /// optional second value); `None` scatters them.
        center: Option<f64>,
    },
    /// Pareto with power `h` (0 < h < 1).
    Pareto {
        /// fio's Pareto power.
        h: f64,
        /// As for Zipf.
        center: Option<f64>,
    },
    /// Normal around `center` (default the middle) with a standard
    /// deviation of `deviation` percent of the file.
    Normal {
        /// Standard deviation, percent of the file.
        deviation: f64,
        /// Mean, as a fraction of the file.
        center: f64,
    },
    /// `percent` of the accesses to each zone, zones in order from offset 0.
    Zoned(Vec<Zone>),
}

/// One zone of a zoned distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Zone {
    /// Share of the accesses, percent.
    pub access_percent: f64,
    /// The zone's size: percent of the file, or bytes.
    pub size: ZoneSize,
}

/// A zone's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZoneSize {
    /// Percent of the file (`zoned`).
    Percent(f64),
    /// Bytes (`zoned_abs`).
    Bytes(u64),
}

/// How a job's report shows its directions (fio's `unified_rw_reporting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnifiedRw {
    /// Reads, writes and trims apart.
    None,
    /// Summed into one, reported as `mixed` in their place.
    Mixed,
    /// Apart, then summed as `mixed` too.
    Both,
}

/// Which failed requests a job counts and goes on after (fio's
/// `continue_on_error`; `verify` has nothing to apply to here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContinueOnError {
    /// The first failure stops the job.
    None,
    /// Failed reads are counted, not fatal.
    Read,
    /// Failed writes are counted, not fatal.
    Write,
    /// Failed reads and writes are counted, not fatal.
    Io,
    /// Every failure is counted, none is fatal.
    All,
}

impl ContinueOnError {
    fn from_word(word: &str) -> Self {
        match word {
            "read" => ContinueOnError::Read,
            "write" => ContinueOnError::Write,
            "io" => ContinueOnError::Io,
            "all" | "1" => ContinueOnError::All,
            _ => ContinueOnError::None,
        }
    }

    /// True when a failed `op` does not stop the job.
    pub fn tolerates(self, op: hybrio::request::Op) -> bool {
        use hybrio::request::Op;
        match self {
            ContinueOnError::None => false,
            ContinueOnError::Read => op == Op::Read,
            ContinueOnError::Write => op == Op::Write,
            ContinueOnError::Io => op.moves_data(),
            ContinueOnError::All => true,
        }
    }

    /// True unless failures stop the job.
    pub fn is_on(self) -> bool {
        self != ContinueOnError::None
    }
}

/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            name: String::new(),
            description: String::new(),
            ioengine: "psync".into(),
            rw: RwMode::Read,
            rwmixread: 50,
            bs: [4096; 3],
            bs_max: None,
            kb_base: 1024,
            bssplit: Default::default(),
            size: None,
            filesize: None,
            filename: None,
            directory: None,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            startdelay: Duration::ZERO,
            drop_cache_after: None,
            loops: 1,
            numjobs: 1,
            thread: false,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: None,
            iodepth_low: None,
            direct: false,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            group_reporting: false,
            stonewall: false,
            new_group: false,
            randrepeat: true,
            randseed: 0x89,
            random_distribution: Default::default(),
            norandommap: false,
            invalidate: true,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            hipri: false,
            nowait: false,
            fadvise_hint: Some(FadviseHint::Workload),
            completion_latency: None,
            adaptive_memory: AdaptiveMemory::Engine,
            inject: None,
            continue_on_error: ContinueOnError::None,
            rate: [None; 3],
            rate_iops: [None; 3],
            rate_poisson: false,
            write_lat_log: None,
            write_bw_log: None,
            write_iops_log: None,
            log_avg_msec: 0,
            log_offset: false,
            per_job_logs: true,
            unified_rw_reporting: UnifiedRw::None,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            net: NetOptions::new(),
        }
    }
}

impl JobOptions {
    /// The job's socket protocol when it is a network job: `ioengine=net`
    /// (TCP unless `protocol` says otherwise), or any engine with `protocol`.
    pub fn network(&self) -> Option<Protocol> {
        match self.net.protocol {
            Some(protocol) => Some(protocol),
            None if self.ioengine == "net" => Some(Protocol::Tcp),
            None => None,
        }
    }

    /// Requests per commit, with fio's 0 = iodepth.
    pub fn batch_submit(&self) -> u32 {
        match self.iodepth_batch_submit {
            0 => self.iodepth,
            n => n.min(self.iodepth),
        }
    }

    /// Most completions per reap.
    pub fn batch_complete_max(&self) -> u32 {
        self.iodepth_batch_complete_max
            .unwrap_or(self.iodepth_batch_complete_min)
            .clamp(1, self.iodepth.max(1))
    }

    /// Depth to drain to once the queue is full.
    pub fn depth_low(&self) -> u32 {
        self.iodepth_low.unwrap_or(self.iodepth).min(self.iodepth)
    }

    /// The smallest and largest size of one direction's I/Os (0 reads, 1
    /// writes, 2 trims): from `bssplit` when it is set, as fio takes it.
    pub fn block_range(&self, dir: usize) -> (u64, u64) {
        let split = &self.bssplit[dir];
        match (
            split.iter().map(|s| s.size).min(),
            split.iter().map(|s| s.size).max(),
        ) {
            (Some(min), Some(max)) => (min, max),
            _ => (
                self.bs[dir],
                self.bs_max.map_or(self.bs[dir], |max| max[dir]),
            ),
        }
    }

    /// Largest block size of any direction the job uses: the size of its buffers.
    pub fn max_block_size(&self) -> u64 {
        let read = if self.rw.reads() {
            self.block_range(0).1
        } else {
            0
        };
        let write = if self.rw.writes() {
            self.block_range(1).1
        } else {
            0
        };
        read.max(write)
    }

    /// The largest of the smallest block sizes of the directions the job
    /// uses: a file smaller than this cannot take one I/O.
    pub fn min_block_size(&self) -> u64 {
        let read = if self.rw.reads() {
            self.block_range(0).0
        } else {
            0
        };
        let write = if self.rw.writes() {
            self.block_range(1).0
        } else {
            0
        };
        read.max(write)
    }
}

/// One option: its names, value type, default and what it does.
#[derive(Debug)]
pub struct OptionDef {
    /// fio's name.
    pub name: &'static str,
    /// Other names fio accepts.
    pub aliases: &'static [&'static str],
    /// Value type.
    pub kind: Kind,
    /// Default as fio prints it ("" for none).
    pub default: &'static str,
    /// One-line help.
    pub help: &'static str,
    apply: fn(&mut JobOptions, &str) -> Result<(), ValueError>,
}

impl OptionDef {
    /// Reads `value` and stores it in `job`. A bare boolean passes "1".
    pub fn apply(&self, job: &mut JobOptions, value: &str) -> Result<(), ValueError> {
        // `rw=write:4k` is a known word with fio's offset modifier: the
        // option's own reader says what it makes of the modifier.
        let word = match self.name {
            "rw" => value.trim().split(':').next().unwrap_or_default(),
            _ => value.trim(),
        };
        if let Kind::Choice(words) = self.kind
            && !words.contains(&word)
        {
            if self.name == "ioengine" && is_fio_engine(value.trim()) {
                return Err(ValueError::Unsupported(format!(
                    "engine '{}' is not supported by hybrio (its engines: {})",
                    value.trim(),
                    words.join(", ")
                )));
            }
            return Err(ValueError::Choice {
                value: value.to_string(),
                allowed: words.join(", "),
            });
        }
        (self.apply)(job, value.trim())
    }

    /// The option's line in `--cmdhelp`.
    pub fn help_line(&self) -> String {
        let mut line = format!("{:<28} {}", self.name, self.help);
        line.push_str(&format!(" [{}", self.kind.describe()));
        if !self.default.is_empty() {
            line.push_str(&format!(", default {}", self.default));
        }
        if !self.aliases.is_empty() {
            line.push_str(&format!(", alias {}", self.aliases.join(", ")));
        }
        line.push(']');
        line
    }
}

fn size(v: &str, kb_base: u32) -> Result<u64, ValueError> {
    units::parse_size_in(v, kb_base)
}

fn nonzero_u32(v: &str) -> Result<u32, ValueError> {
    match units::parse_u32(v)? {
        0 => Err(ValueError::Range(v.to_string())),
        n => Ok(n),
    }
}

fn seconds(v: &str) -> Result<Duration, ValueError> {
    units::parse_time(v, Duration::from_secs(1))
}

/// fio's `startdelay` is an irange: `1-5` (or `1:5`) gives each clone a random
/// delay in that range. hybrio takes one time, and says so rather than guessing.
fn start_delay(v: &str) -> Result<Duration, ValueError> {
    if v.contains('-') || v.contains(':') {
        return Err(ValueError::Unsupported(format!(
            "'{v}': startdelay ranges are not supported by hybrio; give one time, e.g. startdelay=2s"
        )));
    }
    seconds(v)
}

/// Splits a per-direction value (`reads,writes,trims`) into three fields: one
/// field serves all directions; with two, trims take the writes' field; an
/// empty field keeps the value of the field before it (or the default).
fn per_direction(v: &str) -> Result<[Option<&str>; 3], ValueError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(ValueError::Range(v.to_string()));
    }
    let mut fields = [None; 3];
    let mut last = None;
    for (i, field) in fields.iter_mut().enumerate() {
        let part = parts.get(i).copied().filter(|p| !p.is_empty());
        *field = part.or(last);
        if part.is_some() {
            last = part;
        }
    }
    Ok(fields)
}

/// A block size: more than 0, at most 4 GiB - 1 (fio's limit).
fn block_size(v: &str, whole: &str, kb_base: u32) -> Result<u64, ValueError> {
    let value = size(v, kb_base)?;
    if value == 0 || value > u32::MAX as u64 {
        return Err(ValueError::Range(whole.to_string()));
    }
    Ok(value)
}

/// `bs`: one size per direction. fio 3.33 reads `bs=4k-16k` (and `4k:16k`)
/// as `bs=4k,16k`, reads 4k and writes 16k, where the writer most likely
/// meant a range: hybrio refuses it and says which to write.
fn block_sizes(v: &str, kb_base: u32) -> Result<BlockSizes, ValueError> {
    if v.contains(['-', ':']) {
        // With commas too, fio's reading is stranger still (4k:16k,8k:32k
        // reads 4k, writes 8k, trims 32k): it is not spelt out.
        if v.contains(',') {
            return Err(ValueError::Invalid(format!(
                "'{v}' is not a range here: fio reads bs as one size per direction; \
                 write bsrange={v} for sizes drawn from ranges"
            )));
        }
        let both = v.replace([':', '-'], ",");
        return Err(ValueError::Invalid(format!(
            "'{v}' is not a range here: fio reads it as bs={both} (a size per direction); \
             write bsrange={v} for sizes drawn from a range, or bs={both}"
        )));
    }
    let mut sizes = [4096u64; 3];
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        if let Some(field) = field {
            sizes[dir] = block_size(field, v, kb_base)?;
        }
    }
    Ok(sizes)
}

/// `bsrange`: per direction, `min-max` (or `min:max`, either order). fio
/// refuses a lone size, and ignores one in a list (`4k-16k,8k` leaves writes
/// at 4k): both are refused here.
fn block_ranges(v: &str, kb_base: u32) -> Result<(BlockSizes, Option<BlockSizes>), ValueError> {
    let mut min = [4096u64; 3];
    let mut max = [4096u64; 3];
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        let Some(field) = field else { continue };
        let (low, high) = match field.split_once(['-', ':']) {
            Some((low, high)) => (
                block_size(low.trim(), v, kb_base)?,
                block_size(high.trim(), v, kb_base)?,
            ),
            None => {
                return Err(ValueError::Invalid(format!(
                    "'{v}': '{field}' is not a range min-max (for one size, use bs)"
                )));
            }
        };
        (min[dir], max[dir]) = (low.min(high), low.max(high));
    }
    Ok((min, (min != max).then_some(max)))
}

/// `bssplit`: per direction, `size/percent` entries separated by `:`. As in
/// fio, entries without a percent share what the others leave of 100
/// equally, and shares that do not add up to 100 are taken in order: past
/// 100 the later sizes lose their share, short of it the last size takes
/// the rest.
fn block_splits(v: &str, kb_base: u32) -> Result<[Vec<BlockSplit>; 3], ValueError> {
    let mut splits: [Vec<BlockSplit>; 3] = Default::default();
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        let Some(field) = field else { continue };
        let mut entries = Vec::new();
        let mut missing = 0u32;
        let mut total = 0u32;
        for entry in field.split(':').map(str::trim) {
            let (size_text, percent) = match entry.split_once('/') {
                Some((size_text, "")) => (size_text, None),
                Some((size_text, percent)) => (size_text, Some(units::parse_u32(percent.trim())?)),
                None => (entry, None),
            };
            let size = block_size(size_text.trim(), v, kb_base)?;
            match percent {
                Some(p) if p > 100 => return Err(ValueError::Range(v.to_string())),
                Some(p) => total += p,
                None => missing += 1,
            }
            entries.push((size, percent));
        }
        if total > 100 && missing > 0 {
            return Err(ValueError::Invalid(format!(
                "'{v}': the percentages add up to {total}, leaving nothing for the sizes without one"
            )));
        }
        let share = (100u32.saturating_sub(total))
            .checked_div(missing)
            .unwrap_or(0);
        for (size, percent) in entries {
            splits[dir].push(BlockSplit {
                size,
                percent: percent.unwrap_or(share),
            });
        }
    }
    Ok(splits)
}

/// `rate`, `rate_iops`: a limit per direction. One value limits each
/// direction; in a list an empty field, or 0, is no limit (`rate=,500k` caps
/// writes only), and trims follow writes unless given.
fn rates(
    v: &str,
    read: impl Fn(&str) -> Result<u64, ValueError>,
) -> Result<[Option<u64>; 3], ValueError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(ValueError::Range(v.to_string()));
    }
    let mut limits = [None; 3];
    for (dir, limit) in limits.iter_mut().enumerate() {
        let field = match (parts.len(), dir) {
            (1, _) => parts[0],
            (2, 2) => parts[1],
            _ => parts[dir],
        };
        if !field.is_empty() {
            *limit = Some(read(field)?).filter(|&l| l > 0);
        }
    }
    Ok(limits)
}

/// `random_distribution`: a model per direction (`reads,writes,trims`).
fn distributions(v: &str, kb_base: u32) -> Result<[Distribution; 3], ValueError> {
    let mut models: [Distribution; 3] = Default::default();
    for (dir, field) in per_direction(v)?.into_iter().enumerate() {
        if let Some(field) = field {
            models[dir] = distribution(field, v, kb_base)?;
        }
    }
    Ok(models)
}

fn distribution(field: &str, whole: &str, kb_base: u32) -> Result<Distribution, ValueError> {
    let invalid = |why: &str| ValueError::Invalid(format!("'{whole}': {why}"));
    let number = |text: &str| -> Result<f64, ValueError> {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| invalid(&format!("'{text}' is not a number")))
    };
    let (model, rest) = field.split_once([':', '=']).unwrap_or((field, ""));
    let params: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(':').collect()
    };
    let center = |i: usize| -> Result<Option<f64>, ValueError> {
        match params.get(i) {
            None => Ok(None),
            Some(text) => match number(text)? {
                c if (0.0..=1.0).contains(&c) => Ok(Some(c)),
                _ => Err(invalid("the center must lie in 0..1")),
            },
        }
    };
    let first = || -> Result<f64, ValueError> {
        params
            .first()
            .ok_or_else(|| invalid(&format!("{model} needs a value, e.g. {model}:0.8")))
            .and_then(|t| number(t))
    };
    let one_center_at_most = || {
        if params.len() > 2 {
            Err(invalid(&format!(
                "{model} takes a value and an optional center"
            )))
        } else {
            Ok(())
        }
    };
    match model {
        "random" if params.is_empty() => Ok(Distribution::Uniform),
        "zipf" => {
            one_center_at_most()?;
            let theta = first()?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(invalid("the Zipf theta must be above 0 and not 1"));
            }
            Ok(Distribution::Zipf {
                theta,
                center: center(1)?,
            })
        }
        "pareto" => {
            one_center_at_most()?;
            let h = first()?;
            if !(h > 0.0 && h < 1.0) {
                return Err(invalid("the Pareto power must lie between 0 and 1"));
            }
            Ok(Distribution::Pareto {
                h,
                center: center(1)?,
            })
        }
        "normal" => {
            one_center_at_most()?;
            let deviation = first()?;
            if !(deviation > 0.0 && deviation <= 100.0) {
                return Err(invalid(
                    "the normal deviation is a percentage, above 0 and at most 100",
                ));
            }
            Ok(Distribution::Normal {
                deviation,
                center: center(1)?.unwrap_or(0.5),
            })
        }
        "zoned" | "zoned_abs" => {
            // As fio: a `zoned` zone without a size shares what the others
            // leave of the file with the other such zones.
            let mut zones = Vec::new();
            let mut unsized_zones = Vec::new();
            for zone in &params {
                let (access, extent) = zone.split_once('/').unwrap_or((zone, ""));
                let access_percent = number(access)?;
                let extent = match (model, extent.trim()) {
                    ("zoned", "") => {
                        unsized_zones.push(zones.len());
                        ZoneSize::Percent(0.0)
                    }
                    ("zoned", extent) => ZoneSize::Percent(number(extent)?),
                    (_, "") => return Err(invalid(&format!("zone '{zone}' needs a size"))),
                    (_, extent) => ZoneSize::Bytes(size(extent, kb_base)?),
                };
                zones.push(Zone {
                    access_percent,
                    size: extent,
                });
            }
            let given: f64 = zones
                .iter()
                .map(|z| match z.size {
                    ZoneSize::Percent(p) => p,
                    ZoneSize::Bytes(_) => 0.0,
                })
                .sum();
            if !unsized_zones.is_empty() {
                let share = (100.0 - given).max(0.0) / unsized_zones.len() as f64;
                for i in unsized_zones {
                    zones[i].size = ZoneSize::Percent(share);
                }
            }
            let access: f64 = zones.iter().map(|z| z.access_percent).sum();
            let room: f64 = zones
                .iter()
                .map(|z| match z.size {
                    ZoneSize::Percent(p) => p,
                    ZoneSize::Bytes(_) => 0.0,
                })
                .sum();
            if zones.is_empty() || zones.len() > 256 {
                return Err(invalid("give 1 to 256 zones"));
            }
            if (access - 100.0).abs() > 1e-9 {
                return Err(invalid(&format!(
                    "the zones' accesses add up to {access}%, not 100%"
                )));
            }
            if room > 100.0 + 1e-9 {
                return Err(invalid(&format!("the zones cover {room}% of the file")));
            }
            Ok(Distribution::Zoned(zones))
        }
        _ => Err(ValueError::Choice {
            value: field.to_string(),
            allowed: "random, zipf:theta, pareto:h, normal:dev, zoned:..., zoned_abs:...".into(),
        }),
    }
}

fn rw_mode(v: &str) -> Result<RwMode, ValueError> {
    Ok(match v {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandReadWrite,
        other if other.contains(':') => {
            return Err(ValueError::Unsupported(format!(
                "rw={other}: the ':N' offset modifier is not supported by hybrio"
            )));
        }
        other => {
            return Err(ValueError::Unsupported(format!(
                "rw={other} is not supported by hybrio"
            )));
        }
    })
}

fn percentile_list(v: &str) -> Result<Vec<f64>, ValueError> {
    let list: Result<Vec<f64>, _> = v.split(':').map(|p| p.trim().parse::<f64>()).collect();
    match list {
        Ok(list)
            if !list.is_empty()
                && list.len() <= 20
                && list.iter().all(|p| (0.0..=100.0).contains(p)) =>
        {
            Ok(list)
        }
        _ => Err(ValueError::Range(v.to_string())),
    }
}

const RW_WORDS: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
];

macro_rules! opt {
    ($name:literal, $aliases:expr, $kind:expr, $default:literal, $help:literal, |$job:ident, $v:ident| $body:expr) => {
        OptionDef {
            name: $name,
            aliases: $aliases,
            kind: $kind,
            default: $default,
            help: $help,
            apply: |$job: &mut JobOptions, $v: &str| {
                $body;
                Ok(())
            },
        }
    };
}

/// Every job option hybrio implements.
pub static OPTIONS: &[OptionDef] = &[
    opt!(
        "name",
        &[],
        Kind::Text,
        "",
        "Name of the job; on the command line it starts a new job",
        |j, v| j.name = v.to_string()
    ),
    opt!(
        "description",
        &[],
        Kind::Text,
        "",
        "Text description of the job",
        |j, v| j.description = v.to_string()
    ),
    opt!(
        "ioengine",
        &[],
        Kind::Choice(&[
            "sync", "psync", "pvsync2", "pool", "libaio", "io_uring", "adaptive", "null", "net"
        ]),
        "psync",
        "How I/O is issued",
        |j, v| j.ioengine = v.to_string()
    ),
    opt!(
        "rw",
        &["readwrite"],
        Kind::Choice(RW_WORDS),
        "read",
        "I/O pattern",
        |j, v| j.rw = rw_mode(v)?
    ),
    opt!(
        "rwmixread",
        &[],
        Kind::Int,
        "50",
        "Percentage of a mixed workload that is reads",
        |j, v| {
            let pct = units::parse_u32(v)?;
            if pct > 100 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.rwmixread = pct
        }
    ),
    opt!(
        "rwmixwrite",
        &[],
        Kind::Int,
        "50",
        "Percentage of a mixed workload that is writes",
        |j, v| {
            let pct = units::parse_u32(v)?;
            if pct > 100 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.rwmixread = 100 - pct
        }
    ),
    opt!(
        "bs",
        &["blocksize"],
        Kind::Size,
        "4k",
        "Block size (reads,writes,trims)",
        |j, v| (j.bs, j.bs_max) = (block_sizes(v, j.kb_base)?, None)
    ),
    opt!(
        "kb_base",
        &[],
        Kind::Choice(&["1024", "1000"]),
        "1024",
        "Size units: 1024 (k = 1024, KiB = 1000, fio's default) or 1000 (k = 1000, KiB = 1024)",
        |j, v| j.kb_base = if v == "1000" { 1000 } else { 1024 }
    ),
    opt!(
        "bsrange",
        &["blocksize_range"],
        Kind::Size,
        "",
        "Block size range min-max (reads,writes,trims)",
        |j, v| (j.bs, j.bs_max) = block_ranges(v, j.kb_base)?
    ),
    opt!(
        "bssplit",
        &[],
        Kind::Text,
        "",
        "Block sizes and their shares: size/percent:size/percent (reads,writes,trims)",
        |j, v| j.bssplit = block_splits(v, j.kb_base)?
    ),
    opt!(
        "size",
        &[],
        Kind::Size,
        "",
        "Total bytes of I/O for each job",
        |j, v| j.size = Some(size(v, j.kb_base)?)
    ),
    opt!(
        "filesize",
        &[],
        Kind::Size,
        "",
        "Size of each file",
        |j, v| j.filesize = Some(size(v, j.kb_base)?)
    ),
    opt!(
        "filename",
        &[],
        Kind::Text,
        "",
        "File(s) to use, separated by ':'",
        |j, v| j.filename = Some(v.to_string())
    ),
    opt!(
        "directory",
        &[],
        Kind::Text,
        "",
        "Directory for the job's files",
        |j, v| j.directory = Some(v.to_string())
    ),
    opt!(
        "runtime",
        &["timeout"],
        Kind::Time,
        "",
        "Stop the job after this long",
        |j, v| j.runtime = Some(seconds(v)?)
    ),
    opt!(
        "time_based",
        &[],
        Kind::Bool,
        "0",
        "Keep running until runtime, repeating the workload",
        |j, v| j.time_based = units::parse_bool(v)?
    ),
    opt!(
        "ramp_time",
        &[],
        Kind::Time,
        "0",
        "Run this long before recording statistics",
        |j, v| j.ramp_time = seconds(v)?
    ),
    opt!(
        "hostname",
        &[],
        Kind::Text,
        "",
        "Network jobs: the host a sender connects to, the multicast group a receiver joins, or a Unix socket's path",
        |j, v| j.net.hostname = Some(v.to_string())
    ),
    opt!(
        "port",
        &[],
        Kind::Int,
        "",
        "Network jobs: the TCP or UDP port (numjobs clones take the next ones)",
        |j, v| {
            j.net.port = units::parse_u32(v)
                .ok()
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p > 0)
                .ok_or_else(|| ValueError::Range(format!("{v} (a port is 1 to 65535)")))?
        }
    ),
    opt!(
        "protocol",
        &["proto"],
        Kind::Choice(Protocol::WORDS),
        "",
        "Network jobs: the socket's protocol (tcp when not given); with an ioengine other than net, it makes the job a network job run through that engine",
        |j, v| j.net.protocol = Protocol::from_word(v)
    ),
    opt!(
        "listen",
        &[],
        Kind::Bool,
        "0",
        "Network jobs, TCP: wait for the connection instead of making it",
        |j, v| j.net.listen = units::parse_bool(v)?
    ),
    opt!(
        "pingpong",
        &[],
        Kind::Bool,
        "0",
        "Network jobs: every send waits for its bytes back (a receiver sends them back): an I/O is a round trip",
        |j, v| j.net.pingpong = units::parse_bool(v)?
    ),
    opt!(
        "nodelay",
        &[],
        Kind::Bool,
        "0",
        "Network jobs, TCP: set TCP_NODELAY",
        |j, v| j.net.nodelay = units::parse_bool(v)?
    ),
    opt!(
        "window_size",
        &[],
        Kind::Int,
        "",
        "Network jobs: the socket's buffer size (SO_RCVBUF on the side that receives, SO_SNDBUF on the one that sends)",
        |j, v| j.net.window_size = units::parse_u32(v)?
    ),
    opt!(
        "mss",
        &[],
        Kind::Int,
        "",
        "Network jobs, TCP: the maximum segment size (TCP_MAXSEG)",
        |j, v| j.net.mss = units::parse_u32(v)?
    ),
    opt!(
        "interface",
        &[],
        Kind::Text,
        "",
        "Network jobs, UDP multicast: the address of the interface it goes through (hybrio: 127.0.0.1 when not given)",
        |j, v| j.net.interface = Some(v.to_string())
    ),
    opt!(
        "ttl",
        &[],
        Kind::Int,
        "1",
        "Network jobs, UDP multicast: the time to live of what is sent",
        |j, v| j.net.ttl = units::parse_u32(v)?
    ),
    opt!(
        "peer",
        &[],
        Kind::Bool,
        "0",
        "hybrio, network jobs under compare: this job is the other end of the cell (e.g. the sender feeding the receivers compared); it keeps its ioengine, and its figures are left out of the cell's",
        |j, v| j.net.peer = units::parse_bool(v)?
    ),
    opt!(
        "datagram_size",
        &[],
        Kind::Size,
        "",
        "hybrio, UDP: datagrams of this size, bs/datagram_size of them per request: a sender segments with UDP_SEGMENT (GSO), a receiver takes them coalesced with UDP_GRO; each carries fio's sequence trailer",
        |j, v| {
            j.net.datagram_size = u32::try_from(units::parse_size_in(v, j.kb_base)?)
                .ok()
                .filter(|s| *s > 0 && *s <= 65_507)
                .ok_or_else(|| {
                    ValueError::Range(format!("{v} (a UDP datagram holds 1 to 65507 bytes)"))
                })?
        }
    ),
    opt!(
        "startdelay",
        &[],
        Kind::Time,
        "0",
        "Start the job's I/O this long after the run started (unit s by default)",
        |j, v| j.startdelay = start_delay(v)?
    ),
    opt!(
        "loops",
        &[],
        Kind::Int,
        "1",
        "Number of times to run the workload",
        |j, v| j.loops = nonzero_u32(v)?
    ),
    opt!(
        "numjobs",
        &[],
        Kind::Int,
        "1",
        "Number of clones of this job",
        |j, v| j.numjobs = nonzero_u32(v)?
    ),
    opt!(
        "thread",
        &["threads"],
        Kind::Bool,
        "0",
        "Use threads (hybrio always runs jobs as threads)",
        |j, v| j.thread = units::parse_bool(v)?
    ),
    opt!(
        "iodepth",
        &[],
        Kind::Int,
        "1",
        "Number of I/Os in flight",
        |j, v| j.iodepth = nonzero_u32(v)?
    ),
    opt!(
        "iodepth_batch_submit",
        &["iodepth_batch"],
        Kind::Int,
        "1",
        "I/Os to queue before one submit (0 = iodepth)",
        |j, v| j.iodepth_batch_submit = units::parse_u32(v)?
    ),
    opt!(
        "iodepth_batch_complete_min",
        &["iodepth_batch_complete"],
        Kind::Int,
        "1",
        "Fewest completions to wait for (0 = poll)",
        |j, v| j.iodepth_batch_complete_min = units::parse_u32(v)?
    ),
    opt!(
        "iodepth_batch_complete_max",
        &[],
        Kind::Int,
        "",
        "Most completions to reap at once",
        |j, v| j.iodepth_batch_complete_max = Some(nonzero_u32(v)?)
    ),
    opt!(
        "iodepth_low",
        &[],
        Kind::Int,
        "",
        "Once the queue is full, drain to this depth before refilling",
        |j, v| j.iodepth_low = Some(units::parse_u32(v)?)
    ),
    opt!("direct", &[], Kind::Bool, "0", "Use O_DIRECT", |j, v| j
        .direct =
        units::parse_bool(v)?),
    opt!(
        "buffered",
        &[],
        Kind::Bool,
        "1",
        "Use buffered I/O (the inverse of direct)",
        |j, v| j.direct = !units::parse_bool(v)?
    ),
    opt!(
        "fsync",
        &[],
        Kind::Int,
        "0",
        "fsync after this many writes",
        |j, v| j.fsync = units::parse_u32(v)?
    ),
    opt!(
        "fdatasync",
        &[],
        Kind::Int,
        "0",
        "fdatasync after this many writes",
        |j, v| j.fdatasync = units::parse_u32(v)?
    ),
    opt!(
        "end_fsync",
        &[],
        Kind::Bool,
        "0",
        "fsync each file when the job completes",
        |j, v| j.end_fsync = units::parse_bool(v)?
    ),
    opt!(
        "group_reporting",
        &[],
        Kind::Bool,
        "0",
        "Report the jobs of a group as one",
        |j, v| j.group_reporting = units::parse_bool(v)?
    ),
    opt!(
        "stonewall",
        &["wait_for_previous"],
        Kind::Bool,
        "0",
        "Wait for the jobs above to finish first; starts a new group",
        |j, v| j.stonewall = units::parse_bool(v)?
    ),
    opt!(
        "new_group",
        &[],
        Kind::Bool,
        "0",
        "Start a new reporting group",
        |j, v| j.new_group = units::parse_bool(v)?
    ),
    opt!(
        "randrepeat",
        &[],
        Kind::Bool,
        "1",
        "Use the same random sequence every run",
        |j, v| j.randrepeat = units::parse_bool(v)?
    ),
    opt!(
        "randseed",
        &[],
        Kind::Int,
        "0x89",
        "Seed of the random generator",
        |j, v| {
            j.randseed = units::parse_u64(v)?;
            j.randrepeat = true
        }
    ),
    opt!(
        "rate",
        &[],
        Kind::Size,
        "",
        "Bytes per second at most (reads,writes,trims)",
        |j, v| j.rate = rates(v, |t| size(t, j.kb_base))?
    ),
    opt!(
        "rate_iops",
        &[],
        Kind::Int,
        "",
        "I/Os per second at most (reads,writes,trims)",
        |j, v| j.rate_iops = rates(v, units::parse_u64)?
    ),
    opt!(
        "rate_process",
        &[],
        Kind::Choice(&["linear", "poisson"]),
        "linear",
        "How rated I/Os are spaced: evenly (linear) or as Poisson arrivals",
        |j, v| j.rate_poisson = v == "poisson"
    ),
    opt!(
        "write_lat_log",
        &[],
        Kind::OptionalText,
        "",
        "Log each I/O's latency: PREFIX_lat, _clat, _slat (.N).log (PREFIX: the job's name)",
        |j, v| j.write_lat_log = Some(v.to_string())
    ),
    opt!(
        "write_bw_log",
        &[],
        Kind::OptionalText,
        "",
        "Log bandwidth: PREFIX_bw(.N).log",
        |j, v| j.write_bw_log = Some(v.to_string())
    ),
    opt!(
        "write_iops_log",
        &[],
        Kind::OptionalText,
        "",
        "Log IOPS: PREFIX_iops(.N).log",
        |j, v| j.write_iops_log = Some(v.to_string())
    ),
    opt!(
        "log_avg_msec",
        &[],
        Kind::Int,
        "0",
        "Average the logs over windows of this many ms (0: a line per I/O)",
        |j, v| j.log_avg_msec = units::parse_u64(v)?
    ),
    opt!(
        "log_offset",
        &[],
        Kind::Bool,
        "0",
        "Log each I/O's offset",
        |j, v| j.log_offset = units::parse_bool(v)?
    ),
    opt!(
        "per_job_logs",
        &[],
        Kind::Bool,
        "1",
        "One log file per job (numbered); 0: the jobs share one",
        |j, v| j.per_job_logs = units::parse_bool(v)?
    ),
    opt!(
        "random_distribution",
        &[],
        Kind::Text,
        "random",
        "Offsets: random (uniform), zipf:theta, pareto:h, normal:dev, each [:center], \
         zoned:pct/pct_of_size:..., zoned_abs:pct/size:... (reads,writes,trims)",
        |j, v| j.random_distribution = distributions(v, j.kb_base)?
    ),
    opt!(
        "norandommap",
        &[],
        Kind::Bool,
        "0",
        "Random offsets may repeat within a pass",
        |j, v| j.norandommap = units::parse_bool(v)?
    ),
    opt!(
        "invalidate",
        &[],
        Kind::Bool,
        "1",
        "Drop the files' page cache before the job",
        |j, v| j.invalidate = units::parse_bool(v)?
    ),
    opt!(
        "fixedbufs",
        &[],
        Kind::Bool,
        "0",
        "io_uring: register the I/O buffers",
        |j, v| j.fixedbufs = units::parse_bool(v)?
    ),
    opt!(
        "registerfiles",
        &[],
        Kind::Bool,
        "0",
        "io_uring: register the files",
        |j, v| j.registerfiles = units::parse_bool(v)?
    ),
    opt!(
        "sqthread_poll",
        &[],
        Kind::Bool,
        "0",
        "io_uring: a kernel thread polls the submission queue",
        |j, v| j.sqthread_poll = units::parse_bool(v)?
    ),
    opt!(
        "hipri",
        &[],
        Kind::Bool,
        "0",
        "io_uring, pvsync2: polled completions (needs O_DIRECT and poll queues)",
        |j, v| j.hipri = units::parse_bool(v)?
    ),
    opt!(
        "nowait",
        &[],
        Kind::Bool,
        "0",
        "pvsync2, libaio, io_uring: RWF_NOWAIT, EAGAIN instead of blocking",
        |j, v| j.nowait = units::parse_bool(v)?
    ),
    opt!(
        "fadvise_hint",
        &[],
        Kind::Choice(&["0", "1", "normal", "sequential", "random"]),
        "1",
        "posix_fadvise the files: 1 = as the workload (random or sequential), 0 = not at all",
        |j, v| j.fadvise_hint = match v {
            "0" => None,
            "normal" => Some(FadviseHint::Normal),
            "sequential" => Some(FadviseHint::Sequential),
            "random" => Some(FadviseHint::Random),
            _ => Some(FadviseHint::Workload),
        }
    ),
    opt!(
        "completion_latency",
        &[],
        Kind::Time,
        "0",
        "hybrio: an emulated device whose requests complete this long after submission (e.g. 30us; unit us by default); its data stays in the page cache, so invalidate does not apply",
        |j, v| {
            let latency = units::parse_time(v, Duration::from_micros(1))?;
            j.completion_latency = (!latency.is_zero()).then_some(latency);
        }
    ),
    opt!(
        "adaptive_memory",
        &[],
        Kind::Choice(&["engine", "process"]),
        "engine",
        "hybrio: what the adaptive engine's classes of requests start from: engine = nothing (each job learns alone, as in a fresh process), process = what the jobs before it in this run learned on the same device, operation, size and depth",
        |j, v| if !matches!(j.adaptive_memory, AdaptiveMemory::File(_)) {
            j.adaptive_memory = match v {
                "process" => AdaptiveMemory::Process,
                _ => AdaptiveMemory::Engine,
            }
        }
    ),
    opt!(
        "adaptive_memory_file",
        &[],
        Kind::Text,
        "",
        "hybrio: the adaptive engine's classes start from what was learned under this kernel and saved in this file, and each job saves what it learned there (a file from another kernel, or that does not parse, is not used); overrides adaptive_memory",
        |j, v| if !v.is_empty() {
            j.adaptive_memory = AdaptiveMemory::File(v.into());
        }
    ),
    opt!(
        "drop_cache_after",
        &[],
        Kind::Time,
        "",
        "hybrio: once the job's I/O has run this long, drop its files' page cache (posix_fadvise DONTNEED) once, so cached reads turn into device reads mid-run (unit s by default; not with direct=1 or completion_latency)",
        |j, v| j.drop_cache_after = Some(seconds(v)?)
    ),
    opt!(
        "inject",
        &[],
        Kind::Text,
        "",
        "hybrio: inject faults, e.g. eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms",
        |j, v| {
            v.parse::<hybrio::engine::inject::FaultPlan>()
                .map_err(|e| ValueError::Unsupported(format!("inject '{v}': {e}")))?;
            j.inject = (!v.is_empty()).then(|| v.to_string());
        }
    ),
    opt!(
        "continue_on_error",
        &[],
        Kind::Choice(&["none", "read", "write", "io", "all", "0", "1"]),
        "none",
        "Keep going after failed reads, writes or both (io, all); count them",
        |j, v| j.continue_on_error = ContinueOnError::from_word(v)
    ),
    opt!(
        "unified_rw_reporting",
        &[],
        Kind::Choice(&["none", "mixed", "both", "0", "1", "2"]),
        "none",
        "Report reads, writes and trims apart (none), summed as mixed (mixed), or both",
        |j, v| {
            j.unified_rw_reporting = match v {
                "mixed" | "1" => UnifiedRw::Mixed,
                "both" | "2" => UnifiedRw::Both,
                _ => UnifiedRw::None,
            }
        }
    ),
    opt!(
        "clat_percentiles",
        &[],
        Kind::Bool,
        "1",
        "Report completion latency percentiles",
        |j, v| j.clat_percentiles = units::parse_bool(v)?
    ),
    opt!(
        "lat_percentiles",
        &[],
        Kind::Bool,
        "0",
        "Report total latency percentiles",
        |j, v| j.lat_percentiles = units::parse_bool(v)?
    ),
    opt!(
        "slat_percentiles",
        &[],
        Kind::Bool,
        "0",
        "Report submission latency percentiles",
        |j, v| j.slat_percentiles = units::parse_bool(v)?
    ),
    opt!(
        "percentile_list",
        &[],
        Kind::Text,
        "",
        "Percentiles to report, ':'-separated",
        |j, v| j.percentile_list = percentile_list(v)?
    ),
];

/// Finds an option by name or alias.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || o.aliases.contains(&name))
}

/// Whether fio 3.33 has an option (or alias) of this name: one hybrio does
/// not know is then unsupported rather than misspelt.
pub fn is_fio_option(name: &str) -> bool {
    fio_names::FIO_OPTION_NAMES.binary_search(&name).is_ok()
}

/// Whether fio 3.33 has an engine of this name (`--enghelp`).
pub fn is_fio_engine(name: &str) -> bool {
    fio_names::FIO_ENGINES.binary_search(&name).is_ok()
}

/// The known option closest to a misspelt one, for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(name: &str, value: &str) -> Result<JobOptions, ValueError> {
        let mut job = JobOptions::default();
        find(name).expect("known option").apply(&mut job, value)?;
        Ok(job)
    }

    #[test]
    fn every_option_has_a_unique_name_and_help() {
        let mut names: Vec<&str> = OPTIONS
            .iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(
            names.len(),
            count,
            "an option name or alias is defined twice"
        );
        assert!(OPTIONS.iter().all(|o| !o.help.is_empty()));
    }

    #[test]
    fn defaults_of_the_table_agree_with_the_struct() {
        // Applying each documented default must leave the defaults unchanged.
        for option in OPTIONS.iter().filter(|o| !o.default.is_empty()) {
            let mut job = JobOptions::default();
            option.apply(&mut job, option.default).unwrap();
            assert_eq!(
                job,
                JobOptions::default(),
                "default of {} disagrees",
                option.name
            );
        }
    }

    #[test]
    fn block_sizes_per_direction() {
        assert_eq!(apply("bs", "8k").unwrap().bs, [8192; 3]);
        assert_eq!(apply("bs", "4k,8k").unwrap().bs, [4096, 8192, 8192]);
        assert_eq!(apply("blocksize", ",16k").unwrap().bs, [4096, 16384, 16384]);
        assert!(apply("bs", "abc").is_err());
        assert!(apply("bs", "0").is_err());
        assert!(apply("bs", "4k,8k,16k,32k").is_err());
    }

    #[test]
    fn random_distributions_as_fio_writes_them() {
        let reads =
            |v: &str| apply("random_distribution", v).map(|j| j.random_distribution[0].clone());
        assert_eq!(reads("random").unwrap(), Distribution::Uniform);
        assert_eq!(
            reads("zipf:0.5").unwrap(),
            Distribution::Zipf {
                theta: 0.5,
                center: None
            }
        );
        assert_eq!(
            reads("zipf:1.2:0.25").unwrap(),
            Distribution::Zipf {
                theta: 1.2,
                center: Some(0.25)
            }
        );
        assert_eq!(
            reads("pareto:0.2").unwrap(),
            Distribution::Pareto {
                h: 0.2,
                center: None
            }
        );
        assert_eq!(
            reads("normal:10").unwrap(),
            Distribution::Normal {
                deviation: 10.0,
                center: 0.5
            }
        );
        // rand-zones.fio's last zone has no size: it takes the rest, 80%.
        let Distribution::Zoned(zones) = reads("zoned:50/5:30/15:20/").unwrap() else {
            panic!("zoned")
        };
        assert_eq!(zones[2].size, ZoneSize::Percent(80.0));
        let Distribution::Zoned(zones) = reads("zoned_abs=60/20G:30/100G:10/500g").unwrap() else {
            panic!("zoned_abs")
        };
        assert_eq!(zones[1].size, ZoneSize::Bytes(100 << 30));
        let Distribution::Zoned(zones) = reads("zoned:60/10:30/20:8/30:2/40").unwrap() else {
            panic!("zoned")
        };
        assert_eq!((zones.len(), zones[3].access_percent), (4, 2.0));
        for bad in [
            "zipf",
            "zipf:1",
            "zipf:x",
            "pareto:1.5",
            "normal:0",
            "zoned:60/10:30/20",
            "zoned:50/80:50/30",
            "zoned:5",
            "uniform",
            "zipf:0.5:2",
        ] {
            let err = apply("random_distribution", bad).unwrap_err().to_string();
            assert!(!err.is_empty() && !err.contains('\n'), "{bad}: {err}");
        }
        // Per direction: reads zipf, writes and trims zoned.
        let job = apply("random_distribution", "zipf:0.8,zoned:100/50").unwrap();
        assert!(matches!(job.random_distribution[2], Distribution::Zoned(_)));
    }

    #[test]
    fn block_size_ranges_and_splits() {
        let job = apply("bsrange", "4k-16k,8k-32k").unwrap();
        let ranges = [0, 1, 2].map(|d| job.block_range(d));
        assert_eq!(ranges, [(4096, 16384), (8192, 32768), (8192, 32768)]);
        let err = apply("bsrange", "4k-16k,8k").unwrap_err().to_string();
        assert!(err.contains("'8k' is not a range"), "{err}");
        // Either order, ':' as fio also writes it, and the long name.
        assert_eq!(
            apply("bsrange", "16k:4k").unwrap().block_range(1),
            (4096, 16384)
        );
        assert_eq!(
            apply("blocksize_range", "1k-2k").unwrap().block_range(0),
            (1024, 2048)
        );
        assert!(apply("bsrange", "4k-0").is_err());
        // fio reads bs=4k-16k as bs=4k,16k: refused, naming both readings.
        let err = apply("bs", "4k-16k").unwrap_err().to_string();
        assert!(
            err.contains("bs=4k,16k") && err.contains("bsrange=4k-16k"),
            "{err}"
        );
        // With directions as well, fio's reading is not spelt out.
        let err = apply("bs", "4k:16k,8k:32k").unwrap_err().to_string();
        assert!(
            err.contains("bsrange=4k:16k,8k:32k") && !err.contains("bs=4k,16k"),
            "{err}"
        );
        // A single size after a range is a single size again.
        let mut job = JobOptions::default();
        find("bsrange").unwrap().apply(&mut job, "4k-16k").unwrap();
        find("bs").unwrap().apply(&mut job, "8k").unwrap();
        assert_eq!(job.block_range(0), (8192, 8192));

        let shares = |job: &JobOptions, dir: usize| -> Vec<(u64, u32)> {
            job.bssplit[dir]
                .iter()
                .map(|s| (s.size, s.percent))
                .collect()
        };
        let job = apply("bssplit", "4k/10:64k/50:32k/40").unwrap();
        assert_eq!(shares(&job, 1), [(4096, 10), (65536, 50), (32768, 40)]);
        assert_eq!(job.block_range(0), (4096, 65536));
        // Entries without a share split what is left: 100 - 50 over two.
        let job = apply("bssplit", "2k/50:4k/:8k,16k").unwrap();
        assert_eq!(shares(&job, 0), [(2048, 50), (4096, 25), (8192, 25)]);
        assert_eq!(shares(&job, 1), [(16384, 100)]);
        // Shares that do not add up to 100 are kept, as fio keeps them.
        assert_eq!(
            shares(&apply("bssplit", "4k/60:8k/60").unwrap(), 0),
            [(4096, 60), (8192, 60)]
        );
        let err = apply("bssplit", "4k/60:8k/60:16k").unwrap_err().to_string();
        assert!(err.contains("add up to 120"), "{err}");
        assert!(apply("bssplit", "4k/x").is_err());
        assert!(apply("bssplit", "4k/101").is_err());
    }

    #[test]
    fn choices_and_aliases() {
        assert_eq!(apply("rw", "readwrite").unwrap().rw, RwMode::ReadWrite);
        assert_eq!(
            apply("readwrite", "randrw").unwrap().rw,
            RwMode::RandReadWrite
        );
        assert!(matches!(
            apply("rw", "sideways"),
            Err(ValueError::Choice { .. })
        ));
        assert!(matches!(
            apply("rw", "trim"),
            Err(ValueError::Unsupported(_))
        ));
        assert!(apply("buffered", "0").unwrap().direct);
        assert_eq!(apply("rwmixwrite", "30").unwrap().rwmixread, 70);
        assert!(apply("rwmixread", "101").is_err());
    }

    #[test]
    fn derived_depth_defaults_follow_fio() {
        let mut job = JobOptions {
            iodepth: 64,
            ..JobOptions::default()
        };
        assert_eq!(
            (
                job.batch_submit(),
                job.batch_complete_max(),
                job.depth_low()
            ),
            (1, 1, 64)
        );
        job.iodepth_batch_submit = 0;
        job.iodepth_batch_complete_min = 16;
        job.iodepth_low = Some(16);
        assert_eq!(
            (
                job.batch_submit(),
                job.batch_complete_max(),
                job.depth_low()
            ),
            (64, 16, 16)
        );
    }

    #[test]
    fn startdelay_is_one_time_in_seconds_by_default() {
        assert_eq!(
            apply("startdelay", "2").unwrap().startdelay,
            Duration::from_secs(2)
        );
        assert_eq!(
            apply("startdelay", "250ms").unwrap().startdelay,
            Duration::from_millis(250)
        );
        assert_eq!(
            apply("startdelay", "0.5").unwrap().startdelay,
            Duration::from_millis(500)
        );
        assert!(matches!(
            apply("startdelay", "soon"),
            Err(ValueError::Time(_))
        ));
        for range in ["1-5", "1s:5s"] {
            let err = apply("startdelay", range).unwrap_err();
            assert!(
                matches!(&err, ValueError::Unsupported(m) if m.contains("ranges are not supported")),
                "{err}"
            );
        }
    }

    #[test]
    fn drop_cache_after_is_unset_unless_given() {
        assert_eq!(JobOptions::default().drop_cache_after, None);
        assert_eq!(
            apply("drop_cache_after", "2").unwrap().drop_cache_after,
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            apply("drop_cache_after", "1500ms")
                .unwrap()
                .drop_cache_after,
            Some(Duration::from_millis(1500))
        );
        assert!(apply("drop_cache_after", "").is_err());
        assert!(apply("drop_cache_after", "2x").is_err());
        assert!(
            find("drop_cache_after")
                .unwrap()
                .help
                .starts_with("hybrio:")
        );
    }

    #[test]
    fn suggestions_for_misspellings() {
        assert_eq!(suggest("iodepht"), Some("iodepth"));
        assert_eq!(suggest("blocksze"), Some("blocksize"));
        assert_eq!(suggest("zzzzzzzzzzzz"), None);
    }
}
