//! What a failed request does to its job, as fio decides it:
//! `continue_on_error` names the kinds of error a job goes on after (read,
//! write, verify), `ignore_error` the errors of each kind it goes on after
//! (fio's default: EIO and EILSEQ), and `error_dump` whether the ones it
//! goes on after are printed. And which jobs a job that ends ends
//! (`exit_what`).

use hybrio::request::Op;

use crate::units::ValueError;

/// fio's errors that a job can go on after unless `ignore_error` says
/// others: EIO and EILSEQ.
const NON_FATAL: [i32; 2] = [5, 84];

/// fio's kinds of error (`ERROR_TYPE_*_BIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A read failed.
    Read = 0,
    /// A write (or another request than a read) failed.
    Write = 1,
    /// A block read back failed verification (EILSEQ, whatever the request).
    Verify = 2,
}

impl ErrorKind {
    /// fio's `td_error_type`: EILSEQ is verify's; else the request's direction.
    pub fn of(op: Op, errno: i32) -> ErrorKind {
        if errno == NON_FATAL[1] {
            ErrorKind::Verify
        } else if op.fills_buffer() {
            ErrorKind::Read
        } else {
            ErrorKind::Write
        }
    }
}

/// `exit_what`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of the ending job's reporting group.
    #[default]
    Group,
    /// Every job running now.
    Stonewall,
    /// Every job, also those not yet started.
    All,
}

/// A job's error policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// The kinds the job goes on after, a bit each (`continue_on_error`,
    /// and every kind `ignore_error` lists errors for).
    continue_kinds: u32,
    /// Per kind, the errors it goes on after (empty: fio's EIO and EILSEQ).
    ignore: [Vec<i32>; 3],
    /// Print the errors the job goes on after too (`error_dump`).
    pub dump: bool,
}

impl Default for ErrorPolicy {
    fn default() -> Self {
        ErrorPolicy {
            continue_kinds: 0,
            ignore: [Vec::new(), Vec::new(), Vec::new()],
            dump: true,
        }
    }
}

/// fio's names of errors (`str2error`): EPERM to ERANGE, 1 to 34.
const NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

impl ErrorPolicy {
    /// `continue_on_error=none|read|write|io|verify|all|0|1`.
    pub fn set_continue(&mut self, word: &str) {
        self.continue_kinds = match word {
            "read" => 1,
            "write" => 2,
            "io" => 3,
            "verify" => 4,
            "all" | "1" => u32::MAX,
            _ => 0,
        };
    }

    /// `ignore_error=READ,WRITE,VERIFY`: each a `:`-separated list of errors
    /// by fio's name (EPERM to ERANGE) or number; a kind with a list is one
    /// the job goes on after.
    pub fn set_ignore(&mut self, text: &str) -> Result<(), ValueError> {
        let kinds: Vec<&str> = text.split(',').collect();
        if kinds.len() > 3 {
            return Err(ValueError::Invalid(format!(
                "ignore_error '{text}': at most three lists (read,write,verify)"
            )));
        }
        for (kind, list) in kinds.iter().enumerate() {
            let mut errors = Vec::new();
            for name in list.split(':').map(str::trim) {
                if name.is_empty() {
                    break;
                }
                let errno = if name.starts_with('E') {
                    NAMES.iter().position(|n| *n == name).map(|i| i as i32 + 1)
                } else {
                    name.parse::<i32>()
                        .ok()
                        .and_then(i32::checked_abs)
                        .filter(|&e| e != 0)
                };
                errors.push(errno.ok_or_else(|| {
                    ValueError::Invalid(format!(
                        "ignore_error: unknown error {name} (fio names EPERM to ERANGE; give others by number)"
                    ))
                })?);
            }
            if !errors.is_empty() {
                self.continue_kinds |= 1 << kind;
                self.ignore[kind] = errors;
            }
        }
        Ok(())
    }

    /// fio's `td_non_fatal_error`: whether a job goes on after `errno` from `op`.
    pub fn tolerates(&self, op: Op, errno: i32) -> bool {
        let kind = ErrorKind::of(op, errno);
        if self.continue_kinds & (1 << kind as u32) == 0 {
            return false;
        }
        let list = &self.ignore[kind as usize];
        if list.is_empty() {
            NON_FATAL.contains(&errno)
        } else {
            list.contains(&errno)
        }
    }

    /// Whether a job goes on after a block that fails verification.
    pub fn tolerates_bad_blocks(&self) -> bool {
        self.tolerates(Op::Read, NON_FATAL[1])
    }

    /// Whether the job counts the errors it goes on after (fio's
    /// `total_err` and `first_error` in the report).
    pub fn is_on(&self) -> bool {
        self.continue_kinds != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_default_a_job_goes_on_after_eio_and_eilseq_only() {
        let mut policy = ErrorPolicy::default();
        assert!(!policy.tolerates(Op::Read, 5));
        policy.set_continue("io");
        assert!(policy.tolerates(Op::Read, 5));
        assert!(policy.tolerates(Op::Write, 5));
        assert!(
            !policy.tolerates(Op::Write, 28),
            "ENOSPC is fatal unless listed"
        );
        assert!(!policy.tolerates_bad_blocks(), "verify is another kind");
        policy.set_continue("all");
        assert!(policy.tolerates_bad_blocks());
        assert!(!policy.tolerates(Op::Read, 22));
    }

    #[test]
    fn ignore_error_lists_errors_by_kind_and_turns_their_kind_on() {
        let mut policy = ErrorPolicy::default();
        policy.set_ignore("EAGAIN,ENOSPC:122").unwrap();
        assert!(policy.tolerates(Op::Read, 11));
        assert!(
            !policy.tolerates(Op::Read, 5),
            "a list replaces fio's default"
        );
        assert!(policy.tolerates(Op::Write, 28));
        assert!(policy.tolerates(Op::Fsync, 122));
        assert!(!policy.tolerates_bad_blocks());
        let mut writes_only = ErrorPolicy::default();
        writes_only.set_ignore(",ENOSPC").unwrap();
        assert!(writes_only.tolerates(Op::Write, 28));
        assert!(!writes_only.tolerates(Op::Read, 28));
        assert!(ErrorPolicy::default().set_ignore("ENOTSUP").is_err());
        assert!(ErrorPolicy::default().set_ignore("1,2,3,4").is_err());
    }
}
