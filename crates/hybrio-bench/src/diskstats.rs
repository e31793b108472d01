//! fio's "Disk stats": what the block devices under the job's files did
//! during the run, from `/sys/block/<dev>/stat` read before and after.

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

/// Counters of a set of devices, taken at the start of a run.
#[derive(Debug)]
pub struct DiskSnapshot {
    taken: Instant,
    devices: Vec<(String, PathBuf, DiskCounters)>,
}

impl DiskSnapshot {
    /// Reads the counters of the devices under `paths` (each device once;
    /// files on no block device, such as tmpfs, have none).
    pub fn take<'a>(paths: impl IntoIterator<Item = &'a Path>) -> DiskSnapshot {
        let mut devices: Vec<(String, PathBuf, DiskCounters)> = Vec::new();
        for stat in paths.into_iter().filter_map(stat_file_for) {
            if devices.iter().any(|(_, known, _)| *known == stat) {
                continue;
            }
            let name = stat
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned());
            let counters = std::fs::read_to_string(&stat)
                .ok()
                .and_then(|t| DiskCounters::parse(&t));
            if let (Some(name), Some(counters)) = (name, counters) {
                devices.push((name, stat, counters));
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
        self.devices
            .iter()
            .filter_map(|(name, stat, before)| {
                let now = DiskCounters::parse(&std::fs::read_to_string(stat).ok()?)?;
                let counters = now.since(before);
                let util = (counters.io_ticks as f64 * 100.0 / elapsed_ms).min(100.0);
                Some(DiskUtil {
                    name: name.clone(),
                    counters,
                    util,
                })
            })
            .collect()
    }
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
}
