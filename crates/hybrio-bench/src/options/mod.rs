//! The one option table: every job option hybrio knows, with its type, default
//! and help. It drives the command line, job files, `--cmdhelp` and validation,
//! so there is one parser and one place where an option is defined.

mod fio_names;
mod job;
mod net;
mod values;

pub use job::{
    BlockSizes, BlockSplit, ContinueOnError, DEFAULT_PERCENTILES, Distribution, FadviseHint,
    JobOptions, RwMode, UnifiedRw, Zone, ZoneSize,
};
pub use net::{NetOptions, Protocol};

use hybrio::engine::AdaptiveMemory;
use hybrio::file::Caching;
use std::time::Duration;
use values::*;

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
        "uncached",
        &[],
        Kind::Bool,
        "0",
        "pvsync2, io_uring, pool, adaptive: uncached buffered I/O (RWF_DONTCACHE, Linux 6.14): through the page cache, which drops the pages once done; hybrio: auto = adaptive chooses (writes streaming sequentially go uncached), the other engines stay cached",
        |j, v| j.uncached = match v {
            "auto" => Caching::Auto,
            _ if units::parse_bool(v)? => Caching::Uncached,
            _ => Caching::Cached,
        }
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
        "recv_multishot",
        &[],
        Kind::Bool,
        "0",
        "hybrio, io_uring, network receivers: one standing multishot receive per socket into buffers the ring provides (Linux 6.0), instead of one receive per request",
        |j, v| j.recv_multishot = units::parse_bool(v)?
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
    fn every_fadvise_hint_of_fio_is_taken() {
        let hint = |v: &str| apply("fadvise_hint", v).map(|j| j.fadvise_hint);
        assert_eq!(hint("0").unwrap(), None);
        assert_eq!(hint("1").unwrap(), Some(FadviseHint::Workload));
        assert_eq!(hint("sequential").unwrap(), Some(FadviseHint::Sequential));
        assert_eq!(hint("random").unwrap(), Some(FadviseHint::Random));
        assert_eq!(hint("normal").unwrap(), Some(FadviseHint::Normal));
        assert!(hint("willneed").is_err());
    }

    #[test]
    fn uncached_is_a_boolean_or_auto() {
        let caching = |v: &str| apply("uncached", v).map(|j| j.uncached);
        assert_eq!(caching("1").unwrap(), Caching::Uncached);
        assert_eq!(caching("0").unwrap(), Caching::Cached);
        assert_eq!(caching("auto").unwrap(), Caching::Auto);
        assert!(caching("sometimes").is_err());
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
