//! The checker: fills each block as it is written (header, random bytes or
//! pattern, checksum) and checks it when it is read back. Apart from
//! `mod.rs`, which gathers verify's parts, as `verify_async`'s checkers
//! (`offload.rs`) run copies of it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::checksum::VerifyKind;
use super::header::{HEADER_LEN, Header, MAGIC};
use super::pattern::Pattern;
use crate::fio_rand::{FioRand, fill_random};

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
    /// Stop at a block's first bad header or checksum (`verify_fatal`).
    pub fatal: bool,
    /// Write the received and expected bytes of a bad block to files (`verify_dump`).
    pub dump: bool,
}

impl VerifyConfig {
    /// Bytes at the start of each block that are not data: the header and
    /// the checksum (none for `pattern` without a header).
    pub fn header_len(&self) -> usize {
        self.kind.header_len()
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
    pub numberio: Option<u16>,
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
    pub fn fill(&mut self, buf: &mut [u8], offset: u64, numberio: u16, now: SystemTime) -> u64 {
        if self.config.kind == VerifyKind::Null {
            return 0;
        }
        let seed = match &self.config.pattern {
            None => self.rand.next_buffer_seed(),
            Some(_) => 0,
        };
        self.fill_with(buf, offset, seed, numberio, now, self.thread);
        seed
    }

    fn fill_with(
        &self,
        buf: &mut [u8],
        offset: u64,
        seed: u64,
        numberio: u16,
        when: SystemTime,
        thread: u16,
    ) {
        match &self.config.pattern {
            None => fill_random(buf, seed),
            Some(pattern) => Pattern::fill(&pattern.for_offset(offset), buf),
        }
        if self.config.kind == VerifyKind::PatternNoHeader {
            return;
        }
        let since = when
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let step = self.step(buf.len());
        let header_len = self.config.header_len();
        for (n, block) in buf.chunks_mut(step).enumerate() {
            if block.len() < header_len {
                break;
            }
            Header {
                magic: MAGIC,
                verify_type: self.config.kind.code(),
                len: step as u32,
                rand_seed: seed,
                offset: offset + n as u64 * self.config.interval,
                time_sec: since.as_secs() as u32,
                time_nsec: since.subsec_nanos(),
                thread,
                numberio,
                crc32: 0,
            }
            .write(block);
            let (head, data) = block.split_at_mut(header_len);
            self.config.kind.checksum(data, &mut head[HEADER_LEN..]);
            self.swap_header(block);
        }
    }

    /// `verify_offset`: the header trades places with the bytes there.
    fn swap_header(&self, block: &mut [u8]) {
        let at = self.config.header_offset;
        let len = self.config.header_len();
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
        let header_len = self.config.header_len();
        let name = file.display().to_string();
        for n in 0..buf.len().div_ceil(step) {
            if self.config.fatal && !checked.mismatches.is_empty() {
                break;
            }
            let start = n * step;
            let block = &mut buf[start..(start + step).min(request_len as usize)];
            if block.len() < header_len {
                break;
            }
            self.swap_header(block);
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
            let header = Header::read(block);
            if self.config.kind != VerifyKind::PatternNoHeader {
                if let Some(detail) = self.header_fault(&header, block, offset, n, step, expected) {
                    // fio stops at a bad header: nothing after it can be trusted.
                    let bad = mismatch("verify", detail);
                    if self.config.dump {
                        checked
                            .dumped
                            .extend(self.dump(&name, block_offset, "hdr_fail", block));
                    }
                    checked.mismatches.push(bad);
                    return checked;
                }
                if header.verify_type != self.config.kind.code() {
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
            }
            let fault = match self.config.kind {
                kind if kind.has_checksum() => {
                    let (head, data) = block.split_at(header_len);
                    let stored = &head[HEADER_LEN..];
                    let mut computed = stored.to_vec();
                    kind.checksum(data, &mut computed);
                    (computed != stored).then(|| {
                        (
                            kind.name(),
                            format!(
                                "       Expected CRC: {}\n       Received CRC: {}",
                                hexdump(stored),
                                hexdump(&computed)
                            ),
                        )
                    })
                }
                VerifyKind::Meta if self.config.pattern.is_none() => None,
                _ => self.pattern_fault(block, offset, n, step),
            };
            if let Some((check, detail)) = fault {
                if self.config.dump {
                    checked
                        .dumped
                        .extend(self.dump(&name, block_offset, "received", block));
                    let mut expected_buf = vec![0; request_len as usize];
                    let when = SystemTime::UNIX_EPOCH
                        + std::time::Duration::new(u64::from(header.time_sec), header.time_nsec);
                    self.fill_with(
                        &mut expected_buf,
                        offset,
                        header.rand_seed,
                        header.numberio,
                        when,
                        header.thread,
                    );
                    let expected_block = &mut expected_buf[start..start + block.len()];
                    self.swap_header(expected_block);
                    checked.dumped.extend(self.dump(
                        &name,
                        block_offset,
                        "expected",
                        expected_block,
                    ));
                }
                checked.mismatches.push(mismatch(check, detail));
            }
        }
        checked
    }

    /// What is wrong with a block's header, in fio's words, if anything.
    fn header_fault(
        &self,
        header: &Header,
        block: &[u8],
        offset: u64,
        n: usize,
        step: usize,
        expected: Expected,
    ) -> Option<String> {
        if header.magic != MAGIC {
            return Some(format!(
                "bad magic header {:x}, wanted {:x}",
                header.magic, MAGIC
            ));
        }
        if header.len as usize != step {
            return Some(format!("bad header length {}, wanted {}", header.len, step));
        }
        if let Some(seed) = expected.rand_seed
            && header.rand_seed != seed
        {
            return Some(format!(
                "bad header rand_seed {}, wanted {}",
                header.rand_seed, seed
            ));
        }
        let wanted = offset + n as u64 * self.config.interval;
        if header.offset != wanted {
            return Some(format!(
                "bad header offset {}, wanted {}",
                header.offset, wanted
            ));
        }
        if let Some(numberio) = expected.numberio
            && header.numberio != numberio
        {
            return Some(format!(
                "bad header numberio {}, wanted {}",
                header.numberio, numberio
            ));
        }
        let crc = Header::computed_crc(block);
        if header.crc32 != crc {
            return Some(format!(
                "bad header crc {:x}, calculated {:x}",
                header.crc32, crc
            ));
        }
        None
    }

    /// Where the bytes after the header leave the pattern, in fio's words.
    fn pattern_fault(
        &self,
        block: &[u8],
        offset: u64,
        n: usize,
        step: usize,
    ) -> Option<(&'static str, String)> {
        let pattern = self.config.pattern.as_ref()?;
        let bytes = pattern.for_offset(offset);
        let header_len = self.config.header_len();
        let phase = (step * n + header_len) % bytes.len();
        let data = &block[header_len..];
        let at = Pattern::first_difference(&bytes, phase, data)?;
        let wanted = bytes[(phase + at) % bytes.len()];
        Some((
            "pattern",
            format!(
                "fio: got pattern '{:02x}', wanted '{:02x}'. Bad bits {}\nfio: bad pattern block offset {}",
                data[at],
                wanted,
                (data[at] ^ wanted).count_ones(),
                at
            ),
        ))
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
mod tests {
    use super::*;

    fn config(kind: VerifyKind) -> VerifyConfig {
        VerifyConfig {
            kind,
            interval: 4096,
            header_offset: 0,
            pattern: None,
            fatal: false,
            dump: false,
        }
    }

    /// The 16 kinds that write a header: all but pattern without one and null.
    fn every_kind() -> impl Iterator<Item = VerifyKind> {
        VerifyKind::ALL.into_iter().filter(|k| {
            !matches!(
                k,
                VerifyKind::Pattern | VerifyKind::PatternNoHeader | VerifyKind::Null
            )
        })
    }

    fn written(verifier: &mut Verifier, len: usize, offset: u64) -> (Vec<u8>, u64) {
        let mut buf = vec![0; len];
        let seed = verifier.fill(&mut buf, offset, 7, SystemTime::now());
        (buf, seed)
    }

    #[test]
    fn every_kind_passes_what_it_wrote_and_catches_a_flipped_bit() {
        assert_eq!(every_kind().count(), 16);
        for kind in every_kind() {
            let mut verifier = Verifier::new(config(kind), 1, 42, false);
            let (mut buf, seed) = written(&mut verifier, 8192, 4096 * 3);
            let expected = Expected {
                rand_seed: Some(seed),
                numberio: Some(7),
            };
            let good = verifier.check(&mut buf.clone(), 4096 * 3, Path::new("f"), expected);
            assert_eq!((good.blocks, good.mismatches.len()), (2, 0), "{kind:?}");
            // A bit in the second block's last byte: caught by every kind
            // that checksums data (fio's SHA-512 included, which covers
            // only the data's ends); meta sees only headers.
            buf[8191] ^= 0x10;
            let bad = verifier.check(&mut buf, 4096 * 3, Path::new("f"), expected);
            let caught = usize::from(kind != VerifyKind::Meta);
            assert_eq!(bad.mismatches.len(), caught, "{kind:?}");
            if let Some(m) = bad.mismatches.first() {
                assert_eq!(m.offset, 4096 * 4, "{kind:?}");
                assert!(m.to_string().contains("Expected CRC"), "{m}");
            }
        }
    }

    #[test]
    fn a_block_read_from_elsewhere_fails_on_its_offset() {
        let mut verifier = Verifier::new(config(VerifyKind::Crc32c), 1, 42, false);
        let (mut buf, _) = written(&mut verifier, 4096, 0);
        let checked = verifier.check(&mut buf, 4096, Path::new("f"), Expected::default());
        assert_eq!(checked.mismatches.len(), 1);
        assert_eq!(
            checked.mismatches[0].to_string(),
            "verify: bad header offset 0, wanted 4096 at file f offset 4096, length 4096 \
             (requested block: offset=4096, length=4096)"
        );
    }

    #[test]
    fn a_moved_header_and_a_pattern_are_checked_too() {
        let mut with_pattern = config(VerifyKind::Pattern);
        with_pattern.pattern = Some(Pattern::parse("0xdeadbeef%o", true).unwrap());
        with_pattern.header_offset = 512;
        let mut verifier = Verifier::new(with_pattern, 1, 42, false);
        let (buf, _) = written(&mut verifier, 4096, 8192);
        assert_ne!(&buf[..2], &MAGIC.to_le_bytes(), "the header moved");
        assert_eq!(&buf[512..514], &MAGIC.to_le_bytes());
        let ok = verifier.check(&mut buf.clone(), 8192, Path::new("f"), Expected::default());
        assert!(ok.mismatches.is_empty(), "{:?}", ok.mismatches);
        let mut bad = buf.clone();
        bad[3000] ^= 1;
        let checked = verifier.check(&mut bad, 8192, Path::new("f"), Expected::default());
        assert_eq!(checked.mismatches[0].check, "pattern");
    }

    #[test]
    fn fatal_stops_at_the_first_bad_block() {
        let mut fatal = config(VerifyKind::Md5);
        fatal.interval = 1024;
        fatal.fatal = true;
        let mut verifier = Verifier::new(fatal.clone(), 1, 1, false);
        let (mut buf, _) = written(&mut verifier, 4096, 0);
        for block in 0..4 {
            buf[block * 1024 + 900] ^= 1;
        }
        let all = Verifier::new(
            VerifyConfig {
                fatal: false,
                ..fatal
            },
            1,
            1,
            false,
        );
        assert_eq!(
            all.check(&mut buf.clone(), 0, Path::new("f"), Expected::default())
                .mismatches
                .len(),
            4
        );
        let first = verifier.check(&mut buf, 0, Path::new("f"), Expected::default());
        assert_eq!(first.mismatches.len(), 1);
    }

    #[test]
    fn hexdump_prints_as_fio() {
        assert_eq!(hexdump(&[0xab]), "ab");
        assert_eq!(hexdump(&[0x34, 0x12]), "1234");
        assert_eq!(
            hexdump(&[0x78, 0x56, 0x34, 0x12, 1, 0, 0, 0]),
            "12345678 00000001 "
        );
    }
}
