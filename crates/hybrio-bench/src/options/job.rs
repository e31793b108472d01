//! One job's options, typed: what the option table fills in and the rest of
//! the benchmark reads.

use hybrio::engine::AdaptiveMemory;
use std::time::Duration;

use super::{BufferOptions, ErrorPolicy, NetOptions, Placement, Protocol, VerifyOptions};

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
    /// Sequential trims (holes punched in files, discards on devices).
    Trim,
    /// Random trims.
    RandTrim,
    /// Sequential trims, each block written again after it is trimmed.
    TrimWrite,
    /// Random trims, each block written again after it is trimmed.
    RandTrimWrite,
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
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }

    /// True when offsets are random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandReadWrite
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }

    /// True when the job reads.
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandReadWrite
        )
    }

    /// True when the job trims.
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }

    /// True when each trimmed block is written again (`trimwrite`).
    pub fn writes_after_trim(self) -> bool {
        matches!(self, RwMode::TrimWrite | RwMode::RandTrimWrite)
    }

    /// The mode whose offsets a trimming job walks: its trims go where
    /// the writes of `write` or `randwrite` would.
    pub fn offsets_as(self) -> RwMode {
        match self {
            RwMode::Trim | RwMode::TrimWrite => RwMode::Write,
            RwMode::RandTrim | RwMode::RandTrimWrite => RwMode::RandWrite,
            other => other,
        }
    }

    /// True when the job writes or trims (changes its files).
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }
}

/// fio's `file_service_type`: which file each I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileService {
    /// The next file every N I/Os (fio's default, N = 1).
    RoundRobin(u64),
    /// One file's region, then the next's.
    Sequential,
    /// A file drawn at random every N I/Os.
    Random(u64),
}

/// fio's `offset`: where in each file the job's region starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Offset {
    /// Bytes into the file.
    Bytes(u64),
    /// A share of the file, in percent (the region is the rest of it).
    Percent(f64),
}

/// fio's strided zones: `size` bytes of I/O within a zone of `range`
/// bytes, then the next zone, `skip` bytes further on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StridedZones {
    /// `zonemode=strided` (else none).
    pub strided: bool,
    /// `zonesize`.
    pub size: u64,
    /// `zonerange` (0: `zonesize`).
    pub range: u64,
    /// `zoneskip`.
    pub skip: u64,
}

impl StridedZones {
    /// The zones a job of `files` files walks, if it walks any: as fio, a
    /// job of several files does not.
    pub fn active(&self, files: usize) -> Option<StridedZones> {
        let strided = self.strided && self.size > 0 && files == 1;
        strided.then_some(StridedZones {
            range: if self.range == 0 {
                self.size
            } else {
                self.range
            },
            ..*self
        })
    }
}

