//! fio's verify options: what a job checks of the data it reads back.

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use crate::units::{self, ValueError};
use crate::verify::{Pattern, VerifyKind};

/// A job's verify options, as given (resolved against its block sizes by
/// [`VerifyOptions::interval_for`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    /// `verify`: `None` for `verify=0` (the default).
    pub kind: Option<VerifyKind>,
    /// `do_verify`: read back and check what a writing job wrote.
    pub do_verify: bool,
    /// `verify_only`: write nothing; read back and check what the same job
    /// wrote before.
    pub only: bool,
    /// `verify_interval` (0: fio's default, from the block sizes).
    pub interval: u64,
    /// `verify_offset`.
    pub header_offset: u64,
    /// `verify_pattern`.
    pub pattern: Option<Pattern>,
    /// `verify_fatal`.
    pub fatal: bool,
    /// `verify_dump`.
    pub dump: bool,
    /// `verify_backlog`: read back after this many writes (0: at the end only).
    pub backlog: u64,
    /// `verify_backlog_batch`: how many of them (0: all).
    pub backlog_batch: u64,
    /// `verify_async`: threads that check what is read back (0: the job's own).
    pub async_threads: u32,
    /// `experimental_verify`: read back by replaying the job's writes
    /// rather than remembering them.
    pub experimental: bool,
    /// `verify_state_save`: a writing job saves how far it got.
    pub state_save: bool,
    /// `verify_state_load`: reading back stops where that saved state says
    /// the writes stopped.
    pub state_load: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            kind: None,
            do_verify: true,
            only: false,
            interval: 0,
            header_offset: 0,
            pattern: None,
            fatal: false,
            dump: false,
            backlog: 0,
            backlog_batch: 0,
            async_threads: 0,
            experimental: false,
            state_save: true,
            state_load: false,
        }
    }
}

