//! Where a job's thread runs and how eagerly: fio's `cpus_allowed`,
//! `cpumask`, `cpus_allowed_policy`, `nice`, `prio`, `prioclass`,
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
    /// `numa_mem_policy`.
    pub memory: Option<MemoryPolicy>,
}
