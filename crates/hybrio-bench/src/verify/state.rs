//! fio's verify state (`verify_state_save`, `verify_state_load`): how far a
//! writing job got, so that a later `verify_only` run checks what completed
//! and stops where the writes did. The file is fio 3.33's, byte for byte
//! (`local-NAME-INDEX-verify.state`, version 3, little-endian), so either
//! tool reads the other's.
//!
//! It holds the writes issued and, per file, the offsets of the last
//! `iodepth` writes that completed: reading back in the order of the writes,
//! the check stops at the first write of the last `iodepth` that did not
//! complete.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::checksum::fio_crc32c;

/// fio's `VSTATE_HDR_VERSION`.
const VERSION: u64 = 3;
/// Bytes of fio's `verify_state_hdr`.
const HEADER: usize = 24;
/// Bytes of fio's `thread_io_list` before its completions.
const LIST: usize = 152;
/// Where the job's name starts in it, and its room.
const NAME_AT: usize = 88;
const NAME_LEN: usize = 64;

/// A job's verify state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyStateFile {
    /// The job's name.
    pub name: String,
    /// The job's index in the run, from 0.
    pub index: u64,
    /// `iodepth`.
    pub depth: u32,
    /// Files of the job.
    pub files: u32,
    /// Writes issued.
    pub writes_issued: u64,
    /// The last completed writes: (file index, offset), newest first per file.
    pub completions: Vec<(u64, u64)>,
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

impl VerifyStateFile {
    /// fio's name for a job's state file, in `dir`: `local-NAME-INDEX-verify.state`
    /// with `/` in the name made `.`.
    pub fn path(dir: &Path, name: &str, index: u64) -> PathBuf {
        dir.join(format!(
            "local-{}-{index}-verify.state",
            name.replace('/', ".")
        ))
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let slots = self.depth as usize * self.files as usize;
        let mut list = vec![0u8; LIST + slots.max(self.completions.len()) * 16];
        list[0..8].copy_from_slice(&(self.completions.len() as u64).to_le_bytes());
        list[8..12].copy_from_slice(&self.depth.to_le_bytes());
        list[12..16].copy_from_slice(&self.files.to_le_bytes());
        list[16..24].copy_from_slice(&self.writes_issued.to_le_bytes());
        list[24..32].copy_from_slice(&self.index.to_le_bytes());
        // 32..88: the offsets' generator, which fio saves and never reads back.
        let name = self.name.as_bytes();
        let len = name.len().min(NAME_LEN - 1);
        list[NAME_AT..NAME_AT + len].copy_from_slice(&name[..len]);
        for (i, (file, offset)) in self.completions.iter().enumerate() {
            let at = LIST + i * 16;
            list[at..at + 8].copy_from_slice(&file.to_le_bytes());
            list[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
        }
        let mut bytes = Vec::with_capacity(HEADER + list.len());
        bytes.extend_from_slice(&VERSION.to_le_bytes());
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
        let u64_at =
            |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
        if bytes.len() < HEADER + LIST {
            return Err(bad("too short to be a verify state"));
        }
        let version = u64_at(bytes, 0);
        if version != VERSION {
            return Err(bad(&format!(
                "version {version}, expected {VERSION} (fio 3.33's)"
            )));
        }
        let size = u64_at(bytes, 8) as usize;
        let list = &bytes[HEADER..];
        if size != list.len() || size < LIST {
            return Err(bad(&format!("says {size} bytes, has {}", list.len())));
        }
        if u64::from(fio_crc32c(list)) != u64_at(bytes, 16) {
            return Err(bad("its checksum does not match: the file is damaged"));
        }
        let count = u64_at(list, 0) as usize;
        if LIST + count * 16 > size {
            return Err(bad("more completions than the file holds"));
        }
        let name = &list[NAME_AT..NAME_AT + NAME_LEN];
        let name =
            String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN)]);
        Ok(VerifyStateFile {
            name: name.into_owned(),
            index: u64_at(list, 24),
            depth: u32::from_le_bytes(list[8..12].try_into().unwrap_or_default()),
            files: u32::from_le_bytes(list[12..16].try_into().unwrap_or_default()),
            writes_issued: u64_at(list, 16),
            completions: (0..count)
                .map(|i| (u64_at(list, LIST + i * 16), u64_at(list, LIST + i * 16 + 8)))
                .collect(),
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
    /// Within the last `depth` writes issued, only those seen completed are
    /// read back, and the first that was not ends it.
    pub fn stops_before(&self, reads: u64, file: u64, offset: u64) -> bool {
        let depth = u64::from(self.depth);
        let before_window = reads < depth || self.writes_issued.wrapping_sub(reads) > depth;
        if before_window && self.writes_issued > depth {
            return false;
        }
        !self.completions.contains(&(file, offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> VerifyStateFile {
        VerifyStateFile {
            name: "w".into(),
            index: 0,
            depth: 4,
            files: 1,
            writes_issued: 10,
            completions: vec![(0, 36864), (0, 32768), (0, 28672), (0, 24576)],
        }
    }

    #[test]
    fn a_state_round_trips_and_refuses_damage() {
        let bytes = state().to_bytes();
        assert_eq!(bytes.len(), HEADER + LIST + 4 * 16);
        let back = VerifyStateFile::from_bytes(&bytes, Path::new("s")).unwrap();
        assert_eq!(back, state());
        let mut damaged = bytes.clone();
        damaged[HEADER + 20] ^= 1;
        let err = VerifyStateFile::from_bytes(&damaged, Path::new("s")).unwrap_err();
        assert!(err.to_string().contains("damaged"), "{err}");
        assert!(VerifyStateFile::from_bytes(&bytes[..40], Path::new("s")).is_err());
    }

    #[test]
    fn reading_back_stops_at_the_first_write_not_completed() {
        let s = state();
        // Reads 0..6 are before the window of the last 4 writes.
        assert!(!s.stops_before(0, 0, 0));
        assert!(!s.stops_before(5, 0, 20480));
        // In it: completed writes are read back, the first one not seen stops it.
        assert!(!s.stops_before(6, 0, 24576));
        assert!(!s.stops_before(9, 0, 36864));
        assert!(s.stops_before(10, 0, 40960));
        assert!(s.stops_before(7, 1, 28672), "another file's offset");
    }
}
