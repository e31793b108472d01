//! fio's number formatting (`num2str()` in lib/num2str.c, as of fio 3.33).

/// Unit suffix appended by [`num2str`] (fio's `enum n2s_unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// No suffix.
    None,
    /// `/s`.
    PerSec,
    /// `B`.
    Byte,
    /// `bit` (the number is multiplied by 8 first).
    Bit,
    /// `B/s`.
    BytePerSec,
    /// `bit/s` (the number is multiplied by 8 first).
    BitPerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::PerSec => "/s",
            Unit::Byte => "B",
            Unit::Bit => "bit",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }
}

const SI_PREFIX: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC_PREFIX: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// fio's "cheesy number->string conversion, complete with carry rounding
/// error", digit for digit.
///
/// `num` is divided by 1000 (or 1024 with `pow2`) until it has at most
/// `maxlen` digits, then printed with as many decimals of the last remainder
/// as fit in `maxlen` characters (the point counts), followed by the SI or
/// IEC prefix and the unit. `base` says what `num` already counts (1024 if
/// it is in KiB). Examples: `num2str(73357, 4, 1, false, Unit::None)` is
/// `73.4k`; `num2str(600944938, 4, 1, true, Unit::BytePerSec)` is `573MiB/s`.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, units: Unit) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC_PREFIX } else { &SI_PREFIX };
    let mut post_index = 0usize;
    let mut base = base;
    while base > 1 {
        base /= thousand;
        post_index += 1;
    }
    let mut num = match units {
        Unit::Bit | Unit::BitPerSec => num.wrapping_mul(8),
        _ => num,
    };

    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post_index < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post_index += 1;
    }
    if post_index >= prefixes.len() {
        post_index = 0;
    }
    let unit = units.suffix();

    let Some(modulo) = modulo else {
        return format!("{num}{}{unit}", prefixes[post_index]);
    };
    let room = maxlen as i64 - digits(num) as i64;
    if room <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post_index]);
    }
    let decimals = (room - 1) as usize;
    let frac = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &frac[2..], prefixes[post_index])
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Significant figures fio uses for bandwidth, IOPS and sizes (`sig_figs`).
pub const SIG_FIGS: usize = 4;

/// A byte count as fio prints it with the default `kb_base` of 1024: IEC
/// when `iec`, SI otherwise (`5940MiB`, `6229MB`).
pub fn bytes(n: u64, iec: bool) -> String {
    num2str(n, SIG_FIGS, 1, iec, Unit::Byte)
}

/// A bandwidth in bytes/s as fio prints it (`5922MiB/s`, `6210MB/s`).
pub fn bw(bytes_per_sec: u64, iec: bool) -> String {
    num2str(bytes_per_sec, SIG_FIGS, 1, iec, Unit::BytePerSec)
}

/// A rate in bits per second (`280Mibit/s`), as fio prints a network job's.
pub fn bw_bits(bytes_per_sec: u64, iec: bool) -> String {
    num2str(bytes_per_sec, SIG_FIGS, 1, iec, Unit::BitPerSec)
}

/// A plain count with 4 significant figures and SI prefix (`1516k`).
pub fn count(n: u64) -> String {
    num2str(n, SIG_FIGS, 1, false, Unit::None)
}

