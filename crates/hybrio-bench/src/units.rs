//! fio's value syntax: sizes with its unit quirks, times, booleans.
//!
//! fio reads `4k` as 4096 and, for backward compatibility, `4kib` as 4000
//! (the IEC/SI prefixes are inverted while `kb_base=1024`, the default).
//! hybrio reads them the same way so that existing job files mean the same thing.

use std::time::Duration;

/// Why a value could not be read. The caller adds which option it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a number with a known unit.
    #[error("invalid size '{0}' (expected a number with an optional k/m/g/t/p suffix, e.g. 4k)")]
    Size(String),
    /// Not a time with a known unit.
    #[error(
        "invalid time '{0}' (expected a number with an optional us/ms/s/m/h/d suffix, e.g. 30s)"
    )]
    Time(String),
    /// Not a boolean.
    #[error("invalid boolean '{0}' (expected 0 or 1)")]
    Bool(String),
    /// Not an integer.
    #[error("invalid integer '{0}'")]
    Int(String),
    /// Too large for the option.
    #[error("value '{0}' is out of range")]
    Range(String),
    /// Past the largest number fio reads (a signed 64-bit one): no file
    /// offset or size can be larger.
    #[error("'{0}' is too large (at most {max}, 8 EiB less one byte, as fio)", max = MAX_VALUE)]
    TooLarge(String),
    /// Not one of the allowed words.
    #[error("invalid value '{value}' (allowed: {allowed})")]
    Choice {
        /// What was given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A value fio accepts that hybrio does not implement.
    #[error("{0}")]
    Unsupported(String),
    /// A value whose parts do not fit together (the message says how).
    #[error("{0}")]
    Invalid(String),
}

/// The largest value fio reads (its parser's `strtoll`); also the largest
/// file offset (`off_t`), so a size or offset past it could never be used.
pub const MAX_VALUE: u64 = i64::MAX as u64;

/// Splits a leading decimal or hexadecimal number from its suffix.
fn split_number(text: &str) -> Option<(u64, Option<f64>, &str)> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        if end == 0 {
            return None;
        }
        // Too many digits for 64 bits: a number all the same, too large.
        let value = u64::from_str_radix(&hex[..end], 16).unwrap_or(u64::MAX);
        return Some((value, None, &hex[end..]));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let digits = &text[..end];
    if digits.is_empty() {
        return None;
    }
    if digits.contains('.') {
        let value: f64 = digits.parse().ok()?;
        Some((value as u64, Some(value), &text[end..]))
    } else {
        // Only digits: what does not fit in 64 bits is too large, not
        // malformed (u64::MAX is past MAX_VALUE and refused as such).
        Some((digits.parse().unwrap_or(u64::MAX), None, &text[end..]))
    }
}

/// Reads a size in bytes as fio does with `kb_base=1024`: `k`, `kb` = 1024;
/// `kib` = 1000 (fio's inversion); likewise m, g, t, p; `b` or nothing = bytes.
pub fn parse_size(text: &str) -> Result<u64, ValueError> {
    parse_size_in(text, 1024)
}

/// Reads a size in bytes with fio's `kb_base`: 1024 (the default) reads `k`
/// and `kb` as 1024 and `kib` as 1000, as old fio scripts expect; 1000 reads
/// them as the standards do (`k`, `kb` 1000; `kib` 1024).
pub fn parse_size_in(text: &str, kb_base: u32) -> Result<u64, ValueError> {
    let err = || ValueError::Size(text.to_string());
    let (whole, fraction, suffix) = split_number(text).ok_or_else(err)?;
    let suffix = suffix.trim().to_ascii_lowercase();
    let (plain, iec) = if kb_base == 1000 {
        (1000, 1024)
    } else {
        (1024, 1000)
    };
    // As fio's parser reads a unit: by its start, so that `Ki`, `kB/s` or
    // `kibibytes` are units too: `kib` .. `pib` first (the other base),
    // then `k` .. `p`; `b` (bytes) or nothing is 1. What fio would read as
    // 1 whatever it says (`1e`) is refused rather than taken for a byte.
    let starts = |unit: &str| suffix.starts_with(unit);
    let (power, base): (u32, u64) = if suffix.is_empty() || starts("b") {
        (0, 1024)
    } else if let Some(power) = ["kib", "mib", "gib", "tib", "pib"]
        .iter()
        .position(|u| starts(u))
    {
        (power as u32 + 1, iec)
    } else if let Some(power) = ["k", "m", "g", "t", "p"].iter().position(|u| starts(u)) {
        (power as u32 + 1, plain)
    } else {
        return Err(err());
    };
    let too_large = || ValueError::TooLarge(text.trim().to_string());
    let multiplier = base.checked_pow(power).ok_or_else(too_large)?;
    let bytes = match fraction {
        Some(value) if power > 0 => {
            let bytes = value * multiplier as f64;
            if bytes >= MAX_VALUE as f64 {
                return Err(too_large());
            }
            bytes as u64
        }
        Some(_) => return Err(err()),
        None => whole.checked_mul(multiplier).ok_or_else(too_large)?,
    };
    // fio refuses such a number (`failed parsing`) rather than let it wrap
    // negative; past it, std's file calls would fail with a message about
    // integer conversions that names nothing the user wrote.
    if bytes > MAX_VALUE {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads a time; a bare number is in `default_unit` (seconds for most fio options).
pub fn parse_time(text: &str, default_unit: Duration) -> Result<Duration, ValueError> {
    let err = || ValueError::Time(text.to_string());
    let (whole, fraction, suffix) = split_number(text).ok_or_else(err)?;
    let value = fraction.unwrap_or(whole as f64);
    let unit = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => default_unit,
        "ns" | "nsec" => Duration::from_nanos(1),
        "us" | "usec" => Duration::from_micros(1),
        "ms" | "msec" => Duration::from_millis(1),
        "s" | "sec" => Duration::from_secs(1),
        "m" | "min" => Duration::from_secs(60),
        "h" | "hour" => Duration::from_secs(3600),
        "d" | "day" => Duration::from_secs(86400),
        _ => return Err(err()),
    };
    let nanos = value * unit.as_nanos() as f64;
    if !nanos.is_finite() || nanos >= u64::MAX as f64 {
        return Err(ValueError::Range(text.to_string()));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// Reads a boolean: 0/1 as fio, and the words true/false, yes/no, on/off.
pub fn parse_bool(text: &str) -> Result<bool, ValueError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ValueError::Bool(text.to_string())),
    }
}

