//! fio's verify in the loop: writes carry fio's headers and checksums, what
//! was written is remembered (fio's `io_hist`), read back once the writes
//! are done (`do_verify`) and checked; `verify_only` reads back what the
//! same job would write, without writing.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::time::SystemTime;

use hybrio::request::Request;

use super::IoLoop;
use crate::offsets::Direction;
use crate::options::JobOptions;
use crate::verify::{Expected, VERIFY_SEED, Verifier, VerifyConfig, VerifyKind, job_seeds};

/// fio's errno for a block that fails verification.
pub(super) const EILSEQ: i32 = 84;

/// One block written and not yet read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Written {
    len: u64,
    /// What the block must carry when read back (`None` for a block this
    /// run did not write: taken from its header, as fio takes it).
    expected: Expected,
}

/// A read to check: where, how much, and what it must carry.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToCheck {
    file: usize,
    offset: u64,
    len: u64,
    expected: Expected,
}

/// A job's verify state.
#[derive(Debug)]
pub(in crate::runner) struct VerifyState {
    verifier: Verifier,
    /// Read back what was written when the writes are done.
    do_verify: bool,
    /// The engine moves no data (`null`): as fio, nothing is checked.
    fake_io: bool,
    /// Reads of the workload are checked too (a job that only reads: what
    /// it reads was written by an earlier run, as fio checks it).
    check_workload_reads: bool,
    /// Writes issued so far: the next one's `numberio`.
    writes_issued: u64,
    /// What was written, by file and offset, the latest write of a range
    /// replacing those it overlaps.
    written: BTreeMap<(usize, u64), Written>,
    /// Blocks (verify intervals) checked, and those that failed.
    pub(super) blocks: u64,
    pub(super) bad_blocks: u64,
}

/// What verify adds to a job's outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyCounts {
    /// Blocks (verify intervals) read back and checked.
    pub blocks: u64,
    /// Those that failed.
    pub bad_blocks: u64,
}

impl VerifyState {
    /// The job's verify state, or `None` when it does not verify.
    pub(super) fn new(options: &JobOptions, job_number: u64) -> Option<VerifyState> {
        let kind = options.verify.kind?;
        let seeds = job_seeds(options.randseed, job_number);
        let config = VerifyConfig {
            kind,
            interval: options.verify_interval(),
            header_offset: options.verify.header_offset as usize,
            pattern: options.verify.pattern.clone(),
            fatal: options.verify.fatal,
            dump: options.verify.dump,
        };
        Some(VerifyState {
            verifier: Verifier::new(config, job_number as u16, seeds[VERIFY_SEED], false),
            do_verify: options.verify.do_verify && options.rw.writes() && kind != VerifyKind::Null,
            fake_io: options.ioengine == "null",
            check_workload_reads: !options.rw.writes(),
            writes_issued: 0,
            written: BTreeMap::new(),
            blocks: 0,
            bad_blocks: 0,
        })
    }

    /// The counts for the job's outcome.
    pub(in crate::runner) fn counts(&self) -> VerifyCounts {
        VerifyCounts {
            blocks: self.blocks,
            bad_blocks: self.bad_blocks,
        }
    }

    /// Fills a buffer about to be written; returns what reading it back must find.
    pub(super) fn fill(&mut self, buf: &mut [u8], offset: u64) -> Expected {
        let numberio = self.writes_issued as u16;
        self.writes_issued += 1;
        let seed = self.verifier.fill(buf, offset, numberio, SystemTime::now());
        Expected {
            rand_seed: Some(seed),
            numberio: Some(numberio),
        }
    }

    /// Remembers a completed write for the read-back.
    pub(super) fn record(&mut self, file: usize, offset: u64, len: u64, expected: Expected) {
        if !self.do_verify {
            return;
        }
        // What this write covers is no longer what older writes left.
        let end = offset + len;
        let overlapping: Vec<(usize, u64)> = self
            .written
            .range((file, 0)..(file, end))
            .filter(|((_, start), w)| start + w.len > offset)
            .map(|(key, _)| *key)
            .collect();
        for key in overlapping {
            self.written.remove(&key);
        }
        self.written
            .insert((file, offset), Written { len, expected });
    }

