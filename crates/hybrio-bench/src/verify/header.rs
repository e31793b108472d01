//! fio's verify header: the 40 bytes at the start of every verified block
//! (fio 3.33's `struct verify_header`, little-endian as fio writes it on
//! x86 and arm64), followed by the kind's checksum.

use super::checksum::{VerifyKind, fio_crc32c};

/// fio's `FIO_HDR_MAGIC`.
pub const MAGIC: u16 = 0xacca;

/// Bytes of the common header.
pub const HEADER_LEN: usize = 40;

/// Where the header's own CRC-32C starts: it covers the bytes before it.
const CRC_AT: usize = 36;

// Here rather than beside `checksum_len` in checksum.rs: the header's layout
// is this file's, and the header takes its CRC from checksum.rs.
impl VerifyKind {
    /// Bytes at the start of each block that are not data: fio's header
    /// and the checksum (none for `pattern`, which has no header).
    pub fn header_len(self) -> usize {
        match self {
            VerifyKind::PatternNoHeader => 0,
            kind => HEADER_LEN + kind.checksum_len(),
        }
    }
}

/// One block's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
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
    /// How many writes the job had issued before this one (its low 16 bits).
    pub numberio: u16,
    /// CRC-32C (fio's) of the 36 bytes before it.
    pub crc32: u32,
}

impl Header {
    /// Reads the header at the start of `bytes` (at least [`HEADER_LEN`]).
    pub fn read(bytes: &[u8]) -> Header {
        let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        Header {
            magic: u16_at(0),
            verify_type: u16_at(2),
            len: u32_at(4),
            rand_seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread: u16_at(32),
            numberio: u16_at(34),
            crc32: u32_at(CRC_AT),
        }
    }

    /// Writes the header to the start of `bytes`, its CRC computed over the
    /// fields before it (the `crc32` field is ignored).
    pub fn write(&self, bytes: &mut [u8]) {
        bytes[0..2].copy_from_slice(&self.magic.to_le_bytes());
        bytes[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
        bytes[4..8].copy_from_slice(&self.len.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.offset.to_le_bytes());
        bytes[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        bytes[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        bytes[32..34].copy_from_slice(&self.thread.to_le_bytes());
        bytes[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        let crc = fio_crc32c(&bytes[..CRC_AT]);
        bytes[CRC_AT..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
    }

    /// The CRC the header's fields call for (compare with `crc32`).
    pub fn computed_crc(bytes: &[u8]) -> u32 {
        fio_crc32c(&bytes[..CRC_AT])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_guards_itself() {
        let header = Header {
            magic: MAGIC,
            verify_type: 5,
            len: 4096,
            rand_seed: 0x0123_4567_89ab_cdef,
            offset: 8192,
            time_sec: 1_700_000_000,
            time_nsec: 999,
            thread: 1,
            numberio: 2,
            crc32: 0,
        };
        let mut bytes = [0u8; HEADER_LEN];
        header.write(&mut bytes);
        let back = Header::read(&bytes);
        assert_eq!(back.crc32, Header::computed_crc(&bytes));
        assert_eq!(Header { crc32: 0, ..back }, header);
        assert_eq!(&bytes[..2], &[0xca, 0xac]);
        bytes[20] ^= 1;
        assert_ne!(Header::read(&bytes).crc32, Header::computed_crc(&bytes));
    }
}
