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
    /// Whether the job is ahead of its share and must wait; if not, its
    /// next iteration is counted.
    pub fn ahead(&mut self) -> bool {
        let all = self.group.iterations.load(Ordering::Relaxed).max(1) as f64;
        let weights = self.group.weight.load(Ordering::Relaxed).max(1) as f64;
        if self.mine as f64 / all > self.weight as f64 / weights {
            return true;
        }
        self.group.iterations.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        false
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
                h += 1;
            }
            if !light.ahead() {
                l += 1;
            }
        }
        let ratio = h as f64 / l as f64;
        assert!((2.9..3.1).contains(&ratio), "{h}:{l}");
        drop(light);
        // Alone in the group, the heavy job is never ahead.
        assert!((0..100).all(|_| !heavy.ahead()));
    }
}
