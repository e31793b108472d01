//! fio's verify kinds and the checksum each stores after a block's header.
//!
//! The checksums are the ones fio writes, byte for byte, so that a file one
//! tool wrote the other can check. Some of fio's differ from the textbook
//! algorithm of the same name, and are reproduced as fio computes them
//! (from the crates' own primitives, not by hand):
//! - `crc32c` leaves out the final inversion (fio returns the register as is);
//! - `sha1` stores the five state words in the machine's byte order, not
//!   big-endian;
//! - `sha256` appends the message length little-endian, then stores the
//!   low byte of each state word over the first 8 bytes of its last padded
//!   block (all 64 bytes are compared);
//! - `sha512` up to fio 3.38 never finishes: what it stores is what its
//!   block buffer holds after the update, which is the data's last partial
//!   block over the tail of its first one ([`Sha512::Unfinished`]). fio
//!   3.39 (commit 3ee53198) finishes it: the real SHA-512 digest in the
//!   first 64 bytes, and the last 64 of its last padded block after it, the
//!   message length big-endian at the end ([`Sha512::Finished`]). All 128
//!   bytes are compared, either way.

use crc::{CRC_7_MMC, CRC_16_ARC, CRC_64_REDIS, Crc};
use md5::Digest as _;
use sha2::digest::generic_array::GenericArray;

/// fio's `crc32` (the `cksum` polynomial, most significant bit first, from
/// zero, with no final inversion).
const CRC_32_FIO: crc::Algorithm<u32> = crc::Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89a1_897f,
    residue: 0,
};

/// Which of fio's SHA-512s a block carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sha512 {
    /// fio up to 3.38: the block buffer, never finished.
    Unfinished,
    /// fio 3.39 on: the digest.
    Finished,
}

impl Sha512 {
    /// The one `fio` writes.
    pub fn written_by(fio: crate::fio_version::FioVersion) -> Sha512 {
        if fio.sha512_finished() {
            Sha512::Finished
        } else {
            Sha512::Unfinished
        }
    }

    /// The other one.
    pub fn other(self) -> Sha512 {
        match self {
            Sha512::Unfinished => Sha512::Finished,
            Sha512::Finished => Sha512::Unfinished,
        }
    }
}

/// What a block is checked with: fio's `verify=` values, numbered as fio
/// numbers them in the header's `verify_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyKind {
    /// `verify=meta`: the header alone (fio's `VERIFY_HDR_ONLY`).
    Meta,
    /// MD5.
    Md5,
    /// fio's 64-bit CRC (the Jones polynomial, reflected, from zero).
    Crc64,
    /// fio's 32-bit CRC.
    Crc32,
    /// CRC-32C, as fio returns it.
    Crc32c,
    /// CRC-32C by the processor's instruction: the same checksum.
    Crc32cIntel,
    /// CRC-16 (ARC).
    Crc16,
    /// CRC-7 (MMC).
    Crc7,
    /// fio's SHA-256.
    Sha256,
    /// fio's SHA-512.
    Sha512,
    /// SHA3-224.
    Sha3_224,
    /// SHA3-256.
    Sha3_256,
    /// SHA3-384.
    Sha3_384,
    /// SHA3-512.
    Sha3_512,
    /// XXH32 with seed 1.
    Xxhash,
    /// fio's SHA-1.
    Sha1,
    /// `verify_pattern`'s bytes after the header.
    Pattern,
    /// `verify_pattern`'s bytes, no header at all.
    PatternNoHeader,
    /// Nothing is checked (fio's `null`: pretend).
    Null,
}

