//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio`, `cmdprio_hint`, `cmdprio_bssplit`) and `log_prio`: a share of a job's reads
//! and writes go with another I/O priority than the job's, sent with each
//! request by io_uring and libaio, as fio's engines of those names send it.

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use crate::units::{self, ValueError};

fn per_direction(v: &str, max: u32, name: &str, min: u32) -> Result<[u32; 2], ValueError> {
    let values: Vec<u32> = v
        .split(',')
        .map(|p| {
            let n = units::parse_u32(p.trim())?;
            if n < min || n > max {
                return Err(ValueError::Range(format!("{name}={v}: {min}-{max}")));
            }
            Ok(n)
        })
        .collect::<Result<_, _>>()?;
    Ok([values[0], *values.get(1).unwrap_or(&values[0])])
}

/// The per-I/O priority options.
pub(super) static CMDPRIO_OPTIONS: &[OptionDef] = &[
    opt!(
        "cmdprio_percentage",
        &[],
        Kind::Text,
        "0",
        "io_uring, libaio: this share of the reads[,writes] goes with cmdprio_class and cmdprio",
        |j, v| j.cmdprio.percent = per_direction(v, 100, "cmdprio_percentage", 0)?
    ),
    opt!(
        "cmdprio_class",
        &[],
        Kind::Text,
        "1",
        "io_uring, libaio: the I/O priority class of those I/Os (1 realtime, 2 best effort, 3 idle), reads[,writes]",
        |j, v| j.cmdprio.class = per_direction(v, 3, "cmdprio_class", 1)?
    ),
    opt!(
        "cmdprio",
        &[],
        Kind::Text,
        "0",
        "io_uring, libaio: the level in that class (0-7), reads[,writes]",
        |j, v| j.cmdprio.level = per_direction(v, 7, "cmdprio", 0)?
    ),
    opt!(
        "cmdprio_hint",
        &[],
        Kind::Text,
        "0",
        "io_uring, libaio: the priority hint of those I/Os (0 none, up to 1023; e.g. a command duration limit's index), reads[,writes]",
        |j, v| j.cmdprio.hint = per_direction(v, 1023, "cmdprio_hint", 0)?
    ),
    opt!(
        "cmdprio_bssplit",
        &[],
        Kind::Text,
        "",
        "io_uring, libaio: priorities by block size, bs/percent[/class/level[/hint]]:... for reads[,writes]",
        |j, v| j.cmdprio.bssplit = Some(v.to_string())
    ),
    opt!(
        "log_prio",
        &[],
        Kind::Bool,
        "0",
        "The latency logs' last column is each I/O's priority (0xCLASSLEVEL), not whether it was realtime",
        |j, v| j.cmdprio.log = units::parse_bool(v)?
    ),
];

/// Why a job's per-I/O priorities cannot be used, if they cannot.
pub fn check(job: &JobOptions) -> Result<(), String> {
    if !job.cmdprio.is_set() {
        return Ok(());
    }
    if !matches!(job.ioengine.as_str(), "io_uring" | "libaio") {
        return Err(format!(
            "cmdprio_percentage and cmdprio_bssplit need ioengine=io_uring or libaio, which send each I/O's priority (ioengine={})",
            job.ioengine
        ));
    }
    if job.cmdprio.bssplit.is_some() && job.cmdprio.percent.iter().any(|&p| p > 0) {
        return Err("cmdprio_percentage and cmdprio_bssplit: give one of them".into());
    }
    job.cmdprio.split().map(|_| ())
}
