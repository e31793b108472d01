//! Where a job's thread runs and how eagerly: fio's `cpus_allowed`,
//! `cpumask`, `cpus_allowed_policy`, `nice`, `prio`, `prioclass`, `priohint`,
//! `numa_cpu_nodes`, `numa_mem_policy`.

use hybrio::placement::MemoryPolicy;

/// A job's placement, as given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    /// CPUs the job may run on (`cpus_allowed`, `cpumask`, or the CPUs of
    /// `numa_cpu_nodes`).
    pub cpus: Option<Vec<usize>>,
    /// `cpus_allowed_policy=split`: each clone gets one of them.
    pub split: bool,
    /// `nice`.
    pub nice: Option<i32>,
    /// `prioclass` and `prio`: the I/O scheduling class (1-3) and level (0-7).
    pub io_class: Option<u32>,
    /// See `io_class`.
    pub io_level: Option<u32>,
    /// `priohint`: the I/O priority hint (0-1023), e.g. the index of a
    /// command duration limit.
    pub io_hint: Option<u32>,
    /// `numa_mem_policy`.
    pub memory: Option<MemoryPolicy>,
}

impl Placement {
    /// The job's I/O priority as fio's `td->ioprio`, when `prioclass`,
    /// `prio` or `priohint` is given: the class (best effort if not given),
    /// level and hint (0 if not given), which every read and write of the
    /// job carries unless `cmdprio_*` picks another.
    pub fn ioprio(&self) -> Option<(u32, u32, u32)> {
        if self.io_class.is_none() && self.io_level.is_none() && self.io_hint.is_none() {
            return None;
        }
        Some((
            self.io_class.unwrap_or(2),
            self.io_level.unwrap_or(0),
            self.io_hint.unwrap_or(0),
        ))
    }
}