impl VerifyKind {
    /// Every kind, with fio's word for it.
    pub const WORDS: &'static [(&'static str, VerifyKind)] = &[
        ("md5", VerifyKind::Md5),
        ("crc64", VerifyKind::Crc64),
        ("crc32", VerifyKind::Crc32),
        ("crc32c", VerifyKind::Crc32c),
        // fio writes crc32c-intel as crc32c (type 5): one checksum.
        ("crc32c-intel", VerifyKind::Crc32c),
        ("crc16", VerifyKind::Crc16),
        ("crc7", VerifyKind::Crc7),
        ("sha256", VerifyKind::Sha256),
        ("sha512", VerifyKind::Sha512),
        ("sha3-224", VerifyKind::Sha3_224),
        ("sha3-256", VerifyKind::Sha3_256),
        ("sha3-384", VerifyKind::Sha3_384),
        ("sha3-512", VerifyKind::Sha3_512),
        ("xxhash", VerifyKind::Xxhash),
        ("sha1", VerifyKind::Sha1),
        ("meta", VerifyKind::Meta),
        // `verify=pattern` has no header; `verify_pattern` alone has one.
        ("pattern", VerifyKind::PatternNoHeader),
        ("null", VerifyKind::Null),
    ];

    /// fio's word for the kind.
    pub fn name(self) -> &'static str {
        match self {
            VerifyKind::Pattern => "pattern",
            VerifyKind::Crc32cIntel => "crc32c-intel",
            kind => VerifyKind::WORDS
                .iter()
                .find(|(_, k)| *k == kind)
                .map_or("null", |(word, _)| word),
        }
    }

    /// The number fio writes in the header's `verify_type`.
    pub fn code(self) -> u16 {
        match self {
            VerifyKind::Meta => 1,
            VerifyKind::Md5 => 2,
            VerifyKind::Crc64 => 3,
            VerifyKind::Crc32 => 4,
            VerifyKind::Crc32c => 5,
            VerifyKind::Crc32cIntel => 6,
            VerifyKind::Crc16 => 7,
            VerifyKind::Crc7 => 8,
            VerifyKind::Sha256 => 9,
            VerifyKind::Sha512 => 10,
            VerifyKind::Sha3_224 => 11,
            VerifyKind::Sha3_256 => 12,
            VerifyKind::Sha3_384 => 13,
            VerifyKind::Sha3_512 => 14,
            VerifyKind::Xxhash => 15,
            VerifyKind::Sha1 => 16,
            VerifyKind::Pattern => 17,
            VerifyKind::PatternNoHeader => 18,
            VerifyKind::Null => 19,
        }
    }

    /// Every kind, in fio's order.
    pub const ALL: [VerifyKind; 19] = [
        VerifyKind::Meta,
        VerifyKind::Md5,
        VerifyKind::Crc64,
        VerifyKind::Crc32,
        VerifyKind::Crc32c,
        VerifyKind::Crc32cIntel,
        VerifyKind::Crc16,
        VerifyKind::Crc7,
        VerifyKind::Sha256,
        VerifyKind::Sha512,
        VerifyKind::Sha3_224,
        VerifyKind::Sha3_256,
        VerifyKind::Sha3_384,
        VerifyKind::Sha3_512,
        VerifyKind::Xxhash,
        VerifyKind::Sha1,
        VerifyKind::Pattern,
        VerifyKind::PatternNoHeader,
        VerifyKind::Null,
    ];

    /// The kind fio numbers `code`.
    pub fn from_code(code: u16) -> Option<VerifyKind> {
        VerifyKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// Bytes of the checksum stored after the common header: the size of
    /// fio's `vhdr_*` structure for the kind.
    pub fn checksum_len(self) -> usize {
        match self {
            VerifyKind::Md5 => 16,
            VerifyKind::Crc64 => 8,
            VerifyKind::Crc32 | VerifyKind::Crc32c | VerifyKind::Crc32cIntel => 4,
            VerifyKind::Crc16 => 2,
            VerifyKind::Crc7 => 1,
            VerifyKind::Sha256 => 64,
            VerifyKind::Sha512 => 128,
            VerifyKind::Sha3_224 => 28,
            VerifyKind::Sha3_256 => 32,
            VerifyKind::Sha3_384 => 48,
            VerifyKind::Sha3_512 => 64,
            VerifyKind::Xxhash => 4,
            VerifyKind::Sha1 => 20,
            VerifyKind::Meta
            | VerifyKind::Pattern
            | VerifyKind::PatternNoHeader
            | VerifyKind::Null => 0,
        }
    }

    /// True for the kinds that checksum the data after the header.
    pub fn has_checksum(self) -> bool {
        self.checksum_len() > 0
    }

    /// The checksum of `data` as fio stores it, into `out`
    /// (`checksum_len()` bytes). `out` must start as the buffer held
    /// there before (fio's unfinished SHA-512 leaves part of it as it was);
    /// `sha512` says which SHA-512 (the other kinds ignore it).
    pub fn checksum(self, data: &[u8], out: &mut [u8], sha512: Sha512) {
        debug_assert_eq!(out.len(), self.checksum_len());
        match self {
            VerifyKind::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
            VerifyKind::Crc64 => {
                out.copy_from_slice(&Crc::<u64>::new(&CRC_64_REDIS).checksum(data).to_le_bytes())
            }
            VerifyKind::Crc32 => {
                out.copy_from_slice(&Crc::<u32>::new(&CRC_32_FIO).checksum(data).to_le_bytes())
            }
            VerifyKind::Crc32c | VerifyKind::Crc32cIntel => {
                out.copy_from_slice(&fio_crc32c(data).to_le_bytes())
            }
            VerifyKind::Crc16 => {
                out.copy_from_slice(&Crc::<u16>::new(&CRC_16_ARC).checksum(data).to_le_bytes())
            }
            VerifyKind::Crc7 => out[0] = Crc::<u8>::new(&CRC_7_MMC).checksum(data),
            VerifyKind::Sha256 => fio_sha256(data, out),
            VerifyKind::Sha512 => match sha512 {
                Sha512::Unfinished => fio_sha512_unfinished(data, out),
                Sha512::Finished => fio_sha512_finished(data, out),
            },
            VerifyKind::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
            VerifyKind::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
            VerifyKind::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
            VerifyKind::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
            VerifyKind::Xxhash => {
                out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes())
            }
            VerifyKind::Sha1 => {
                let digest = sha1::Sha1::digest(data);
                for (word, stored) in digest.chunks(4).zip(out.chunks_mut(4)) {
                    stored.copy_from_slice(&[word[3], word[2], word[1], word[0]]);
                }
            }
            VerifyKind::Meta
            | VerifyKind::Pattern
            | VerifyKind::PatternNoHeader
            | VerifyKind::Null => {}
        }
    }
}

