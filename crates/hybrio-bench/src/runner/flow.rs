//! fio's `flow`: jobs of one `flow_id` keep their shares of the group's
//! iterations in proportion to their weights. A job ahead of its share
//! waits (`flow_sleep` microseconds, once what it has in flight completed)
//! instead of issuing, as fio's `flow_threshold_exceeded`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One `flow_id`'s shared counts.
#[derive(Debug)]
struct Group {
    /// Iterations of the group's running jobs, from 1 (fio starts it there).
    iterations: AtomicU64,
    /// The running jobs' weights.
    weight: AtomicU64,
}

/// The run's flow groups.
#[derive(Debug, Default)]
pub struct Flows {
    groups: Mutex<HashMap<u32, Arc<Group>>>,
}

impl Flows {
    /// A job of weight `weight` joins group `id` as it starts.
    pub fn join(&self, id: u32, weight: u32) -> JobFlow {
        let group = match self.groups.lock() {
            Ok(mut groups) => Arc::clone(groups.entry(id).or_insert_with(|| {
                Arc::new(Group {
                    iterations: AtomicU64::new(1),
                    weight: AtomicU64::new(0),
                })
            })),
            Err(_) => Arc::new(Group {
                iterations: AtomicU64::new(1),
                weight: AtomicU64::new(0),
            }),
        };
        group.weight.fetch_add(u64::from(weight), Ordering::Relaxed);
        JobFlow {
            group,
            weight: u64::from(weight),
            mine: 0,
        }
    }
}

/// One job's place in its flow group; it leaves the group when dropped.
#[derive(Debug)]
pub struct JobFlow {
    group: Arc<Group>,
    weight: u64,
    mine: u64,
}

impl JobFlow {
    /// Whether the job is ahead of its share and must wait.
    pub fn ahead(&self) -> bool {
        let all = self.group.iterations.load(Ordering::Relaxed).max(1) as f64;
        let weights = self.group.weight.load(Ordering::Relaxed).max(1) as f64;
        self.mine as f64 / all > self.weight as f64 / weights
    }

    /// Counts an I/O the job issued. fio counts the iteration that passed
    /// [`Self::ahead`], which then waits for its rate, if it has one, and
    /// issues: once per I/O. Counting here keeps a job that waits for its
    /// rate (and looks again) from counting its waits as I/Os.
    pub fn issued(&mut self) {
        self.group.iterations.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
    }
}

impl Drop for JobFlow {
    fn drop(&mut self) {
        self.group
            .iterations
            .fetch_sub(self.mine, Ordering::Relaxed);
        self.group.weight.fetch_sub(self.weight, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_keep_to_their_weights() {
        let flows = Flows::default();
        let (mut heavy, mut light) = (flows.join(0, 3), flows.join(0, 1));
        let (mut h, mut l) = (0, 0);
        for _ in 0..4000 {
            if !heavy.ahead() {
                heavy.issued();
                h += 1;
            }
            if !light.ahead() {
                light.issued();
                l += 1;
            }
        }
        let ratio = h as f64 / l as f64;
        assert!((2.9..3.1).contains(&ratio), "{h}:{l}");
        drop(light);
        // Alone in the group, the heavy job is never ahead.
        assert!((0..100).all(|_| {
            let ahead = heavy.ahead();
            heavy.issued();
            !ahead
        }));
    }

    #[test]
    fn looking_without_issuing_does_not_count() {
        // fio's t0011: a job paced at its rate looks many times per I/O;
        // only its I/Os count toward its share.
        let flows = Flows::default();
        let (mut paced, mut free) = (flows.join(1, 1), flows.join(1, 8));
        let (mut p, mut f) = (0, 0);
        for round in 0..9000 {
            // The paced job may issue once in 10 looks.
            if !paced.ahead() && round % 10 == 0 {
                paced.issued();
                p += 1;
            }
            if !free.ahead() {
                free.issued();
                f += 1;
            }
        }
        let ratio = f as f64 / p as f64;
        assert!((7.8..8.2).contains(&ratio), "{f}:{p}");
    }
}
