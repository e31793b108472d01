//! `read_iolog`: the loop takes its I/Os from the replay, each when it is
//! due (fio's `iolog_delay`: completions are reaped while it waits, and
//! nothing in flight is drained first).

use std::time::Duration;

use super::state::IoLoop;
use crate::iolog::{Action, What};
use crate::offsets::{Direction, PlannedIo};

/// What the replay has the loop issue next.
pub(super) enum Replayed {
    /// A read, write or trim.
    Io(PlannedIo),
    /// A sync of the job's file (index), data only or not.
    Sync(usize, bool),
    /// Nothing now: the replay is done, or the job is to stop.
    Nothing,
}

impl IoLoop<'_> {
    /// The replay's next I/O, once it is due; steps without one (a file
    /// opened or closed, version 2's `wait`) are waited out on the way.
    pub(super) fn next_replayed(&mut self, deadline: Option<u64>) -> Replayed {
        loop {
            let Some(cursor) = self.job.replay.as_mut() else {
                return Replayed::Nothing;
            };
            let Some(step) = cursor.take() else {
                return Replayed::Nothing;
            };
            if step.delay_us > 0 {
                let now = self.clock.now();
                if let Some(due) = cursor.due(step.delay_us, now) {
                    self.replay_wait(due, deadline);
                    let waited = self.clock.now().saturating_sub(now);
                    if let Some(cursor) = self.job.replay.as_mut() {
                        cursor.waited(step.delay_us, waited);
                    }
                }
            }
            if self.failure.is_some() || self.stopping() || deadline.is_some_and(|d| self.now >= d)
            {
                return Replayed::Nothing;
            }
            match step.what {
                What::FileAction => {
                    let now = self.clock.now();
                    if let Some(cursor) = self.job.replay.as_mut() {
                        cursor.issued(now);
                    }
                }
                // fio waits from its own start; hybrio's job clock is
                // the nearest it has.
                What::WaitUntilMs(ms) => {
                    self.replay_wait(ms.saturating_mul(1_000_000), deadline);
                }
                What::Io {
                    action,
                    file,
                    offset,
                    len,
                } => {
                    let now = self.clock.now();
                    if let Some(cursor) = self.job.replay.as_mut() {
                        cursor.issued(now);
                    }
                    let direction = match action {
                        Action::Read => Direction::Read,
                        Action::Write => Direction::Write,
                        Action::Trim => Direction::Trim,
                        Action::Sync => return Replayed::Sync(file, false),
                        Action::Datasync => return Replayed::Sync(file, true),
                    };
                    return Replayed::Io(PlannedIo {
                        direction,
                        file,
                        offset,
                        len,
                    });
                }
            }
        }
    }

    /// Waits until `due` (ns on the job's clock, or the deadline), reaping
    /// what completes meanwhile.
    #[cold]
    fn replay_wait(&mut self, due: u64, deadline: Option<u64>) {
        let until = deadline.map_or(due, |d| d.min(due));
        let max = self.slots.len();
        loop {
            if self.free.len() < self.slots.len() {
                self.commit();
                self.reap(0, max);
            }
            let now = self.clock.now();
            self.now = now;
            if now >= until || self.stopping() || self.failure.is_some() {
                return;
            }
            if now >= self.next_publish {
                self.publish(deadline);
            }
            // Short sleeps while requests are out, so that their
            // completions are taken close to when they come.
            let nap = if self.free.len() < self.slots.len() {
                50_000
            } else {
                100_000_000
            };
            std::thread::sleep(Duration::from_nanos((until - now).min(nap)));
        }
    }
}