/// Reads a non-negative integer that fits in `u32` (suffixes as sizes, e.g. `1k`).
pub fn parse_u32(text: &str) -> Result<u32, ValueError> {
    let value = parse_u64(text)?;
    u32::try_from(value).map_err(|_| ValueError::Range(text.to_string()))
}

/// Reads a non-negative integer up to fio's largest, [`MAX_VALUE`].
pub fn parse_u64(text: &str) -> Result<u64, ValueError> {
    parse_size(text).map_err(|e| match e {
        ValueError::TooLarge(_) => e,
        _ => ValueError::Int(text.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_kb_base_1024() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert_eq!(parse_size("4kib"), Ok(4000));
        assert_eq!(parse_size_in("4k", 1000), Ok(4000));
        assert_eq!(parse_size_in("4kB", 1000), Ok(4000));
        assert_eq!(parse_size_in("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size_in("1m", 1000), Ok(1_000_000));
        assert_eq!(parse_size_in("1MiB", 1000), Ok(1 << 20));
        assert_eq!(parse_size_in("512", 1000), Ok(512));
        assert_eq!(parse_size("8KiB"), Ok(8000));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("1.5m"), Ok(3 << 19));
        assert_eq!(parse_size("0x1000"), Ok(4096));
        assert_eq!(parse_size("512b"), Ok(512));
    }

    #[test]
    fn bad_sizes_are_refused() {
        for bad in [
            "abc",
            "",
            "4q",
            "-4k",
            "k",
            "99999999999999999999",
            "20000000p",
        ] {
            assert!(parse_size(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn sizes_past_fios_largest_are_too_large() {
        assert_eq!(parse_size("9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(parse_size("0x7fffffffffffffff"), Ok(i64::MAX as u64));
        for big in [
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "9223372036854775808",
            "0xffffffffffffffff",
            "0x10000000000000000",
            "8388608t",
            "8192p",
            "8192.5p",
            "20000000p",
        ] {
            assert_eq!(
                parse_size(big),
                Err(ValueError::TooLarge(big.into())),
                "{big}"
            );
            assert_eq!(
                parse_u64(big),
                Err(ValueError::TooLarge(big.into())),
                "{big}"
            );
        }
        assert_eq!(parse_size("8191p"), Ok(8191 << 50));
        assert_eq!(
            ValueError::TooLarge("18446744073709551615".into()).to_string(),
            "'18446744073709551615' is too large (at most 9223372036854775807, 8 EiB less one byte, as fio)"
        );
        // Not numbers at all stay malformed.
        assert_eq!(parse_size("0x"), Err(ValueError::Size("0x".into())));
    }

    #[test]
    fn times_default_to_the_given_unit() {
        let s = Duration::from_secs(1);
        assert_eq!(parse_time("10", s), Ok(Duration::from_secs(10)));
        assert_eq!(parse_time("250ms", s), Ok(Duration::from_millis(250)));
        assert_eq!(parse_time("30us", s), Ok(Duration::from_micros(30)));
        assert_eq!(parse_time("2m", s), Ok(Duration::from_secs(120)));
        assert_eq!(parse_time("1h", s), Ok(Duration::from_secs(3600)));
        assert_eq!(
            parse_time("5", Duration::from_micros(1)),
            Ok(Duration::from_micros(5))
        );
        assert!(parse_time("5parsecs", s).is_err());
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert_eq!(parse_bool("true"), Ok(true));
        assert!(parse_bool("2").is_err());
    }

    #[test]
    fn units_are_read_by_their_start_as_fio_reads_them() {
        for (text, bytes) in [
            ("1Ki", 1024),
            ("1Mi", 1 << 20),
            ("2Gi", 2 << 30),
            ("1kibi", 1000),
            ("1KiB/s", 1000),
            ("1kB/s", 1024),
            ("4Mb", 4 << 20),
            ("1bytes", 1),
            ("3B", 3),
        ] {
            assert_eq!(parse_size(text).unwrap(), bytes, "{text}");
        }
        // fio reads these as 1 byte, whatever they say: hybrio refuses them.
        for text in ["1e", "1x", "1%"] {
            assert!(parse_size(text).is_err(), "{text}");
        }
    }
}
