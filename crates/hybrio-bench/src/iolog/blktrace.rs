//! blktrace captures, read as fio 3.42 replays them: the binary records
//! (`struct blk_io_trace`, 48 bytes, each followed by `pdu_len` bytes of
//! payload), of which only the queue events count: reads, writes,
//! discards (trims) and flushes (syncs), at the times they were queued.
//! fio wants the per-CPU traces merged into one file (`blkparse -d`).
//! `merge_blktrace_file` merges several such captures into one, each
//! scaled in time and repeated as asked.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::steps::{Action, IologError, Replay, Step, What, delay_since, map_offset};
use crate::options::JobOptions;

/// `BLK_IO_TRACE_MAGIC`, the record's first word with its version below it.
pub const MAGIC: u32 = 0x6561_7400;
/// The record version fio reads.
pub const VERSION: u32 = 7;
/// Bytes of a record before its payload.
pub const RECORD: usize = 48;

/// The action's category bits sit above its kind.
const TC_SHIFT: u32 = 16;
/// `BLK_TC_READ`: the request reads.
pub const TC_READ: u32 = 1 << TC_SHIFT;
/// `BLK_TC_WRITE`: the request writes.
pub const TC_WRITE: u32 = 2 << TC_SHIFT;
/// `BLK_TC_FLUSH`: the request flushes.
pub const TC_FLUSH: u32 = 4 << TC_SHIFT;
/// `BLK_TC_QUEUE`: a queueing event.
pub const TC_QUEUE: u32 = (1 << 4) << TC_SHIFT;
/// `BLK_TC_COMPLETE`: a completion.
pub const TC_COMPLETE: u32 = (1 << 7) << TC_SHIFT;
/// `BLK_TC_NOTIFY`: a message, not a request.
pub const TC_NOTIFY: u32 = (1 << 10) << TC_SHIFT;
/// `BLK_TC_DISCARD`: the request discards (a trim).
pub const TC_DISCARD: u32 = (1 << 13) << TC_SHIFT;
/// `__BLK_TA_QUEUE`: the request was queued (the event fio replays).
pub const TA_QUEUE: u32 = 1;
/// `__BLK_TA_BACKMERGE`: merged into the request before it.
pub const TA_BACKMERGE: u32 = 2;
/// `__BLK_TA_FRONTMERGE`: merged into the request after it.
pub const TA_FRONTMERGE: u32 = 3;
/// `__BLK_TA_COMPLETE`: the device completed it.
pub const TA_COMPLETE: u32 = 8;

/// One record, in this machine's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record {
    /// `MAGIC | VERSION`.
    pub magic: u32,
    /// The event's number.
    pub sequence: u32,
    /// Nanoseconds since the capture began.
    pub time: u64,
    /// Where (512-byte sectors).
    pub sector: u64,
    /// How much (bytes).
    pub bytes: u32,
    /// What happened (`__BLK_TA_*`) and to what (`BLK_TC_*` above bit 16).
    pub action: u32,
    /// Who did it.
    pub pid: u32,
    /// The device (`dev_t`, major above bit 20).
    pub device: u32,
    /// On which CPU.
    pub cpu: u32,
    /// The completion's error.
    pub error: u16,
    /// Bytes of payload after the record.
    pub pdu_len: u16,
}

