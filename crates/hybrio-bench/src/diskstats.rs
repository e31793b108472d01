//! fio's "Disk stats": what the block devices under the job's files did
//! during the run, from `/sys/block/<dev>/stat` read before and after; and,
//! for a device made of others (an md array, a device-mapper target: its
//! `slaves/`), what those did, each listed after it, and their mean and
//! the busiest one's utilization on its line, as fio aggregates them.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One device's counters (the fields of `/sys/block/<dev>/stat` fio uses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskCounters {
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// Milliseconds spent reading.
    pub read_ticks: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_ticks: u64,
    /// Milliseconds the device had I/O in flight.
    pub io_ticks: u64,
    /// Weighted milliseconds of I/O in flight.
    pub time_in_queue: u64,
}

impl DiskCounters {
    /// Reads the counters from the text of a `stat` file.
    pub fn parse(text: &str) -> Option<DiskCounters> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().ok())
            .collect::<Option<_>>()?;
        (f.len() >= 11).then(|| DiskCounters {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            read_ticks: f[3],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            write_ticks: f[7],
            io_ticks: f[9],
            time_in_queue: f[10],
        })
    }

    fn plus(&self, other: &DiskCounters) -> DiskCounters {
        DiskCounters {
            read_ios: self.read_ios + other.read_ios,
            read_merges: self.read_merges + other.read_merges,
            read_sectors: self.read_sectors + other.read_sectors,
            read_ticks: self.read_ticks + other.read_ticks,
            write_ios: self.write_ios + other.write_ios,
            write_merges: self.write_merges + other.write_merges,
            write_sectors: self.write_sectors + other.write_sectors,
            write_ticks: self.write_ticks + other.write_ticks,
            io_ticks: self.io_ticks + other.io_ticks,
            time_in_queue: self.time_in_queue + other.time_in_queue,
        }
    }

    fn since(&self, before: &DiskCounters) -> DiskCounters {
        DiskCounters {
            read_ios: self.read_ios.wrapping_sub(before.read_ios),
            read_merges: self.read_merges.wrapping_sub(before.read_merges),
            read_sectors: self.read_sectors.wrapping_sub(before.read_sectors),
            read_ticks: self.read_ticks.wrapping_sub(before.read_ticks),
            write_ios: self.write_ios.wrapping_sub(before.write_ios),
            write_merges: self.write_merges.wrapping_sub(before.write_merges),
            write_sectors: self.write_sectors.wrapping_sub(before.write_sectors),
            write_ticks: self.write_ticks.wrapping_sub(before.write_ticks),
            io_ticks: self.io_ticks.wrapping_sub(before.io_ticks),
            time_in_queue: self.time_in_queue.wrapping_sub(before.time_in_queue),
        }
    }
}

/// What one device did during the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiskUtil {
    /// Device name, e.g. `vda`.
    pub name: String,
    /// Counter deltas over the run.
    pub counters: DiskCounters,
    /// Percent of the run the device was busy (io_ticks / elapsed).
    pub util: f64,
    /// For a device made of others: what they did together.
    #[serde(default)]
    pub slaves: Option<SlavesAggregate>,
}

/// What the devices under one (its `slaves/`) did together, as fio's
/// `aggregate_slaves_stats()` adds them up.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SlavesAggregate {
    /// Their counters, summed.
    pub sum: DiskCounters,
    /// How many.
    pub count: u64,
    /// The busiest one's utilization, percent (fio: "the utilization of the
    /// component with the highest utilization").
    pub max_util: f64,
}

impl SlavesAggregate {
    /// Each counter's mean over the slaves, in integers, as fio prints it.
    pub fn mean(&self) -> DiskCounters {
        let n = self.count.max(1);
        let s = &self.sum;
        DiskCounters {
            read_ios: s.read_ios / n,
            read_merges: s.read_merges / n,
            read_sectors: s.read_sectors / n,
            read_ticks: s.read_ticks / n,
            write_ios: s.write_ios / n,
            write_merges: s.write_merges / n,
            write_sectors: s.write_sectors / n,
            write_ticks: s.write_ticks / n,
            io_ticks: s.io_ticks / n,
            time_in_queue: s.time_in_queue / n,
        }
    }
}

