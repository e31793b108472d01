//! Where a job's I/O goes and when: its region of each file (`offset`,
//! `offset_increment`, `io_size`, `number_ios`, `zonemode`), random
//! offsets' alignment (`blockalign`), and its pauses (`thinktime`).

use std::time::Duration;

use super::def::{Kind, OptionDef, opt};
use super::values::*;
use super::{JobOptions, Preallocate};
use crate::units::{self, ValueError};

/// The region and pacing options.
pub(super) static REGION_OPTIONS: &[OptionDef] = &[
    opt!(
        "thinktime",
        &[],
        Kind::Time,
        "0",
        "Stall this long (unit us by default) after every thinktime_blocks I/Os, once they completed",
        |j, v| j.thinktime = units::parse_time(v, Duration::from_micros(1))?
    ),
    opt!(
        "thinkcycles",
        &[],
        Kind::Int,
        "0",
        "Spin this many loop iterations after each read or write before the next (an application's processing; not part of thinktime)",
        |j, v| j.thinkcycles = units::parse_u64(v)?
    ),
    opt!(
        "thinktime_spin",
        &[],
        Kind::Time,
        "0",
        "Of each thinktime, spend this long (unit us by default) spinning on the CPU",
        |j, v| j.thinktime_spin = units::parse_time(v, Duration::from_micros(1))?
    ),
    opt!(
        "thinktime_blocks",
        &[],
        Kind::Int,
        "1",
        "I/Os between stalls",
        |j, v| j.thinktime_blocks = units::parse_u64(v)?.max(1)
    ),
    opt!(
        "thinktime_blocks_type",
        &[],
        Kind::Choice(&["complete", "issue"]),
        "complete",
        "Count thinktime_blocks by I/Os completed or issued",
        |j, v| j.thinktime_count_issued = v == "issue"
    ),
    opt!(
        "ba",
        &["blockalign"],
        Kind::Size,
        "",
        "Random offsets are multiples of this (reads,writes; default: the block size); as in fio, it turns the random map off",
        |j, v| {
            let aligns = rates(v, |t| size(t, j.kb_base))?;
            j.blockalign = [aligns[0].unwrap_or(0), aligns[1].unwrap_or(0)]
        }
    ),
    opt!(
        "nrfiles",
        &["nr_files"],
        Kind::Int,
        "1",
        "Files per job when filename is not given (the size split among them)",
        |j, v| {
            let n = units::parse_u32(v)?;
            if n == 0 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.nrfiles = n
        }
    ),
    opt!(
        "filename_format",
        &[],
        Kind::Text,
        "",
        "The names of a job's files: $jobname, $jobnum, $filenum (default $jobname.$jobnum.$filenum)",
        |j, v| j.filename_format = (!v.is_empty()).then(|| v.to_string())
    ),
    opt!(
        "file_service_type",
        &[],
        Kind::Text,
        "roundrobin",
        "Which file each I/O goes to: roundrobin[:N] (the next every N I/Os), sequential (one file's region, then the next), random[:N]",
        |j, v| {
            let (kind, every) = v.split_once(':').unwrap_or((v, "1"));
            let every = units::parse_u64(every)?.max(1);
            j.file_service = match kind {
                "roundrobin" => super::FileService::RoundRobin(every),
                "sequential" => super::FileService::Sequential,
                "random" => super::FileService::Random(every),
                "zipf" | "pareto" | "normal" | "gauss" => {
                    return Err(ValueError::Unsupported(format!(
                        "file_service_type={kind} is not implemented by hybrio yet (roundrobin, sequential and random are)"
                    )));
                }
                _ => {
                    return Err(ValueError::Choice {
                        value: v.to_string(),
                        allowed: "roundrobin[:N], sequential, random[:N]".into(),
                    });
                }
            }
        }
    ),
    opt!(
        "openfiles",
        &[],
        Kind::Int,
        "",
        "Files open at once (default all): the job opens the next when one is done, as fio's",
        |j, v| j.openfiles = Some(units::parse_u32(v)?)
    ),
    opt!(
        "unlink",
        &[],
        Kind::Bool,
        "0",
        "Remove the job's files when it is done",
        |j, v| j.unlink = units::parse_bool(v)?
    ),
    opt!(
        "steadystate",
        &["ss"],
        Kind::Text,
        "iops_slope:0.01%",
        "Steady state: iops, iops_slope, bw, bw_slope, lat or lat_slope, and the limit of the window's deviation or slope (IOPS, bytes/s, a latency read as fio 3.42 reads it: the µs given, judged as ns, or N% of the mean); the job ends once reached (with ss_dur)",
        |j, v| {
            let (criterion, limit, percent) =
                crate::stats::SteadySettings::parse_criterion(v).map_err(ValueError::Range)?;
            j.steady.criterion = criterion;
            j.steady.limit = limit;
            j.steady.percent = percent;
        }
    ),
    opt!(
        "steadystate_duration",
        &["ss_dur"],
        Kind::Time,
        "0",
        "Steady state: the window judged, in seconds by default (0: no check); a multiple of ss_interval",
        |j, v| {
            let window = units::parse_time(v, Duration::from_secs(1))?;
            j.steady.seconds = window.as_secs();
            j.steady.duration_us = window.as_micros() as u64;
        }
    ),
    opt!(
        "steadystate_ramp_time",
        &["ss_ramp"],
        Kind::Time,
        "0",
        "Steady state: seconds after the start before samples are taken",
        |j, v| j.steady.ramp_seconds = units::parse_time(v, Duration::from_secs(1))?.as_secs()
    ),
    opt!(
        "steadystate_check_interval",
        &["ss_interval"],
        Kind::Time,
        "1",
        "Steady state: how often the window takes a sample, in seconds by default (at least 1s; the same in every job)",
        |j, v| j.steady.interval_us =
            units::parse_time(v, Duration::from_secs(1))?.as_micros() as u64
    ),
    opt!(
        "latency_target",
        &[],
        Kind::Time,
        "0",
        "Find the deepest queue (up to iodepth) whose I/Os complete within this latency (unit us by default)",
        |j, v| j.latency_target_ns =
            units::parse_time(v, Duration::from_micros(1))?.as_nanos() as u64
    ),
    opt!(
        "latency_window",
        &[],
        Kind::Time,
        "0",
        "latency_target: how long each depth is tried (unit us by default)",
        |j, v| j.latency_window_ns =
            units::parse_time(v, Duration::from_micros(1))?.as_nanos() as u64
    ),
    opt!(
        "latency_percentile",
        &[],
        Kind::Text,
        "100",
        "latency_target: the share of a window's I/Os that must meet it, in percent",
        |j, v| {
            j.latency_percentile = v
                .trim()
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| ValueError::Range(v.to_string()))?
        }
    ),
    opt!(
        "latency_run",
        &[],
        Kind::Bool,
        "0",
        "latency_target: keep adjusting the depth for the whole run (else stop once it settles)",
        |j, v| j.latency_run = units::parse_bool(v)?
    ),
    opt!(
        "io_submit_mode",
        &[],
        Kind::Choice(&["inline", "offload"]),
        "inline",
        "inline: the job's thread submits its I/O; offload: the engine runs in a thread of its own, the job's thread hands requests over (keeps a rate when submitting blocks)",
        |j, v| j.offload = v == "offload"
    ),
    opt!(
        "serialize_overlap",
        &[],
        Kind::Bool,
        "0",
        "Hold back a request while one of the job's requests in flight touches any of its bytes (writes that overlap are then ordered)",
        |j, v| j.serialize_overlap = units::parse_bool(v)?
    ),
    opt!(
        "create_serialize",
        &[],
        Kind::Bool,
        "1",
        "Lay files out one job after another: hybrio always does, before its jobs start (0 is taken; the files come out the same)",
        |_j, v| {
            units::parse_bool(v)?;
        }
    ),
    opt!(
        "fill_device",
        &["fill_fs"],
        Kind::Bool,
        "0",
        "With no size: write until the filesystem or device is full; the job then ends (ENOSPC is not its error)",
        |j, v| j.fill_device = units::parse_bool(v)?
    ),
    opt!(
        "fallocate",
        &[],
        Kind::Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]),
        "none",
        "How a file a job writes is given its space when it is created: none (hybrio's default; fio's is native), native or posix (fallocate, the file at its size), keep (allocated, size 0), truncate (sparse, at its size); 0 is none, 1 posix",
        |j, v| j.fallocate = match v {
            "native" | "posix" | "1" => Preallocate::Allocate,
            "keep" => Preallocate::KeepSize,
            "truncate" => Preallocate::Truncate,
            _ => Preallocate::None,
        }
    ),
    opt!(
        "unlink_each_loop",
        &[],
        Kind::Bool,
        "0",
        "Remove the job's files after each loop; the next loop makes them again (laid out anew for a job that reads)",
        |j, v| j.unlink_each_loop = units::parse_bool(v)?
    ),
    opt!(
        "allow_file_create",
        &[],
        Kind::Bool,
        "1",
        "A file that does not exist may be created (0: it is an error)",
        |j, v| j.allow_file_create = units::parse_bool(v)?
    ),
    opt!(
        "create_on_open",
        &[],
        Kind::Bool,
        "0",
        "Create a file the job only writes when the job opens it, not before",
        |j, v| j.create_on_open = units::parse_bool(v)?
    ),
    opt!(
        "pre_read",
        &[],
        Kind::Bool,
        "0",
        "Read the job's files into the page cache before it starts (and do not drop it)",
        |j, v| {
            j.pre_read = units::parse_bool(v)?;
            // As fio: what was read in stays cached.
            if j.pre_read {
                j.invalidate = false;
            }
        }
    ),
    opt!(
        "offset",
        &["fileoffset"],
        Kind::Text,
        "0",
        "Where in each file the job's region starts: bytes, or a share of the file (50%)",
        |j, v| {
            j.offset = match v.strip_suffix('%') {
                Some(pct) => {
                    let pct: f64 = pct
                        .trim()
                        .parse()
                        .map_err(|_| ValueError::Size(v.to_string()))?;
                    if !(0.0..100.0).contains(&pct) {
                        return Err(ValueError::Range(v.to_string()));
                    }
                    super::Offset::Percent(pct)
                }
                None => super::Offset::Bytes(size(v, j.kb_base)?),
            }
        }
    ),
    opt!(
        "offset_increment",
        &[],
        Kind::Size,
        "0",
        "Each clone's region starts this much further on than the one before",
        |j, v| j.offset_increment = size(v, j.kb_base)?
    ),
    opt!(
        "io_size",
        &["io_limit"],
        Kind::Size,
        "",
        "Bytes of I/O to do (default: size); the region stays size, gone over again as needed",
        |j, v| j.io_size = Some(size(v, j.kb_base)?)
    ),
    opt!(
        "ramp_size",
        &[],
        Kind::Size,
        "",
        "Do this many bytes of I/O before recording statistics (checked once a second; with group_reporting, the group's jobs together), instead of ramp_time",
        |j, v| {
            let bytes = size(v, j.kb_base)?;
            if bytes == 0 {
                return Err(ValueError::Range(format!("{v}: at least 1")));
            }
            j.ramp_size = Some(bytes)
        }
    ),
    opt!(
        "number_ios",
        &[],
        Kind::Int,
        "",
        "End the job after this many I/Os",
        |j, v| j.number_ios = Some(units::parse_u64(v)?).filter(|n| *n > 0)
    ),
    opt!(
        "zonemode",
        &[],
        Kind::Choice(&["none", "strided", "zbd"]),
        "none",
        "Zones: none, strided (zonesize bytes of I/O in each zonerange, then zoneskip bytes skipped); zbd needs a zoned block device",
        |j, v| match v {
            "zbd" => {
                return Err(ValueError::Unsupported(
                    "zonemode=zbd needs a zoned block device (a host-managed SMR disk or an NVMe ZNS namespace)".into(),
                ));
            }
            "strided" => j.zones.strided = true,
            _ => j.zones.strided = false,
        }
    ),
    opt!(
        "zonesize",
        &[],
        Kind::Size,
        "0",
        "Strided zones: bytes of I/O in a zone before the next",
        |j, v| j.zones.size = size(v, j.kb_base)?
    ),
    opt!(
        "zonerange",
        &[],
        Kind::Size,
        "0",
        "Strided zones: the bytes a zone spans (default zonesize)",
        |j, v| j.zones.range = size(v, j.kb_base)?
    ),
    opt!(
        "zoneskip",
        &[],
        Kind::Size,
        "0",
        "Strided zones: bytes skipped between one zone and the next",
        |j, v| j.zones.skip = size(v, j.kb_base)?
    ),
];