impl Record {
    /// Reads a record written little-endian (or big-endian: `swap`).
    pub fn parse(bytes: &[u8; RECORD], swap: bool) -> Record {
        let u16_at = |at| u16::from_le_bytes(field(bytes, at, swap));
        let u32_at = |at| u32::from_le_bytes(field(bytes, at, swap));
        let u64_at = |at| u64::from_le_bytes(field(bytes, at, swap));
        Record {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    /// The record as blktrace writes it on a little-endian machine.
    pub fn to_bytes(&self) -> [u8; RECORD] {
        let mut out = [0u8; RECORD];
        out[0..4].copy_from_slice(&self.magic.to_le_bytes());
        out[4..8].copy_from_slice(&self.sequence.to_le_bytes());
        out[8..16].copy_from_slice(&self.time.to_le_bytes());
        out[16..24].copy_from_slice(&self.sector.to_le_bytes());
        out[24..28].copy_from_slice(&self.bytes.to_le_bytes());
        out[28..32].copy_from_slice(&self.action.to_le_bytes());
        out[32..36].copy_from_slice(&self.pid.to_le_bytes());
        out[36..40].copy_from_slice(&self.device.to_le_bytes());
        out[40..44].copy_from_slice(&self.cpu.to_le_bytes());
        out[44..46].copy_from_slice(&self.error.to_le_bytes());
        out[46..48].copy_from_slice(&self.pdu_len.to_le_bytes());
        out
    }

    /// An event as blktrace records it (`action`: `TA_*` with `TC_*`
    /// bits), for tests and tools that make captures.
    pub fn event(time: u64, sector: u64, bytes: u32, action: u32, device: u32) -> Record {
        Record {
            magic: MAGIC | VERSION,
            time,
            sector,
            bytes,
            action,
            device,
            ..Record::default()
        }
    }

    fn kind(&self) -> u32 {
        self.action & 0xffff
    }

    /// Its direction, as fio's `t_get_ddir` (0 read, 1 write, 2 trim).
    fn direction(&self) -> Option<usize> {
        if self.action & TC_READ != 0 {
            Some(0)
        } else if self.action & TC_WRITE != 0 {
            Some(1)
        } else if self.action & TC_DISCARD != 0 {
            Some(2)
        } else {
            None
        }
    }
}

/// `N` bytes of a record from `at`, in little-endian order.
fn field<const N: usize>(bytes: &[u8; RECORD], at: usize, swap: bool) -> [u8; N] {
    let mut field: [u8; N] = bytes[at..at + N].try_into().expect("within the record");
    if swap {
        field.reverse();
    }
    field
}

/// Whether `bytes` start with a blktrace record (either byte order), as
/// fio tells a capture from a text log.
pub fn is_blktrace(bytes: &[u8]) -> bool {
    swapped(bytes).is_some()
}

/// Whether the capture is big-endian (`Some(true)`), little-endian, or
/// not a capture.
fn swapped(bytes: &[u8]) -> Option<bool> {
    let first: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    if bytes.len() < RECORD {
        return None;
    }
    if u32::from_le_bytes(first) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if u32::from_be_bytes(first) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// Walks a capture's records, checking each as fio does.
struct Records<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    at: usize,
    swap: bool,
}

impl Iterator for Records<'_> {
    type Item = Result<Record, IologError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let (path, start) = (self.path, self.at as u64);
        let bad = |message: String| IologError::Trace {
            path: path.to_path_buf(),
            offset: start,
            message,
        };
        let Some(raw) = self.bytes.get(self.at..self.at + RECORD) else {
            let left = self.bytes.len() - self.at;
            self.at = self.bytes.len();
            return Some(Err(bad(format!(
                "{left} bytes left, short of a {RECORD}-byte record (a truncated capture?)"
            ))));
        };
        let record = Record::parse(raw.try_into().expect("a record's bytes"), self.swap);
        if record.magic & 0xffff_ff00 != MAGIC {
            self.at = self.bytes.len();
            return Some(Err(bad(format!("bad magic {:#x}", record.magic))));
        }
        if record.magic & 0xff != VERSION {
            self.at = self.bytes.len();
            return Some(Err(bad(format!(
                "blktrace version {}; fio reads version {VERSION}",
                record.magic & 0xff
            ))));
        }
        self.at += RECORD + usize::from(record.pdu_len);
        Some(Ok(record))
    }
}

fn records<'a>(path: &'a Path, bytes: &'a [u8]) -> Records<'a> {
    Records {
        path,
        bytes,
        at: 0,
        swap: swapped(bytes).unwrap_or(false),
    }
}

