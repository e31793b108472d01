//! What adaptive engines have learned, for a new class of requests to start
//! from: a table from the kind of a class (its file's device, `O_DIRECT` or
//! not, operation and size, the caller's depth, the asynchronous engine) to
//! the choice and prices its last class settled on.
//!
//! A storage program opens files and engines all day (a WAL segment, a
//! compaction, a page read on a cold table), and each class that started
//! from nothing paid for two explorations before its first real choice: a
//! short job's whole learning cost. A class of a kind the table knows makes
//! its first choice at once, with the prices it was made on; what it then
//! measures corrects a prior that no longer fits as it corrects any change
//! (its chosen path's cost drifts, and it explores the other soon).
//!
//! The table is read when a class starts and written when one finishes an
//! exploration: never per request. Whose table an engine uses is
//! [`AdaptiveMemory`](crate::engine::AdaptiveMemory)'s choice; with a file,
//! the table is read from it once per process and written back (whole, by a
//! rename) when an engine that uses it is dropped. The file names the kernel
//! it was learned on: under another, nothing in it is used. A line that does
//! not parse makes the whole file untrusted, as if it were not there.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::path::Path;
use crate::engine::api::EngineKind;
use crate::sys::host;

/// The first line of a saved table, before the kernel's release.
const FILE_MAGIC: &str = "hybrio-adaptive-memory 1";

/// What a file's requests run on, as far as their prices go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileKind {
    /// The file's device (`st_dev`): its filesystem and what lies under it.
    pub(crate) device: u64,
    /// The filesystem's type (`statfs`'s magic number): a device number
    /// given to another filesystem after a reboot is another kind.
    pub(crate) filesystem: i64,
    /// Opened `O_DIRECT`.
    pub(crate) direct: bool,
    /// The emulated device's latency in nanoseconds (0: real I/O).
    pub(crate) emulated_ns: u64,
    /// The asynchronous engine that takes the file's requests.
    pub(crate) backend: EngineKind,
    /// The caller's depth, by the power of two at or below it: an
    /// asynchronous path's price depends on how many requests overlap.
    pub(crate) depth_class: u8,
}

impl FileKind {
    /// The power of two at or below `depth`, as its exponent.
    pub(crate) fn depth_class(depth: u32) -> u8 {
        (u32::BITS - 1 - depth.max(1).leading_zeros()) as u8
    }
}

/// The kind of a class of requests: its file's kind, and the engine's class
/// index (operation and size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ClassKind {
    pub(crate) file: FileKind,
    pub(crate) class: u16,
}

/// What a class settled on: enough for a new class of its kind to start
/// from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prior {
    pub(crate) chosen: Path,
    /// Per path (inline, asynchronous), the price per request, nanoseconds.
    pub(crate) cost: [f64; 2],
    /// Per path, the mean sample of its latest window (the scale of outliers).
    pub(crate) typical: [f64; 2],
    /// Explorations behind it: a class starting from it looks again as
    /// rarely as one that explored as often.
    pub(crate) explorations: u32,
}

/// A table of priors, shared by the engines that hold a clone of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Priors(Arc<Mutex<HashMap<ClassKind, Prior>>>);

impl Priors {
    /// The process's table, which every engine opened with
    /// [`AdaptiveMemory::Process`](crate::engine::AdaptiveMemory::Process) shares.
    pub(crate) fn process() -> Priors {
        static TABLE: OnceLock<Priors> = OnceLock::new();
        TABLE.get_or_init(Priors::default).clone()
    }

    /// What the last class of `kind` settled on, if one did.
    pub(crate) fn get(&self, kind: &ClassKind) -> Option<Prior> {
        self.table().get(kind).copied()
    }

    /// Records what a class of `kind` settled on, for the classes after it.
    pub(crate) fn put(&self, kind: ClassKind, prior: Prior) {
        self.table().insert(kind, prior);
    }

    /// Forgets what a class of `kind` settled on: a class that started from
    /// it found it no longer fits.
    pub(crate) fn forget(&self, kind: &ClassKind) {
        self.table().remove(kind);
    }

    /// The table saved at `path`, shared by every engine of the process that
    /// names the same path: read from the file the first time (empty if
    /// there is none, it is from another kernel, or it does not parse).
    pub(crate) fn saved_at(path: &FsPath) -> Priors {
        static FILES: OnceLock<Mutex<HashMap<PathBuf, Priors>>> = OnceLock::new();
        let files = FILES.get_or_init(Mutex::default);
        let mut files = files
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        files
            .entry(path.to_path_buf())
            .or_insert_with(|| Priors::read(path, &host::kernel_release()))
            .clone()
    }

    /// The table in the file at `path`, if it was saved under `kernel`.
    fn read(path: &FsPath, kernel: &str) -> Priors {
        let table = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| parse(&text, kernel))
            .unwrap_or_default();
        Priors(Arc::new(Mutex::new(table)))
    }

    /// Writes the table to `path`, whole: into a file beside it, then renamed
    /// over it, so that a reader never sees half of one.
    pub(crate) fn save(&self, path: &FsPath) -> io::Result<()> {
        let text = render(&self.table(), &host::kernel_release());
        let mut partial = path.as_os_str().to_owned();
        partial.push(format!(".{}.partial", std::process::id()));
        let partial = PathBuf::from(partial);
        std::fs::write(&partial, text)?;
        std::fs::rename(&partial, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&partial);
        })
    }

    fn table(&self) -> MutexGuard<'_, HashMap<ClassKind, Prior>> {
        // A thread that panicked while holding it left a whole entry or
        // none: the table is still good.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A table as the file holds it: the magic line, the kernel, then one line
