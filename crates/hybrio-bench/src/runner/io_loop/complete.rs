//! A completion's way through the job: its figures, its logs, its errors.

use hybrio::request::{Completion, Op, Request};

use super::state::IoLoop;
use crate::net::Verdict;
use crate::outcome::IoFailure;
use crate::stats::DataDir;

impl IoLoop<'_> {
    #[inline(always)]
    pub(super) fn finish(
        &mut self,
        completion: &mut Completion,
        slat_ns: Option<u64>,
        clat_ns: u64,
    ) {
        let slot = completion.user_data as usize;
        let op = completion.op;
        let wanted = if op.moves_data() {
            completion.buf.len() as u64
        } else {
            completion.span
        };
        // A read of a file that comes back short has met its end (the engine
        // resends the rest until nothing more comes): the file is shorter
        // than the job (truncated while it ran). fio fails it with EIO.
        let ended_early =
            op == Op::Read && completion.result >= 0 && (completion.result as u64) < wanted;
        let result = if ended_early { -5 } else { completion.result };
        // A ping-pong's I/O is its job's direction, whichever half ends it.
        let mut dir = match op {
            Op::Read | Op::Recv | Op::AllocateKeepSize => DataDir::Read,
            Op::Trim => DataDir::Trim,
            _ => DataDir::Write,
        };
        if op.is_socket()
            && let Some(session) = self.job.session.as_mut()
        {
            let second_half = std::mem::take(&mut self.slots[slot].second_half);
            let received = (op == Op::Recv && result >= 0)
                .then(|| &completion.buf.as_slice()[..result as usize]);
            match session.settle(result, received, !second_half) {
                Verdict::Ended => {
                    // Not an I/O: it was never one of the job's.
                    self.submitted -= 1;
                    self.slots[slot].buf = Some(completion.take_buf());
                    self.free.push(slot);
                    return;
                }
                Verdict::FirstHalf => {
                    self.submitted -= 1;
                    self.slots[slot].second_half = true;
                    let buf = completion.take_buf();
                    // The same bytes come back (a receiver sends its whole
                    // buffer back, as fio's does).
                    let request = if op == Op::Send {
                        let from = self.job.reply_handle.unwrap_or(completion.file);
                        Request::recv(from, buf, slot as u64)
                    } else {
                        Request::send(completion.file, buf, slot as u64)
                    };
                    self.follow_ups.push((slot, request));
                    return;
                }
                Verdict::Io => {
                    if second_half {
                        dir = if op == Op::Recv {
                            DataDir::Write
                        } else {
                            DataDir::Read
                        };
                    }
                    // Lost datagrams count in the job's direction (a ping-pong
                    // sender's are the replies it never got), as fio counts
                    // them, and as they stand now: status reports show them.
                    if op == Op::Recv {
                        let lost = session.datagrams_lost().saturating_sub(self.lost_before);
                        self.stats.set_dropped(dir, lost);
                    }
                    // A receiver's size counts the bytes it received, not
                    // those it asked for (a stream's receive takes what
                    // has come).
                    if op == Op::Recv && result >= 0 && (result as u64) < wanted {
                        let short = wanted - result as u64;
                        self.issued_bytes = self.issued_bytes.saturating_sub(short);
                        self.pass_issued = self.pass_issued.saturating_sub(short);
                    }
                }
            }
        }
        // fill_device: a full device is what it waited for. The job ends,
        // not failed.
        let device_full =
            result < 0 && self.job.options.fill_device && matches!(-result as i32, ENOSPC | EDQUOT);
        if result < 0 && !device_full {
            self.failed += 1;
            if self.first_error == 0 {
                self.first_error = -result as i32;
            }
        } else {
            self.completed += 1;
        }
        if device_full {
            self.device_full = true;
        } else if result < 0 && self.job.options.errors.tolerates(op, -result as i32) {
            // Counted (failed, first_error), and the job goes on, as fio's
            // continue_on_error; printed as fio prints it unless error_dump=0.
            if self.job.options.errors.dump {
                let path = self.path_of(completion.file);
                let error = std::io::Error::from_raw_os_error(-result as i32).to_string();
                let error = error.split(" (os error").next().unwrap_or_default();
                eprintln!(
                    "fio: io_u error on file {path}: {error}: {} offset={}, buflen={wanted}",
                    op.name(),
                    completion.offset
                );
            }
        } else if result < 0 {
            let path = self.path_of(completion.file);
            let error = std::io::Error::from_raw_os_error(-result as i32);
            let place = if op.is_socket() {
                format!("on {path}")
            } else {
                format!("at offset {} of {path}", completion.offset)
            };
            let message = if ended_early {
                format!(
                    "{} of {} bytes {place}: the file ends {} bytes into it (shorter than the job: truncated while it ran?)",
                    op.name(),
                    wanted,
                    completion.result
                )
            } else {
                format!("{} of {} bytes {place}: {error}", op.name(), wanted)
            };
            self.fail(-result as i32, message);
        } else {
            // A request on a file's space moves no data: it counts the
            // bytes it covers (a truncation, the block it stands for).
            let bytes = if op.changes_space() {
                completion.span
            } else {
                result as u64
            };
            match op {
                Op::Fsync | Op::Fdatasync => self.stats.record_sync(slat_ns.unwrap_or(0) + clat_ns),
                _ => {
                    self.stats.record_io(
                        dir,
                        bytes,
                        // A receive that took less than its buffer is short
                        // in fio's report too (though whole: it is not sent again).
                        bytes < wanted,
                        slat_ns,
                        clat_ns,
                    );
                    if let Some(logs) = &mut self.logs
                        && self.now >= self.log_from
                        && let Err(error) = logs.record(
                            self.now,
                            &crate::logs::LoggedIo {
                                dir,
                                bytes,
                                offset: completion.offset,
                                slat_ns,
                                clat_ns,
                                ioprio: self.slots[slot].ioprio,
                            },
                        )
                    {
                        self.logs = None;
                        self.fail(error.source.raw_os_error().unwrap_or(5), error.to_string());
                    }
                }
            }
        }
        if let Some(target) = self.latency_target.as_mut()
            && result >= 0
            && matches!(op, Op::Read | Op::Write)
        {
            let latency = slat_ns.unwrap_or(0) + clat_ns;
            match target.completed(latency, self.now, self.completed) {
                Ok(super::latency_target::Verdict::Quiesce) => self.latency_quiesce = true,
                Ok(_) => {}
                Err(()) => {
                    let message = format!(
                        "latency of {latency} nsec exceeds specified max ({} nsec): {} {} {} {wanted}",
                        target.target_ns(),
                        self.path_of(completion.file),
                        op.name(),
                        completion.offset
                    );
                    self.fail(ETIMEDOUT, message);
                }
            }
        }
        if let Some(expected) = self.slots[slot].verify.take()
            && result >= 0
        {
            self.verify_completion(completion, expected);
        }
        // A trim's or a sync's slot kept its buffer.
        if op.moves_data() {
            self.slots[slot].buf = Some(completion.take_buf());
        }
        self.free.push(slot);
    }

    /// The path of the job's file (or socket) `handle`, for a message.
    fn path_of(&self, handle: hybrio::file::FileHandle) -> String {
        self.job
            .files
            .iter()
            .find(|(h, _)| *h == handle)
            .map(|(_, p)| p.display().to_string())
            .unwrap_or_default()
    }

    /// A write's blocks are remembered for the read-back; a read's are
    /// checked, and a bad one ends the job (fio's EILSEQ) unless
    /// `continue_on_error` takes bad blocks.
    fn verify_completion(
        &mut self,
        completion: &mut Completion,
        expected: crate::verify::Expected,
    ) {
        let Some(state) = self.verify.as_mut() else {
            return;
        };
        let Some(file) = self
            .job
            .files
            .iter()
            .position(|(h, _)| *h == completion.file)
        else {
            return;
        };
        let buf = &mut completion.buf;
        let done = (completion.result as usize).min(buf.len());
        match completion.op {
            Op::Write if done == buf.len() => {
                state.record(file, completion.offset, done as u64, expected);
            }
            Op::Read => {
                let path = &self.job.files[file].1;
                let bytes = &mut buf.as_mut_slice()[..done];
                if let Some(first) = state.check(bytes, completion.offset, path, expected)
                    && !self.job.options.errors.tolerates_bad_blocks()
                {
                    self.fail(super::verify::EILSEQ, first);
                }
            }
            _ => {}
        }
    }

    pub(in crate::runner) fn fail(&mut self, errno: i32, message: String) {
        if self.failure.is_none() {
            self.failure = Some(IoFailure { errno, message });
        }
    }
}

/// What a job fails with when latency_target cannot be met at depth 1.
const ETIMEDOUT: i32 = 110;

/// Out of space, and out of quota: what `fill_device` writes until.
const ENOSPC: i32 = 28;
const EDQUOT: i32 = 122;
