//! A run of sequential requests, which the caching choice follows for a
//! file's writes and the readahead helper for its reads: apart from both,
//! as the caching choice also sizes the readahead window.

/// A run of sequential requests, a file's writes or its reads: from `start`
/// to `end`, its latest request at `last`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Run {
    start: u64,
    end: u64,
    last: u64,
}

impl Run {
    /// Takes a request of `len` bytes at `offset`: whether it continues the
    /// run (from the latest request to the run's end, give or take `slack`
    /// bytes: requests in flight together may be offered out of order, and
    /// the same one may be offered twice). One elsewhere starts a new run.
    #[inline]
    pub(super) fn take(&mut self, offset: u64, len: u64, slack: u64) -> bool {
        let continues =
            offset >= self.last.saturating_sub(slack) && offset <= self.end.saturating_add(slack);
        if !continues {
            self.start = offset;
            self.end = offset;
        }
        self.last = offset;
        self.end = self.end.max(offset.saturating_add(len));
        continues
    }

    /// Bytes from the run's start to its end.
    pub(super) fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Where the run ends.
    pub(super) fn end(&self) -> u64 {
        self.end
    }

    pub(super) fn holds(&self, offset: u64) -> bool {
        (self.start..self.end).contains(&offset)
    }
}
