//! The checker: fills each block as it is written (header, random bytes or
//! pattern, checksum) and checks it when it is read back. Apart from
//! `mod.rs`, which gathers verify's parts, as `verify_async`'s checkers
//! (`offload.rs`) run copies of it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::checksum::{Sha512, VerifyKind};
use super::header::{Header, Layout, MAGIC};
use super::pattern::Pattern;
use crate::fio_rand::{FioRand, fill_random};
use crate::fio_version::FioVersion;

/// How a job verifies, as its options resolve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyConfig {
    /// What each block is checked with.
    pub kind: VerifyKind,
    /// Bytes each header covers (fio's resolved `verify_interval`).
    pub interval: u64,
    /// Where in its block the header is moved to (`verify_offset`; 0: at the start).
    pub header_offset: usize,
    /// `verify_pattern`.
    pub pattern: Option<Pattern>,
    /// `verify_pattern_interval`: the pattern starts again, `%o` filled in
    /// anew, every this many bytes of a request (0: once per request).
    pub pattern_interval: u64,
    /// Stop at a block's first bad header or checksum (`verify_fatal`).
    pub fatal: bool,
    /// Write the received and expected bytes of a bad block to files (`verify_dump`).
    pub dump: bool,
    /// The fio whose header and SHA-512 are written (`fio_compat`). Blocks
    /// read back are checked in whichever layout they carry.
    pub fio: FioVersion,
    /// Check a header's seed against the one expected (`verify_header_seed`).
    pub header_seed: bool,
    /// Check a header's sequence number against the one expected
    /// (`verify_write_sequence`).
    pub write_sequence: bool,
}

impl VerifyConfig {
    /// Bytes at the start of each block written that are not data: the
    /// header and the checksum (none for `pattern` without a header).
    pub fn header_len(&self) -> usize {
        self.kind.header_len(self.layout())
    }

    /// The header layout written.
    pub fn layout(&self) -> Layout {
        Layout::written_by(self.fio)
    }

    /// The SHA-512s a block in `layout` may carry, the likelier first (its
    /// checksum is what a mismatch shows). A versioned header is fio
    /// 3.41's or later, with the finished SHA-512. An unversioned one is
    /// from fio 3.40 or older, which finished it from 3.39 on: hybrio
    /// takes either, naming first the one `fio_compat` writes when it names
    /// a fio of unversioned headers, else fio 3.38's and older (the fios
    /// distributions shipped before 3.39).
    fn sha512s(&self, layout: Layout) -> [Option<Sha512>; 2] {
        match layout {
            Layout::Versioned => [Some(Sha512::Finished), None],
            Layout::Unversioned => {
                let first = if self.fio.versioned_verify_header() {
                    Sha512::Unfinished
                } else {
                    Sha512::written_by(self.fio)
                };
                [Some(first), Some(first.other())]
            }
        }
    }
}

/// What a block read back is expected to carry beyond its offset: known for
/// blocks this job wrote; for blocks written by another run, taken from
/// their headers (as fio takes them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expected {
    /// The seed the write's bytes came from.
    pub rand_seed: Option<u64>,
    /// The write's sequence number.
    pub numberio: Option<u64>,
}

/// One bad block, described as fio describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// What failed: the kind's name (`crc32c`), `verify` for the header, `pattern`.
    pub check: String,
    /// The file.
    pub file: String,
    /// Where the bad block starts.
    pub offset: u64,
    /// Its length (the verify interval).
    pub len: u64,
    /// The request the block was read with.
    pub request_offset: u64,
    /// See `request_offset`.
    pub request_len: u64,
    /// fio's lines on what differs (the header field, or the checksums).
    pub detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.check == "verify" {
            // fio's header complaint: the field first, then where.
            write!(
                f,
                "verify: {} at file {} offset {}, length {} (requested block: offset={}, length={})",
                self.detail,
                self.file,
                self.offset,
                self.len,
                self.request_offset,
                self.request_len
            )
        } else {
            write!(
                f,
                "{}: verify failed at file {} offset {}, length {} (requested block: offset={}, length={}, flags=0)",
                self.check, self.file, self.offset, self.len, self.request_offset, self.request_len
            )?;
            if !self.detail.is_empty() {
                write!(f, "\n{}", self.detail)?;
            }
            Ok(())
        }
    }
}

/// The outcome of checking one buffer read back.
#[derive(Debug, Default)]
pub struct Checked {
    /// Blocks (headers) looked at.
    pub blocks: u64,
    /// The bad ones.
    pub mismatches: Vec<Mismatch>,
    /// Files `verify_dump` wrote.
    pub dumped: Vec<PathBuf>,
}