/// per kind: device, filesystem, O_DIRECT, emulated latency, asynchronous
/// engine, depth class, class; the choice, the two prices, the two typical
/// samples, the explorations.
fn render(table: &HashMap<ClassKind, Prior>, kernel: &str) -> String {
    let mut text = format!("{FILE_MAGIC}\nkernel {kernel}\n");
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(kind, _)| {
        let f = kind.file;
        (
            f.device,
            f.filesystem,
            f.direct,
            f.emulated_ns,
            f.depth_class,
            kind.class,
        )
    });
    for (kind, prior) in entries {
        let f = kind.file;
        let chosen = match prior.chosen {
            Path::Inline => "inline",
            Path::Async => "async",
        };
        let _ = writeln!(
            text,
            "{} {} {} {} {} {} {} {chosen} {} {} {} {} {}",
            f.device,
            f.filesystem,
            u8::from(f.direct),
            f.emulated_ns,
            f.backend.name(),
            f.depth_class,
            kind.class,
            prior.cost[0],
            prior.cost[1],
            prior.typical[0],
            prior.typical[1],
            prior.explorations,
        );
    }
    text
}

/// The table in `text`, if it is one, saved under `kernel`.
fn parse(text: &str, kernel: &str) -> Option<HashMap<ClassKind, Prior>> {
    let mut lines = text.lines();
    if lines.next()? != FILE_MAGIC || lines.next()?.strip_prefix("kernel ")? != kernel {
        return None;
    }
    let mut table = HashMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [
            device,
            filesystem,
            direct,
            emulated,
            backend,
            depth,
            class,
            chosen,
            rest @ ..,
        ] = fields.as_slice()
        else {
            return None;
        };
        let [cost0, cost1, typical0, typical1, explorations] = rest else {
            return None;
        };
        let price = |text: &str| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
        };
        let kind = ClassKind {
            file: FileKind {
                device: device.parse().ok()?,
                filesystem: filesystem.parse().ok()?,
                direct: match *direct {
                    "0" => false,
                    "1" => true,
                    _ => return None,
                },
                emulated_ns: emulated.parse().ok()?,
                backend: EngineKind::from_name(backend)?,
                depth_class: depth.parse().ok()?,
            },
            class: class.parse().ok()?,
        };
        let prior = Prior {
            chosen: match *chosen {
                "inline" => Path::Inline,
                "async" => Path::Async,
                _ => return None,
            },
            cost: [price(cost0)?, price(cost1)?],
            // A path's typical sample is infinite until it has one.
            typical: [typical0.parse().ok()?, typical1.parse().ok()?],
            explorations: explorations.parse().ok()?,
        };
        table.insert(kind, prior);
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(device: u64, class: u16) -> ClassKind {
        ClassKind {
            file: FileKind {
                device,
                filesystem: 0xEF53,
                direct: false,
                emulated_ns: 0,
                backend: EngineKind::IoUring,
                depth_class: FileKind::depth_class(4),
            },
            class,
        }
    }

    #[test]
    fn a_table_is_shared_by_its_clones_and_keyed_by_the_whole_kind() {
        let table = Priors::default();
        let prior = Prior {
            chosen: Path::Async,
            cost: [3_000.0, 1_000.0],
            typical: [3_000.0, 4_000.0],
            explorations: 2,
        };
        table.clone().put(kind(7, 3), prior);
        assert_eq!(table.get(&kind(7, 3)), Some(prior));
        assert_eq!(table.get(&kind(8, 3)), None, "another device");
        assert_eq!(table.get(&kind(7, 4)), None, "another class");
        let mut deeper = kind(7, 3);
        deeper.file.depth_class = FileKind::depth_class(16);
        assert_eq!(table.get(&deeper), None, "another depth");
        assert_eq!(Priors::default().get(&kind(7, 3)), None, "another table");
    }

    fn prior() -> Prior {
        Prior {
            chosen: Path::Inline,
            cost: [2_500.0, 13_000.0],
            typical: [2_400.0, f64::INFINITY],
            explorations: 3,
        }
    }

    #[test]
    fn a_saved_table_comes_back_under_its_kernel_only() {
        let dir = crate::engine::testkit::scratch();
        let path = dir.path().join("memory");
        let table = Priors::default();
        table.put(kind(7, 3), prior());
        table.put(
            kind(9, 28),
            Prior {
                chosen: Path::Async,
                ..prior()
            },
        );
        table.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let kernel = host::kernel_release();
        let back = Priors::read(&path, &kernel);
        assert_eq!(back.get(&kind(7, 3)), Some(prior()));
        assert_eq!(back.get(&kind(9, 28)).map(|p| p.chosen), Some(Path::Async));
        // Another kernel's: nothing of it is used.
        assert_eq!(Priors::read(&path, "5.4.0-other").get(&kind(7, 3)), None);
        // One line that does not parse: none of it is trusted.
        let spoiled = text.replacen(" inline ", " sideways ", 1);
        assert_eq!(parse(&spoiled, &kernel), None);
        let truncated = &text[..text.len() - 5];
        assert_eq!(parse(truncated, &kernel), None);
        assert!(
            parse(&text.replacen("2500", "-1", 1), &kernel).is_none(),
            "a price below 0"
        );
        // No file: an empty table; nothing is left beside the file.
        assert_eq!(
            Priors::read(&dir.path().join("none"), &kernel).get(&kind(7, 3)),
            None
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn depths_are_classed_by_powers_of_two() {
        let classes: Vec<u8> = [0, 1, 2, 3, 4, 15, 16, 17]
            .map(FileKind::depth_class)
            .to_vec();
        assert_eq!(classes, [0, 0, 1, 1, 2, 3, 4, 4]);
    }
}
