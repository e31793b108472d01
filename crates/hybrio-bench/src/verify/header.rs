//! fio's verify header, at the start of every verified block and followed
//! by the kind's checksum, in either of fio's two layouts (little-endian as
//! fio writes them on x86 and arm64):
//!
//! - unversioned (fio up to 3.40), 40 bytes: `magic` u16, `verify_type`
//!   u16, `len` u32, `rand_seed` u64, `offset` u64, `time_sec` u32,
//!   `time_nsec` u32, `thread` u16, `numberio` u16, `crc32` u32;
//! - versioned (fio 3.41 on, `VERIFY_HEADER_VERSION` 0x81), 48 bytes:
//!   `magic` u16, `version` u8, `verify_type` u8, `len` u32, `rand_seed`
//!   u64, `offset` u64, `time_sec` u32, `time_nsec` u32, `numberio` u64,
//!   `thread` u16, two bytes of padding, `crc32` u32.
//!
//! The byte after the magic tells them apart as fio does: the versioned
//! layout's version has its high bit set, where the unversioned layout
//! holds the low byte of a verify type (19 at most).

use super::checksum::{VerifyKind, fio_crc32c};
use crate::fio_version::FioVersion;

/// fio's `FIO_HDR_MAGIC`.
pub const MAGIC: u16 = 0xacca;

/// fio's `VERIFY_HEADER_VERSION`: the only versioned header fio has made.
pub const HEADER_VERSION: u8 = 0x81;

/// Which of fio's layouts a header has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// fio up to 3.40: 40 bytes, a 16-bit `numberio`.
    Unversioned,
    /// fio 3.41 on: 48 bytes, version 0x81, a 64-bit `numberio`.
    Versioned,
}

/// A header with its version byte's high bit set but not fio's 0x81: from
/// a fio newer than hybrio knows, or not a header at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownVersion(pub u8);

impl Layout {
    /// The layout `fio` writes.
    pub fn written_by(fio: FioVersion) -> Layout {
        if fio.versioned_verify_header() {
            Layout::Versioned
        } else {
            Layout::Unversioned
        }
    }

    /// Bytes of the common header.
    pub const fn bytes(self) -> usize {
        match self {
            Layout::Unversioned => 40,
            Layout::Versioned => 48,
        }
    }

    /// Where the header's own CRC-32C starts: it covers every byte before
    /// it, the versioned layout's padding included.
    const fn crc_at(self) -> usize {
        self.bytes() - 4
    }

    /// The layout of the header at the start of `bytes` (at least 3 bytes),
    /// by its version byte as fio reads it.
    pub fn of(bytes: &[u8]) -> Result<Layout, UnknownVersion> {
        match bytes[2] {
            HEADER_VERSION => Ok(Layout::Versioned),
            version if version & 0x80 != 0 => Err(UnknownVersion(version)),
            _ => Ok(Layout::Unversioned),
        }
    }
}

impl std::fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unsupported header version {:x}, wanted {:x} (fio 3.41 to 3.42) or an unversioned header (fio 3.40 and older): a version byte with its high bit set is a versioned header, this one from a fio newer than hybrio knows",
            self.0, HEADER_VERSION
        )
    }
}

// Here rather than beside `checksum_len` in checksum.rs: the header's layout
// is this file's, and the header takes its CRC from checksum.rs.
impl VerifyKind {
    /// Bytes at the start of each block that are not data: fio's header
    /// and the checksum (none for `pattern`, which has no header).
    pub fn header_len(self, layout: Layout) -> usize {
        match self {
            VerifyKind::PatternNoHeader => 0,
            kind => layout.bytes() + kind.checksum_len(),
        }
    }
}

/// One block's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Its layout.
    pub layout: Layout,
    /// [`MAGIC`] in a block fio or hybrio wrote.
    pub magic: u16,
    /// The kind's number ([`super::VerifyKind::code`]).
    pub verify_type: u16,
    /// Bytes of the block the header covers (the verify interval).
    pub len: u32,
    /// The seed the block's random bytes were made from.
    pub rand_seed: u64,
    /// Where in the file the block was written.
    pub offset: u64,
    /// When the write was made: seconds and nanoseconds of the real-time clock.
    pub time_sec: u32,
    /// See `time_sec`.
    pub time_nsec: u32,
    /// The writing job's number (from 1).
    pub thread: u16,
    /// How many writes the job had issued before this one (its low 16 bits
    /// in the unversioned layout).
    pub numberio: u64,
    /// CRC-32C (fio's) of the bytes before it.
    pub crc32: u32,
}

impl Header {
    /// Reads the header at the start of `bytes` (at least the layout's length).
    pub fn read(bytes: &[u8]) -> Result<Header, UnknownVersion> {
        let layout = Layout::of(bytes)?;
        let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let (verify_type, thread, numberio) = match layout {
            Layout::Unversioned => (u16_at(2), u16_at(32), u64::from(u16_at(34))),
            Layout::Versioned => (u16::from(bytes[3]), u16_at(40), u64_at(32)),
        };
        Ok(Header {
            layout,
            magic: u16_at(0),
            verify_type,
            len: u32_at(4),
            rand_seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread,
            numberio,
            crc32: u32_at(layout.crc_at()),
        })
    }

