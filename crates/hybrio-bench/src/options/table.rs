//! The table of job options: one entry per option fio has and hybrio
//! implements, in fio's order of concerns (the job, its I/O, its files,
//! network jobs, rates, logs, engines, reporting).

use hybrio::engine::AdaptiveMemory;
use hybrio::file::Caching;
use std::time::Duration;

use super::def::{Kind, OptionDef, opt};
use super::values::*;
use super::{FadviseHint, JobOptions, Protocol, StatType, UnifiedRw, WindowValue};
use crate::units::{self, ValueError};

/// Every job option hybrio implements.
pub static CORE_OPTIONS: &[OptionDef] = &[
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
            "sync",
            "psync",
            "pvsync2",
            "pool",
            "libaio",
            "posixaio",
            "io_uring",
            "adaptive",
            "null",
            "net",
            "falloc",
            "ftruncate",
            "filecreate",
            "filestat",
            "filedelete",
            "dircreate",
            "dirstat",
            "dirdelete",
            "cpuio",
            "exec",
            "e4defrag"
        ]),
        "psync",
        "How I/O is issued",
        |j, v| j.ioengine = v.to_string()
    ),
    opt!(
        "stat_type",
        &[],
        Kind::Choice(&["stat", "lstat", "statx"]),
        "stat",
        "ioengine=filestat: the system call that looks each file up",
        |j, v| {
            j.stat_type = match v {
                "lstat" => StatType::Lstat,
                "statx" => StatType::Statx,
                _ => StatType::Stat,
            }
        }
    ),
    opt!(
        "rw",
        &["readwrite"],
        Kind::Choice(RW_WORDS),
        "read",
        "I/O pattern; WORD:N: random I/O takes a new offset every N I/Os, sequential I/O adds N bytes to each offset (holes; negative: backwards)",
        |j, v| {
            j.rw = rw_mode(v)?;
            (j.rw_seq_nr, j.rw_seq_add) = rw_modifier(v, j.kb_base)?
        }
    ),
    opt!(
        "rw_sequencer",
        &[],
        Kind::Choice(&["sequential", "identical"]),
        "sequential",
        "With rw=randWORD:N, the I/Os between new random offsets follow on (sequential) or repeat the offset (identical)",
        |j, v| j.rw_sequencer_identical = v == "identical"
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
        "Total bytes of I/O for each job, or a share of its files' sizes (20%)",
        |j, v| match v.strip_suffix('%') {
            Some(pct) => {
                let pct: f64 = pct
                    .trim()
                    .parse()
                    .map_err(|_| ValueError::Size(v.to_string()))?;
                if !(pct > 0.0 && pct <= 100.0) {
                    return Err(ValueError::Range(v.to_string()));
                }
                (j.size, j.size_percent) = (None, Some(pct))
            }
            None => (j.size, j.size_percent) = (Some(size(v, j.kb_base)?), None),
        }
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
        |j, v| (j.iodepth, j.iodepth_given) = (nonzero_u32(v)?, true)
    ),
    opt!(
        "iodepth_batch",
        &["iodepth_batch_submit"],
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
        "end_syncfs",
        &[],
        Kind::Bool,
        "0",
        "syncfs each filesystem the job wrote to when it completes (one call each, in place of end_fsync's fsync per file)",
        |j, v| j.end_syncfs = units::parse_bool(v)?
    ),
    opt!(
        "filetype",
        &[],
        Kind::Choice(&["none", "file", "block", "char"]),
        "none",
        "What the job's files are: fio takes it on trust to spare a stat each; hybrio looks each file up anyway and refuses one of another type",
        |j, v| {
            j.filetype = match v {
                "file" => crate::options::FileType::File,
                "block" => crate::options::FileType::Block,
                "char" => crate::options::FileType::Char,
                _ => crate::options::FileType::Any,
            }
        }
    ),
    opt!(
        "comm",
        &[],
        Kind::Text,
        "",
        "The name the job's thread goes by in ps and top (at most 15 bytes kept, as the kernel keeps)",
        |j, v| j.comm = (!v.is_empty()).then(|| v.to_string())
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
        &["allrandrepeat"],
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
            j.randseed_given = true
        }
    ),
    opt!(
        "fio_compat",
        &[],
        Kind::Text,
        "3.42",
        "hybrio's own: behave as this fio (3.33 to 3.42) where fio's versions differ: offsets' seeds (3.35), sha512 (3.39), the verify header (3.41), the verify state file (3.39, 3.41)",
        |j, v| j.fio_compat = crate::fio_version::FioVersion::parse(v)
            .map_err(|e| ValueError::Invalid(e.to_string()))?
    ),
    opt!(
        "random_generator",
        &[],
        Kind::Choice(&["tausworthe", "tausworthe64", "lfsr"]),
        "tausworthe",
        "fio's generator of random offsets: tausworthe (32 bits), tausworthe64, or lfsr (each block once, no random map)",
        |j, v| {
            j.random_generator64 = v == "tausworthe64";
            j.random_lfsr = v == "lfsr"
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
        "write_hist_log",
        &[],
        Kind::OptionalText,
        "",
        "Log each log_hist_msec window's completion latency histogram: PREFIX_clat_hist(.N).log, as fio's (fiologparser_hist.py reads it)",
        |j, v| j.write_hist_log = Some(v.to_string())
    ),
    opt!(
        "log_hist_msec",
        &[],
        Kind::Int,
        "0",
        "Windows of this many ms for write_hist_log and the report's percentiles over time (JSON, HTML)",
        |j, v| j.log_hist_msec = units::parse_u64(v)?
    ),
    opt!(
        "log_hist_coarseness",
        &[],
        Kind::Int,
        "0",
        "write_hist_log: each count sums 2^N of fio's 1856 buckets (0 to 6)",
        |j, v| {
            j.log_hist_coarseness = units::parse_u64(v)
                .ok()
                .and_then(|n| u8::try_from(n).ok())
                .filter(|n| *n <= 6)
                .ok_or_else(|| ValueError::Range(v.to_string()))?
        }
    ),
    opt!(
        "log_window_value",
        &["log_max_value"],
        Kind::Choice(&["avg", "max", "both", "0", "1"]),
        "avg",
        "With log_avg_msec: log each window's mean (avg, 0), largest value (max, 1) or both",
        |j, v| {
            j.log_window_value = match v {
                "max" | "1" => WindowValue::Max,
                "both" => WindowValue::Both,
                _ => WindowValue::Avg,
            }
        }
    ),
    opt!(
        "log_issue_time",
        &[],
        Kind::Bool,
        "0",
        "Log each I/O's issue time (ns since the job's start) in the latency logs (needs write_lat_log and log_offset)",
        |j, v| j.log_issue_time = units::parse_bool(v)?
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
        "atomic",
        &[],
        Kind::Bool,
        "0",
        "pvsync2, libaio, io_uring, pool, adaptive: torn-write protected writes (RWF_ATOMIC, Linux 6.11): each lands whole or not at all; needs direct=1, a file that takes them (XFS from Linux 6.16, or a device that has them) and write sizes within its units (statx), each a power of two",
        |j, v| j.atomic = units::parse_bool(v)?
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
        Kind::Choice(&["0", "1", "normal", "sequential", "random", "noreuse"]),
        "1",
        "posix_fadvise the files: 1 = as the workload (random or sequential), 0 = not at all, noreuse = read once",
        |j, v| j.fadvise_hint = match v {
            "0" => None,
            "normal" => Some(FadviseHint::Normal),
            "sequential" => Some(FadviseHint::Sequential),
            "random" => Some(FadviseHint::Random),
            "noreuse" => Some(FadviseHint::NoReuse),
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
        "hybrio: inject faults, e.g. eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms,corrupt:0.001 (a read with one bit flipped)",
        |j, v| {
            v.parse::<hybrio::engine::inject::FaultPlan>()
                .map_err(|e| ValueError::Unsupported(format!("inject '{v}': {e}")))?;
            j.inject = (!v.is_empty()).then(|| v.to_string());
        }
    ),
    opt!(
        "gtod_reduce",
        &[],
        Kind::Bool,
        "0",
        "Measure no latency and no bandwidth (disable_lat, disable_clat, disable_slat, disable_bw_measurement; no percentiles)",
        |j, v| {
            if units::parse_bool(v)? {
                (j.disable_lat, j.disable_clat, j.disable_slat, j.disable_bw) =
                    (true, true, true, true);
                (j.clat_percentiles, j.lat_percentiles, j.slat_percentiles) = (false, false, false);
            }
        }
    ),
    opt!(
        "disable_lat",
        &[],
        Kind::Bool,
        "0",
        "Do not measure total latency",
        |j, v| j.disable_lat = units::parse_bool(v)?
    ),
    opt!(
        "disable_clat",
        &[],
        Kind::Bool,
        "0",
        "Do not measure completion latency",
        |j, v| j.disable_clat = units::parse_bool(v)?
    ),
    opt!(
        "disable_slat",
        &[],
        Kind::Bool,
        "0",
        "Do not measure submission latency",
        |j, v| j.disable_slat = units::parse_bool(v)?
    ),
    opt!(
        "disable_bw_measurement",
        &["disable_bw"],
        Kind::Bool,
        "0",
        "Do not sample bandwidth and IOPS",
        |j, v| j.disable_bw = units::parse_bool(v)?
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
