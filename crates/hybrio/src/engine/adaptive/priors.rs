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
//! [`AdaptiveMemory`](crate::engine::AdaptiveMemory)'s choice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::policy::Path;
use crate::engine::EngineKind;

/// What a file's requests run on, as far as their prices go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileKind {
    /// The file's device (`st_dev`): its filesystem and what lies under it.
    pub(crate) device: u64,
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

    fn table(&self) -> MutexGuard<'_, HashMap<ClassKind, Prior>> {
        // A thread that panicked while holding it left a whole entry or
        // none: the table is still good.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(device: u64, class: u16) -> ClassKind {
        ClassKind {
            file: FileKind {
                device,
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

    #[test]
    fn depths_are_classed_by_powers_of_two() {
        let classes: Vec<u8> = [0, 1, 2, 3, 4, 15, 16, 17]
            .map(FileKind::depth_class)
            .to_vec();
        assert_eq!(classes, [0, 0, 1, 1, 2, 3, 4, 4]);
    }
}