/// CRC-32C as fio returns it: the standard checksum without its final
/// inversion. Also what guards fio's header.
pub fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// fio's SHA-256 (see the module's docs).
fn fio_sha256(data: &[u8], out: &mut [u8]) {
    let mut state = [
        0x6a09_e667u32,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let mut blocks = data.chunks_exact(64);
    for block in blocks.by_ref() {
        sha2::compress256(&mut state, &[*GenericArray::from_slice(block)]);
    }
    let rest = blocks.remainder();
    // The last block(s): the rest, 0x80, zeros to 56 mod 64, then the
    // length in bits, little-endian (fio copies its 64-bit count as is).
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let tail_len = if rest.len() < 56 { 64 } else { 128 };
    // fio counts bytes in 32 bits.
    let bits = u64::from(data.len() as u32) << 3;
    tail[tail_len - 8..tail_len].copy_from_slice(&bits.to_le_bytes());
    for block in tail[..tail_len].chunks_exact(64) {
        sha2::compress256(&mut state, &[*GenericArray::from_slice(block)]);
    }
    out.copy_from_slice(&tail[tail_len - 64..tail_len]);
    for (stored, word) in out.iter_mut().zip(state) {
        *stored = word as u8;
    }
}

/// fio 3.33's SHA-512: only the block buffer's bytes after the update,
/// since fio never finishes the hash and compares the buffer (see the
/// module's docs).
fn fio_sha512_unfinished(data: &[u8], out: &mut [u8]) {
    if data.len() < 128 {
        out[..data.len()].copy_from_slice(data);
        return;
    }
    out.copy_from_slice(&data[..128]);
    let rest = (data.len() - 128) % 128;
    out[..rest].copy_from_slice(&data[data.len() - rest..]);
}

/// fio 3.39's SHA-512: the digest, then what the block buffer holds after
/// the last block, the second half of the last padded block.
fn fio_sha512_finished(data: &[u8], out: &mut [u8]) {
    let mut state = [
        0x6a09_e667_f3bc_c908u64,
        0xbb67_ae85_84ca_a73b,
        0x3c6e_f372_fe94_f82b,
        0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1,
        0x9b05_688c_2b3e_6c1f,
        0x1f83_d9ab_fb41_bd6b,
        0x5be0_cd19_137e_2179,
    ];
    let mut blocks = data.chunks_exact(128);
    for block in blocks.by_ref() {
        sha2::compress512(&mut state, &[*GenericArray::from_slice(block)]);
    }
    let rest = blocks.remainder();
    let mut tail = [0u8; 256];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let tail_len = if rest.len() < 112 { 128 } else { 256 };
    // fio counts bits in the low 32 of its 128: a block of 512 MiB or more
    // wraps, as it does in fio.
    let bits = u128::from((data.len() as u32).wrapping_shl(3));
    tail[tail_len - 16..tail_len].copy_from_slice(&bits.to_be_bytes());
    for block in tail[..tail_len].chunks_exact(128) {
        sha2::compress512(&mut state, &[*GenericArray::from_slice(block)]);
    }
    out.copy_from_slice(&tail[tail_len - 128..tail_len]);
    for (stored, word) in out.chunks_mut(8).zip(state) {
        stored.copy_from_slice(&word.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checksum(kind: VerifyKind, data: &[u8]) -> Vec<u8> {
        let mut out = vec![0; kind.checksum_len()];
        kind.checksum(data, &mut out, Sha512::Unfinished);
        out
    }

    fn sha512_finished(data: &[u8]) -> Vec<u8> {
        let mut out = vec![0; 128];
        VerifyKind::Sha512.checksum(data, &mut out, Sha512::Finished);
        out
    }

    #[test]
    fn codes_are_fios_and_round_trip() {
        assert_eq!(VerifyKind::Md5.code(), 2);
        assert_eq!(VerifyKind::Crc32c.code(), 5);
        assert_eq!(VerifyKind::Xxhash.code(), 15);
        assert_eq!(VerifyKind::Null.code(), 19);
        for (word, kind) in VerifyKind::WORDS {
            assert_eq!(VerifyKind::from_code(kind.code()), Some(*kind), "{word}");
            assert_eq!(
                kind.name(),
                if *word == "crc32c-intel" {
                    "crc32c"
                } else {
                    word
                }
            );
        }
    }

    #[test]
    fn the_crcs_are_the_catalogued_ones_fio_uses() {
        // The catalogue's check values, on "123456789".
        let check = b"123456789";
        assert_eq!(checksum(VerifyKind::Crc7, check), [0x75]);
        assert_eq!(checksum(VerifyKind::Crc16, check), 0xbb3du16.to_le_bytes());
        assert_eq!(
            checksum(VerifyKind::Crc32, check),
            0x89a1_897fu32.to_le_bytes()
        );
        assert_eq!(
            checksum(VerifyKind::Crc64, check),
            0xe9c6_d914_c4b8_d9cau64.to_le_bytes()
        );
        // CRC-32C's check value is 0xe3069283; fio's leaves out the inversion.
        assert_eq!(fio_crc32c(check), !0xe306_9283);
    }

    #[test]
    fn sha1_stores_its_words_in_machine_order() {
        let stored = checksum(VerifyKind::Sha1, b"abc");
        // SHA-1("abc") = a9993e36 4706816a ...
        assert_eq!(
            &stored[..8],
            &[0x36, 0x3e, 0x99, 0xa9, 0x6a, 0x81, 0x06, 0x47]
        );
    }

    #[test]
    fn sha512_keeps_the_block_buffer() {
        let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let stored = checksum(VerifyKind::Sha512, &data);
        // 300 = 128 + 128 + 44: the last 44 bytes over the first block's tail.
        assert_eq!(&stored[..44], &data[256..]);
        assert_eq!(&stored[44..], &data[44..128]);
    }

    #[test]
    fn sha512_finished_is_the_real_digest() {
        // FIPS 180-2's vector: SHA-512("abc").
        let abc = hex(
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        );
        let stored = sha512_finished(b"abc");
        assert_eq!(&stored[..64], &abc[..]);
        // After it, the padded block's second half: zeros, then the length
        // in bits, big-endian.
        assert_eq!(&stored[64..120], &[0; 56]);
        assert_eq!(&stored[120..], &24u64.to_be_bytes());
        // Across blocks, and with the padding spilling into a second block,
        // the digest stays the standard one.
        for len in [111, 112, 128, 300, 4096 - 168] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let stored = sha512_finished(&data);
            assert_eq!(&stored[..64], &sha2::Sha512::digest(&data)[..], "{len}");
            assert_eq!(&stored[120..], &(len as u64 * 8).to_be_bytes(), "{len}");
        }
        // 100 bytes: the last block holds them, 0x80 at 100, so its second
        // half starts with data bytes 64..100.
        let data = [9u8; 100];
        let stored = sha512_finished(&data);
        assert_eq!(&stored[64..100], &[9; 36]);
        assert_eq!(stored[100], 0x80);
    }

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    #[test]
    fn sha256_differs_from_the_standard_only_in_the_length_and_the_store() {
        // An empty message: one block, 0x80 then zeros (the length is 0,
        // the same in either byte order): the standard digest's words.
        let stored = checksum(VerifyKind::Sha256, b"");
        let standard = sha2::Sha256::digest(b"");
        for (i, word) in standard.chunks(4).enumerate() {
            assert_eq!(stored[i], word[3], "word {i}");
        }
        assert_eq!(stored[8], 0);
        assert_eq!(&stored[56..], &[0; 8]);
        // With data the length goes in little-endian.
        let stored = checksum(VerifyKind::Sha256, &[7; 10]);
        assert_eq!(&stored[56..], &80u64.to_le_bytes());
        assert_eq!(&stored[8..11], &[7, 7, 0x80]);
    }
}
