//! `ctime()` in the local time zone, without libc: the zone comes from `TZ`
//! or `/etc/localtime` (TZif files, RFC 8536, including the POSIX TZ rule
//! in their footer), falling back to UTC.

use std::time::{SystemTime, UNIX_EPOCH};

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `ctime(3)` of `t` in the local zone, without the trailing newline:
/// `Sun Nov 22 00:36:26 2026`.
pub(crate) fn ctime(t: SystemTime) -> String {
    let secs = unix_secs(t);
    ctime_with_offset(secs, LocalZone::load().offset_at(secs))
}

/// Seconds since the epoch, negative before it.
pub(crate) fn unix_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// `ctime()` layout of the UTC time `secs` shifted by `offset` seconds.
pub(crate) fn ctime_with_offset(secs: i64, offset: i64) -> String {
    let local = secs.saturating_add(offset);
    let days = local.div_euclid(86_400);
    let sod = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let wday = (days + 4).rem_euclid(7) as usize;
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[wday],
        MONTHS[(m - 1) as usize],
        d,
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        y
    )
}

/// Days since 1970-01-01 to (year, month 1-12, day 1-31) in the proleptic
/// Gregorian calendar (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// A local time zone: TZif transitions and/or a POSIX rule.
#[derive(Debug, Default)]
pub(crate) struct LocalZone {
    transitions: Vec<(i64, i64)>,
    first_offset: i64,
    rule: Option<PosixTz>,
}

impl LocalZone {
    /// The zone named by `TZ`, else `/etc/localtime`, else UTC.
    pub(crate) fn load() -> LocalZone {
        match std::env::var("TZ") {
            Err(_) => std::fs::read("/etc/localtime")
                .ok()
                .and_then(|b| LocalZone::from_tzif(&b))
                .unwrap_or_default(),
            Ok(tz) => LocalZone::from_tz_var(&tz),
        }
    }

    fn from_tz_var(tz: &str) -> LocalZone {
        let name = tz.strip_prefix(':').unwrap_or(tz);
        if name.is_empty() {
            return LocalZone::default();
        }
        let path = if name.starts_with('/') {
            Some(name.to_string())
        } else if !name.split('/').any(|c| c == ".." || c.is_empty()) {
            Some(format!("/usr/share/zoneinfo/{name}"))
        } else {
            None
        };
        if let Some(zone) = path
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| LocalZone::from_tzif(&b))
        {
            return zone;
        }
        LocalZone {
            rule: PosixTz::parse(name),
            ..LocalZone::default()
        }
    }

    /// Parses a TZif file (versions 1 to 4).
    pub(crate) fn from_tzif(data: &[u8]) -> Option<LocalZone> {
        let header = TzifHeader::parse(data)?;
        let v1_len = header.block_len(4);
        let (header, block, footer) = if header.version >= b'2' {
            let rest = data.get(44 + v1_len..)?;
            let h2 = TzifHeader::parse(rest)?;
            let len = h2.block_len(8);
            let block = rest.get(44..44 + len)?;
            let footer = rest.get(44 + len..).unwrap_or(&[]);
            (h2, block, Some(footer))
        } else {
            (header, data.get(44..44 + v1_len)?, None)
        };
        let tsize = if footer.is_some() { 8 } else { 4 };
        let times = &block[..header.timecnt * tsize];
        let idxs = &block[header.timecnt * tsize..header.timecnt * (tsize + 1)];
        let types_at = header.timecnt * (tsize + 1);
        let types = &block[types_at..types_at + header.typecnt * 6];
        let utoff = |i: usize| -> Option<i64> {
            let t = types.get(i * 6..i * 6 + 4)?;
            Some(i64::from(i32::from_be_bytes([t[0], t[1], t[2], t[3]])))
        };
        let mut transitions = Vec::with_capacity(header.timecnt);
        for i in 0..header.timecnt {
            let raw = &times[i * tsize..(i + 1) * tsize];
            let at = if tsize == 8 {
                i64::from_be_bytes(raw.try_into().ok()?)
            } else {
                i64::from(i32::from_be_bytes(raw.try_into().ok()?))
            };
            transitions.push((at, utoff(usize::from(idxs[i]))?));
        }
        let rule = footer
            .and_then(|f| std::str::from_utf8(f).ok())
            .map(|s| s.trim_matches('\n'))
            .filter(|s| !s.is_empty())
            .and_then(PosixTz::parse);
        Some(LocalZone {
            transitions,
            first_offset: utoff(0)?,
            rule,
        })
    }

    /// Offset from UTC in seconds at the UTC time `t`.
    pub(crate) fn offset_at(&self, t: i64) -> i64 {
        match self.transitions.last() {
            None => self
                .rule
                .as_ref()
                .map_or(self.first_offset, |r| r.offset_at(t)),
            Some(&(last, last_off)) if t >= last => {
                self.rule.as_ref().map_or(last_off, |r| r.offset_at(t))
            }
            Some(_) => {
                let i = self.transitions.partition_point(|&(at, _)| at <= t);
                if i == 0 {
                    self.first_offset
                } else {
                    self.transitions[i - 1].1
                }
            }
        }
    }
}

