//! fio's options of errors, exits, minimum rates and flows. What a failed
//! request does under `continue_on_error` and `ignore_error` is the job's
//! [`ErrorPolicy`](super::ErrorPolicy)'s to say.

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use super::values::*;
use crate::units;

/// The options of errors, exits and minimum rates.
pub(super) static ERROR_OPTIONS: &[OptionDef] = &[
    opt!(
        "rate_min",
        &["ratemin"],
        Kind::Size,
        "",
        "Bytes per second at least, over each rate_cycle (reads,writes,trims): a job that falls below ends with an error",
        |j, v| j.ratemin = rates(v, |t| size(t, j.kb_base))?
    ),
    opt!(
        "rate_iops_min",
        &[],
        Kind::Int,
        "",
        "I/Os per second at least, over each rate_cycle (reads,writes,trims): a job that falls below ends with an error",
        |j, v| j.rate_iops_min = rates(v, units::parse_u64)?
    ),
    opt!(
        "rate_cycle",
        &["ratecycle"],
        Kind::Int,
        "1000",
        "The window ratemin and rate_iops_min are measured over, in ms",
        |j, v| j.rate_cycle_ms = units::parse_u64(v)?
    ),
    opt!(
        "continue_on_error",
        &[],
        Kind::Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]),
        "none",
        "Keep going after failed reads, writes or both (io), blocks that fail verification (verify), or all of those, when the error is EIO or EILSEQ (or one ignore_error lists); count them",
        |j, v| j.errors.set_continue(v)
    ),
    opt!(
        "ignore_error",
        &[],
        Kind::Text,
        "",
        "Errors to keep going after, per kind: READ,WRITE,VERIFY, each a ':'-list of names (EPERM to ERANGE) or numbers, e.g. ,ENOSPC:122",
        |j, v| j.errors.set_ignore(v)?
    ),
    opt!(
        "flow",
        &[],
        Kind::Int,
        "0",
        "The job's weight among the jobs of its flow_id: their iterations keep to the weights' proportions",
        |j, v| j.flow = units::parse_u32(v)?
    ),
    opt!(
        "flow_id",
        &[],
        Kind::Int,
        "0",
        "The flow group the job's flow weight counts in",
        |j, v| j.flow_id = units::parse_u32(v)?
    ),
    opt!(
        "flow_sleep",
        &[],
        Kind::Int,
        "0",
        "Microseconds a job ahead of its flow share waits (once what it has in flight completed)",
        |j, v| j.flow_sleep = std::time::Duration::from_micros(units::parse_u64(v)?)
    ),
    opt!(
        "wait_for",
        &[],
        Kind::Text,
        "",
        "Start only once every clone of the job of this name (defined above) has ended",
        |j, v| j.wait_for = (!v.is_empty()).then(|| v.to_string())
    ),
    opt!(
        "exitall",
        &[],
        Kind::Bool,
        "0",
        "When one job ends, end others (exit_what says which); set in any job, it holds for every job of the run",
        |j, v| j.exitall = units::parse_bool(v)?
    ),
    opt!(
        "exitall_on_error",
        &[],
        Kind::Bool,
        "0",
        "When this job fails, end others (exit_what says which)",
        |j, v| j.exitall_on_error = units::parse_bool(v)?
    ),
    opt!(
        "exit_what",
        &[],
        Kind::Choice(&["group", "stonewall", "all"]),
        "group",
        "Which jobs exitall ends: the ending job's reporting group, every job running, or every job of the run",
        |j, v| j.exit_what = match v {
            "stonewall" => super::ExitWhat::Stonewall,
            "all" => super::ExitWhat::All,
            _ => super::ExitWhat::Group,
        }
    ),
    opt!(
        "error_dump",
        &[],
        Kind::Bool,
        "1",
        "Print every failed request, also those the job keeps going after",
        |j, v| j.errors.dump = units::parse_bool(v)?
    ),
];
