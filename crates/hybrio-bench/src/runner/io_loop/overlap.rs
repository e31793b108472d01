//! fio's `serialize_overlap`: a request waits until no request of the job
//! in flight touches any of its bytes, so that overlapping writes (and a
//! read of bytes a write is changing) complete in the order they were made.

use super::state::IoLoop;

impl IoLoop<'_> {
    /// Reaps until no request in flight but `slot`'s own overlaps `length`
    /// bytes at `offset` of file `file`, or the job failed.
    pub(super) fn wait_out_overlaps(
        &mut self,
        slot: usize,
        (file, offset, length): (usize, u64, u64),
        complete_max: usize,
    ) {
        let end = offset.saturating_add(length);
        loop {
            let overlaps = (0..self.slots.len())
                .filter(|&other| other != slot && !self.free.contains(&other))
                .filter_map(|other| self.slots[other].extent)
                .any(|(f, o, l)| f == file && o < end && offset < o.saturating_add(l));
            if !overlaps || self.failure.is_some() {
                return;
            }
            self.commit();
            self.reap(1, complete_max);
        }
    }
}