    /// Whether a workload read is checked.
    pub(super) fn checks_workload_reads(&self) -> bool {
        self.check_workload_reads
    }

    /// Checks a buffer read back; counts its blocks and prints what fails,
    /// as fio prints it. Returns the first failure's line.
    pub(super) fn check(
        &mut self,
        buf: &mut [u8],
        offset: u64,
        path: &Path,
        expected: Expected,
    ) -> Option<String> {
        if self.fake_io {
            return None;
        }
        let checked = self.verifier.check(buf, offset, path, expected);
        self.blocks += checked.blocks;
        self.bad_blocks += checked.mismatches.len() as u64;
        for mismatch in &checked.mismatches {
            eprintln!("{mismatch}");
        }
        for dumped in &checked.dumped {
            eprintln!("       data dumped as {}", dumped.display());
        }
        checked
            .mismatches
            .first()
            .map(|m| m.to_string().lines().next().unwrap_or_default().to_string())
    }

    /// The reads that check what was written, in file and offset order.
    pub(super) fn take_read_back(&mut self) -> VecDeque<ToCheck> {
        if !self.do_verify {
            return VecDeque::new();
        }
        std::mem::take(&mut self.written)
            .into_iter()
            .map(|((file, offset), w)| ToCheck {
                file,
                offset,
                len: w.len,
                expected: w.expected,
            })
            .collect()
    }
}

impl IoLoop<'_> {
    /// `verify_only`: the blocks the job would write, to be read back and
    /// checked against their own headers (what an earlier run wrote).
    pub(super) fn planned_writes(&mut self) -> VecDeque<ToCheck> {
        let mut blocks = BTreeMap::new();
        let mut planned = 0;
        while planned < self.job.total_bytes {
            if planned > 0 && planned % self.job.pass_bytes.max(1) == 0 {
                self.job.plan.restart();
            }
            let io = self.job.plan.next_io();
            planned += io.len;
            if io.direction == Direction::Write {
                blocks.insert((io.file, io.offset), io.len);
            }
        }
        blocks
            .into_iter()
            .map(|((file, offset), len)| ToCheck {
                file,
                offset,
                len,
                expected: Expected::default(),
            })
            .collect()
    }

    /// Reads back `blocks` at the job's depth, each checked as it completes.
    pub(super) fn read_back(&mut self, mut blocks: VecDeque<ToCheck>) {
        let complete_max = self.job.options.batch_complete_max() as usize;
        let batch_submit = self.job.options.batch_submit() as usize;
        loop {
            if self.failure.is_some() || hybrio::interrupt::requested() {
                if let Some((slot, request)) = self.refused.take() {
                    self.slots[slot].buf = request.buf;
                    self.free.push(slot);
                }
                break;
            }
            if let Some((slot, request)) = self.refused.take() {
                self.offer(slot, request, batch_submit, 1, complete_max);
                continue;
            }
            if self.now >= self.next_publish {
                self.publish(None);
            }
            let Some(block) = blocks.pop_front() else {
                break;
            };
            let Some(slot) = self.free.pop() else {
                blocks.push_front(block);
                self.commit();
                self.reap(1, complete_max);
                continue;
            };
            let mut buf = self.slots[slot]
                .buf
                .take()
                .expect("a free slot holds its buffer");
            buf.set_len(block.len as usize);
            self.slots[slot].verify = Some(block.expected);
            let handle = self.job.files[block.file].0;
            let request = Request::read(handle, block.offset, buf, slot as u64);
            self.offer(slot, request, batch_submit, 1, complete_max);
        }
        self.drain();
    }
}