struct TzifHeader {
    version: u8,
    isutcnt: usize,
    isstdcnt: usize,
    leapcnt: usize,
    timecnt: usize,
    typecnt: usize,
    charcnt: usize,
}

impl TzifHeader {
    fn parse(data: &[u8]) -> Option<TzifHeader> {
        if data.get(..4)? != b"TZif" {
            return None;
        }
        let count = |i: usize| -> Option<usize> {
            let b = data.get(20 + 4 * i..24 + 4 * i)?;
            usize::try_from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])).ok()
        };
        Some(TzifHeader {
            version: *data.get(4)?,
            isutcnt: count(0)?,
            isstdcnt: count(1)?,
            leapcnt: count(2)?,
            timecnt: count(3)?,
            typecnt: count(4)?,
            charcnt: count(5)?,
        })
    }

    fn block_len(&self, tsize: usize) -> usize {
        self.timecnt * (tsize + 1)
            + self.typecnt * 6
            + self.charcnt
            + self.leapcnt * (tsize + 4)
            + self.isstdcnt
            + self.isutcnt
    }
}

/// A POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PosixTz {
    std_off: i64,
    dst: Option<(i64, Rule, i64, Rule, i64)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    /// `Jn`: day 1..=365, February 29 never counted.
    Julian1(i64),
    /// `n`: day 0..=365, leap days counted.
    Julian0(i64),
    /// `Mm.w.d`: day `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    Month(i64, i64, i64),
}

impl PosixTz {
    pub(crate) fn parse(s: &str) -> Option<PosixTz> {
        let mut p = Cursor {
            s: s.as_bytes(),
            i: 0,
        };
        p.name()?;
        let std_off = -p.offset()?;
        if p.done() {
            return Some(PosixTz { std_off, dst: None });
        }
        p.name()?;
        let dst_off = if p.peek().is_some_and(|c| c != b',') {
            -p.offset()?
        } else {
            std_off + 3600
        };
        // default rule of POSIX.1-2017 (US rules)
        let (start, start_t, end, end_t) = if p.done() {
            (Rule::Month(3, 2, 0), 7200, Rule::Month(11, 1, 0), 7200)
        } else {
            p.expect(b',')?;
            let (start, start_t) = p.rule()?;
            p.expect(b',')?;
            let (end, end_t) = p.rule()?;
            (start, start_t, end, end_t)
        };
        p.done().then_some(PosixTz {
            std_off,
            dst: Some((dst_off, start, start_t, end, end_t)),
        })
    }

