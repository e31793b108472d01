//! Verify's read-back in the loop: the blocks a `verify_only` job would
//! write, and reading blocks back to check them.

use std::collections::VecDeque;

use hybrio::request::Request;

use super::state::IoLoop;
use super::verify::ToCheck;
use crate::offsets::Direction;
use crate::runner::errno::error_errno;
use crate::verify::Expected;

impl IoLoop<'_> {
    /// `verify_only`: the blocks the job would write, to be read back and
    /// checked against their own headers (what an earlier run wrote).
    /// In the order of the writes (a saved state's window counts in it);
    /// a block written twice is read once. `regenerate`: what each block
    /// must carry is regenerated as fio does for `verify_only` (the job's
    /// generator then has not served the writes); else it is taken from
    /// the headers.
    pub(super) fn planned_writes(&mut self, regenerate: bool) -> VecDeque<ToCheck> {
        let mut seen = std::collections::HashMap::new();
        let mut blocks: VecDeque<ToCheck> = VecDeque::new();
        let (mut planned, mut in_pass, mut writes) = (0, 0, 0);
        while planned < self.job.total_bytes {
            if in_pass >= self.job.pass_bytes {
                self.job.plan.restart();
                in_pass = 0;
            }
            let mut io = self.job.plan.next_io();
            // The pass's last I/O is cut as the workload cuts it.
            let left = self.job.pass_bytes - in_pass;
            let unit = self.job.plan.unit(io.direction);
            if io.len > left && left >= unit {
                io.len = left - left % unit;
            }
            planned += io.len;
            in_pass += io.len;
            if io.direction != Direction::Write {
                continue;
            }
            let expected = match self.verify.as_mut() {
                Some(verify) if regenerate => verify.regenerated(Some(writes)),
                _ => Expected::default(),
            };
            writes += 1;
            // Written twice, a block holds the later write.
            match seen.entry((io.file, io.offset, io.len)) {
                std::collections::hash_map::Entry::Occupied(at) => {
                    blocks[*at.get()].expected = expected;
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(blocks.len());
                    blocks.push_back(ToCheck {
                        file: io.file,
                        offset: io.offset,
                        len: io.len,
                        expected,
                    });
                }
            }
        }
        blocks
    }

    /// Reads back `blocks` at the job's depth, each checked as it completes.
    pub(super) fn read_back(&mut self, mut blocks: VecDeque<ToCheck>) {
        let complete_max = self.job.options.batch_complete_max() as usize;
        let batch_submit = self.job.options.batch_submit() as usize;
        loop {
            if self.failure.is_some() || self.stopping() {
                if let Some((slot, request)) = self.refused.take() {
                    // A trim's or a sync's slot kept its buffer.
                    if request.op.moves_data() {
                        self.slots[slot].buf = Some(request.buf);
                    }
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
            if self.verify.as_mut().is_some_and(|v| v.stops_before(&block)) {
                break;
            }
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
            if self.job.files[block.file].0 == crate::runner::files::NOT_OPEN {
                // openfiles: a file closed for the pass opens to be checked,
                // and closes again after the check.
                if let Err(error) = self.open_files(&[block.file]) {
                    self.slots[slot].buf = Some(buf);
                    self.free.push(slot);
                    self.fail(error_errno(&error), error.to_string());
                    continue;
                }
                self.to_close.push(block.file);
            }
            let handle = self.job.files[block.file].0;
            if self.job.iolog.is_some() {
                // fio logs its verify reads as the job's other reads.
                self.log_io(
                    block.file,
                    crate::offsets::Direction::Read,
                    block.offset,
                    block.len,
                );
            }
            let request = Request::read(handle, block.offset, buf, slot as u64);
            self.offer(slot, request, batch_submit, 1, complete_max);
        }
        self.drain();
        if let Err(error) = self.close_files() {
            self.fail(error_errno(&error), error.to_string());
        }
    }
}