/// The whole-disk `stat` file under a file: its device (for a file, or for
/// the directory it will be made in), or the device itself (for a block
/// device), with a partition resolved to its disk.
pub fn stat_file_for(path: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).or_else(|_| {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::metadata(parent)
    });
    let meta = meta.ok()?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let disk = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    let stat = disk.join("stat");
    stat.exists().then_some(stat)
}

/// One device of a snapshot.
#[derive(Debug)]
struct Device {
    name: String,
    stat: PathBuf,
    before: DiskCounters,
    /// The devices under it, by their place in the snapshot.
    slaves: Vec<usize>,
}

/// Counters of a set of devices, taken at the start of a run.
#[derive(Debug)]
pub struct DiskSnapshot {
    taken: Instant,
    devices: Vec<Device>,
}

impl DiskSnapshot {
    /// Reads the counters of the devices under `paths` (each device once;
    /// files on no block device, such as tmpfs, have none), and of the
    /// devices those are made of, each after the one it is under.
    pub fn take<'a>(paths: impl IntoIterator<Item = &'a Path>) -> DiskSnapshot {
        let mut devices = Vec::new();
        for stat in paths.into_iter().filter_map(stat_file_for) {
            if let Some(dir) = stat.parent() {
                add_device(&mut devices, dir);
            }
        }
        DiskSnapshot {
            taken: Instant::now(),
            devices,
        }
    }

    /// What each device did since the snapshot.
    pub fn finish(&self) -> Vec<DiskUtil> {
        let elapsed_ms = self.taken.elapsed().as_millis().max(1) as f64;
        let done: Vec<Option<DiskUtil>> = self
            .devices
            .iter()
            .map(|device| {
                let now = DiskCounters::parse(&std::fs::read_to_string(&device.stat).ok()?)?;
                let counters = now.since(&device.before);
                let util = (counters.io_ticks as f64 * 100.0 / elapsed_ms).min(100.0);
                Some(DiskUtil {
                    name: device.name.clone(),
                    counters,
                    util,
                    slaves: None,
                })
            })
            .collect();
        let aggregates: Vec<Option<SlavesAggregate>> = self
            .devices
            .iter()
            .map(|device| aggregate(device.slaves.iter().filter_map(|&i| done[i].as_ref())))
            .collect();
        done.into_iter()
            .zip(aggregates)
            .filter_map(|(util, slaves)| util.map(|util| DiskUtil { slaves, ..util }))
            .collect()
    }
}

/// The device whose sysfs directory is `dir`, added to `devices` unless
/// there already, then the devices under it (its `slaves/`) that are not;
/// returns its place. As fio's `find_add_disk_slaves()`, a device listed
/// already is not counted again as a slave of another.
fn add_device(devices: &mut Vec<Device>, dir: &Path) -> Option<usize> {
    let stat = dir.join("stat");
    if let Some(at) = devices.iter().position(|d| d.stat == stat) {
        return Some(at);
    }
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let before = DiskCounters::parse(&std::fs::read_to_string(&stat).ok()?)?;
    devices.push(Device {
        name,
        stat,
        before,
        slaves: Vec::new(),
    });
    let at = devices.len() - 1;
    let mut under: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .into_iter()
        .flatten()
        .filter_map(|entry| std::fs::canonicalize(entry.ok()?.path()).ok())
        .collect();
    under.sort();
    for slave in under {
        if devices.iter().any(|d| d.stat == slave.join("stat")) {
            continue;
        }
        if let Some(slave) = add_device(devices, &slave) {
            devices[at].slaves.push(slave);
        }
    }
    Some(at)
}

