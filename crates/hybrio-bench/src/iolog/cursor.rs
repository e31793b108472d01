//! Where a replay is, and when its next step is due: fio's `iolog_delay`,
//! which waits out each step's delay counted from when the I/O before it
//! was issued, and carries an oversleep over to the next delay.

use super::steps::{Replay, Step};

/// A replay under way.
#[derive(Debug)]
pub struct Cursor {
    replay: Replay,
    next: usize,
    /// When the last I/O was issued (ns on the job's clock).
    last_issue: u64,
    /// How much the last wait overslept (microseconds), taken off the next.
    time_offset: u64,
}

impl Cursor {
    /// A replay from its first step.
    pub fn new(replay: Replay) -> Cursor {
        Cursor {
            replay,
            next: 0,
            last_issue: 0,
            time_offset: 0,
        }
    }

    /// The files the replay goes to.
    pub fn files(&self) -> &[std::path::PathBuf] {
        &self.replay.files
    }

    /// Whether every step is taken.
    pub fn done(&self) -> bool {
        self.next >= self.replay.steps.len()
    }

    /// Takes the next step.
    pub fn take(&mut self) -> Option<Step> {
        let step = self.replay.steps.get(self.next).copied()?;
        self.next += 1;
        Some(step)
    }

    /// When a step of `delay_us` is due, `now` ns on the job's clock: `None`
    /// when it is due already (the time since the last issue covers it).
    pub fn due(&mut self, delay_us: u64, now: u64) -> Option<u64> {
        if delay_us < self.time_offset {
            self.time_offset = 0;
            return None;
        }
        let delay = delay_us - self.time_offset;
        let since = now.saturating_sub(self.last_issue) / 1000;
        if delay < since {
            return None;
        }
        Some(now.saturating_add((delay - since).saturating_mul(1000)))
    }

    /// After a wait of `waited_ns` for a step of `delay_us`: as fio, an
    /// oversleep past the whole delay is taken off the next one.
    pub fn waited(&mut self, delay_us: u64, waited_ns: u64) {
        self.time_offset = (waited_ns / 1000).saturating_sub(delay_us);
    }

    /// A step was taken at `now` (ns on the job's clock): the next delay
    /// counts from it.
    pub fn issued(&mut self, now: u64) {
        self.last_issue = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iolog::What;

    fn cursor(delays: &[u64]) -> Cursor {
        Cursor::new(Replay {
            files: vec!["f".into()],
            steps: delays
                .iter()
                .map(|&delay_us| Step {
                    delay_us,
                    what: What::FileAction,
                })
                .collect(),
            depth: None,
        })
    }

    #[test]
    fn a_delay_counts_from_the_last_issue() {
        let mut c = cursor(&[0, 500]);
        assert_eq!(c.take().map(|s| s.delay_us), Some(0));
        c.issued(1_000_000);
        let step = c.take().unwrap();
        // 200 us since the last issue: 300 us are left to wait.
        assert_eq!(c.due(step.delay_us, 1_200_000), Some(1_500_000));
        // 600 us since: due already.
        assert_eq!(c.due(step.delay_us, 1_600_000), None);
        assert!(c.done());
        assert_eq!(c.take(), None);
    }

    #[test]
    fn an_oversleep_is_taken_off_the_next_delay() {
        let mut c = cursor(&[100, 100]);
        c.waited(100, 250_000);
        // 150 us overslept: the next 100 us are covered, and the offset goes.
        assert_eq!(c.due(100, 0), None);
        assert_eq!(c.due(100, 0), Some(100_000));
    }
}