/// fio's `fallocate`: how a file a job writes gets its space when created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preallocate {
    /// Nothing: the file grows as it is written.
    #[default]
    None,
    /// `fallocate(2)` of its size (fio's `native` and `posix`).
    Allocate,
    /// `fallocate(FALLOC_FL_KEEP_SIZE)`: allocated, its size still 0.
    KeepSize,
    /// `ftruncate(2)` to its size: sparse.
    Truncate,
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
/// job's own section, in order, through [`all`](super::all).
#[derive(Debug, Clone, PartialEq)]
pub struct JobOptions {
    /// Job name.
    pub name: String,
    /// Free-text description.
    pub description: String,
    /// Engine name as given (validated when the job starts).
    pub ioengine: String,
    /// `ss`, `ss_dur`, `ss_ramp`, `ss_interval`: the job ends once its rate
    /// or latency is steady (when `ss_dur` is set).
    pub steady: crate::stats::SteadySettings,
    /// Per-I/O priorities (`cmdprio_*`, `log_prio`).
    pub cmdprio: super::CmdPrio,
    /// `latency_target` (ns; 0: none), `latency_window` (ns),
    /// `latency_percentile`, `latency_run`.
    pub latency_target_ns: u64,
    /// See `latency_target_ns`.
    pub latency_window_ns: u64,
    /// See `latency_target_ns`.
    pub latency_percentile: f64,
    /// See `latency_target_ns`.
    pub latency_run: bool,
    /// `zonemode=strided`, `zonesize`, `zonerange`, `zoneskip`.
    pub zones: StridedZones,
    /// `unlink_each_loop`: the files are removed after each loop and made
    /// again for the next.
    pub unlink_each_loop: bool,
    /// `io_submit_mode=offload`: the engine runs in a thread of its own.
    pub offload: bool,
    /// `serialize_overlap`: no request goes out while one in flight touches
    /// any of its bytes.
    pub serialize_overlap: bool,
    /// `cpuio`'s and `exec`'s settings.
    pub pseudo: super::PseudoOptions,
    /// `fill_device`: with no size, write until the filesystem (or device)
    /// is full; running out of space then ends the job, not as an error.
    pub fill_device: bool,
    /// `fallocate`: how a new file the job writes gets its space.
    pub fallocate: Preallocate,
    /// `openfiles`: files open at once, when given.
    pub openfiles: Option<u32>,
    /// `ioengine=filestat`: which call looks a file up.
    pub stat_type: super::StatType,
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
    /// `ramp_size`: bytes of I/O (the group's, with group_reporting) before
    /// recording statistics.
    pub ramp_size: Option<u64>,
    /// How long after the start of the run the job starts its I/O (fio's `startdelay`).
    pub startdelay: Duration,
    /// hybrio: drop the files' page cache once, this long after the job's I/O started.
    pub drop_cache_after: Option<Duration>,
    /// fio's `rate`: bytes per second, per direction (reads, writes, trims).
    pub rate: [Option<u64>; 3],
    /// fio's `rate_iops`: I/Os per second, per direction.
    pub rate_iops: [Option<u64>; 3],
    /// fio's `ratemin`: bytes per second at least, per direction.
    pub ratemin: [Option<u64>; 3],
    /// fio's `rate_iops_min`: I/Os per second at least, per direction.
    pub rate_iops_min: [Option<u64>; 3],
    /// fio's `rate_cycle`: the window the minimums are measured over (ms).
    pub rate_cycle_ms: u64,
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
    /// `log_window_value` (fio 3.37; 3.33's `log_max_value`): what a window
    /// of `log_avg_msec` logs.
    pub log_window_value: WindowValue,
    /// `log_issue_time` (fio 3.38): the logs carry each I/O's issue time.
    pub log_issue_time: bool,
    /// `write_hist_log`: the histogram log's prefix (empty: the job's name).
    pub write_hist_log: Option<String>,
    /// `log_hist_msec`: windows of this many ms for the histogram log and
    /// the report's percentiles over time (0: none).
    pub log_hist_msec: u64,
    /// `log_hist_coarseness`: the histogram log sums `2^N` buckets per count.
    pub log_hist_coarseness: u8,
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
    /// `end_syncfs` (fio 3.42): `syncfs` each filesystem the job wrote to
    /// when its writes are done, in place of `end_fsync`'s fsync per file.
    pub end_syncfs: bool,
    /// `thinkcycles` (fio 3.37): spin this many loop iterations after each
    /// read or write before the next.
    pub thinkcycles: u64,
    /// `comm` (fio 3.42): the name the job's thread goes by (`ps`, `top`).
    pub comm: Option<String>,
    /// `filetype` (fio 3.41): what the job's files are, checked.
    pub filetype: FileType,
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
    /// `randseed` was given (with `randrepeat=0`, offsets then still come from it).
    pub randseed_given: bool,
    /// `iodepth` was given (a blktrace replay otherwise runs at the capture's depth).
    pub iodepth_given: bool,
    /// Which fio to behave as where fio's versions differ (hybrio's own
    /// `fio_compat`, or `--fio-compat` for every job).
    pub fio_compat: crate::fio_version::FioVersion,
    /// `random_generator=tausworthe64` (else fio's 32-bit tausworthe).
    pub random_generator64: bool,
    /// `random_generator=lfsr`.
    pub random_lfsr: bool,
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
    /// fio's `uncached`: uncached buffered I/O (`RWF_DONTCACHE`); hybrio's
    /// `auto` lets the adaptive engine choose.
    pub uncached: hybrio::file::Caching,
    /// fio's `atomic`: torn-write protected writes (`RWF_ATOMIC`).
    pub atomic: bool,
    /// hybrio's `recv_multishot`: io_uring receives through one standing
    /// multishot receive per socket.
    pub recv_multishot: bool,
    /// Readahead advice for the files (fio's `fadvise_hint`): `None` gives none.
    pub fadvise_hint: Option<FadviseHint>,
    /// Replace the files' medium by an emulated device with this service time.
    pub completion_latency: Option<Duration>,
    /// What the adaptive engine's classes start from (hybrio's `adaptive_memory`).
    pub adaptive_memory: AdaptiveMemory,
    /// Fault injection plan (hybrio's `inject`), as given.
    pub inject: Option<String>,
    /// Which failed requests do not stop the job (fio's `continue_on_error`,
    /// `ignore_error`, `error_dump`).
    pub errors: ErrorPolicy,
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
    /// fio's verify options.
    pub verify: VerifyOptions,
    /// `rw=randWORD:N`: a new random offset every N I/Os (1: every I/O).
    pub rw_seq_nr: u32,
    /// `rw=WORD:N` for sequential I/O: bytes added to each offset.
    pub rw_seq_add: i64,
    /// `rw_sequencer=identical`: the I/Os between new random offsets repeat it.
    pub rw_sequencer_identical: bool,
    /// fio's `disable_lat`, `disable_clat`, `disable_slat`: latencies not measured.
    pub disable_lat: bool,
    /// See `disable_lat`.
    pub disable_clat: bool,
    /// See `disable_lat`.
    pub disable_slat: bool,
    /// fio's `disable_bw_measurement`: no bandwidth or IOPS samples.
    pub disable_bw: bool,
    /// fio's `nrfiles`: files per job when `filename` is not given.
    pub nrfiles: u32,
    /// fio's `filename_format`: their names (`$jobname`, `$jobnum`, `$filenum`).
    pub filename_format: Option<String>,
    /// fio's `file_service_type`: how the job moves between its files.
    pub file_service: FileService,
    /// fio's `unlink`: remove the job's files when it is done.
    pub unlink: bool,
    /// fio's `allow_file_create` (default on): a missing file may be created.
    pub allow_file_create: bool,
    /// fio's `create_on_open`: a file only written is created when opened.
    pub create_on_open: bool,
    /// fio's `pre_read`: read the files into the page cache before the job.
    pub pre_read: bool,
    /// What the job writes (when it does not verify).
    pub buffers: BufferOptions,
    /// Where the job's thread runs and how eagerly.
    pub placement: Placement,
    /// fio's I/O logs: `write_iolog`, `read_iolog` and the replay's options.
    pub iolog: super::IologOptions,
    /// fio's `thinktime`: the stall after every `thinktime_blocks` I/Os,
    /// `thinktime_spin` of it spent spinning.
    pub thinktime: Duration,
    /// See `thinktime`.
    pub thinktime_spin: Duration,
    /// See `thinktime`.
    pub thinktime_blocks: u64,
    /// `thinktime_blocks_type=issue`: count I/Os issued, not completed.
    pub thinktime_count_issued: bool,
    /// `blockalign` (alias `ba`): random offsets are multiples of it, per
    /// direction (0: the block size).
    pub blockalign: [u64; 2],
    /// `size=N%`: the region is this share of each file (its `filesize`,
    /// or its size as it is).
    pub size_percent: Option<f64>,
    /// `offset`: where in each file the job's region starts.
    pub offset: Offset,
    /// `offset_increment`: each clone's region starts this much further on.
    pub offset_increment: u64,
    /// `io_size` (alias `io_limit`): the bytes of I/O to do, the region
    /// staying `size`.
    pub io_size: Option<u64>,
    /// `number_ios`: the job ends after this many I/Os.
    pub number_ios: Option<u64>,
    /// fio's `flow`: the job's weight in its flow group (0: none), the
    /// group (`flow_id`), and the wait when it is ahead (`flow_sleep`).
    pub flow: u32,
    /// See `flow`.
    pub flow_id: u32,
    /// See `flow`.
    pub flow_sleep: Duration,
    /// `wait_for`: the job whose clones must all end before this one starts.
    pub wait_for: Option<String>,
    /// `exitall`: once any job sets it, every job that ends ends others.
    pub exitall: bool,
    /// `exitall_on_error`: a job that fails ends others.
    pub exitall_on_error: bool,
    /// `exit_what`: which others.
    pub exit_what: super::ExitWhat,
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
    /// `POSIX_FADV_NOREUSE` (fio 3.35's `noreuse`).
    NoReuse,
}

