//! fio's verify state (`verify_state_save`, `verify_state_load`): how far a
//! writing job got, so that a later `verify_only` run checks what completed
//! and stops where the writes did. The file is fio's, byte for byte
//! (`local-NAME-INDEX-verify.state`, little-endian), in the version the
//! job's `fio_compat` writes; hybrio reads all three, so either tool reads
//! the other's:
//!
//! - version 3 (fio 3.33 to 3.38) holds the writes issued and, per file,
//!   the offsets of the last `iodepth` writes that completed: reading back
//!   in the order of the writes, the check stops at the first write of the
//!   last `iodepth` that did not complete;
//! - version 4 (fio 3.39, 3.40) is version 3 with room for twice as many
//!   completions with an async engine (their order may differ from the
//!   writes');
//! - version 5 (fio 3.41 on) holds the writes issued and the sequence
//!   numbers of those still in flight: reading back stops at the first of
//!   those, or once past the writes issued.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::checksum::fio_crc32c;

/// Bytes of fio's `verify_state_hdr`.
const HEADER: usize = 24;
/// fio's `INVALID_NUMBERIO`: an empty slot of version 5's in-flight writes.
const NO_WRITE: u64 = u64::MAX;
/// Room for the job's name in every version.
const NAME_LEN: usize = 64;

/// Where a version's fields sit in fio's `thread_io_list`.
struct Layout {
    /// Bytes before the completions or in-flight writes.
    list: usize,
    depth_at: usize,
    writes_at: usize,
    index_at: usize,
    name_at: usize,
}

/// Versions 3 and 4: `no_comps` u64, `depth` u32, (4: `max_no_comps_per_file`
/// u32), `nofiles` u32, `numberio` u64, `index` u64, the offsets' generator
/// (56 bytes, which fio saves and never reads back), `name`, then
/// (file, offset) pairs. Version 5: `depth` u32, `numberio` u64, `index`
/// u64, the generator, `name`, then `depth` sequence numbers.
fn layout(version: u64) -> Option<Layout> {
    match version {
        3 => Some(Layout {
            list: 152,
            depth_at: 8,
            writes_at: 16,
            index_at: 24,
            name_at: 88,
        }),
        4 => Some(Layout {
            list: 160,
            depth_at: 8,
            writes_at: 24,
            index_at: 32,
            name_at: 96,
        }),
        5 => Some(Layout {
            list: 144,
            depth_at: 0,
            writes_at: 8,
            index_at: 16,
            name_at: 80,
        }),
        _ => None,
    }
}

/// What a state says of the writes at its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Window {
    /// Versions 3 and 4: the last completed writes.
    Completions {
        /// Files of the job.
        files: u32,
        /// Completions kept per file: `iodepth` (version 4: twice that
        /// with an async engine).
        per_file: u32,
        /// (file index, offset), newest first per file.
        completions: Vec<(u64, u64)>,
    },
    /// Version 5: the sequence numbers of the writes still in flight.
    InFlight(Vec<u64>),
}

/// A job's verify state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyStateFile {
    /// The file's version: 3, 4 or 5 (`FioVersion::verify_state_version`).
    pub version: u64,
    /// The job's name.
    pub name: String,
    /// The job's index in the run, from 0.
    pub index: u64,
    /// `iodepth`.
    pub depth: u32,
    /// Writes issued.
    pub writes_issued: u64,
    /// The writes at the end.
    pub window: Window,
}

/// Why a state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// It could not be read or written.
    #[error("verify state {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// It is not a state fio or hybrio wrote, or it was damaged.
    #[error("verify state {path}: {why}")]
    Bad {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
}

impl VerifyStateFile {
    /// fio's name for a job's state file, in `dir`: `local-NAME-INDEX-verify.state`
    /// with `/` in the name made `.`.
    pub fn path(dir: &Path, name: &str, index: u64) -> PathBuf {
        dir.join(format!(
            "local-{}-{index}-verify.state",
            name.replace('/', ".")
        ))
    }