/// A latency min/max as the `display_lat()` lines print it: 6 figures
/// (`4050.1k`).
pub fn lat_minmax(n: u64) -> String {
    num2str(n, 6, 1, false, Unit::None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_000_write_line() {
        // fio-3.17, 8k writes, io_uring QD1: total=0,7335827 in 100001 msec
        // "write: IOPS=73.4k, BW=573MiB/s (601MB/s)(55.0GiB/100001msec)"
        let io_bytes = 7_335_827u64 * 8192;
        let iops = 1000 * 7_335_827u64 / 100_001;
        let bwv = 1000 * io_bytes / 100_001;
        assert_eq!(count(iops), "73.4k");
        assert_eq!(bw(bwv, true), "573MiB/s");
        assert_eq!(bw(bwv, false), "601MB/s");
        // group line: "io=55.0GiB (60.1GB)"
        assert_eq!(bytes(io_bytes, false), "60.1GB");
        // 3.17 printed "55.0GiB" here: its num2str dropped the carry when the
        // remainder rounds to 1.0 (991/1024 -> "1.0"). fio 3.33 adds it (checked
        // against the distro fio-3.33: 104816640 bytes print as "100.0MiB").
        assert_eq!(bytes(io_bytes, true), "56.0GiB");
        assert_eq!(bytes(104_816_640, true), "100.0MiB");
    }

    #[test]
    fn seed_000_sync_line() {
        // "write: IOPS=234k, BW=1831MiB/s (1920MB/s)(179GiB/100001msec)"
        // "io=179GiB (192GB)"
        let ios = 23_437_892u64;
        let io_bytes = ios * 8192;
        assert_eq!(count(1000 * ios / 100_001), "234k");
        let bwv = 1000 * io_bytes / 100_001;
        assert_eq!(bw(bwv, true), "1831MiB/s");
        assert_eq!(bw(bwv, false), "1920MB/s");
        assert_eq!(bytes(io_bytes, true), "179GiB");
        assert_eq!(bytes(io_bytes, false), "192GB");
    }

    #[test]
    fn seed_000_batched_line() {
        // "write: IOPS=194k, BW=1513MiB/s (1587MB/s)(148GiB/100001msec)"
        // "io=148GiB (159GB)"
        let ios = 19_369_087u64;
        let io_bytes = ios * 8192;
        assert_eq!(count(1000 * ios / 100_001), "194k");
        let bwv = 1000 * io_bytes / 100_001;
        assert_eq!(bw(bwv, true), "1513MiB/s");
        assert_eq!(bw(bwv, false), "1587MB/s");
        assert_eq!(bytes(io_bytes, true), "148GiB");
        assert_eq!(bytes(io_bytes, false), "159GB");
    }

    #[test]
    fn fio_md_sample_3_33() {
        // "read: IOPS=1516k, BW=5922MiB/s (6210MB/s)(5940MiB/1003msec)" with
        // issued reads 1520658 of 4096 bytes; "io=5940MiB (6229MB)"
        let ios = 1_520_658u64;
        let io_bytes = ios * 4096;
        assert_eq!(count(1000 * ios / 1003), "1516k");
        let bwv = 1000 * io_bytes / 1003;
        assert_eq!(bw(bwv, true), "5922MiB/s");
        assert_eq!(bw(bwv, false), "6210MB/s");
        assert_eq!(bytes(io_bytes, true), "5940MiB");
        assert_eq!(bytes(io_bytes, false), "6229MB");
        // write: IOPS=650k
        assert_eq!(count(1000 * 652_405 / 1003), "650k");
    }

    #[test]
    fn latency_min_max_six_figures() {
        // "clat (nsec): min=40, max=1400.7k", "slat (nsec): max=4050.1k",
        // "sync: max=6649.7k"; max=607779 fits in 6 digits
        assert_eq!(lat_minmax(40), "40");
        assert_eq!(lat_minmax(1_400_698), "1400.7k");
        assert_eq!(lat_minmax(4_050_100), "4050.1k");
        assert_eq!(lat_minmax(607_779), "607779");
        assert_eq!(lat_minmax(999_999), "999999");
        assert_eq!(lat_minmax(1_000_000), "1000.0k");
        assert_eq!(lat_minmax(99_999_999), "100000k");
    }

    #[test]
    fn local_fio_3_33_outputs() {
        // captured from the distro fio-3.33 (null engine)
        // "IOPS=17.7k, BW=69.0MiB/s (72.3MB/s)(8192KiB/116msec)", io=8192KiB (8389kB)
        let b = 8 * 1024 * 1024u64;
        assert_eq!(count(1000 * 2048 / 116), "17.7k");
        assert_eq!(bw(1000 * b / 116, true), "69.0MiB/s");
        assert_eq!(bw(1000 * b / 116, false), "72.3MB/s");
        assert_eq!(bytes(b, true), "8192KiB");
        assert_eq!(bytes(b, false), "8389kB");
        // group_reporting: 3213863 reads of 4k in 1001 msec:
        // "IOPS=3211k, BW=12.2GiB/s (13.1GB/s)(12.3GiB/1001msec)", io=... (13.2GB)
        let b = 3_213_863u64 * 4096;
        assert_eq!(count(1000 * 3_213_863 / 1001), "3211k");
        assert_eq!(bw(1000 * b / 1001, true), "12.2GiB/s");
        assert_eq!(bw(1000 * b / 1001, false), "13.1GB/s");
        assert_eq!(bytes(b, true), "12.3GiB");
        assert_eq!(bytes(b, false), "13.2GB");
        // block sizes in the banner
        assert_eq!(bytes(4096, true), "4096B");
        assert_eq!(bytes(65536, true), "64.0KiB");
        assert_eq!(bytes(1 << 20, true), "1024KiB");
        assert_eq!(bytes(123_457, true), "121KiB");
        assert_eq!(bytes(512, true), "512B");
    }

    #[test]
    fn base_bits_and_edges() {
        assert_eq!(num2str(0, 4, 1, false, Unit::None), "0");
        assert_eq!(num2str(9999, 4, 1, false, Unit::None), "9999");
        assert_eq!(num2str(10_000, 4, 1, false, Unit::None), "10.0k");
        // carry into an extra digit, as fio does
        assert_eq!(num2str(9_999_600, 4, 1, false, Unit::None), "10000k");
        // base says num already counts KiB
        assert_eq!(num2str(2048, 4, 1024, true, Unit::Byte), "2048KiB");
        assert_eq!(num2str(20480, 4, 1024, true, Unit::Byte), "20.0MiB");
        // bits are 8x
        assert_eq!(num2str(125_000, 4, 1, false, Unit::BitPerSec), "1000kbit/s");
        assert_eq!(num2str(u64::MAX, 4, 1, true, Unit::Byte), "16.0EiB");
        assert_eq!(num2str(1_000, 4, 1, false, Unit::PerSec), "1000/s");
    }
}
