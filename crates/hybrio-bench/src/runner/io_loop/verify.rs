//! fio's verify in the loop: writes carry fio's headers and checksums, what
//! was written is remembered (fio's `io_hist`), read back once the writes
//! are done (`do_verify`) and checked; `verify_only` reads back what the
//! same job would write, without writing.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;
use std::time::SystemTime;

use crate::options::JobOptions;
use crate::outcome::VerifyCounts;
use crate::verify::{
    Checked, Expected, Offload, VERIFY_SEED, Verifier, VerifyConfig, VerifyKind, VerifyStateFile,
    Window, job_seeds,
};

/// How often a writing job saves its verify state while it runs (ns): a run
/// killed outright can then be checked up to what completed a moment before.
const SAVE_STATE_EVERY_NS: u64 = 1_000_000_000;

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
    pub(super) file: usize,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) expected: Expected,
}

/// A job's verify state.
#[derive(Debug)]
pub(in crate::runner) struct VerifyState {
    verifier: Verifier,
    /// Remember what was written, to read it back.
    do_verify: bool,
    /// The engine moves no data (`null`): as fio, nothing is checked.
    fake_io: bool,
    /// Reads of the workload are checked too (a job that only reads: what
    /// it reads was written by an earlier run, as fio checks it).
    check_workload_reads: bool,
    /// `verify_backlog` and its batch (0: none).
    backlog: usize,
    backlog_batch: usize,
    /// Writes issued so far: the next one's `numberio`.
    writes_issued: u64,
    /// What was written, by file and offset, the latest write of a range
    /// replacing those it overlaps.
    written: BTreeMap<(usize, u64), Written>,
    /// The job's name and index (from 0), its depth and file count: what
    /// its state file says of it.
    name: String,
    index: u64,
    depth: usize,
    /// Per file, the offsets of its last `per_file` completed writes,
    /// newest last (state versions 3 and 4).
    recent: Vec<VecDeque<u64>>,
    per_file: usize,
    /// The state file's version (`fio_compat`'s), and the sequence numbers
    /// of the writes issued and not completed (version 5).
    state_version: u64,
    in_flight: BTreeSet<u64>,
    /// Save the state (`verify_state_save`), and when it was last saved (ns).
    save_state: bool,
    saved_at: u64,
    /// `verify_async`'s checkers, or why they could not start.
    offload: Option<Offload>,
    pub(super) offload_error: Option<String>,
    /// `experimental_verify`: the read-back replays the writes.
    pub(super) replay: bool,
    /// The state a `verify_state_load` run reads back up to, and its reads so far.
    loaded: Option<VerifyStateFile>,
    reads_back: u64,
    /// Blocks (verify intervals) checked, and those that failed.
    pub(super) blocks: u64,
    pub(super) bad_blocks: u64,
}

