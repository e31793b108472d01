//! The options of fio's engines that do no I/O: `cpuio` (burns a share of
//! a CPU) and `exec` (runs a program beside the other jobs); and those of
//! `e4defrag` (which moves a file's extents instead of writing it).

use super::def::{Kind, OptionDef, opt};
use super::{CpuMode, JobOptions, PseudoEngine};
use crate::units::{self, ValueError};

/// The options of `cpuio` and `exec`.
pub(super) static PSEUDO_OPTIONS: &[OptionDef] = &[
    opt!(
        "cpuload",
        &[],
        Kind::Int,
        "",
        "ioengine=cpuio: percent of a CPU to keep busy",
        |j, v| j.pseudo.cpu_load = units::parse_u32(v)?.min(100)
    ),
    opt!(
        "cpumode",
        &[],
        Kind::Choice(&["noop", "qsort"]),
        "noop",
        "ioengine=cpuio: spin (noop) or sort integers (qsort) while busy",
        |j, v| {
            j.pseudo.cpu_mode = if v == "qsort" {
                CpuMode::Qsort
            } else {
                CpuMode::Noop
            }
        }
    ),
    opt!(
        "cpuchunks",
        &[],
        Kind::Int,
        "50000",
        "ioengine=cpuio: microseconds of each busy stretch (qsort measures its own)",
        |j, v| j.pseudo.cpu_chunk_us = units::parse_u64(v)?.max(1)
    ),
    opt!(
        "exit_on_io_done",
        &[],
        Kind::Bool,
        "0",
        "ioengine=cpuio: end when the jobs doing I/O are done (not implemented by hybrio yet: 0 only)",
        |_j, v| if units::parse_bool(v)? {
            return Err(ValueError::Unsupported(
                "exit_on_io_done=1 is not implemented by hybrio yet (a cpuio job runs for its runtime)".into(),
            ));
        }
    ),
    opt!(
        "program",
        &[],
        Kind::Text,
        "",
        "ioengine=exec: the program to run",
        |j, v| j.pseudo.program = Some(v.to_string())
    ),
    opt!(
        "arguments",
        &[],
        Kind::Text,
        "",
        "ioengine=exec: its arguments (%r: the runtime in seconds, %n: the job's name)",
        |j, v| j.pseudo.arguments = Some(v.to_string())
    ),
    opt!(
        "grace_time",
        &[],
        Kind::Int,
        "1",
        "ioengine=exec: seconds between SIGTERM and SIGKILL when the runtime is over",
        |j, v| j.pseudo.grace_s = units::parse_u64(v)?
    ),
    opt!(
        "std_redirect",
        &[],
        Kind::Bool,
        "1",
        "ioengine=exec: the program's output goes to <job>.stdout and <job>.stderr",
        |j, v| j.pseudo.redirect = units::parse_bool(v)?
    ),
];

/// The `e4defrag` options.
pub(super) static DEFRAG_OPTIONS: &[OptionDef] = &[
    opt!(
        "donorname",
        &[],
        Kind::Text,
        "",
        "ioengine=e4defrag: the donor file whose extents the job's file takes (in the job's directory)",
        |j, v| j.pseudo.donor = Some(v.to_string())
    ),
    opt!(
        "inplace",
        &[],
        Kind::Int,
        "0",
        "ioengine=e4defrag: 1 allocates the donor's blocks for each move and frees them after; 0 allocates the whole region first",
        |j, v| j.pseudo.inplace = match v {
            "0" => false,
            "1" => true,
            _ => return Err(ValueError::Range(format!("inplace={v}: 0 or 1"))),
        }
    ),
];

/// Why a job of these engines cannot run, if it cannot.
pub fn check(job: &JobOptions) -> Result<(), String> {
    match PseudoEngine::named(&job.ioengine) {
        Some(PseudoEngine::Cpu) if job.pseudo.cpu_load == 0 => {
            Err("ioengine=cpuio needs cpuload= (the percent of a CPU to use)".into())
        }
        Some(PseudoEngine::Cpu) if job.runtime.is_none() => {
            Err("ioengine=cpuio runs for its runtime: give runtime=".into())
        }
        Some(PseudoEngine::Exec) if job.pseudo.program.is_none() => {
            Err("ioengine=exec needs program= (the program to run)".into())
        }
        _ if job.ioengine == "e4defrag" && job.pseudo.donor.is_none() => {
            Err("ioengine=e4defrag needs donorname= (the donor file)".into())
        }
        _ => Ok(()),
    }
}