/// What a block's header says of its write, and how it was laid out.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    seed: u64,
    numberio: u64,
    when: SystemTime,
    thread: u16,
    layout: Layout,
    sha512: Sha512,
}

/// One job's verify: fills blocks to write and checks blocks read back.
#[derive(Debug, Clone)]
pub struct Verifier {
    config: VerifyConfig,
    /// The job's number (from 1): fio's `thread` field.
    thread: u16,
    rand: FioRand,
    /// Where `verify_dump` writes.
    dump_dir: PathBuf,
}

impl Verifier {
    /// A job's verifier; `seed` is fio's verify seed for the job
    /// ([`job_seeds`](crate::fio_rand::job_seeds)`[VERIFY_SEED]`), `use64` its
    /// `tausworthe64`.
    pub fn new(config: VerifyConfig, thread: u16, seed: u64, use64: bool) -> Verifier {
        Verifier {
            config,
            thread,
            rand: FioRand::new(seed, use64),
            dump_dir: PathBuf::from("."),
        }
    }

    /// How the job verifies.
    pub fn config(&self) -> &VerifyConfig {
        &self.config
    }

    /// Bytes each header covers in a request of `len` bytes.
    fn step(&self, len: usize) -> usize {
        let interval = self.config.interval as usize;
        if interval > 0 && interval <= len {
            interval
        } else {
            len
        }
    }

    /// Fills a buffer about to be written at `offset`: random bytes (or
    /// the pattern), then each block's header and checksum. Returns the
    /// seed the bytes came from.
    pub fn fill(&mut self, buf: &mut [u8], offset: u64, numberio: u64, now: SystemTime) -> u64 {
        if self.config.kind == VerifyKind::Null {
            return 0;
        }
        let seed = self.next_seed();
        let stamp = Stamp {
            seed,
            numberio,
            when: now,
            thread: self.thread,
            layout: self.config.layout(),
            sha512: Sha512::written_by(self.config.fio),
        };
        self.fill_with(buf, offset, &stamp);
        seed
    }

    /// The seed of the next block's random bytes, as the job's generator
    /// gives it (0 with a pattern, which takes none).
    pub fn next_seed(&mut self) -> u64 {
        match &self.config.pattern {
            None => self.rand.next_buffer_seed(),
            Some(_) => 0,
        }
    }

    fn fill_with(&self, buf: &mut [u8], offset: u64, stamp: &Stamp) {
        match &self.config.pattern {
            None => fill_random(buf, stamp.seed),
            Some(pattern) => {
                // fio's fill_verify_pattern: the pattern from its start at
                // each interval, `%o` the offset there.
                let every = match self.config.pattern_interval as usize {
                    0 => buf.len().max(1),
                    every => every,
                };
                for (k, chunk) in buf.chunks_mut(every).enumerate() {
                    let at = offset + (k * every) as u64;
                    Pattern::fill(&pattern.for_offset(at), chunk);
                }
            }
        }
        if self.config.kind == VerifyKind::PatternNoHeader {
            return;
        }
        let since = stamp
            .when
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let step = self.step(buf.len());
        let layout = stamp.layout;
        let header_len = self.config.kind.header_len(layout);
        for (n, block) in buf.chunks_mut(step).enumerate() {
            if block.len() < header_len {
                break;
            }
            Header {
                layout,
                magic: MAGIC,
                verify_type: self.config.kind.code(),
                len: step as u32,
                rand_seed: stamp.seed,
                offset: offset + n as u64 * self.config.interval,
                time_sec: since.as_secs() as u32,
                time_nsec: since.subsec_nanos(),
                thread: stamp.thread,
                numberio: stamp.numberio,
                crc32: 0,
            }
            .write(block);
            let (head, data) = block.split_at_mut(header_len);
            self.config
                .kind
                .checksum(data, &mut head[layout.bytes()..], stamp.sha512);
            self.swap_header(block, header_len);
        }
    }

    /// `verify_offset`: the header (`len` bytes with its checksum) trades
    /// places with the bytes there.
    fn swap_header(&self, block: &mut [u8], len: usize) {
        let at = self.config.header_offset;
        if at == 0 || len == 0 || at + len > block.len() {
            return;
        }
        let (head, rest) = block.split_at_mut(at);
        head[..len].swap_with_slice(&mut rest[..len]);
    }