/// Why fio 3.42 refuses these jobs together, if it does, and the job: its
/// steady-state sampler serves every job, and ramps are set per group.
pub fn check_across_jobs(jobs: &[&JobOptions]) -> Result<(), (String, String)> {
    let interval = |job: &JobOptions| job.steady.interval_us;
    let first = jobs.first();
    let odd = first.and_then(|first| jobs.iter().find(|j| interval(j) != interval(first)));
    if let (Some(first), Some(odd)) = (first, odd) {
        return Err((
            odd.name.clone(),
            format!(
                "ss_interval={}us, where job '{}' has {}us: it must be the same in every job",
                interval(odd),
                first.name,
                interval(first)
            ),
        ));
    }
    check_ramp(jobs)
}

/// Why fio 3.42 refuses these jobs' `ramp_size`, if it does, and the job:
/// not with `ramp_time`, and the same in every job of a reporting group
/// where one of them ramps. hybrio also refuses what it does not do as fio
/// does: a network job's, whose deadline is set before its I/O starts.
fn check_ramp(jobs: &[&JobOptions]) -> Result<(), (String, String)> {
    let mut groups: Vec<Vec<&JobOptions>> = Vec::new();
    for (index, job) in jobs.iter().enumerate() {
        if index == 0 || job.stonewall || job.new_group {
            groups.push(Vec::new());
        }
        if let Some(group) = groups.last_mut() {
            group.push(job);
        }
    }
    for group in &groups {
        for job in group {
            let refuse = |why: String| Err((job.name.clone(), why));
            let Some(bytes) = job.ramp_size else {
                if !job.ramp_time.is_zero()
                    && let Some(other) = group.iter().find(|j| j.ramp_size.is_some())
                {
                    return refuse(format!(
                        "ramp_size must be the same in every job of a reporting group, and job '{}' has ramp_size",
                        other.name
                    ));
                }
                continue;
            };
            if !job.ramp_time.is_zero() {
                return refuse("give ramp_time or ramp_size, not both".into());
            }
            if let Some(other) = group.iter().find(|j| j.ramp_size != Some(bytes)) {
                return refuse(format!(
                    "ramp_size must be the same in every job of a reporting group, and job '{}' has another",
                    other.name
                ));
            }
            if job.network().is_some() {
                return refuse(
                    "ramp_size is not implemented for network jobs yet (ramp_time is)".into(),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, ramp_size: Option<u64>) -> JobOptions {
        JobOptions {
            name: name.into(),
            ramp_size,
            ..JobOptions::default()
        }
    }

    #[test]
    fn ramp_sizes_fio_refuses_are_refused() {
        let (a, b) = (job("a", Some(1 << 20)), job("b", None));
        let refused = |jobs: &[&JobOptions]| check_ramp(jobs).unwrap_err().1;
        assert!(refused(&[&a, &b]).contains("the same in every job"));
        let mut timed = job("b", None);
        timed.ramp_time = Duration::from_secs(1);
        assert!(refused(&[&timed, &a]).contains("the same in every job"));
        let mut both = a.clone();
        both.ramp_time = Duration::from_secs(1);
        assert!(refused(&[&both]).contains("not both"));
        // Another reporting group may ramp otherwise.
        let mut later = b.clone();
        later.stonewall = true;
        assert_eq!(check_ramp(&[&a, &later]), Ok(()));
    }
}