/// What `slaves` did together; `None` when there are none.
fn aggregate<'a>(slaves: impl Iterator<Item = &'a DiskUtil>) -> Option<SlavesAggregate> {
    slaves
        .map(|slave| SlavesAggregate {
            sum: slave.counters,
            count: 1,
            max_util: slave.util,
        })
        .reduce(|a, b| SlavesAggregate {
            sum: a.sum.plus(&b.sum),
            count: a.count + b.count,
            max_util: a.max_util.max(b.max_util),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_stat_line() {
        let line = " 4985879    12152 52250442  1161513   208165    27662 1198526728  9127195        0   484576 10394184    34109       43 172985840   104849     5036      626\n";
        let c = DiskCounters::parse(line).unwrap();
        assert_eq!(
            (c.read_ios, c.read_merges, c.read_sectors, c.read_ticks),
            (4985879, 12152, 52250442, 1161513)
        );
        assert_eq!(
            (c.write_ios, c.write_merges, c.write_ticks),
            (208165, 27662, 9127195)
        );
        assert_eq!((c.io_ticks, c.time_in_queue), (484576, 10394184));
        assert!(DiskCounters::parse("1 2 3").is_none());
        assert!(DiskCounters::parse("a b c d e f g h i j k").is_none());
    }

    #[test]
    fn the_device_under_a_file_counts_its_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let Some(stat) = stat_file_for(&path) else {
            eprintln!("skipping: {} is on no block device", dir.path().display());
            return;
        };
        assert!(stat.ends_with("stat"));
        // The same device is listed once however many files are on it.
        let snapshot = DiskSnapshot::take([path.as_path(), dir.path()]);
        assert_eq!(snapshot.devices.len(), 1);
        let file = std::fs::File::open(&path).unwrap();
        file.sync_all().unwrap();
        let util = snapshot.finish();
        assert_eq!(util.len(), 1);
        assert!(util[0].util >= 0.0 && util[0].util <= 100.0);
        assert!(
            util[0].counters.write_ios >= 1,
            "fsync of fresh data writes to the device: {util:?}"
        );
    }

    /// A `stat` line whose fields (reads, read merges, read sectors, read
    /// ticks, writes, write merges, write sectors, write ticks, in flight,
    /// io ticks, time in queue) are `base` plus their place.
    fn stat_line(base: u64) -> String {
        (0..11)
            .map(|i| (base + i).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A device made of two others, as sysfs shows an md array or a
    /// device-mapper target (`slaves/` links to the devices under it), in
    /// a scratch tree: the device, then each under it, once; its own
    /// counters, and theirs summed, counted and the busiest one's
    /// utilization, as fio's `aggregate_slaves_stats()`.
    #[test]
    fn a_device_made_of_others_lists_them_and_aggregates_what_they_did() {
        let sys = tempfile::tempdir().unwrap();
        let dev = |name: &str, base: u64| {
            let dir = sys.path().join(name);
            std::fs::create_dir_all(dir.join("slaves")).unwrap();
            std::fs::write(dir.join("stat"), stat_line(base)).unwrap();
            std::fs::canonicalize(dir).unwrap()
        };
        let md = dev("md0", 0);
        let (a, b) = (dev("loop8", 0), dev("loop9", 0));
        for slave in ["loop8", "loop9"] {
            std::os::unix::fs::symlink(format!("../../{slave}"), md.join("slaves").join(slave))
                .unwrap();
        }
        let mut devices = Vec::new();
        assert_eq!(add_device(&mut devices, &md), Some(0));
        // Listed once, also when asked for on its own.
        assert_eq!(add_device(&mut devices, &a), Some(1));
        let snapshot = DiskSnapshot {
            taken: Instant::now(),
            devices,
        };
        std::fs::write(md.join("stat"), stat_line(1000)).unwrap();
        std::fs::write(a.join("stat"), stat_line(100)).unwrap();
        std::fs::write(b.join("stat"), stat_line(30)).unwrap();
        let util = snapshot.finish();
        let names: Vec<&str> = util.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["md0", "loop8", "loop9"]);
        assert_eq!(util[0].counters.read_ios, 1000);
        assert!(util[1].slaves.is_none() && util[2].slaves.is_none());
        let agg = util[0].slaves.expect("md0 has slaves");
        assert_eq!(agg.count, 2);
        assert_eq!(agg.sum.read_ios, 130);
        // Every field moved by its device's base: 100 and 30.
        assert_eq!(agg.sum.write_sectors, 130);
        assert_eq!(agg.sum.time_in_queue, 130);
        assert_eq!(agg.mean().read_ios, 65);
        assert_eq!(agg.max_util, util[1].util.max(util[2].util));
    }
}
