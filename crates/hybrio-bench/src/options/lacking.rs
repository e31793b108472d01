//! Why hybrio lacks each option fio has that it does not implement, so that a
//! fio job file using one is refused with a reason the user can act on, not a
//! bare "not supported". fio's general options are in [`LACKING`]; an engine
//! option's reason is derived from its engine (see `engines::option_reason`).
//! A test keeps every name of `fio_names.rs` either implemented or explained.

use std::borrow::Cow;

use super::engines;

/// A reason shared by the zoned-device options (fio's `zonemode=zbd`).
const ZBD: &str =
    "zoned block devices (zonemode=zbd): not implemented by hybrio (zonemode=strided is)";
/// fio's data placement options, all of one feature.
const PLACEMENT: &str = "NVMe data placement (FDP or streams): needs a device that supports it and fio's io_uring_cmd or xnvme engine, which hybrio does not run";
/// fio's cgroup options.
const CGROUP: &str = "needs cgroup v1/v2 control of each job's thread: hybrio's jobs are threads of one process (not implemented)";
/// fio's compressed logs.
const COMPRESSED_LOGS: &str = "compressed logs (fio's .fz, read back with fio --inflate-log): not implemented by hybrio; its logs are plain text, fio's default";
/// fio's alternate-epoch timestamps in logs.
const LOG_EPOCH: &str = "timestamps from another clock's epoch in the logs: not implemented by hybrio yet; its log times count from the job's start, fio's default";
/// fio's trims of verified blocks.
const VERIFY_TRIM: &str = "trimming verified blocks and checking they read back as zeros (fio's verify trim options): not implemented by hybrio yet";
/// SPRandom preconditioning.
const SPRANDOM: &str =
    "SPRandom, fio 3.42's fast SSD preconditioning: not implemented by hybrio yet";
/// fio's uid/gid.
const USER: &str = "setting the user or group of one job: hybrio's jobs are threads of one process, which share them (not implemented); run hybrio as that user";

