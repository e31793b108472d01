//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_bssplit`): which
//! read or write goes with which I/O priority, drawn as fio's cmdprio draws
//! it (its `prio_state` generator, one draw per I/O that may get one); the
//! others carry the job's (`prioclass`, `prio`, `priohint`), as fio's.

use crate::fio_rand::{FioRand, PRIORITY_SEED, job_seeds};
use crate::options::{BlockPriorities, JobOptions, ioprio_value};

/// A job's priorities and the draws that pick them.
#[derive(Debug)]
pub(super) struct Priorities {
    draws: FioRand,
    percent: [u32; 2],
    value: [u16; 2],
    split: [Vec<BlockPriorities>; 2],
    /// The priority of the other I/Os: the job's (`prioclass`, `prio`,
    /// `priohint`), or 0 for the thread's.
    default: u16,
}

impl Priorities {
    /// The job's, if some of its I/Os get a priority of their own or the
    /// job has one: fio's io_uring sends the job's with each request, as
    /// io_uring's workers do not inherit the thread's, and logs it.
    pub(super) fn new(options: &JobOptions, job_number: u64) -> Option<Priorities> {
        let c = &options.cmdprio;
        let job = options.placement.ioprio();
        if !c.is_set() && job.is_none() {
            return None;
        }
        let seeds = job_seeds(options.randseed, job_number);
        let default = job.map_or(0, |(class, level, hint)| ioprio_value(class, level, hint));
        Some(Priorities {
            draws: FioRand::new(seeds[PRIORITY_SEED], false),
            percent: c.percent,
            value: [0, 1].map(|d| ioprio_value(c.class[d], c.level[d], c.hint[d])),
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
        let rt = ioprio_value(1, 0, 0);
        let high = (0..1000).filter(|_| p.choose(0, 4096) == rt).count();
        assert!((150..250).contains(&high), "{high} of 1000");
        assert!(
            (0..100).all(|_| p.choose(1, 4096) == 0),
            "writes keep the thread's"
        );
    }

    #[test]
    fn hints_sit_between_the_class_and_the_level() {
        // fio's ioprio_value(): class << 13 | hint << 3 | level.
        assert_eq!(ioprio_value(1, 3, 5), 0x2000 | 5 << 3 | 3);
        assert_eq!(ioprio_value(3, 7, 1023), 0x6000 | 0x1ff8 | 7);
        let mut options = JobOptions::default();
        options.cmdprio.percent = [100, 0];
        options.cmdprio.hint = [7, 0];
        options.placement.io_hint = Some(2);
        let mut p = Priorities::new(&options, 1).unwrap();
        assert_eq!(p.choose(0, 4096), ioprio_value(1, 0, 7));
        // The others carry the job's: best effort, level 0, its hint.
        assert_eq!(p.choose(1, 4096), ioprio_value(2, 0, 2));
        options.cmdprio.bssplit = Some("4k/100/2/1/9,4k/100".into());
        options.cmdprio.percent = [0, 0];
        let mut p = Priorities::new(&options, 1).unwrap();
        assert_eq!(p.choose(0, 4096), ioprio_value(2, 1, 9));
        assert_eq!(p.choose(1, 4096), ioprio_value(1, 0, 0));
        options.cmdprio.bssplit = Some("4k/100/2/1/1024".into());
        assert!(options.cmdprio.split().is_err());
    }

    #[test]
    fn a_job_priority_alone_goes_with_every_io() {
        let mut options = JobOptions::default();
        assert!(Priorities::new(&options, 1).is_none());
        options.placement.io_hint = Some(3);
        let mut p = Priorities::new(&options, 1).unwrap();
        assert_eq!(p.choose(0, 4096), 0x4000 | 3 << 3);
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
        let (rt, idle) = (
            counts[&ioprio_value(1, 1, 0)],
            counts[&ioprio_value(3, 2, 0)],
        );
        assert_eq!(rt + idle, 1000, "{counts:?}");
        assert!((180..320).contains(&rt), "{counts:?}");
        assert_eq!(p.choose(0, 1 << 20), 0);
        assert_eq!(p.choose(1, 1 << 20), 0);
    }
}