    /// Writes the header to the start of `bytes`, its CRC computed over the
    /// bytes before it (the `crc32` field is ignored). The versioned
    /// layout's padding keeps what `bytes` held there, as fio's does: the
    /// block's fill, which the CRC then covers.
    pub fn write(&self, bytes: &mut [u8]) {
        bytes[0..2].copy_from_slice(&self.magic.to_le_bytes());
        match self.layout {
            Layout::Unversioned => {
                bytes[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
                bytes[32..34].copy_from_slice(&self.thread.to_le_bytes());
                bytes[34..36].copy_from_slice(&(self.numberio as u16).to_le_bytes());
            }
            Layout::Versioned => {
                bytes[2] = HEADER_VERSION;
                bytes[3] = self.verify_type as u8;
                bytes[32..40].copy_from_slice(&self.numberio.to_le_bytes());
                bytes[40..42].copy_from_slice(&self.thread.to_le_bytes());
            }
        }
        bytes[4..8].copy_from_slice(&self.len.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.offset.to_le_bytes());
        bytes[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        bytes[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        let at = self.layout.crc_at();
        let crc = fio_crc32c(&bytes[..at]);
        bytes[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// The CRC the header's bytes call for (compare with `crc32`).
    pub fn computed_crc(&self, bytes: &[u8]) -> u32 {
        fio_crc32c(&bytes[..self.layout.crc_at()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(layout: Layout) -> Header {
        Header {
            layout,
            magic: MAGIC,
            verify_type: 5,
            len: 4096,
            rand_seed: 0x0123_4567_89ab_cdef,
            offset: 8192,
            time_sec: 1_700_000_000,
            time_nsec: 999,
            thread: 0x0102,
            numberio: 0x1_0002,
            crc32: 0,
        }
    }

    #[test]
    fn a_header_round_trips_and_guards_itself() {
        for layout in [Layout::Unversioned, Layout::Versioned] {
            let mut bytes = [0u8; 48];
            header(layout).write(&mut bytes);
            let back = Header::read(&bytes).unwrap();
            assert_eq!(back.crc32, back.computed_crc(&bytes), "{layout:?}");
            let numberio = match layout {
                Layout::Unversioned => 2,
                Layout::Versioned => 0x1_0002,
            };
            assert_eq!(
                Header { crc32: 0, ..back },
                Header {
                    numberio,
                    ..header(layout)
                }
            );
            bytes[20] ^= 1;
            let damaged = Header::read(&bytes).unwrap();
            assert_ne!(damaged.crc32, damaged.computed_crc(&bytes), "{layout:?}");
        }
    }

    #[test]
    fn the_unversioned_layout_is_fio_3_33s() {
        let mut bytes = [0u8; 40];
        header(Layout::Unversioned).write(&mut bytes);
        assert_eq!(&bytes[0..2], &[0xca, 0xac], "magic");
        assert_eq!(&bytes[2..4], &[5, 0], "verify_type, 16 bits");
        assert_eq!(&bytes[4..8], &4096u32.to_le_bytes(), "len");
        assert_eq!(&bytes[8..16], &0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert_eq!(&bytes[16..24], &8192u64.to_le_bytes(), "offset");
        assert_eq!(&bytes[24..28], &1_700_000_000u32.to_le_bytes());
        assert_eq!(&bytes[28..32], &999u32.to_le_bytes(), "time_nsec");
        assert_eq!(&bytes[32..34], &[2, 1], "thread");
        assert_eq!(&bytes[34..36], &[2, 0], "numberio, its low 16 bits");
        assert_eq!(&bytes[36..40], &fio_crc32c(&bytes[..36]).to_le_bytes());
        assert_eq!(Layout::Unversioned.bytes(), 40);
    }

    #[test]
    fn the_versioned_layout_is_fio_3_41s() {
        // Padding as the block's fill left it: kept, and covered by the CRC.
        let mut bytes = [0xeeu8; 48];
        header(Layout::Versioned).write(&mut bytes);
        assert_eq!(&bytes[0..2], &[0xca, 0xac], "magic");
        assert_eq!(bytes[2], 0x81, "version");
        assert_eq!(bytes[3], 5, "verify_type, 8 bits");
        assert_eq!(&bytes[4..8], &4096u32.to_le_bytes(), "len");
        assert_eq!(&bytes[8..16], &0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert_eq!(&bytes[16..24], &8192u64.to_le_bytes(), "offset");
        assert_eq!(&bytes[24..28], &1_700_000_000u32.to_le_bytes());
        assert_eq!(&bytes[28..32], &999u32.to_le_bytes(), "time_nsec");
        assert_eq!(&bytes[32..40], &0x1_0002u64.to_le_bytes(), "numberio");
        assert_eq!(&bytes[40..42], &[2, 1], "thread");
        assert_eq!(&bytes[42..44], &[0xee, 0xee], "padding, untouched");
        assert_eq!(&bytes[44..48], &fio_crc32c(&bytes[..44]).to_le_bytes());
        assert_eq!(Layout::Versioned.bytes(), 48);
    }

    #[test]
    fn the_version_byte_tells_the_layouts_apart() {
        let mut bytes = [0u8; 48];
        header(Layout::Unversioned).write(&mut bytes);
        assert_eq!(Layout::of(&bytes), Ok(Layout::Unversioned));
        header(Layout::Versioned).write(&mut bytes);
        assert_eq!(Layout::of(&bytes), Ok(Layout::Versioned));
        bytes[2] = 0x82;
        assert_eq!(Layout::of(&bytes), Err(UnknownVersion(0x82)));
        let said = UnknownVersion(0x82).to_string();
        assert!(
            said.starts_with("unsupported header version 82, wanted 81"),
            "{said}"
        );
        assert_eq!(
            Layout::written_by(FioVersion::parse("3.40").unwrap()),
            Layout::Unversioned
        );
        assert_eq!(Layout::written_by(FioVersion::NEWEST), Layout::Versioned);
    }
}