    /// Checks a buffer read back from `offset` of `file`. The buffer is
    /// changed only where `verify_offset` moved headers (moved back).
    pub fn check(&self, buf: &mut [u8], offset: u64, file: &Path, expected: Expected) -> Checked {
        let mut checked = Checked::default();
        if self.config.kind == VerifyKind::Null || buf.is_empty() {
            return checked;
        }
        let step = self.step(buf.len());
        let request_len = buf.len() as u64;
        let has_header = self.config.kind != VerifyKind::PatternNoHeader;
        let name = file.display().to_string();
        for n in 0..buf.len().div_ceil(step) {
            if self.config.fatal && !checked.mismatches.is_empty() {
                break;
            }
            let start = n * step;
            let block = &mut buf[start..(start + step).min(request_len as usize)];
            // Each block in the layout it carries, whatever this run writes:
            // a file fio 3.33 wrote is checked as well as one fio 3.42 wrote.
            let at = self.config.header_offset;
            let layout = block
                .get(at..at + 3)
                .and_then(|b| Layout::of(b).ok())
                .unwrap_or(self.config.layout());
            let header_len = self.config.kind.header_len(layout);
            if block.len() < header_len {
                break;
            }
            self.swap_header(block, header_len);
            checked.blocks += 1;
            let block_offset = offset + start as u64;
            let mismatch = |check: &str, detail: String| Mismatch {
                check: check.to_string(),
                file: name.clone(),
                offset: block_offset,
                len: step as u64,
                request_offset: offset,
                request_len,
                detail,
            };
            let mut header = None;
            if has_header {
                match self.header_fault(block, offset, n, step, expected) {
                    Ok(read) => header = Some(read),
                    Err(detail) => {
                        // fio stops at a bad header: nothing after it can be trusted.
                        let bad = mismatch("verify", detail);
                        if self.config.dump {
                            checked.dumped.extend(self.dump(
                                &name,
                                block_offset,
                                "hdr_fail",
                                block,
                            ));
                        }
                        checked.mismatches.push(bad);
                        return checked;
                    }
                }
            }
            if let Some(header) = header
                && header.verify_type != self.config.kind.code()
            {
                checked.mismatches.push(mismatch(
                    self.config.kind.name(),
                    format!(
                        "fio: verify type mismatch ({} media, {} given)",
                        header.verify_type,
                        self.config.kind.code()
                    ),
                ));
                continue;
            }
            let fault = match self.config.kind {
                kind if kind.has_checksum() => self.checksum_fault(block, layout),
                VerifyKind::Meta if self.config.pattern.is_none() => None,
                _ => self.pattern_fault(block, offset, n, step, header_len),
            };
            if let Some((check, detail)) = fault {
                if self.config.dump
                    && let Some(header) = header
                {
                    checked
                        .dumped
                        .extend(self.dump(&name, block_offset, "received", block));
                    let expected_block = self.expected_block(&header, offset, start, block.len());
                    checked.dumped.extend(self.dump(
                        &name,
                        block_offset,
                        "expected",
                        &expected_block,
                    ));
                }
                checked.mismatches.push(mismatch(check, detail));
            }
        }
        checked
    }

    /// The block at `start` of a request at `offset` as its header says it
    /// was written, in its layout (`verify_dump`'s `.expected`).
    fn expected_block(&self, header: &Header, offset: u64, start: usize, len: usize) -> Vec<u8> {
        let mut expected_buf = vec![0; start + len];
        let [sha512, _] = self.config.sha512s(header.layout);
        let stamp = Stamp {
            seed: header.rand_seed,
            numberio: header.numberio,
            when: SystemTime::UNIX_EPOCH
                + std::time::Duration::new(u64::from(header.time_sec), header.time_nsec),
            thread: header.thread,
            layout: header.layout,
            sha512: sha512.unwrap_or(Sha512::Finished),
        };
        self.fill_with(&mut expected_buf, offset, &stamp);
        let mut block = expected_buf.split_off(start);
        // As the block read back is by now: its header moved back.
        self.swap_header(&mut block, self.config.kind.header_len(header.layout));
        block
    }