    /// The file's bytes. A version that does not go with the window (5
    /// with completions, 3 or 4 with writes in flight) writes the window's.
    pub fn to_bytes(&self) -> Vec<u8> {
        let version = match (&self.window, self.version) {
            (Window::InFlight(_), _) => 5,
            (Window::Completions { .. }, 4) => 4,
            (Window::Completions { .. }, _) => 3,
        };
        let at = layout(version).unwrap_or_else(|| unreachable!("versions 3 to 5 have layouts"));
        let list = match &self.window {
            Window::Completions {
                files,
                per_file,
                completions,
            } => {
                let slots = *per_file as usize * *files as usize;
                let mut list = vec![0u8; at.list + slots.max(completions.len()) * 16];
                list[0..8].copy_from_slice(&(completions.len() as u64).to_le_bytes());
                if version == 4 {
                    list[12..16].copy_from_slice(&per_file.to_le_bytes());
                    list[16..20].copy_from_slice(&files.to_le_bytes());
                } else {
                    list[12..16].copy_from_slice(&files.to_le_bytes());
                }
                for (i, (file, offset)) in completions.iter().enumerate() {
                    let pair = at.list + i * 16;
                    list[pair..pair + 8].copy_from_slice(&file.to_le_bytes());
                    list[pair + 8..pair + 16].copy_from_slice(&offset.to_le_bytes());
                }
                list
            }
            Window::InFlight(numbers) => {
                let slots = (self.depth as usize).max(numbers.len());
                let mut list = vec![0u8; at.list + slots * 8];
                for slot in 0..slots {
                    let number = numbers.get(slot).copied().unwrap_or(NO_WRITE);
                    let here = at.list + slot * 8;
                    list[here..here + 8].copy_from_slice(&number.to_le_bytes());
                }
                list
            }
        };
        let mut list = list;
        list[at.depth_at..at.depth_at + 4].copy_from_slice(&self.depth.to_le_bytes());
        list[at.writes_at..at.writes_at + 8].copy_from_slice(&self.writes_issued.to_le_bytes());
        list[at.index_at..at.index_at + 8].copy_from_slice(&self.index.to_le_bytes());
        let name = self.name.as_bytes();
        let len = name.len().min(NAME_LEN - 1);
        list[at.name_at..at.name_at + len].copy_from_slice(&name[..len]);
        let mut bytes = Vec::with_capacity(HEADER + list.len());
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&(list.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&u64::from(fio_crc32c(&list)).to_le_bytes());
        bytes.extend_from_slice(&list);
        bytes
    }