impl VerifyOptions {
    /// The interval each header covers, as fio resolves it: the smallest
    /// write size unless set (and never more than it, nor more than the
    /// smallest read size of a job that reads), and a divisor of the write
    /// sizes (their greatest common divisor when it is not).
    pub fn interval_for(&self, write: (u64, u64), read: Option<(u64, u64)>) -> u64 {
        let (min_write, max_write) = write;
        let mut interval = self.interval;
        if max_write != min_write && interval == 0 {
            interval = min_write;
        }
        if interval > min_write {
            interval = min_write;
        } else if let Some((min_read, _)) = read
            && interval > min_read
        {
            interval = min_read;
        }
        if interval == 0 || min_write % interval != 0 || max_write % interval != 0 {
            interval = gcd(min_write, max_write);
        }
        interval
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The verify options.
pub(super) static VERIFY_OPTIONS: &[OptionDef] = &[
    opt!(
        "verify",
        &[],
        Kind::Choice(&[
            "0",
            "md5",
            "crc64",
            "crc32",
            "crc32c-intel",
            "crc32c",
            "crc16",
            "crc7",
            "sha1",
            "sha256",
            "sha512",
            "sha3-224",
            "sha3-256",
            "sha3-384",
            "sha3-512",
            "xxhash",
            "meta",
            "pattern",
            "null"
        ]),
        "0",
        "Check written data when it is read back: each block carries fio's header and this checksum",
        |j, v| j.verify.kind = verify_kind(v)
    ),
    opt!(
        "do_verify",
        &[],
        Kind::Bool,
        "1",
        "Read back and check what the job wrote, once its writes are done",
        |j, v| j.verify.do_verify = units::parse_bool(v)?
    ),
    opt!(
        "verify_only",
        &[],
        Kind::Bool,
        "0",
        "Write nothing: read back and check what the same job wrote in an earlier run",
        |j, v| j.verify.only = units::parse_bool(v)?
    ),
    opt!(
        "verify_interval",
        &[],
        Kind::Size,
        "",
        "Bytes each verify header covers (default: the block size)",
        |j, v| j.verify.interval = units::parse_size_in(v, j.kb_base)?
    ),
    opt!(
        "verify_offset",
        &[],
        Kind::Size,
        "0",
        "Move the verify header this many bytes into its block",
        |j, v| {
            let at = units::parse_size_in(v, j.kb_base)?;
            if at != 0 && at < crate::verify::HEADER_LEN as u64 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.verify.header_offset = at
        }
    ),
    opt!(
        "verify_pattern",
        &[],
        Kind::Text,
        "",
        "Fill and check blocks with this pattern: 0xHEX, decimals, \"strings\", 'files' and %o (the block's offset)",
        |j, v| {
            let pattern =
                Pattern::parse(v, true).map_err(|e| ValueError::Invalid(e.to_string()))?;
            j.verify.pattern = Some(pattern);
            if j.verify.kind.is_none() {
                j.verify.kind = Some(VerifyKind::Pattern);
            }
        }
    ),
    opt!(
        "verify_fatal",
        &[],
        Kind::Bool,
        "0",
        "Stop at a request's first bad block rather than check the rest of it",
        |j, v| j.verify.fatal = units::parse_bool(v)?
    ),
    opt!(
        "verify_dump",
        &[],
        Kind::Bool,
        "0",
        "Write a bad block's bytes as read and as expected to NAME.OFFSET.received and .expected",
        |j, v| j.verify.dump = units::parse_bool(v)?
    ),
    opt!(
        "verify_backlog",
        &[],
        Kind::Int,
        "",
        "Read back and check the written blocks every this many writes, not only at the end",
        |j, v| j.verify.backlog = units::parse_u64(v)?
    ),
    opt!(
        "verify_backlog_batch",
        &[],
        Kind::Int,
        "",
        "How many written blocks each verify_backlog read-back checks (default: verify_backlog)",
        |j, v| j.verify.backlog_batch = units::parse_u64(v)?
    ),
    opt!(
        "verify_async",
        &[],
        Kind::Int,
        "0",
        "Check what is read back on this many threads of its own, beside the job's I/O",
        |j, v| {
            let threads = units::parse_u32(v)?;
            if threads > 64 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.verify.async_threads = threads
        }
    ),
    opt!(
        "experimental_verify",
        &[],
        Kind::Bool,
        "0",
        "Read back by replaying the job's writes instead of remembering each one (less memory)",
        |j, v| j.verify.experimental = units::parse_bool(v)?
    ),
    opt!(
        "verify_state_save",
        &[],
        Kind::Bool,
        "1",
        "A writing job that verifies saves how far it got to local-NAME-INDEX-verify.state (fio's format; kept current while it runs)",
        |j, v| j.verify.state_save = units::parse_bool(v)?
    ),
    opt!(
        "verify_state_load",
        &[],
        Kind::Bool,
        "0",
        "Read back only what the saved state says completed (verify_only after a run cut short)",
        |j, v| j.verify.state_load = units::parse_bool(v)?
    ),
];

fn verify_kind(word: &str) -> Option<VerifyKind> {
    VerifyKind::WORDS
        .iter()
        .find(|(w, _)| *w == word)
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_resolves_as_fios() {
        let options = VerifyOptions::default();
        assert_eq!(options.interval_for((4096, 4096), None), 4096);
        assert_eq!(options.interval_for((4096, 16384), None), 4096);
        assert_eq!(options.interval_for((12288, 16384), None), 4096);
        let set = VerifyOptions {
            interval: 512,
            ..VerifyOptions::default()
        };
        assert_eq!(set.interval_for((4096, 4096), None), 512);
        let too_big = VerifyOptions {
            interval: 8192,
            ..VerifyOptions::default()
        };
        assert_eq!(too_big.interval_for((4096, 4096), None), 4096);
        let not_a_divisor = VerifyOptions {
            interval: 3000,
            ..VerifyOptions::default()
        };
        assert_eq!(not_a_divisor.interval_for((4096, 4096), None), 4096);
    }

    #[test]
    fn pattern_alone_verifies_with_headers_and_verify_pattern_without() {
        let mut job = JobOptions::default();
        crate::options::find("verify_pattern")
            .unwrap()
            .apply(&mut job, "0xaa")
            .unwrap();
        assert_eq!(job.verify.kind, Some(VerifyKind::Pattern));
        crate::options::find("verify")
            .unwrap()
            .apply(&mut job, "pattern")
            .unwrap();
        assert_eq!(job.verify.kind, Some(VerifyKind::PatternNoHeader));
        crate::options::find("verify")
            .unwrap()
            .apply(&mut job, "0")
            .unwrap();
        assert_eq!(job.verify.kind, None);
    }
}
