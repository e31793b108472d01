//! A comparison's cells: the jobs that run together, once per engine, and
//! the words that describe them. Apart from `mod.rs`, which runs the cells,
//! as the reports print them too.

use std::time::Duration;

use crate::jobfile::JobDef;
use crate::options::JobOptions;

/// One cell of a comparison: jobs that run together, once per engine.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The first job's name.
    pub name: String,
    /// What the jobs do, in a few words.
    pub description: String,
    /// The line above the cell's table.
    pub heading: String,
    /// The jobs (engine replaced per run).
    pub jobs: Vec<JobDef>,
    /// Read the jobs' files through the page cache before each run: the
    /// machine's DAMON pageout evicts cold page cache between runs, so a
    /// cached-read cell would otherwise measure whatever the last run left.
    pub warm_cache: bool,
}

impl Cell {
    /// A cell of `jobs` (not empty), headed by the first job's name and a description.
    pub fn new(jobs: Vec<JobDef>) -> Cell {
        let name = jobs
            .first()
            .map_or_else(String::new, |j| j.options.name.clone());
        let description = describe(&jobs);
        Cell {
            heading: format!("{name}: {description}"),
            warm_cache: jobs.iter().any(|j| reads_from_cache(&j.options)),
            name,
            description,
            jobs,
        }
    }
}

/// Buffered reads that keep the page cache: they measure the cache, which
/// must hold the file before the run.
pub(super) fn reads_from_cache(options: &JobOptions) -> bool {
    // A network job's reads come from its socket.
    options.rw.reads() && !options.direct && !options.invalidate && options.network().is_none()
}

/// Splits jobs into cells as a run splits them into reporting groups: a job
/// with `stonewall` or `new_group` starts a new one.
pub fn cells(jobs: &[JobDef]) -> Vec<Cell> {
    let mut groups: Vec<Vec<JobDef>> = Vec::new();
    for (index, job) in jobs.iter().enumerate() {
        if index == 0 || job.options.stonewall || job.options.new_group {
            groups.push(Vec::new());
        }
        if let Some(group) = groups.last_mut() {
            group.push(job.clone());
        }
    }
    groups.into_iter().map(Cell::new).collect()
}

/// A short description of a cell's jobs: pattern, block size, depth, clones,
/// direct or buffered, and the options that change what every engine faces.
pub fn describe(jobs: &[JobDef]) -> String {
    let mut each: Vec<String> = jobs.iter().map(|j| describe_job(&j.options)).collect();
    each.dedup();
    let text = each.join("; ");
    if jobs.len() > 1 {
        format!("{} jobs: {text}", jobs.len())
    } else {
        text
    }
}

fn describe_job(o: &JobOptions) -> String {
    let mut parts = vec![o.rw.name().to_string()];
    if o.rw.reads() && o.rw.writes() {
        parts.push(format!("rwmixread={}", o.rwmixread));
    }
    parts.push(match (o.rw.reads(), o.rw.writes()) {
        (true, true) if o.block_range(0) != o.block_range(1) => {
            format!("bs={},{}", block_sizes(o, 0), block_sizes(o, 1))
        }
        (false, true) => format!("bs={}", block_sizes(o, 1)),
        _ => format!("bs={}", block_sizes(o, 0)),
    });
    parts.push(format!("iodepth={}", o.iodepth));
    parts.push(format!("numjobs={}", o.numjobs));
    parts.push(if o.direct { "direct" } else { "buffered" }.to_string());
    if !o.direct && !o.invalidate && o.rw.reads() {
        parts.push("invalidate=0".into());
    }
    if o.fsync > 0 {
        parts.push(format!("fsync={}", o.fsync));
    }
    if o.fdatasync > 0 {
        parts.push(format!("fdatasync={}", o.fdatasync));
    }
    if let Some(latency) = o.completion_latency {
        parts.push(format!("completion_latency={}", short_duration(latency)));
    }
    if let Some(plan) = &o.inject {
        parts.push(format!("inject={plan}"));
    }
    parts.join(", ")
}

/// One direction's block size, or its range (a `bssplit` shows as the range
/// of its sizes).
fn block_sizes(o: &JobOptions, dir: usize) -> String {
    match o.block_range(dir) {
        (min, max) if min == max => short_size(min),
        (min, max) => format!("{}-{}", short_size(min), short_size(max)),
    }
}

fn short_size(bytes: u64) -> String {
    match bytes {
        0 => "0".into(),
        b if b.is_multiple_of(1 << 30) => format!("{}g", b >> 30),
        b if b.is_multiple_of(1 << 20) => format!("{}m", b >> 20),
        b if b.is_multiple_of(1 << 10) => format!("{}k", b >> 10),
        b => b.to_string(),
    }
}

fn short_duration(d: Duration) -> String {
    match d.as_nanos() {
        n if n > 0 && n.is_multiple_of(1_000_000_000) => format!("{}s", n / 1_000_000_000),
        n if n > 0 && n.is_multiple_of(1_000_000) => format!("{}ms", n / 1_000_000),
        n if n > 0 && n.is_multiple_of(1_000) => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}