/// Reads the capture `bytes` (from `path`) into the job's replay.
pub fn read(options: &JobOptions, path: &Path, bytes: &[u8]) -> Result<Replay, IologError> {
    let mut replay = Replay::default();
    let mut devices: Vec<(u32, usize)> = Vec::new();
    let mut files = Vec::new();
    let mut file_for = |device| file_of(options, path, &mut devices, &mut files, device);
    let mut last_time = 0;
    // Requests queued and not yet completed, per direction, and the most
    // seen at once: the depth the capture ran at.
    let mut queued = [0i64; 3];
    let mut deepest = [0i64; 3];
    let mut ios = [0u64; 4];
    for record in records(path, bytes) {
        let record = record?;
        let notify = record.action & TC_NOTIFY != 0;
        if !notify && let Some(dir) = record.direction() {
            match record.kind() {
                TA_QUEUE => queued[dir] += 1,
                TA_BACKMERGE | TA_FRONTMERGE => queued[dir] -= 1,
                TA_COMPLETE => {
                    deepest[dir] = deepest[dir].max(queued[dir]);
                    queued[dir] = 0;
                }
                _ => {}
            }
        }
        if record.kind() != TA_QUEUE || notify {
            continue;
        }
        // Nanoseconds in the capture; fio waits in microseconds.
        let delay_us = delay_since(options, last_time, record.time) / 1000;
        last_time = record.time;
        let bytes = match options.iolog.align {
            0 => u64::from(record.bytes),
            align => u64::from(record.bytes).div_ceil(align) * align,
        };
        let skip = options.iolog.skip;
        let (action, dir) = if record.action & TC_DISCARD != 0 {
            if skip.trim {
                continue;
            }
            (Action::Trim, 2)
        } else if record.action & TC_FLUSH != 0 {
            if skip.sync {
                continue;
            }
            (Action::Sync, 3)
        } else {
            // fio adds a skipped request's device all the same.
            file_for(record.device)?;
            let write = record.action & TC_WRITE != 0;
            if (write && skip.write) || (!write && skip.read) || bytes == 0 {
                continue;
            }
            if write {
                (Action::Write, 1)
            } else {
                (Action::Read, 0)
            }
        };
        let file = file_for(record.device)?;
        ios[dir] += 1;
        let (offset, len) = if action == Action::Sync {
            (0, 0)
        } else {
            (
                map_offset(options, record.sector.saturating_mul(512)),
                bytes,
            )
        };
        replay.steps.push(Step {
            delay_us,
            what: What::Io {
                action,
                file,
                offset,
                len,
            },
        });
    }
    replay.files = files;
    if ios.iter().all(|&n| n == 0) {
        return Err(IologError::Log {
            path: path.to_path_buf(),
            message: "no I/O to replay in this blktrace capture (no queue event of a read, write, discard or flush)".into(),
        });
    }
    // Stacked devices may not complete every request in the trace: fio
    // caps the depth at 1024.
    let depth = (0..3)
        .map(|dir| match deepest[dir] {
            d if d > 1024 => 1024,
            d if d <= 0 && ios[dir] > 0 => 1,
            d => d.max(0),
        })
        .max()
        .unwrap_or(1)
        .max(1);
    replay.depth = Some(depth as u32);
    Ok(replay)
}

/// The replay's file for a device: `replay_redirect`, or the block
/// device of that number under /dev.
fn file_of(
    options: &JobOptions,
    path: &Path,
    devices: &mut Vec<(u32, usize)>,
    files: &mut Vec<PathBuf>,
    device: u32,
) -> Result<usize, IologError> {
    if let Some(&(_, index)) = devices.iter().find(|(d, _)| *d == device) {
        return Ok(index);
    }
    let (major, minor) = (device >> 20, device & ((1 << 20) - 1));
    let target = match &options.iolog.redirect {
        Some(redirect) => PathBuf::from(redirect),
        None => find_device(Path::new("/dev"), major, minor).ok_or_else(|| IologError::Log {
            path: path.to_path_buf(),
            message: format!(
                "the capture's device {major}:{minor} is no block device under /dev here (replay_redirect names where to replay it)"
            ),
        })?,
    };
    let index = match files.iter().position(|f| *f == target) {
        Some(index) => index,
        None => {
            files.push(target);
            files.len() - 1
        }
    };
    devices.push((device, index));
    Ok(index)
}

/// The block device `major:minor` under `dir`, as fio's
/// `blktrace_lookup_device` searches it.
fn find_device(dir: &Path, major: u32, minor: u32) -> Option<PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Some(found) = find_device(&path, major, minor) {
                return Some(found);
            }
        } else if meta.file_type().is_block_device() {
            let rdev = meta.rdev();
            if rustix::fs::major(rdev) == major && rustix::fs::minor(rdev) == minor {
                return Some(path);
            }
        }
    }
    None
}