/// fio 3.41's `filetype`: what the job's files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// `none`: whatever each file is (the default).
    Any,
    /// `file`: regular files.
    File,
    /// `block`: block devices.
    Block,
    /// `char`: character devices.
    Char,
}

impl FileType {
    /// The option's word for it.
    pub fn name(self) -> &'static str {
        match self {
            FileType::Any => "none",
            FileType::File => "file",
            FileType::Block => "block",
            FileType::Char => "char",
        }
    }

    /// What a file of this type is, in a sentence.
    pub fn described(self) -> &'static str {
        match self {
            FileType::Any => "anything",
            FileType::File => "a regular file",
            FileType::Block => "a block device",
            FileType::Char => "a character device",
        }
    }
}

/// What a window of `log_avg_msec` logs (fio's `log_window_value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowValue {
    /// The window's mean.
    Avg,
    /// The window's largest value.
    Max,
    /// Both: the mean, then the largest.
    Both,
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
    /// Normal with a standard deviation of `deviation` percent of the
    /// file, scattered by fio's hash (and moved by the center, as fio's).
    Normal {
        /// Standard deviation, percent of the file.
        deviation: f64,
        /// As for Zipf.
        center: Option<f64>,
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
            stat_type: super::StatType::Stat,
            openfiles: None,
            fallocate: Preallocate::None,
            fill_device: false,
            pseudo: super::PseudoOptions::default(),
            offload: false,
            serialize_overlap: false,
            unlink_each_loop: false,
            zones: StridedZones::default(),
            cmdprio: super::CmdPrio::default(),
            latency_target_ns: 0,
            latency_window_ns: 0,
            latency_percentile: 100.0,
            latency_run: false,
            // fio's default criterion; no check until ss_dur is set.
            steady: crate::stats::SteadySettings {
                criterion: crate::stats::Criterion::IopsSlope,
                limit: 0.01,
                percent: true,
                seconds: 0,
                duration_us: 0,
                ramp_seconds: 0,
                interval_us: crate::stats::DEFAULT_INTERVAL_US,
            },
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
            ramp_size: None,
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
            end_syncfs: false,
            thinkcycles: 0,
            comm: None,
            filetype: FileType::Any,
            group_reporting: false,
            stonewall: false,
            new_group: false,
            randrepeat: true,
            randseed: 0x89,
            randseed_given: false,
            iodepth_given: false,
            fio_compat: crate::fio_version::FioVersion::NEWEST,
            random_generator64: false,
            random_lfsr: false,
            random_distribution: Default::default(),
            norandommap: false,
            invalidate: true,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            hipri: false,
            nowait: false,
            uncached: hybrio::file::Caching::Cached,
            atomic: false,
            recv_multishot: false,
            fadvise_hint: Some(FadviseHint::Workload),
            completion_latency: None,
            adaptive_memory: AdaptiveMemory::Engine,
            inject: None,
            errors: ErrorPolicy::default(),
            rate: [None; 3],
            rate_iops: [None; 3],
            ratemin: [None; 3],
            rate_iops_min: [None; 3],
            rate_cycle_ms: 1000,
            rate_poisson: false,
            write_lat_log: None,
            write_bw_log: None,
            write_iops_log: None,
            log_avg_msec: 0,
            log_offset: false,
            log_window_value: WindowValue::Avg,
            log_issue_time: false,
            write_hist_log: None,
            log_hist_msec: 0,
            log_hist_coarseness: 0,
            per_job_logs: true,
            unified_rw_reporting: UnifiedRw::None,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            net: NetOptions::new(),
            verify: VerifyOptions::default(),
            rw_seq_nr: 1,
            rw_seq_add: 0,
            rw_sequencer_identical: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
            nrfiles: 1,
            filename_format: None,
            file_service: FileService::RoundRobin(1),
            unlink: false,
            allow_file_create: true,
            create_on_open: false,
            pre_read: false,
            buffers: BufferOptions::default(),
            placement: Placement::default(),
            iolog: super::IologOptions::default(),
            thinktime: Duration::ZERO,
            thinktime_spin: Duration::ZERO,
            thinktime_blocks: 1,
            thinktime_count_issued: false,
            blockalign: [0; 2],
            size_percent: None,
            offset: Offset::Bytes(0),
            offset_increment: 0,
            io_size: None,
            number_ios: None,
            flow: 0,
            flow_id: 0,
            flow_sleep: Duration::ZERO,
            wait_for: None,
            exitall: false,
            exitall_on_error: false,
            exit_what: super::ExitWhat::Group,
        }
    }
}

