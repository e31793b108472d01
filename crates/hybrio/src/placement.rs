//! Where and how eagerly the calling thread runs: the CPUs it may run on,
//! its nice value, its I/O priority and where its memory comes from (NUMA).
//! What a benchmark's `cpus_allowed`, `nice`, `prio`/`prioclass` and
//! `numa_cpu_nodes`/`numa_mem_policy` set, and what a storage engine that
//! pins its threads needs.

use std::io;
use std::path::Path;

use crate::sys::placement as sys;

/// Runs the calling thread on `cpus` only.
pub fn pin_to_cpus(cpus: &[usize]) -> io::Result<()> {
    sys::set_affinity(cpus)
}

/// Sets the calling thread's nice value (-20, most favoured, to 19).
pub fn set_nice(nice: i32) -> io::Result<()> {
    sys::set_nice(nice)
}

/// The kernel's I/O scheduling classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoClass {
    /// Served first (needs CAP_SYS_ADMIN).
    Realtime = 1,
    /// The default.
    BestEffort = 2,
    /// Served when nothing else waits.
    Idle = 3,
}

/// Sets the calling thread's I/O priority: its class and a level from 0
/// (highest) to 7.
pub fn set_io_priority(class: IoClass, level: u32) -> io::Result<()> {
    set_io_priority_hinted(class, level, 0)
}

/// Sets the calling thread's I/O priority with a hint (0, none, to 1023),
/// which devices with command duration limits read as the limit to keep;
/// kernels before 6.5 refuse a hint (EINVAL).
pub fn set_io_priority_hinted(class: IoClass, level: u32, hint: u32) -> io::Result<()> {
    if level > 7 || hint > 1023 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    sys::set_io_priority(class as u32, level, hint)
}

/// A NUMA memory policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryPolicy {
    /// The process's default.
    Default,
    /// Prefer this node.
    Prefer(usize),
    /// Only these nodes.
    Bind(Vec<usize>),
    /// Spread over these nodes.
    Interleave(Vec<usize>),
    /// The node the thread runs on.
    Local,
}

/// Sets the calling thread's memory policy.
pub fn set_memory_policy(policy: &MemoryPolicy) -> io::Result<()> {
    // The kernel's MPOL_* values.
    let (mode, nodes): (i32, &[usize]) = match policy {
        MemoryPolicy::Default => (0, &[]),
        MemoryPolicy::Prefer(node) => (1, std::slice::from_ref(node)),
        MemoryPolicy::Bind(nodes) => (2, nodes),
        MemoryPolicy::Interleave(nodes) => (3, nodes),
        MemoryPolicy::Local => (4, &[]),
    };
    sys::set_memory_policy(mode, nodes)
}

/// The machine's NUMA nodes that have CPUs or memory, and each one's CPUs
/// (from sysfs); one node 0 with every CPU where sysfs has no nodes.
pub fn numa_nodes() -> Vec<(usize, Vec<usize>)> {
    let root = Path::new("/sys/devices/system/node");
    let mut nodes: Vec<(usize, Vec<usize>)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let node: usize = name.strip_prefix("node")?.parse().ok()?;
            let list = std::fs::read_to_string(entry.path().join("cpulist")).ok()?;
            Some((node, parse_cpu_list(list.trim()).ok()?))
        })
        .collect();
    nodes.sort();
    if nodes.is_empty() {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        nodes.push((0, (0..cpus).collect()));
    }
    nodes
}

/// Reads a list of CPUs or nodes as the kernel and fio write them:
/// `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("'{part}' is not a number or a range like 0-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        return Err("an empty list".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_the_kernel_writes_them() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11").unwrap(),
            [0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("1,1,0").unwrap(), [0, 1]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }

    #[test]
    fn a_thread_can_be_pinned_and_reniced() {
        let cpus = numa_nodes().into_iter().next().unwrap().1;
        std::thread::spawn(move || {
            pin_to_cpus(&cpus[..1]).unwrap();
            let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
            let allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap()
                .trim()
                .to_string();
            assert_eq!(allowed, cpus[0].to_string());
            set_nice(5).unwrap();
            let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
            // Field 19, counted after the command's closing parenthesis.
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            assert_eq!(after.split(' ').nth(16), Some("5"), "{stat}");
            set_io_priority(IoClass::BestEffort, 4).unwrap();
            set_memory_policy(&MemoryPolicy::Local).unwrap();
            set_memory_policy(&MemoryPolicy::Bind(vec![0])).unwrap();
            set_memory_policy(&MemoryPolicy::Default).unwrap();
            let bad = set_memory_policy(&MemoryPolicy::Bind(vec![999]));
            assert!(bad.is_err());
        })
        .join()
        .unwrap();
    }
}