/// fio's general options (not an engine's) that hybrio lacks, each with why,
/// sorted by name for binary search. Implementing one means removing it here.
pub static LACKING: &[(&str, &str)] = &[
    (
        "allow_mounted_write",
        "hybrio does not look for a mounted file system on a device it writes, so there is no guard for this to lift (not implemented); check the device yourself",
    ),
    (
        "block_error_percentiles",
        "fio's histogram of the trims it took to reach write errors (a device wearing out): not implemented by hybrio",
    ),
    (
        "blocksize_unaligned",
        "not implemented by hybrio yet: a size drawn from bsrange is rounded down to a multiple of the smallest block size, as fio does without it",
    ),
    (
        "bs_is_seq_rand",
        "not implemented by hybrio yet: bs=READ,WRITE sets block sizes per direction",
    ),
    (
        "bs_unaligned",
        "not implemented by hybrio yet: a size drawn from bsrange is rounded down to a multiple of the smallest block size, as fio does without it",
    ),
    (
        "bwavgtime",
        "not implemented by hybrio yet: its bandwidth samples are taken every 500 ms, fio's default",
    ),
    ("cgroup", CGROUP),
    ("cgroup_nodelete", CGROUP),
    ("cgroup_weight", CGROUP),
    (
        "clocksource",
        "hybrio picks its clock itself: the CPU's time-stamp counter where the kernel trusts it (as fio's default, clocksource=cpu), clock_gettime(CLOCK_MONOTONIC) elsewhere; choosing one is not implemented",
    ),
    (
        "create_fsync",
        "not implemented by hybrio yet: hybrio always fsyncs a file it lays out, fio's default (create_fsync=1)",
    ),
    (
        "create_only",
        "laying out the files without running the job: not implemented by hybrio yet",
    ),
    ("data_placement", PLACEMENT),
    ("dataplacement", PLACEMENT),
    (
        "disk_util",
        "not implemented by hybrio yet: hybrio always reports disk utilization, fio's default (disk_util=1)",
    ),
    ("dp_scheme", PLACEMENT),
    (
        "exec_postrun",
        "running a command after a job: not implemented by hybrio yet; run it after hybrio",
    ),
    (
        "exec_prerun",
        "running a command before a job: not implemented by hybrio yet; run it before hybrio",
    ),
    ("fdp", PLACEMENT),
    ("fdp_pli", PLACEMENT),
    ("fdp_pli_select", PLACEMENT),
    (
        "file_append",
        "not implemented by hybrio yet: offset=SIZE (the file's size) does the same, as fio's HOWTO says",
    ),
    (
        "fsync_on_close",
        "not implemented by hybrio yet: end_fsync=1 fsyncs each written file at the job's end",
    ),
    ("gid", USER),
    (
        "gtod_cpu",
        "a CPU set aside to keep the time for the other jobs: not implemented by hybrio (its jobs read the clock themselves, through the time-stamp counter where the kernel trusts it)",
    ),
    ("ignore_zone_limits", ZBD),
    (
        "iomem",
        "hybrio allocates its I/O buffers on its heap, 4096-aligned (fio's default, malloc); shared memory, huge pages and mapped files are not implemented",
    ),
    (
        "iomem_align",
        "hybrio aligns every I/O buffer to 4096 bytes itself; another alignment is not implemented",
    ),
    (
        "iopsavgtime",
        "not implemented by hybrio yet: its IOPS samples are taken every 500 ms, fio's default",
    ),
    (
        "ioscheduler",
        "switching the device's I/O scheduler: not implemented by hybrio yet; write it to /sys/block/DEV/queue/scheduler before the run",
    ),
    ("job_max_open_zones", ZBD),
    (
        "job_start_clock_id",
        "not implemented by hybrio yet: the JSON's job_start is CLOCK_REALTIME's, fio's default (0)",
    ),
    (
        "lockfile",
        "locking a file shared by several jobs: not implemented by hybrio yet (fio's default, lockfile=none, locks nothing)",
    ),
    (
        "lockmem",
        "pinning memory with mlock(2) to leave the system less of it: not implemented by hybrio yet",
    ),
    ("log_alternate_epoch", LOG_EPOCH),
    ("log_alternate_epoch_clock_id", LOG_EPOCH),
    ("log_compression", COMPRESSED_LOGS),
    ("log_compression_cpus", COMPRESSED_LOGS),
    (
        "log_entries",
        "setting the first number of log entries (to spare allocations during the run): not implemented by hybrio yet",
    ),
    ("log_store_compressed", COMPRESSED_LOGS),
    ("log_unix_epoch", LOG_EPOCH),
    (
        "max_latency",
        "not implemented by hybrio yet; latency_target with latency_window and latency_percentile is the nearest it has",
    ),
    ("max_open_zones", ZBD),
    (
        "mem",
        "hybrio allocates its I/O buffers on its heap, 4096-aligned (fio's default, malloc); shared memory, huge pages and mapped files are not implemented",
    ),
    (
        "mem_align",
        "hybrio aligns every I/O buffer to 4096 bytes itself; another alignment is not implemented",
    ),
    (
        "num_range",
        "trims of several ranges in one NVMe command: an option of fio's io_uring_cmd engine, which hybrio does not run",
    ),
    (
        "offset_align",
        "not implemented by hybrio yet: a percentage offset is aligned to the smallest block size, fio's default (offset_align=0)",
    ),
    (
        "opendir",
        "not implemented by hybrio yet: name the files with filename=A:B:C, or use directory with nrfiles",
    ),
    (
        "overwrite",
        "laying out a write-only job's file first, so that its writes overwrite data: not implemented by hybrio yet (a job that reads lays its file out: run one first)",
    ),
    (
        "percentage_random",
        "mixing sequential and random I/O in one job: not implemented by hybrio yet",
    ),
    ("plid_select", PLACEMENT),
    ("plids", PLACEMENT),
    (
        "profile",
        "fio's built-in workloads (tiobench, act): not implemented by hybrio; write the job file instead",
    ),
    (
        "rate_ignore_thinktime",
        "keeping to the rate through a thinktime instead of catching up after it: not implemented by hybrio yet",
    ),
    ("read_beyond_wp", ZBD),
    ("recover_zbd_write_error", ZBD),
    (
        "significant_figures",
        "not implemented by hybrio yet: its normal output prints 4 significant figures, fio's default",
    ),
    (
        "softrandommap",
        "not implemented by hybrio yet; norandommap=1 runs without a random map from the start",
    ),
    ("spr_cs", SPRANDOM),
    ("spr_num_regions", SPRANDOM),
    ("spr_op", SPRANDOM),
    ("sprandom", SPRANDOM),
    (
        "stats",
        "leaving a job out of the report: not implemented by hybrio yet (every job is in it, fio's default)",
    ),
    (
        "sync",
        "O_SYNC or O_DSYNC writes: not implemented by hybrio yet; fsync=1 or fdatasync=1 syncs after every write instead",
    ),
    (
        "sync_file_range",
        "sync_file_range(2) every N writes: not implemented by hybrio yet; fsync=N or fdatasync=N syncs every N writes instead",
    ),
    (
        "thinktime_iotime",
        "a thinktime cycle counted in time: not implemented by hybrio yet; thinktime_blocks counts it in blocks",
    ),
    ("trim_backlog", VERIFY_TRIM),
    ("trim_backlog_batch", VERIFY_TRIM),
    ("trim_percentage", VERIFY_TRIM),
    ("trim_verify_zero", VERIFY_TRIM),
    ("uid", USER),
    (
        "unique_filename",
        "fio's client/server mode prefixes generated file names with the client's address; hybrio has no such mode (across MPI ranks, put $rank in the name)",
    ),
    (
        "unit_base",
        "reporting in bits or bytes: not implemented by hybrio yet (it reports bytes, and bits for network jobs)",
    ),
    (
        "verify_async_cpus",
        "pinning verify_async's threads to CPUs: not implemented by hybrio yet (verify_async is)",
    ),
    (
        "write_barrier",
        "fio 3.42 marks every N-th write a barrier, but none of its engines acts on the mark; hybrio does not take it: leave it out",
    ),
    (
        "write_hint",
        "write lifetime hints (fcntl F_SET_RW_HINT): not implemented by hybrio yet",
    ),
    ("write_zone_remainder", ZBD),
    ("zone_reset_frequency", ZBD),
    ("zone_reset_threshold", ZBD),
    ("zonecapacity", ZBD),
];