    fn offset_at(&self, t: i64) -> i64 {
        let Some((dst_off, start, start_t, end, end_t)) = self.dst else {
            return self.std_off;
        };
        let (year, _, _) = civil_from_days((t + self.std_off).div_euclid(86_400));
        // transitions happen at local wall-clock time: the start in
        // standard time, the end in daylight time
        let begin = rule_day(start, year) * 86_400 + start_t - self.std_off;
        let finish = rule_day(end, year) * 86_400 + end_t - dst_off;
        let in_dst = if begin < finish {
            t >= begin && t < finish
        } else {
            !(t >= finish && t < begin)
        };
        if in_dst { dst_off } else { self.std_off }
    }
}

/// Day (since the epoch) on which a rule falls in `year`.
fn rule_day(rule: Rule, year: i64) -> i64 {
    let jan1 = days_from_civil(year, 1, 1);
    match rule {
        Rule::Julian1(n) => jan1 + n - 1 + i64::from(is_leap(year) && n >= 60),
        Rule::Julian0(n) => jan1 + n,
        Rule::Month(m, w, d) => {
            let first = days_from_civil(year, m, 1);
            let first_wday = (first + 4).rem_euclid(7);
            let mut day = first + (d - first_wday).rem_euclid(7) + (w - 1) * 7;
            let next_month = if m == 12 {
                days_from_civil(year + 1, 1, 1)
            } else {
                days_from_civil(year, m + 1, 1)
            };
            while day >= next_month {
                day -= 7;
            }
            day
        }
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }
    fn name(&mut self) -> Option<()> {
        let start = self.i;
        if self.peek()? == b'<' {
            while self.peek()? != b'>' {
                self.i += 1;
            }
            self.i += 1;
            return Some(());
        }
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.i += 1;
        }
        (self.i - start >= 3).then_some(())
    }
    fn number(&mut self) -> Option<i64> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }
    /// `[+-]hh[:mm[:ss]]` in seconds.
    fn offset(&mut self) -> Option<i64> {
        let sign = match self.peek()? {
            b'-' => {
                self.i += 1;
                -1
            }
            b'+' => {
                self.i += 1;
                1
            }
            _ => 1,
        };
        let mut secs = self.number()? * 3600;
        if self.peek() == Some(b':') {
            self.i += 1;
            secs += self.number()? * 60;
            if self.peek() == Some(b':') {
                self.i += 1;
                secs += self.number()?;
            }
        }
        Some(sign * secs)
    }
    fn rule(&mut self) -> Option<(Rule, i64)> {
        let rule = match self.peek()? {
            b'J' => {
                self.i += 1;
                Rule::Julian1(self.number()?)
            }
            b'M' => {
                self.i += 1;
                let m = self.number()?;
                self.expect(b'.')?;
                let w = self.number()?;
                self.expect(b'.')?;
                let d = self.number()?;
                if !(1..=12).contains(&m) || !(1..=5).contains(&w) || !(0..=6).contains(&d) {
                    return None;
                }
                Rule::Month(m, w, d)
            }
            _ => Rule::Julian0(self.number()?),
        };
        let time = if self.peek() == Some(b'/') {
            self.i += 1;
            self.offset()?
        } else {
            7200
        };
        Some((rule, time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_layout() {
        // the seed header: "Fri Feb 14 11:22:05 2020" (written in UTC-8)
        assert_eq!(
            ctime_with_offset(1_581_708_125, -8 * 3600),
            "Fri Feb 14 11:22:05 2020"
        );
        // single-digit days are space padded: "Wed Dec  3 17:32:29 2014"
        assert_eq!(
            ctime_with_offset(1_417_627_949, 0),
            "Wed Dec  3 17:32:29 2014"
        );
        assert_eq!(ctime_with_offset(0, 0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(
            ctime_with_offset(951_782_400, 0),
            "Tue Feb 29 00:00:00 2000"
        );
        assert_eq!(ctime_with_offset(-1, 0), "Wed Dec 31 23:59:59 1969");
    }

    #[test]
    fn civil_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn posix_rules() {
        let cet = PosixTz::parse("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        // 2026-03-29 00:59:59 UTC is still winter, 01:00:00 UTC summer
        let switch = days_from_civil(2026, 3, 29) * 86_400 + 3600;
        assert_eq!(cet.offset_at(switch - 1), 3600);
        assert_eq!(cet.offset_at(switch), 7200);
        // back on 2026-10-25 at 01:00 UTC
        let back = days_from_civil(2026, 10, 25) * 86_400 + 3600;
        assert_eq!(cet.offset_at(back - 1), 7200);
        assert_eq!(cet.offset_at(back), 3600);
        let ny = PosixTz::parse("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_eq!(
            ny.offset_at(days_from_civil(2026, 7, 1) * 86_400),
            -4 * 3600
        );
        assert_eq!(
            ny.offset_at(days_from_civil(2026, 1, 1) * 86_400),
            -5 * 3600
        );
        // southern hemisphere: DST over the new year
        let nz = PosixTz::parse("NZST-12NZDT,M9.5.0,M4.1.0/3").unwrap();
        assert_eq!(
            nz.offset_at(days_from_civil(2026, 1, 15) * 86_400),
            13 * 3600
        );
        assert_eq!(
            nz.offset_at(days_from_civil(2026, 6, 15) * 86_400),
            12 * 3600
        );
        assert_eq!(PosixTz::parse("UTC0").unwrap().offset_at(12345), 0);
        assert_eq!(PosixTz::parse("<+0530>-5:30").unwrap().offset_at(0), 19_800);
        assert!(PosixTz::parse("garbage,").is_none());
    }

    /// A minimal version-2 TZif file: two transitions and a footer rule.
    fn tzif_v2() -> Vec<u8> {
        fn header(out: &mut Vec<u8>, timecnt: u32, typecnt: u32, charcnt: u32) {
            out.extend_from_slice(b"TZif2");
            out.extend_from_slice(&[0; 15]);
            for n in [0, 0, 0, timecnt, typecnt, charcnt] {
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        let mut f = Vec::new();
        header(&mut f, 0, 1, 4);
        f.extend_from_slice(&0i32.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(b"UTC\0");
        header(&mut f, 2, 2, 8);
        f.extend_from_slice(&1_000_000i64.to_be_bytes());
        f.extend_from_slice(&2_000_000i64.to_be_bytes());
        f.extend_from_slice(&[1, 0]);
        f.extend_from_slice(&3600i32.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&7200i32.to_be_bytes());
        f.extend_from_slice(&[1, 4]);
        f.extend_from_slice(b"CET\0CEST");
        f.extend_from_slice(b"\nCET-1CEST,M3.5.0,M10.5.0/3\n");
        f
    }

    #[test]
    fn tzif_transitions_and_footer() {
        let z = LocalZone::from_tzif(&tzif_v2()).unwrap();
        assert_eq!(z.offset_at(0), 3600); // before the first: type 0
        assert_eq!(z.offset_at(1_500_000), 7200);
        assert_eq!(z.offset_at(2_500_000), 3600);
        let summer = days_from_civil(2030, 7, 1) * 86_400;
        assert_eq!(z.offset_at(summer), 7200); // from the footer rule
        assert!(LocalZone::from_tzif(b"nope").is_none());
        assert_eq!(LocalZone::default().offset_at(5), 0);
    }

    #[test]
    fn system_zone_files_if_present() {
        let Ok(data) = std::fs::read("/usr/share/zoneinfo/Europe/Berlin") else {
            return;
        };
        let z = LocalZone::from_tzif(&data).unwrap();
        assert_eq!(z.offset_at(days_from_civil(2020, 2, 14) * 86_400), 3600);
        assert_eq!(z.offset_at(days_from_civil(2020, 7, 14) * 86_400), 7200);
        assert_eq!(z.offset_at(days_from_civil(2100, 7, 14) * 86_400), 7200);
    }
}