    /// The block's header, or what is wrong with it, in fio's words.
    fn header_fault(
        &self,
        block: &[u8],
        offset: u64,
        n: usize,
        step: usize,
        expected: Expected,
    ) -> Result<Header, String> {
        let magic = u16::from_le_bytes([block[0], block[1]]);
        if magic != MAGIC {
            return Err(format!("bad magic header {magic:x}, wanted {MAGIC:x}"));
        }
        let header = Header::read(block).map_err(|unknown| unknown.to_string())?;
        if header.len as usize != step {
            return Err(format!("bad header length {}, wanted {}", header.len, step));
        }
        if let Some(seed) = expected.rand_seed.filter(|_| self.config.header_seed)
            && header.rand_seed != seed
        {
            return Err(format!(
                "bad header rand_seed {}, wanted {}",
                header.rand_seed, seed
            ));
        }
        let wanted = offset + n as u64 * self.config.interval;
        if header.offset != wanted {
            return Err(format!(
                "bad header offset {}, wanted {}",
                header.offset, wanted
            ));
        }
        // The unversioned layout keeps the low 16 bits.
        let wanted_numberio = expected.numberio.filter(|_| self.config.write_sequence);
        let numberio = wanted_numberio.map(|numberio| match header.layout {
            Layout::Unversioned => numberio & 0xffff,
            Layout::Versioned => numberio,
        });
        if let Some(numberio) = numberio
            && header.numberio != numberio
        {
            return Err(format!(
                "bad header numberio {}, wanted {}",
                header.numberio, numberio
            ));
        }
        let crc = header.computed_crc(block);
        if header.crc32 != crc {
            return Err(format!(
                "bad header crc {:x}, calculated {:x}",
                header.crc32, crc
            ));
        }
        Ok(header)
    }

    /// Whether the block's data leaves its checksum, in fio's words.
    fn checksum_fault(&self, block: &[u8], layout: Layout) -> Option<(&'static str, String)> {
        let kind = self.config.kind;
        let (head, data) = block.split_at(kind.header_len(layout));
        let stored = &head[layout.bytes()..];
        let mut shown = None;
        for sha512 in self.config.sha512s(layout).into_iter().flatten() {
            let mut computed = stored.to_vec();
            kind.checksum(data, &mut computed, sha512);
            if computed == stored {
                return None;
            }
            shown.get_or_insert(computed);
            if kind != VerifyKind::Sha512 {
                break;
            }
        }
        let computed = shown.unwrap_or_default();
        Some((
            kind.name(),
            format!(
                "       Expected CRC: {}\n       Received CRC: {}",
                hexdump(stored),
                hexdump(&computed)
            ),
        ))
    }

    /// Where the bytes after the header leave the pattern, in fio's words.
    /// With `verify_pattern_interval` each interval of the request holds the
    /// pattern from its start, `%o` the offset there.
    fn pattern_fault(
        &self,
        block: &[u8],
        offset: u64,
        n: usize,
        step: usize,
        header_len: usize,
    ) -> Option<(&'static str, String)> {
        let pattern = self.config.pattern.as_ref()?;
        let data = &block[header_len..];
        // Where the data starts in the request.
        let from = step * n + header_len;
        let every = match self.config.pattern_interval as usize {
            0 => usize::MAX,
            every => every,
        };
        let mut done = 0;
        while done < data.len() {
            let at = from + done;
            let chunk_start = at - at % every;
            let len = (data.len() - done).min(every - at % every);
            let bytes = pattern.for_offset(offset + chunk_start as u64);
            let phase = (at - chunk_start) % bytes.len();
            if let Some(bad) = Pattern::first_difference(&bytes, phase, &data[done..done + len]) {
                let at = done + bad;
                let wanted = bytes[(phase + bad) % bytes.len()];
                let shown = if self.config.fio.pattern_offset_in_block() {
                    at + header_len
                } else {
                    at
                };
                return Some((
                    "pattern",
                    format!(
                        "fio: got pattern '{:02x}', wanted '{:02x}'. Bad bits {}\nfio: bad pattern block offset {}",
                        data[at],
                        wanted,
                        (data[at] ^ wanted).count_ones(),
                        shown
                    ),
                ));
            }
            done += len;
        }
        None
    }

    /// `verify_dump`: `NAME.OFFSET.WHAT` in the working directory, as fio names them.
    fn dump(&self, file: &str, offset: u64, what: &str, bytes: &[u8]) -> Option<PathBuf> {
        let base = Path::new(file).file_name()?.to_string_lossy().into_owned();
        let path = self.dump_dir.join(format!("{base}.{offset}.{what}"));
        std::fs::write(&path, bytes).ok().map(|()| path)
    }
}

/// A checksum as fio prints it: one byte, two or three as one number; four
/// and more as 32-bit words in the machine's order, each followed by a space.
fn hexdump(bytes: &[u8]) -> String {
    let mut word = [0u8; 4];
    match bytes.len() {
        1..=3 => {
            word[..bytes.len()].copy_from_slice(bytes);
            format!(
                "{:0width$x}",
                u32::from_le_bytes(word),
                width = bytes.len() * 2
            )
        }
        _ => bytes
            .chunks(4)
            .map(|chunk| {
                word = [0; 4];
                word[..chunk.len()].copy_from_slice(chunk);
                format!("{:08x} ", u32::from_le_bytes(word))
            })
            .collect(),
    }
}

#[cfg(test)]
pub(super) mod tests;
