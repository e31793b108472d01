//! fio's I/O log options: `write_iolog`, `read_iolog` and how a replay
//! goes (`replay_*`, `merge_blktrace_*`).

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use crate::units::{self, ValueError};

/// `merge_blktrace_scalars` and `merge_blktrace_iters`: numbers separated
/// by `:`, one per capture, each above zero (fio stops its list at a zero).
fn numbers(option: &str, v: &str) -> Result<Vec<f64>, ValueError> {
    v.split(':')
        .map(|part| match part.trim().parse::<f64>() {
            Ok(n) if n > 0.0 && n.is_finite() => Ok(n),
            _ => Err(ValueError::Invalid(format!(
                "{option}={v}: '{part}' is not a number above 0"
            ))),
        })
        .collect()
}

/// The I/O log options.
pub(super) static IOLOG_OPTIONS: &[OptionDef] = &[
    opt!(
        "write_iolog",
        &[],
        Kind::Text,
        "",
        "Log each I/O the job issues to this file (fio's iolog version 3: time in us, file, action, offset, length)",
        |j, v| j.iolog.write = Some(v.to_string())
    ),
    opt!(
        "read_iolog",
        &[],
        Kind::Text,
        "",
        "Replay this iolog (version 2 or 3) or blktrace capture instead of the job's workload; FILE1:FILE2: clone N replays file N",
        |j, v| j.iolog.read = Some(v.to_string())
    ),
    opt!(
        "read_iolog_chunked",
        &[],
        Kind::Bool,
        "0",
        "Read the replayed log in parts (hybrio reads it whole; the I/Os are the same)",
        |j, v| j.iolog.chunked = units::parse_bool(v)?
    ),
    opt!(
        "replay_no_stall",
        &[],
        Kind::Bool,
        "0",
        "Replay as fast as possible, ignoring the times in the log",
        |j, v| j.iolog.no_stall = units::parse_bool(v)?
    ),
    opt!(
        "replay_time_scale",
        &[],
        Kind::Int,
        "100",
        "The replay's rate against the log's, in percent (200: twice as fast, its delays halved)",
        |j, v| {
            let scale = units::parse_u32(v)?;
            if scale == 0 {
                return Err(ValueError::Range(format!(
                    "replay_time_scale={v}: at least 1"
                )));
            }
            j.iolog.time_scale = scale
        }
    ),
    opt!(
        "replay_redirect",
        &[],
        Kind::Text,
        "",
        "Replay every I/O onto this file or device, whatever the log names",
        |j, v| j.iolog.redirect = Some(v.to_string())
    ),
    opt!(
        "replay_scale",
        &[],
        Kind::Int,
        "1",
        "Divide each replayed offset by this",
        |j, v| j.iolog.scale = units::parse_u64(v)?
    ),
    opt!(
        "replay_align",
        &[],
        Kind::Int,
        "",
        "Round each replayed offset down to a multiple of this (a power of 2)",
        |j, v| {
            let align = units::parse_u64(v)?;
            if align != 0 && !align.is_power_of_two() {
                return Err(ValueError::Invalid(format!(
                    "replay_align={v}: not a power of 2 (fio masks offsets with it)"
                )));
            }
            j.iolog.align = align
        }
    ),
    opt!(
        "replay_skip",
        &[],
        Kind::Text,
        "",
        "Leave these out of the replay: read,write,trim,sync",
        |j, v| {
            for word in v.trim().split(',') {
                match word {
                    "read" => j.iolog.skip.read = true,
                    "write" => j.iolog.skip.write = true,
                    "trim" => j.iolog.skip.trim = true,
                    "sync" => j.iolog.skip.sync = true,
                    _ => {
                        return Err(ValueError::Invalid(format!(
                            "replay_skip={v}: unknown kind '{word}' (read, write, trim, sync)"
                        )));
                    }
                }
            }
        }
    ),
    opt!(
        "merge_blktrace_file",
        &[],
        Kind::Text,
        "",
        "Merge the blktrace captures of read_iolog (FILE1:FILE2) into this file, then replay it",
        |j, v| j.iolog.merge_file = Some(v.to_string())
    ),
    opt!(
        "merge_blktrace_scalars",
        &[],
        Kind::Text,
        "",
        "Each merged capture's time, in percent (50: twice as fast), one per capture: 100:50",
        |j, v| j.iolog.merge_scalars = numbers("merge_blktrace_scalars", v)?
    ),
    opt!(
        "merge_blktrace_iters",
        &[],
        Kind::Text,
        "",
        "How many times each merged capture repeats, one per capture: 1:2",
        |j, v| j.iolog.merge_iters = numbers("merge_blktrace_iters", v)?
    ),
];