/// Why hybrio lacks fio's option `name`, if fio has it and nobody implemented
/// it (the tests keep the tables free of what hybrio has).
pub fn reason(name: &str) -> Option<Cow<'static, str>> {
    match LACKING.binary_search_by_key(&name, |(option, _)| option) {
        Ok(at) => Some(Cow::Borrowed(LACKING[at].1)),
        Err(_) => engines::option_reason(name),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{find, fio_names, is_fio_option};
    use super::*;

    #[test]
    fn every_name_fio_has_is_implemented_or_explained() {
        // A name fio_names.rs gains (a new fio) fails here until someone
        // implements it or writes why not.
        let unexplained: Vec<&str> = fio_names::FIO_OPTION_NAMES
            .iter()
            .copied()
            .filter(|name| find(name).is_none() && reason(name).is_none())
            .collect();
        assert!(
            unexplained.is_empty(),
            "fio has these, hybrio neither implements them nor says why: {unexplained:?}"
        );
    }

    #[test]
    fn lacking_lists_only_general_fio_options_hybrio_lacks_once_each() {
        for pair in LACKING.windows(2) {
            assert!(pair[0].0 < pair[1].0, "unsorted or twice: {:?}", pair[1].0);
        }
        for (name, why) in LACKING {
            assert!(find(name).is_none(), "hybrio has {name}: remove its entry");
            assert!(is_fio_option(name), "fio has no {name}");
            assert!(
                !engines::is_engine_option(name),
                "{name} is an engine option"
            );
            assert!(!why.is_empty() && !why.contains('\n'), "{name}");
        }
    }
}
