//! A job's verify settings: what it checks of the data it reads back.

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
    /// `verify_pattern_interval`: the pattern starts again every this many
    /// bytes (0: once per I/O).
    pub pattern_interval: u64,
    /// `verify_write_sequence` when set (see
    /// [`JobOptions::verify_write_sequence`](crate::options::JobOptions::verify_write_sequence)).
    pub write_sequence: Option<bool>,
    /// `verify_header_seed` when set (see
    /// [`JobOptions::verify_header_seed`](crate::options::JobOptions::verify_header_seed)).
    pub header_seed: Option<bool>,
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
            pattern_interval: 0,
            write_sequence: None,
            header_seed: None,
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
}
