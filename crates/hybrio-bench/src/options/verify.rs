//! fio's verify options: what a job checks of the data it reads back.

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use crate::units::{self, ValueError};
use crate::verify::{Pattern, VerifyKind};

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
            "pattern_hdr",
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
            // The smaller header (fio 3.40's and older): the job's
            // fio_compat, which may come later, checks its own.
            if at != 0 && at < crate::verify::Layout::Unversioned.bytes() as u64 {
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
        "verify_pattern_interval",
        &[],
        Kind::Size,
        "0",
        "Start verify_pattern again, %o its offset there, every this many bytes of an I/O (0: once per I/O)",
        |j, v| j.verify.pattern_interval = units::parse_size_in(v, j.kb_base)?
    ),
    opt!(
        "verify_write_sequence",
        &[],
        Kind::Bool,
        "1",
        "Check each header's write sequence number (off by default for verify_only, and for norandommap at iodepth > 1 with an async engine)",
        |j, v| j.verify.write_sequence = Some(units::parse_bool(v)?)
    ),
    opt!(
        "verify_header_seed",
        &[],
        Kind::Bool,
        "1",
        "Check each header's seed of its random bytes (off by default for verify_only, jobs that only read, verify_backlog, norandommap and offset modifiers)",
        |j, v| j.verify.header_seed = Some(units::parse_bool(v)?)
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
    // fio 3.40's word for the pattern after a header, which verify_pattern
    // alone gives.
    if word == "pattern_hdr" {
        return Some(VerifyKind::Pattern);
    }
    VerifyKind::WORDS
        .iter()
        .find(|(w, _)| *w == word)
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(options: &[(&str, &str)]) -> JobOptions {
        let mut job = JobOptions::default();
        for (name, value) in options {
            crate::options::find(name)
                .unwrap()
                .apply(&mut job, value)
                .unwrap();
        }
        job
    }

    #[test]
    fn the_header_checks_resolve_as_fio_3_42s() {
        let writes = job(&[("rw", "randwrite")]);
        assert!(writes.verify_header_seed() && writes.verify_write_sequence());
        let only = job(&[("rw", "write"), ("verify_only", "1")]);
        assert!(!only.verify_header_seed() && !only.verify_write_sequence());
        let asked = job(&[
            ("rw", "write"),
            ("verify_only", "1"),
            ("verify_header_seed", "1"),
            ("verify_write_sequence", "1"),
        ]);
        assert!(asked.verify_header_seed() && asked.verify_write_sequence());
        assert!(!job(&[("rw", "randread")]).verify_header_seed());
        assert!(!job(&[("rw", "write"), ("verify_backlog", "8")]).verify_header_seed());
        assert!(!job(&[("rw", "randwrite:8")]).verify_header_seed());
        let overlapping = [("rw", "randwrite"), ("norandommap", "1"), ("iodepth", "8")];
        assert!(!job(&overlapping).verify_header_seed());
        assert!(job(&overlapping[..2]).verify_write_sequence(), "depth 1");
        let mut aio = overlapping.to_vec();
        aio.push(("ioengine", "libaio"));
        assert!(!job(&aio).verify_write_sequence());
        assert!(job(&overlapping).verify_write_sequence(), "psync");
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
            .apply(&mut job, "pattern_hdr")
            .unwrap();
        assert_eq!(job.verify.kind, Some(VerifyKind::Pattern));
        crate::options::find("verify")
            .unwrap()
            .apply(&mut job, "0")
            .unwrap();
        assert_eq!(job.verify.kind, None);
    }
}