/// `merge_blktrace_file`: the captures `inputs` merged into `merged` in
/// time order, the queue events of reads, writes and discards only (their
/// payload left out), each capture's times scaled by its
/// `merge_blktrace_scalars` percentage and the capture repeated
/// `merge_blktrace_iters` times, each repeat after the one before.
pub fn merge(options: &JobOptions, inputs: &[PathBuf], merged: &Path) -> Result<(), IologError> {
    let per_capture = |values: &[f64], name: &str, default: u64| {
        if values.is_empty() {
            return Ok(vec![default; inputs.len()]);
        }
        if values.len() != inputs.len() {
            return Err(IologError::Log {
                path: merged.to_path_buf(),
                message: format!(
                    "{name} has {} values for {} captures in read_iolog",
                    values.len(),
                    inputs.len()
                ),
            });
        }
        // fio takes each as a whole number.
        Ok(values.iter().map(|v| *v as u64).collect())
    };
    let scalars = per_capture(&options.iolog.merge_scalars, "merge_blktrace_scalars", 100)?;
    let iters = per_capture(&options.iolog.merge_iters, "merge_blktrace_iters", 1)?;
    let mut events: Vec<(u64, usize, usize, Record)> = Vec::new();
    for (capture, path) in inputs.iter().enumerate() {
        let bytes = std::fs::read(path).map_err(|source| IologError::Io {
            op: "read",
            path: path.clone(),
            source,
        })?;
        if !is_blktrace(&bytes) {
            return Err(IologError::Log {
                path: path.clone(),
                message: "not a blktrace capture (merge_blktrace_file merges captures)".into(),
            });
        }
        let all: Vec<Record> = records(path, &bytes).collect::<Result<_, _>>()?;
        // A repeat starts where the capture's last event left off.
        let length = all.last().map_or(0, |r| r.time);
        let kept: Vec<Record> = all
            .into_iter()
            .filter(|r| r.kind() == TA_QUEUE && r.direction().is_some())
            .collect();
        let mut order = 0;
        for iter in 0..iters[capture] {
            for record in &kept {
                let time = record
                    .time
                    .saturating_add(iter.saturating_mul(length))
                    .saturating_mul(scalars[capture])
                    / 100;
                let mut record = *record;
                record.time = time;
                record.pdu_len = 0;
                events.push((time, capture, order, record));
                order += 1;
            }
        }
    }
    // The earliest first; at the same time, the capture named first.
    events.sort_by_key(|&(time, capture, order, _)| (time, capture, order));
    let wrap = |source| IologError::Io {
        op: "write",
        path: merged.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(merged).map_err(wrap)?;
    let mut out = std::io::BufWriter::new(file);
    for (.., record) in &events {
        out.write_all(&record.to_bytes()).map_err(wrap)?;
    }
    out.flush().map_err(wrap)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: u32 = (8 << 20) | 16;

    fn capture(records: &[Record]) -> Vec<u8> {
        records.iter().flat_map(Record::to_bytes).collect()
    }

    fn steps(replay: &Replay) -> Vec<(u64, Action, u64, u64)> {
        replay
            .steps
            .iter()
            .map(|s| match s.what {
                What::Io {
                    action,
                    offset,
                    len,
                    ..
                } => (s.delay_us, action, offset, len),
                other => panic!("not an I/O: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn queue_events_are_replayed_at_their_times() {
        let queued_read = TA_QUEUE | TC_QUEUE | TC_READ;
        let queued_write = TA_QUEUE | TC_QUEUE | TC_WRITE;
        let mut message = Record::event(0, 0, 0, TC_NOTIFY, DEV);
        message.pdu_len = 5;
        let mut bytes = capture(&[message]);
        bytes.extend_from_slice(b"hello");
        bytes.extend(capture(&[
            Record::event(1_000_000, 8, 4096, queued_read, DEV),
            Record::event(1_500_000, 8, 4096, TA_COMPLETE | TC_COMPLETE | TC_READ, DEV),
            Record::event(3_000_000, 64, 8192, queued_write, DEV),
            Record::event(3_100_000, 80, 4096, TA_BACKMERGE | TC_QUEUE | TC_WRITE, DEV),
            Record::event(4_000_000, 0, 0, queued_write, DEV),
            Record::event(5_000_000, 128, 4096, TA_QUEUE | TC_QUEUE | TC_DISCARD, DEV),
            Record::event(6_000_000, 0, 0, TA_QUEUE | TC_QUEUE | TC_FLUSH, DEV),
        ]));
        assert!(is_blktrace(&bytes));
        let mut options = JobOptions::default();
        options.iolog.redirect = Some("target".into());
        let replay = read(&options, Path::new("t.bin"), &bytes).unwrap();
        assert_eq!(replay.files, [PathBuf::from("target")]);
        // The first queue event waits for nothing; each after it for the
        // time since the one before, a skipped empty write's included.
        assert_eq!(
            steps(&replay),
            [
                (0, Action::Read, 4096, 4096),
                (2000, Action::Write, 32768, 8192),
                (1000, Action::Trim, 65536, 4096),
                (1000, Action::Sync, 0, 0),
            ]
        );
        assert_eq!(replay.depth, Some(1));
    }

    #[test]
    fn a_big_endian_capture_reads_the_same() {
        let record = Record::event(7, 9, 512, TA_QUEUE | TC_QUEUE | TC_READ, DEV);
        let mut swapped = record.to_bytes();
        for (at, len) in [
            (0, 4),
            (4, 4),
            (8, 8),
            (16, 8),
            (24, 4),
            (28, 4),
            (32, 4),
            (36, 4),
            (40, 4),
            (44, 2),
            (46, 2),
        ] {
            swapped[at..at + len].reverse();
        }
        assert!(is_blktrace(&swapped));
        assert_eq!(
            records(Path::new("t"), &swapped).next().unwrap().unwrap(),
            record
        );
    }

    #[test]
    fn a_bad_record_names_where_it_starts() {
        let mut bytes = capture(&[Record::event(1, 0, 512, TA_QUEUE | TC_READ, DEV)]);
        let mut old = Record::event(2, 0, 512, TA_QUEUE | TC_READ, DEV);
        old.magic = MAGIC | 6;
        bytes.extend(capture(&[old]));
        let mut options = JobOptions::default();
        options.iolog.redirect = Some("target".into());
        let err = read(&options, Path::new("t.bin"), &bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.bin at byte 48: blktrace version 6; fio reads version 7"
        );
        bytes.truncate(60);
        let err = read(&options, Path::new("t.bin"), &bytes).unwrap_err();
        assert!(err.to_string().contains("12 bytes left"), "{err}");
    }

    #[test]
    fn merging_interleaves_the_captures_scaled_and_repeated() {
        let dir = tempfile::tempdir().unwrap();
        let queued_read = TA_QUEUE | TC_QUEUE | TC_READ;
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.bin");
        std::fs::write(
            &a,
            capture(&[
                Record::event(100, 1, 512, queued_read, DEV),
                Record::event(300, 2, 512, queued_read, DEV),
            ]),
        )
        .unwrap();
        std::fs::write(&b, capture(&[Record::event(150, 3, 512, queued_read, DEV)])).unwrap();
        let mut options = JobOptions::default();
        options.iolog.merge_scalars = vec![100.0, 200.0];
        options.iolog.merge_iters = vec![2.0, 1.0];
        let merged = dir.path().join("m.bin");
        merge(&options, &[a, b], &merged).unwrap();
        let bytes = std::fs::read(&merged).unwrap();
        let got: Vec<(u64, u64)> = records(&merged, &bytes)
            .map(|r| r.map(|r| (r.time, r.sector)).unwrap())
            .collect();
        // a at 100 and 300, then again 300 later; b's 150 doubled to 300.
        assert_eq!(got, [(100, 1), (300, 2), (300, 3), (400, 1), (600, 2)]);
        options.iolog.merge_iters = vec![1.0];
        let err = merge(
            &options,
            &[dir.path().join("a.bin"), dir.path().join("b.bin")],
            &merged,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("merge_blktrace_iters has 1 values for 2 captures"),
            "{err}"
        );
    }
}
