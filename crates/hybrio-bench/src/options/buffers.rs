//! fio's buffer-contents options: what a job that does not verify writes.

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use super::values::*;
use crate::units::{self, ValueError};
use crate::verify::Pattern;

fn percent(v: &str) -> Result<u32, ValueError> {
    let pct = units::parse_u32(v)?;
    if pct > 100 {
        return Err(ValueError::Range(v.to_string()));
    }
    Ok(pct)
}

/// The buffer-contents options.
pub(super) static BUFFER_OPTIONS: &[OptionDef] = &[
    opt!(
        "buffer_pattern",
        &[],
        Kind::Text,
        "",
        "Write this pattern: 0xHEX, decimals, \"strings\", 'files'",
        |j, v| {
            let pattern =
                Pattern::parse(v, false).map_err(|e| ValueError::Invalid(e.to_string()))?;
            j.buffers.pattern = pattern.bytes;
            // As fio: a pattern is written as it is (no scramble, no
            // zeros), refilled where reads or compression could change it.
            j.buffers.scramble = false;
            j.buffers.zero = false;
            j.buffers.refill = Some(j.buffers.compress_percentage > 0 || j.rw.reads())
        }
    ),
    opt!(
        "zero_buffers",
        &[],
        Kind::Bool,
        "0",
        "Write zeros",
        |j, v| {
            j.buffers.zero = units::parse_bool(v)?;
            j.buffers.zero_given = true
        }
    ),
    opt!(
        "refill_buffers",
        &[],
        Kind::Bool,
        "",
        "Make every write's bytes afresh (on by default for compressible data)",
        |j, v| j.buffers.refill = Some(units::parse_bool(v)?)
    ),
    opt!(
        "scramble_buffers",
        &[],
        Kind::Bool,
        "1",
        "Change every write's bytes a little (its offset and the time in each 512-byte sector)",
        |j, v| j.buffers.scramble = units::parse_bool(v)?
    ),
    opt!(
        "buffer_compress_percentage",
        &[],
        Kind::Int,
        "0",
        "Make this share of each chunk compressible (zeros, or buffer_pattern)",
        |j, v| j.buffers.compress_percentage = percent(v)?
    ),
    opt!(
        "buffer_compress_chunk",
        &[],
        Kind::Size,
        "0",
        "The chunk buffer_compress_percentage applies to (0: each write)",
        |j, v| j.buffers.compress_chunk = size(v, j.kb_base)?
    ),
    opt!(
        "dedupe_percentage",
        &[],
        Kind::Int,
        "0",
        "Make this share of the writes repeat an earlier write's bytes",
        |j, v| {
            // As fio: deduplicated data is made afresh for every write.
            j.buffers.dedupe_percentage = percent(v)?;
            if j.buffers.dedupe_percentage > 0 {
                j.buffers.refill = Some(true)
            }
        }
    ),
    opt!(
        "dedupe_mode",
        &[],
        Kind::Choice(&["repeat", "working_set"]),
        "repeat",
        "Which earlier bytes a deduplicated write repeats: the last write's (repeat), or one of a working set of buffers (working_set)",
        |j, v| j.buffers.dedupe_working_set = v == "working_set"
    ),
    opt!(
        "dedupe_working_set_percentage",
        &[],
        Kind::Int,
        "5",
        "dedupe_mode=working_set: the set's size, as a share of the job's size",
        |j, v| j.buffers.dedupe_working_set_percentage = percent(v)?
    ),
    opt!(
        "dedupe_global",
        &[],
        Kind::Bool,
        "0",
        "dedupe_mode=working_set: the set is shared by the jobs of the run, so that one job's writes repeat another's",
        |j, v| j.buffers.dedupe_global = crate::units::parse_bool(v)?
    ),
];
