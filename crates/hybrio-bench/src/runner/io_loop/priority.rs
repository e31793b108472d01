//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_bssplit`): which
//! read or write goes with which I/O priority, drawn as fio's cmdprio draws
//! it (its `prio_state` generator, one draw per I/O that may get one).

use crate::fio_rand::{FioRand, PRIORITY_SEED, job_seeds};
use crate::options::{BlockPriorities, JobOptions, ioprio_value};

/// A job's priorities and the draws that pick them.
#[derive(Debug)]
pub(super) struct Priorities {
    draws: FioRand,
    percent: [u32; 2],
    value: [u16; 2],
    split: [Vec<BlockPriorities>; 2],
    /// The priority of the other I/Os: the job's (`prioclass`, `prio`), or
    /// 0 for the thread's.
    default: u16,
}

impl Priorities {
    /// The job's, if some of its I/Os get a priority of their own.
    pub(super) fn new(options: &JobOptions, job_number: u64) -> Option<Priorities> {
        let c = &options.cmdprio;
        if !c.is_set() {
            return None;
        }
        let seeds = job_seeds(options.randseed, job_number);
        let placement = &options.placement;
        let default = match placement.io_class {
            Some(class) => ioprio_value(class, placement.io_level.unwrap_or(4)),
            None => 0,
        };
        Some(Priorities {
            draws: FioRand::new(seeds[PRIORITY_SEED], false),
            percent: c.percent,
            value: [0, 1].map(|d| ioprio_value(c.class[d], c.level[d])),
            // Checked when the job was read.
            split: c.split().unwrap_or_default(),
            default,
        })
    }

    /// The priority of a read (`dir` 0) or write (1) of `len` bytes.
    pub(super) fn choose(&mut self, dir: usize, len: u64) -> u16 {
        let block = self.split[dir].iter().find(|b| b.bs == len);
        let share = match block {
            Some(block) => block.shares.iter().map(|s| s.0).sum(),
            None if self.split[dir].is_empty() => self.percent[dir],
            None => 0,
        };
        if share == 0 {
            return self.default;
        }
        let draw = self.draws.next_between(0, 99) as u32;
        if draw >= share {
            return self.default;
        }
        let Some(block) = block else {
            return self.value[dir];
        };
        let mut upto = 0;
        for &(percent, prio) in &block.shares {
            upto += percent;
            if draw < upto {
                return prio;
            }
        }
        self.default
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_the_ios_gets_the_priority() {
        let mut options = JobOptions::default();
        options.cmdprio.percent = [20, 0];
        options.cmdprio.class = [1, 1];
        let mut p = Priorities::new(&options, 1).unwrap();
        let rt = ioprio_value(1, 0);
        let high = (0..1000).filter(|_| p.choose(0, 4096) == rt).count();
        assert!((150..250).contains(&high), "{high} of 1000");
        assert!(
            (0..100).all(|_| p.choose(1, 4096) == 0),
            "writes keep the thread's"
        );
    }

    #[test]
    fn bssplit_gives_each_size_its_priorities() {
        let mut options = JobOptions::default();
        options.cmdprio.bssplit = Some("64k/25/1/1:64k/75/3/2:1024k/0,1024k/0".into());
        let mut p = Priorities::new(&options, 1).unwrap();
        let mut counts = std::collections::HashMap::new();
        for _ in 0..1000 {
            *counts.entry(p.choose(0, 65536)).or_insert(0) += 1;
        }
        let (rt, idle) = (counts[&ioprio_value(1, 1)], counts[&ioprio_value(3, 2)]);
        assert_eq!(rt + idle, 1000, "{counts:?}");
        assert!((180..320).contains(&rt), "{counts:?}");
        assert_eq!(p.choose(0, 1 << 20), 0);
        assert_eq!(p.choose(1, 1 << 20), 0);
    }
}