impl JobOptions {
    /// Whether fio seeds the job's generators from `randseed` (its default
    /// too), rather than from the system's random numbers, different every
    /// run (`randrepeat=0` without a `randseed`).
    pub fn seeded_from_randseed(&self) -> bool {
        self.randrepeat || self.randseed_given
    }

    /// Makes what the job writes what the fio of `fio_compat` writes where
    /// that is a limit on an option's value: fio before 3.34 keeps 512
    /// bytes of a pattern.
    pub fn fit_fio_compat(&mut self) {
        let most = self.fio_compat.max_pattern_bytes();
        self.buffers.pattern.truncate(most);
        if let Some(pattern) = &mut self.verify.pattern {
            pattern.bytes.truncate(most);
            // A `%o` whose 8 bytes no longer fit is gone with them.
            pattern.offsets_at.retain(|at| at + 8 <= most);
        }
    }

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

    /// fio's resolved `verify_interval`: the bytes each verify header covers.
    pub fn verify_interval(&self) -> u64 {
        let write = self.block_range(1);
        let read = self.rw.reads().then(|| self.block_range(0));
        self.verify.interval_for(write, read)
    }

    /// `verify_write_sequence` as fio 3.42 resolves it: on unless set, but
    /// off for `verify_only` and for `norandommap` at an `iodepth` above 1
    /// with an async engine (a block may then be written twice at once).
    pub fn verify_write_sequence(&self) -> bool {
        let overlapping = self.norandommap && self.iodepth > 1 && !self.sync_engine();
        self.verify
            .write_sequence
            .unwrap_or(!(self.verify.only || overlapping))
    }

