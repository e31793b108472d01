//! fio's pattern language (`verify_pattern`, `buffer_pattern`): numbers
//! (`0xdeadbeef` as written, decimals least significant byte first), quoted
//! strings (`"abc"`), files (`'path'`, their first bytes) and, for verify,
//! `%o`: the block's offset, 8 bytes little-endian, pasted where it stands.

use std::fmt;

/// fio's `MAX_PATTERN_SIZE` since 3.34 (a job speaking as an older fio
/// keeps fewer: `JobOptions::fit_fio_compat`).
const MAX_PATTERN: usize = 128 << 20;

/// A parsed pattern: its bytes, and where `%o` goes in them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pattern {
    /// The bytes, `%o`'s 8 as zeros.
    pub bytes: Vec<u8>,
    /// Where each `%o` starts in `bytes`.
    pub offsets_at: Vec<usize>,
}

/// Why a pattern could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Pattern {
    /// Reads fio's pattern text. `formats`: whether `%o` is taken (verify's
    /// pattern takes it, a buffer's does not).
    pub fn parse(text: &str, formats: bool) -> Result<Pattern, PatternError> {
        let error = |why: &str| PatternError(format!("pattern '{text}': {why}"));
        let mut bytes = Vec::new();
        let mut offsets_at = Vec::new();
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(error("empty"));
        }
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('"') {
                let end = after
                    .find('"')
                    .ok_or_else(|| error("a string without its closing \""))?;
                bytes.extend_from_slice(&after.as_bytes()[..end]);
                rest = &after[end + 1..];
            } else if let Some(after) = rest.strip_prefix('\'') {
                let end = after
                    .find('\'')
                    .ok_or_else(|| error("a file name without its closing '"))?;
                let path = &after[..end];
                let mut contents =
                    std::fs::read(path).map_err(|e| error(&format!("cannot read {path}: {e}")))?;
                contents.truncate(MAX_PATTERN.saturating_sub(bytes.len()));
                bytes.extend_from_slice(&contents);
                rest = &after[end + 1..];
            } else if let Some(after) = rest.strip_prefix("%o") {
                if !formats {
                    return Err(error("%o is only for verify_pattern"));
                }
                offsets_at.push(bytes.len());
                bytes.extend_from_slice(&[0; 8]);
                rest = after;
            } else if rest.len() > 2 && rest[..2].eq_ignore_ascii_case("0x") {
                let digits = &rest[2..];
                let mut len = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
                if len == 0 {
                    return Err(error("0x without hex digits"));
                }
                // `0xff0x14`: the 0 of the next 0x is not this number's.
                if len < digits.len()
                    && digits[len - 1..].len() >= 2
                    && digits[len - 1..][..2].eq_ignore_ascii_case("0x")
                {
                    len -= 1;
                }
                let hex = &digits[..len];
                // An odd count: the first digit alone makes the first byte.
                let (first, pairs) = hex.split_at(len % 2);
                if !first.is_empty() {
                    bytes.push(u8::from_str_radix(first, 16).map_err(|_| error("bad hex"))?);
                }
                for pair in pairs.as_bytes().chunks(2) {
                    let pair = std::str::from_utf8(pair).map_err(|_| error("bad hex"))?;
                    bytes.push(u8::from_str_radix(pair, 16).map_err(|_| error("bad hex"))?);
                }
                rest = &digits[len..];
            } else if rest.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                let sign = usize::from(rest.starts_with('-'));
                let mut len = sign + rest[sign..].bytes().take_while(u8::is_ascii_digit).count();
                // A decimal stops where a 0x begins (`10x1` is not one).
                if let Some(at) = rest.to_ascii_lowercase().find("0x")
                    && at > 0
                    && at < len
                {
                    len = at;
                }
                let value: i64 = rest[..len].parse().map_err(|_| error("bad number"))?;
                if value > i64::from(i32::MAX) || value < i64::from(i32::MIN) {
                    return Err(error("a decimal must fit in 32 bits"));
                }
                let mut value = value as i32 as u32;
                if value == 0 {
                    bytes.push(0);
                }
                while value != 0 {
                    bytes.push(value as u8);
                    value >>= 8;
                }
                rest = &rest[len..];
            } else {
                return Err(error("expected a number, a \"string\", a 'file' or %o"));
            }
            if bytes.len() > MAX_PATTERN {
                return Err(error("longer than 128 MiB"));
            }
            rest = rest.trim_start();
        }
        if bytes.is_empty() {
            return Err(error("empty"));
        }
        Ok(Pattern { bytes, offsets_at })
    }

    /// The pattern for a block at `offset`: `%o` filled in.
    pub fn for_offset(&self, offset: u64) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        for &at in &self.offsets_at {
            let len = 8.min(bytes.len() - at);
            bytes[at..at + len].copy_from_slice(&offset.to_le_bytes()[..len]);
        }
        bytes
    }

    /// Fills `buf` with `bytes` repeated.
    pub fn fill(bytes: &[u8], buf: &mut [u8]) {
        for chunk in buf.chunks_mut(bytes.len()) {
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    /// Where `buf` first differs from `bytes` repeated, the repetition
    /// starting `phase` bytes into the pattern.
    pub fn first_difference(bytes: &[u8], phase: usize, buf: &[u8]) -> Option<usize> {
        buf.iter()
            .enumerate()
            .find(|(i, b)| **b != bytes[(phase + i) % bytes.len()])
            .map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<u8> {
        Pattern::parse(text, true).unwrap().bytes
    }

    #[test]
    fn numbers_strings_and_offsets_read_as_fio_reads_them() {
        assert_eq!(parse("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(parse("0xabc"), [0x0a, 0xbc]);
        assert_eq!(parse("0xff0x14"), [0xff, 0x14]);
        assert_eq!(parse("257"), [1, 1]);
        assert_eq!(parse("0"), [0]);
        assert_eq!(parse("\"ab\"0x01"), [b'a', b'b', 1]);
        let with_offset = Pattern::parse("0xaa%o", true).unwrap();
        assert_eq!(with_offset.offsets_at, [1]);
        assert_eq!(with_offset.for_offset(0x0102)[..4], [0xaa, 0x02, 0x01, 0]);
        assert!(Pattern::parse("%o", false).is_err());
        assert!(Pattern::parse("\"open", true).is_err());
        assert!(Pattern::parse("zz", true).is_err());
    }

    #[test]
    fn a_difference_is_found_where_it_is() {
        let mut buf = [0u8; 10];
        Pattern::fill(&[1, 2, 3], &mut buf);
        assert_eq!(buf, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(Pattern::first_difference(&[1, 2, 3], 0, &buf), None);
        assert_eq!(Pattern::first_difference(&[1, 2, 3], 1, &buf[1..]), None);
        buf[7] = 9;
        assert_eq!(Pattern::first_difference(&[1, 2, 3], 0, &buf), Some(7));
    }
}