    /// Reads a state from its bytes; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<VerifyStateFile, StateError> {
        let bad = |why: &str| StateError::Bad {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        if bytes.len() < HEADER {
            return Err(bad("too short to be a verify state"));
        }
        let version = u64_at(bytes, 0);
        let at = layout(version).ok_or_else(|| {
            bad(&format!(
                "version {version}: hybrio reads versions 3 (fio 3.33 to 3.38), 4 (fio 3.39, 3.40) and 5 (fio 3.41 on)"
            ))
        })?;
        let size = u64_at(bytes, 8) as usize;
        let list = &bytes[HEADER..];
        if size != list.len() || size < at.list {
            return Err(bad(&format!("says {size} bytes, has {}", list.len())));
        }
        if u64::from(fio_crc32c(list)) != u64_at(bytes, 16) {
            return Err(bad("its checksum does not match: the file is damaged"));
        }
        let depth = u32_at(list, at.depth_at);
        let window = if version == 5 {
            if at.list + depth as usize * 8 > size {
                return Err(bad("more writes in flight than the file holds"));
            }
            Window::InFlight(
                (0..depth as usize)
                    .map(|i| u64_at(list, at.list + i * 8))
                    .filter(|&n| n != NO_WRITE)
                    .collect(),
            )
        } else {
            let count = u64_at(list, 0) as usize;
            if at.list + count * 16 > size {
                return Err(bad("more completions than the file holds"));
            }
            let (per_file, files) = if version == 4 {
                (u32_at(list, 12), u32_at(list, 16))
            } else {
                (depth, u32_at(list, 12))
            };
            Window::Completions {
                files,
                per_file,
                completions: (0..count)
                    .map(|i| {
                        let pair = at.list + i * 16;
                        (u64_at(list, pair), u64_at(list, pair + 8))
                    })
                    .collect(),
            }
        };
        let name = &list[at.name_at..at.name_at + NAME_LEN];
        let name =
            String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN)]);
        Ok(VerifyStateFile {
            version,
            name: name.into_owned(),
            index: u64_at(list, at.index_at),
            depth,
            writes_issued: u64_at(list, at.writes_at),
            window,
        })
    }

    /// Writes the state to `path`, whole or not at all (a new file renamed
    /// over the old, synced first: a run killed while saving leaves the
    /// state it saved before).
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let io = |source| StateError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let mut file = std::fs::File::create(&partial).map_err(io)?;
        file.write_all(&self.to_bytes()).map_err(io)?;
        file.sync_data().map_err(io)?;
        std::fs::rename(&partial, path).map_err(io)
    }

    /// Reads the state at `path`.
    pub fn load(path: &Path) -> Result<VerifyStateFile, StateError> {
        let bytes = std::fs::read(path).map_err(|source| StateError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        VerifyStateFile::from_bytes(&bytes, path)
    }

    /// fio's `verify_state_should_stop`: whether reading back stops before
    /// the write at `offset` of `file`, the `reads`-th read back (from 0).
    pub fn stops_before(&self, reads: u64, file: u64, offset: u64) -> bool {
        match &self.window {
            // Within the last `depth` writes issued, only those seen
            // completed are read back, and the first that was not ends it.
            Window::Completions { completions, .. } => {
                let depth = u64::from(self.depth);
                let before_window = reads < depth || self.writes_issued.wrapping_sub(reads) > depth;
                if before_window && self.writes_issued > depth {
                    return false;
                }
                !completions.contains(&(file, offset))
            }
            // The read's sequence number is the write's: past the writes
            // issued, or one still in flight, ends it.
            Window::InFlight(numbers) => reads >= self.writes_issued || numbers.contains(&reads),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(version: u64) -> VerifyStateFile {
        VerifyStateFile {
            version,
            name: "w".into(),
            index: 0,
            depth: 4,
            writes_issued: 10,
            window: Window::Completions {
                files: 1,
                per_file: if version == 4 { 8 } else { 4 },
                completions: vec![(0, 36864), (0, 32768), (0, 28672), (0, 24576)],
            },
        }
    }

    fn in_flight() -> VerifyStateFile {
        VerifyStateFile {
            version: 5,
            name: "w".into(),
            index: 2,
            depth: 4,
            writes_issued: 10,
            window: Window::InFlight(vec![7, 9]),
        }
    }

    #[test]
    fn each_version_round_trips_and_refuses_damage() {
        for (state, len) in [
            (state(3), 24 + 152 + 4 * 16),
            (state(4), 24 + 160 + 8 * 16),
            (in_flight(), 24 + 144 + 4 * 8),
        ] {
            let bytes = state.to_bytes();
            assert_eq!(bytes.len(), len, "version {}", state.version);
            assert_eq!(u64_at(&bytes, 0), state.version);
            let back = VerifyStateFile::from_bytes(&bytes, Path::new("s")).unwrap();
            assert_eq!(back, state);
            let mut damaged = bytes.clone();
            damaged[HEADER + 20] ^= 1;
            let err = VerifyStateFile::from_bytes(&damaged, Path::new("s")).unwrap_err();
            assert!(err.to_string().contains("damaged"), "{err}");
            assert!(VerifyStateFile::from_bytes(&bytes[..40], Path::new("s")).is_err());
        }
        let mut bytes = state(3).to_bytes();
        bytes[0] = 6;
        let err = VerifyStateFile::from_bytes(&bytes, Path::new("s")).unwrap_err();
        assert!(
            err.to_string()
                .contains("version 6: hybrio reads versions 3"),
            "{err}"
        );
    }

    #[test]
    fn the_fields_sit_where_fio_puts_them() {
        // Version 3 (fio 3.33): no_comps, depth, nofiles, numberio, index, ..., name.
        let v3 = &state(3).to_bytes()[HEADER..];
        assert_eq!((u64_at(v3, 0), u32_at(v3, 8), u32_at(v3, 12)), (4, 4, 1));
        assert_eq!((u64_at(v3, 16), u64_at(v3, 24)), (10, 0));
        assert_eq!(v3[88], b'w');
        assert_eq!((u64_at(v3, 152), u64_at(v3, 160)), (0, 36864));
        // Version 4 (fio 3.39): max_no_comps_per_file after depth.
        let v4 = &state(4).to_bytes()[HEADER..];
        assert_eq!(
            (u64_at(v4, 0), u32_at(v4, 8), u32_at(v4, 12), u32_at(v4, 16)),
            (4, 4, 8, 1)
        );
        assert_eq!((u64_at(v4, 24), u64_at(v4, 32)), (10, 0));
        assert_eq!(v4[96], b'w');
        assert_eq!(u64_at(v4, 168), 36864);
        // Version 5 (fio 3.41): depth, numberio, index, ..., name, in flight.
        let v5 = &in_flight().to_bytes()[HEADER..];
        assert_eq!((u32_at(v5, 0), u64_at(v5, 8), u64_at(v5, 16)), (4, 10, 2));
        assert_eq!(v5[80], b'w');
        let slots: Vec<u64> = (0..4).map(|i| u64_at(v5, 144 + i * 8)).collect();
        assert_eq!(slots, [7, 9, NO_WRITE, NO_WRITE]);
    }

    #[test]
    fn reading_back_stops_at_the_first_write_not_completed() {
        for s in [state(3), state(4)] {
            // Reads 0..6 are before the window of the last 4 writes.
            assert!(!s.stops_before(0, 0, 0));
            assert!(!s.stops_before(5, 0, 20480));
            // In it: completed writes are read back, the first one not seen stops it.
            assert!(!s.stops_before(6, 0, 24576));
            assert!(!s.stops_before(9, 0, 36864));
            assert!(s.stops_before(10, 0, 40960));
            assert!(s.stops_before(7, 1, 28672), "another file's offset");
        }
        let s = in_flight();
        assert!(!s.stops_before(0, 0, 0));
        assert!(!s.stops_before(6, 0, 0));
        assert!(s.stops_before(7, 0, 0), "in flight");
        assert!(!s.stops_before(8, 0, 0));
        assert!(s.stops_before(10, 0, 0), "never issued");
    }
}