impl VerifyState {
    /// The job's verify state, or `None` when it does not verify.
    pub(super) fn new(options: &JobOptions, job_number: u64, files: usize) -> Option<VerifyState> {
        let kind = options.verify.kind?;
        let seeds = job_seeds(options.randseed, job_number);
        let config = VerifyConfig {
            kind,
            interval: options.verify_interval(),
            header_offset: options.verify.header_offset as usize,
            pattern: options.verify.pattern.clone(),
            pattern_interval: options.verify.pattern_interval,
            fatal: options.verify.fatal,
            dump: options.verify.dump,
            fio: options.fio_compat,
            header_seed: options.verify_header_seed(),
            write_sequence: options.verify_write_sequence(),
        };
        let state_version = options.fio_compat.verify_state_version();
        // fio 3.39 and 3.40 keep twice the completions with an async
        // engine, whose writes may complete out of order.
        let per_file = match (state_version, options.sync_engine()) {
            (4, false) => options.iodepth as usize * 2,
            _ => options.iodepth as usize,
        };
        let verifier = Verifier::new(config, job_number as u16, seeds[VERIFY_SEED], false);
        let fake_io = options.ioengine == "null";
        let threads = options.verify.async_threads as usize;
        let (offload, offload_error) = if threads > 0 && !fake_io {
            match Offload::new(&verifier, threads) {
                Ok(offload) => (Some(offload), None),
                Err(e) => (
                    None,
                    Some(format!(
                        "verify_async: cannot start {threads} checker threads: {e}"
                    )),
                ),
            }
        } else {
            (None, None)
        };
        let do_verify = options.verify.do_verify && options.rw.writes() && kind != VerifyKind::Null;
        let replay = do_verify && options.verify.experimental && !options.time_based;
        Some(VerifyState {
            verifier,
            offload,
            offload_error,
            replay,
            // As fio: without do_verify nothing is read back, backlog or not;
            // replaying the writes needs nothing remembered.
            do_verify: do_verify && !replay,
            fake_io,
            backlog: options.verify.backlog as usize,
            backlog_batch: match options.verify.backlog_batch {
                0 => options.verify.backlog as usize,
                batch => batch as usize,
            },
            check_workload_reads: !options.rw.writes(),
            writes_issued: 0,
            written: BTreeMap::new(),
            name: options.name.clone(),
            index: job_number.saturating_sub(1),
            depth: options.iodepth as usize,
            per_file,
            recent: vec![VecDeque::new(); files],
            save_state: options.verify.state_save && options.rw.writes() && !options.verify.only,
            saved_at: 0,
            loaded: None,
            reads_back: 0,
            state_version,
            in_flight: BTreeSet::new(),
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
        let numberio = self.writes_issued;
        self.writes_issued += 1;
        let seed = self.verifier.fill(buf, offset, numberio, SystemTime::now());
        self.in_flight.insert(numberio);
        Expected {
            rand_seed: Some(seed),
            numberio: Some(numberio),
        }
    }

    /// What a block this run did not write must carry, as fio expects it:
    /// the seed the job's generator gives next (checked only where
    /// `verify_header_seed` is set, since the block is as it was written by
    /// a run alike), and `numberio`, the number of the write a `verify_only`
    /// run replays (checked only where `verify_write_sequence` is set).
    pub(super) fn regenerated(&mut self, numberio: Option<u64>) -> Expected {
        Expected {
            rand_seed: Some(self.verifier.next_seed()),
            numberio,
        }
    }

    /// Remembers a completed write for the read-back.
    pub(super) fn record(&mut self, file: usize, offset: u64, len: u64, expected: Expected) {
        if let Some(numberio) = expected.numberio {
            self.in_flight.remove(&numberio);
        }
        if let Some(recent) = self.recent.get_mut(file) {
            if recent.len() == self.per_file {
                recent.pop_front();
            }
            recent.push_back(offset);
        }
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

    /// The state file's path: in the working directory, as fio's.
    fn state_path(&self) -> std::path::PathBuf {
        VerifyStateFile::path(Path::new("."), &self.name, self.index)
    }

    /// Saves how far the writes got, if the job saves its state.
    pub(super) fn save(&mut self, now: u64) -> Result<(), crate::verify::StateError> {
        if !self.save_state {
            return Ok(());
        }
        self.saved_at = now;
        let window = if self.state_version >= 5 {
            // A write that failed stays in flight: the check stops before
            // it. fio has room for `depth`: the oldest are where it stops.
            Window::InFlight(self.in_flight.iter().take(self.depth).copied().collect())
        } else {
            Window::Completions {
                files: self.recent.len() as u32,
                per_file: self.per_file as u32,
                completions: self
                    .recent
                    .iter()
                    .enumerate()
                    .flat_map(|(file, offsets)| {
                        offsets.iter().rev().map(move |&o| (file as u64, o))
                    })
                    .collect(),
            }
        };
        VerifyStateFile {
            version: self.state_version,
            name: self.name.clone(),
            index: self.index,
            depth: self.depth as u32,
            writes_issued: self.writes_issued,
            window,
        }
        .save(&self.state_path())
    }

    /// Whether the state is due for a save while the job runs.
    pub(super) fn save_due(&self, now: u64) -> bool {
        self.save_state && now.saturating_sub(self.saved_at) >= SAVE_STATE_EVERY_NS
    }

    /// `verify_state_load`: reads the state a writing run saved.
    pub(super) fn load(&mut self) -> Result<(), String> {
        let path = self.state_path();
        let state = VerifyStateFile::load(&path).map_err(|e| match e {
            crate::verify::StateError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                format!(
                    "verify_state_load: no saved state {} (the writing run saves it: verify_state_save=1, the default)",
                    path.display()
                )
            }
            other => format!("verify_state_load: {other}"),
        })?;
        self.loaded = Some(state);
        Ok(())
    }

    /// Whether reading back ends before this block: a loaded state says
    /// its write never completed.
    pub(super) fn stops_before(&mut self, block: &ToCheck) -> bool {
        let Some(state) = &self.loaded else {
            return false;
        };
        let stop = state.stops_before(self.reads_back, block.file as u64, block.offset);
        self.reads_back += 1;
        stop
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
        if let Some(offload) = &mut self.offload {
            offload.submit(buf, offset, path.to_path_buf(), expected);
            let ready = offload.ready();
            return ready
                .into_iter()
                .filter_map(|c| self.settle(c))
                .fold(None, |first, line| first.or(Some(line)));
        }
        let checked = self.verifier.check(buf, offset, path, expected);
        self.settle(checked)
    }

    /// Waits for `verify_async`'s checkers; the first failure they found
    /// since last asked, if any.
    pub(super) fn finish_async(&mut self) -> Option<String> {
        let offload = self.offload.as_mut()?;
        let (rest, all_well) = offload.finish();
        self.offload = None;
        let first = rest
            .into_iter()
            .filter_map(|c| self.settle(c))
            .fold(None, |first, line| first.or(Some(line)));
        if !all_well {
            return Some(
                "verify_async: a checker thread failed; blocks it held were not checked".into(),
            );
        }
        first
    }

    /// Counts a check's blocks and prints what failed, as fio prints it.
    /// Returns the first failure's line.
    fn settle(&mut self, checked: Checked) -> Option<String> {
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

    /// The reads that check what is left of what was written, in file and
    /// offset order, once the writes are done.
    pub(super) fn take_read_back(&mut self) -> VecDeque<ToCheck> {
        self.take(usize::MAX)
    }

    /// `verify_backlog`: once that many written blocks wait, the reads that
    /// check a batch of them (the lowest offsets first, as fio's sorted
    /// history gives them).
    pub(super) fn backlog_due(&mut self) -> Option<VecDeque<ToCheck>> {
        (self.backlog > 0 && self.written.len() >= self.backlog)
            .then(|| self.take(self.backlog_batch))
    }

    fn take(&mut self, count: usize) -> VecDeque<ToCheck> {
        let mut taken = VecDeque::new();
        while taken.len() < count
            && let Some(((file, offset), w)) = self.written.pop_first()
        {
            taken.push_back(ToCheck {
                file,
                offset,
                len: w.len,
                expected: w.expected,
            });
        }
        taken
    }
}