    /// `verify_header_seed` as fio 3.42 resolves it: on unless set, but off
    /// for `verify_only`, a job that does not write, `verify_backlog`, and
    /// where a block may be written more than once (`norandommap`, an
    /// offset modifier `rw=WORD:N`).
    pub fn verify_header_seed(&self) -> bool {
        let overlapping = self.norandommap || self.rw_seq_add != 0 || self.rw_seq_nr > 1;
        self.verify.header_seed.unwrap_or(
            !(self.verify.only || !self.rw.writes() || self.verify.backlog > 0 || overlapping),
        )
    }

    /// Whether the engine is one fio calls synchronous (`FIO_SYNCIO`).
    pub fn sync_engine(&self) -> bool {
        matches!(
            self.ioengine.as_str(),
            "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" | "mmap"
        )
    }

    /// The `bs` index of the job's writes (or trims): a trimming job's I/Os
    /// are its trims, and trimwrite writes each trimmed block again at the
    /// trim's size (fio's `get_next_buflen` takes the write's length from
    /// the trim), so its writes' sizes are bs's third value, not its second.
    fn changes_dir(&self) -> usize {
        if self.rw.trims() { 2 } else { 1 }
    }

    /// Largest block size of any direction the job uses: the size of its buffers.
    pub fn max_block_size(&self) -> u64 {
        let read = if self.rw.reads() {
            self.block_range(0).1
        } else {
            0
        };
        let write = if self.rw.writes() {
            self.block_range(self.changes_dir()).1
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
            self.block_range(self.changes_dir()).0
        } else {
            0
        };
        read.max(write)
    }
}
