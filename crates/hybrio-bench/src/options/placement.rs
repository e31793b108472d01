//! Where a job's thread runs and how eagerly: fio's `cpus_allowed`,
//! `cpumask`, `cpus_allowed_policy`, `nice`, `prio`, `prioclass`, `priohint`,
//! `numa_cpu_nodes`, `numa_mem_policy`.

use hybrio::placement::{MemoryPolicy, numa_nodes, parse_cpu_list};

use super::JobOptions;
use super::def::{Kind, OptionDef, opt};
use crate::units::{self, ValueError};

fn invalid(message: String) -> ValueError {
    ValueError::Invalid(message)
}

/// A list of NUMA nodes, each one this machine has.
fn nodes(option: &str, text: &str) -> Result<Vec<usize>, ValueError> {
    let wanted = parse_cpu_list(text).map_err(|e| invalid(format!("{option}={text}: {e}")))?;
    let have: Vec<usize> = numa_nodes().into_iter().map(|(node, _)| node).collect();
    if let Some(missing) = wanted.iter().find(|n| !have.contains(n)) {
        return Err(invalid(format!(
            "{option}={text}: this machine has no NUMA node {missing} (it has {})",
            have.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(wanted)
}

/// CPUs, each one this machine has.
fn cpus(option: &str, text: &str, cpus: Vec<usize>) -> Result<Vec<usize>, ValueError> {
    let have: Vec<usize> = numa_nodes()
        .into_iter()
        .flat_map(|(_, cpus)| cpus)
        .collect();
    match cpus.iter().find(|c| !have.contains(c)) {
        Some(missing) => Err(invalid(format!(
            "{option}={text}: this machine has no CPU {missing} (it has {})",
            have.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ))),
        None => Ok(cpus),
    }
}

/// The placement options.
pub(super) static PLACEMENT_OPTIONS: &[OptionDef] = &[
    opt!(
        "cpus_allowed",
        &[],
        Kind::Text,
        "",
        "CPUs the job may run on: 0-3,8",
        |j, v| {
            let list = parse_cpu_list(v).map_err(|e| invalid(format!("cpus_allowed={v}: {e}")))?;
            j.placement.cpus = Some(cpus("cpus_allowed", v, list)?)
        }
    ),
    opt!(
        "cpumask",
        &[],
        Kind::Text,
        "",
        "CPUs the job may run on, as a bit mask (0x3: CPUs 0 and 1)",
        |j, v| {
            let digits = v.trim_start_matches("0x").trim_start_matches("0X");
            let mask = u64::from_str_radix(digits, 16)
                .or_else(|_| v.parse::<u64>())
                .map_err(|_| invalid(format!("cpumask={v}: not a mask")))?;
            let list: Vec<usize> = (0..64).filter(|bit| mask & (1 << bit) != 0).collect();
            if list.is_empty() {
                return Err(invalid(format!("cpumask={v}: no CPU in it")));
            }
            j.placement.cpus = Some(cpus("cpumask", v, list)?)
        }
    ),
    opt!(
        "cpus_allowed_policy",
        &[],
        Kind::Choice(&["shared", "split"]),
        "shared",
        "With numjobs: the clones share the CPUs (shared) or each gets one of them (split)",
        |j, v| j.placement.split = v == "split"
    ),
    opt!(
        "nice",
        &[],
        Kind::Int,
        "",
        "The job thread's nice value, -20 to 19",
        |j, v| {
            let nice: i32 = v
                .trim()
                .parse()
                .map_err(|_| ValueError::Int(v.to_string()))?;
            if !(-20..=19).contains(&nice) {
                return Err(ValueError::Range(v.to_string()));
            }
            j.placement.nice = Some(nice)
        }
    ),
    opt!(
        "prio",
        &[],
        Kind::Int,
        "",
        "The job thread's I/O priority level, 0 (highest) to 7",
        |j, v| {
            let level = units::parse_u32(v)?;
            if level > 7 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.placement.io_level = Some(level)
        }
    ),
    opt!(
        "prioclass",
        &[],
        Kind::Int,
        "",
        "The job thread's I/O scheduling class: 1 realtime, 2 best effort, 3 idle",
        |j, v| {
            let class = units::parse_u32(v)?;
            if !(1..=3).contains(&class) {
                return Err(ValueError::Range(v.to_string()));
            }
            j.placement.io_class = Some(class)
        }
    ),
    opt!(
        "priohint",
        &[],
        Kind::Int,
        "",
        "The job thread's I/O priority hint, 0 (none) to 1023: devices with command duration limits read it as the limit to keep (Linux 6.5 or later)",
        |j, v| {
            let hint = units::parse_u32(v)?;
            if hint > 1023 {
                return Err(ValueError::Range(v.to_string()));
            }
            j.placement.io_hint = Some(hint)
        }
    ),
    opt!(
        "numa_cpu_nodes",
        &[],
        Kind::Text,
        "",
        "Run the job on the CPUs of these NUMA nodes: 0-1",
        |j, v| {
            let wanted = nodes("numa_cpu_nodes", v)?;
            let cpus: Vec<usize> = numa_nodes()
                .into_iter()
                .filter(|(node, _)| wanted.contains(node))
                .flat_map(|(_, cpus)| cpus)
                .collect();
            j.placement.cpus = Some(cpus)
        }
    ),
    opt!(
        "numa_mem_policy",
        &[],
        Kind::Text,
        "",
        "Where the job's memory comes from: default, local, prefer:N, bind:LIST, interleave:LIST",
        |j, v| {
            let (mode, list) = v.split_once(':').unwrap_or((v, ""));
            let policy = match mode {
                "default" => MemoryPolicy::Default,
                "local" => MemoryPolicy::Local,
                "prefer" => {
                    let node = nodes("numa_mem_policy", list)?;
                    if node.len() != 1 {
                        return Err(invalid(format!(
                            "numa_mem_policy={v}: prefer takes one node"
                        )));
                    }
                    MemoryPolicy::Prefer(node[0])
                }
                "bind" => MemoryPolicy::Bind(nodes("numa_mem_policy", list)?),
                "interleave" => MemoryPolicy::Interleave(nodes("numa_mem_policy", list)?),
                _ => {
                    return Err(invalid(format!(
                        "numa_mem_policy={v}: expected default, local, prefer:N, bind:LIST or interleave:LIST"
                    )));
                }
            };
            j.placement.memory = Some(policy)
        }
    ),
];
