//! fio's latency histogram (`io_u_plat`) and its percentile rules.
//!
//! fio keeps 29 groups of 64 buckets (`FIO_IO_U_PLAT_BITS` = 6,
//! `FIO_IO_U_PLAT_NR` = 1856): values below 128 are exact, above that each
//! power of two is split into 64 equal buckets. The `histogram` crate with
//! grouping power 6 uses the very same bucket index (`plat_val_to_idx()` in
//! fio's stat.c); the top 64-bit range is kept here and only folded into
//! fio's last bucket (values from about 17.2 s up) when reporting.

use histogram::Histogram;

/// Grouping power that makes `histogram` bucket exactly as fio does.
pub const GROUPING_POWER: u8 = 6;
/// Largest power of two the histogram can hold (all of `u64`).
pub const MAX_VALUE_POWER: u8 = 64;
/// Number of buckets fio reports (`FIO_IO_U_PLAT_NR`); higher buckets are
/// folded into the last one, which fio reports as 17112760320 ns.
pub const FIO_PLAT_NR: usize = 29 << GROUPING_POWER;
/// Most percentiles fio reports (`FIO_IO_U_LIST_MAX_LEN`).
pub const MAX_PERCENTILES: usize = 20;

/// The value fio reports for bucket `index` (its `plat_idx_to_val()`): the
/// value itself below 128, else the bucket's start plus half its width.
pub fn bucket_value(index: usize) -> u64 {
    let index = index.min(FIO_PLAT_NR - 1) as u64;
    if index < 128 {
        return index;
    }
    let error_bits = (index >> GROUPING_POWER) - 1;
    let base = 1u64 << (error_bits + u64::from(GROUPING_POWER));
    let k = index & 63;
    base + (k << error_bits) + (1u64 << (error_bits - 1))
}

/// The rank fio's percentile walk stops at: the smallest count `s` with
/// `s >= (long double)p / 100.0 * n`.
///
/// fio evaluates that expression in x87 80-bit extended precision (64-bit
/// mantissa), and the result differs from plain `f64` arithmetic more often
/// than one would think: for `p` = 30 and `n` = 100 fio's rank is 31, not 30.
/// This emulates the two rounded operations exactly with integer arithmetic.
pub fn fio_percentile_rank(p: f64, n: u64) -> u64 {
    if n == 0 || p.is_nan() || p <= 0.0 {
        return 0;
    }
    if p.is_infinite() {
        return n;
    }
    let bits = p.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074i64)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    // q = RN64(m * 2^e / 100) = qm * 2^(e - k), qm a 64-bit mantissa.
    let m_bits = 64 - i64::from(m.leading_zeros());
    let mut k = 71 - m_bits;
    let two63 = 1u128 << 63;
    let two64 = 1u128 << 64;
    let (mut qm, rem) = loop {
        let num = u128::from(m) << k;
        let (q, r) = (num / 100, num % 100);
        if q >= two64 {
            k -= 1;
        } else if q < two63 {
            k += 1;
        } else {
            break (q, r);
        }
    };
    if rem * 2 > 100 || (rem * 2 == 100 && qm & 1 == 1) {
        qm += 1;
        if qm == two64 {
            qm = two63;
            k -= 1;
        }
    }
    // t = RN64(q * n) = tm * 2^(e - k + s).
    let prod = qm * u128::from(n);
    let prod_bits = 128 - i64::from(prod.leading_zeros());
    let mut s = 0i64;
    let mut tm = prod;
    if prod_bits > 64 {
        s = prod_bits - 64;
        tm = prod >> s;
        let rest = prod & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        if rest > half || (rest == half && tm & 1 == 1) {
            tm += 1;
            if tm == two64 {
                tm = two63;
                s += 1;
            }
        }
    }
    let scale = e - k + s;
    let rank = if scale >= 0 {
        if scale >= 64 { u128::MAX } else { tm << scale }
    } else {
        let sh = -scale;
        if sh >= 128 {
            1
        } else {
            let den = 1u128 << sh;
            tm / den + u128::from(tm % den != 0)
        }
    };
    u64::try_from(rank).unwrap_or(u64::MAX)
}

/// The percentile list fio actually reports from a configured one: entries up
/// to the first 0.0 (fio's terminator), at most [`MAX_PERCENTILES`], those not
/// in (0, 100] dropped, sorted ascending (fio sorts the list in place).
pub fn effective_percentiles(list: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = list
        .iter()
        .copied()
        .take_while(|p| *p != 0.0)
        .take(MAX_PERCENTILES)
        .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

/// A fio-compatible latency histogram in nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LatHistogram {
    inner: Histogram,
}

impl Default for LatHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatHistogram {
    /// An empty histogram (allocates its 3776 counters once).
    pub fn new() -> Self {
        let inner = Histogram::new(GROUPING_POWER, MAX_VALUE_POWER)
            .expect("grouping power 6 / max power 64 is a valid histogram config");
        Self { inner }
    }

    /// Counts one value. Allocation-free; every `u64` is in range.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Cannot fail: with max_value_power 64 every u64 has a bucket.
        let _ = self.inner.increment(ns);
    }

    /// Adds the counts of another histogram (bucket-wise, saturating in the
    /// practically impossible case of a `u64` overflow).
    pub fn merge(&mut self, other: &LatHistogram) {
        if self.inner.checked_add_assign(&other.inner).is_err() {
            for (a, b) in self
                .inner
                .as_mut_slice()
                .iter_mut()
                .zip(other.inner.as_slice())
            {
                *a = a.saturating_add(*b);
            }
        }
    }

    /// Clears all counts, keeping the allocation.
    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// Total number of values counted.
    pub fn total(&self) -> u64 {
        self.inner
            .as_slice()
            .iter()
            .fold(0u64, |acc, &c| acc.saturating_add(c))
    }

    /// The underlying `histogram` crate histogram (full 64-bit range).
    pub fn inner(&self) -> &Histogram {
        &self.inner
    }

    /// What was counted since `earlier`, a copy of this histogram taken
    /// before (bucket by bucket; a bucket that went down counts 0).
    pub fn since(&self, earlier: &LatHistogram) -> LatHistogram {
        let mut out = self.clone();
        for (now, then) in out
            .inner
            .as_mut_slice()
            .iter_mut()
            .zip(earlier.inner.as_slice())
        {
            *now = now.saturating_sub(*then);
        }
        out
    }

    /// The counts of fio's 1856 buckets in order, the last including
    /// every bucket above it (fio's `io_u_plat`).
    pub fn fio_counts(&self) -> impl Iterator<Item = u64> + '_ {
        (0..FIO_PLAT_NR).map(|i| self.fio_count(i))
    }

    /// Count of fio bucket `index`, the last one including every bucket above.
    fn fio_count(&self, index: usize) -> u64 {
        let slice = self.inner.as_slice();
        if index < FIO_PLAT_NR - 1 {
            slice[index]
        } else if index == FIO_PLAT_NR - 1 {
            slice[index..]
                .iter()
                .fold(0u64, |acc, &c| acc.saturating_add(c))
        } else {
            0
        }
    }

    /// Percentiles computed as fio's `calc_clat_percentiles()` does: the list
    /// is cleaned and sorted ([`effective_percentiles`]); walking the buckets
    /// in order while accumulating counts, percentile `p` takes the first
    /// bucket whose cumulative count reaches [`fio_percentile_rank`]`(p, N)`,
    /// and reports that bucket's [`bucket_value`]. `N` is the histogram's
    /// total count (fio passes the sample count of the matching statistic,
    /// which is the same number). Returns `(p, value_ns)` pairs in ascending
    /// order of `p`; empty when the histogram is empty.
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        let plist = effective_percentiles(list);
        let n = self.total();
        if n == 0 || plist.is_empty() {
            return Vec::new();
        }
        let ranks: Vec<u64> = plist.iter().map(|&p| fio_percentile_rank(p, n)).collect();
        let mut out = Vec::with_capacity(plist.len());
        let mut sum = 0u64;
        for index in 0..FIO_PLAT_NR {
            sum = sum.saturating_add(self.fio_count(index));
            while out.len() < plist.len() && sum >= ranks[out.len()] {
                out.push((plist[out.len()], bucket_value(index)));
            }
            if out.len() == plist.len() {
                break;
            }
        }
        out
    }

    /// The non-empty buckets in ascending order as `(value_ns, count)`, the
    /// value being fio's [`bucket_value`] (the keys of json+ `bins`).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..FIO_PLAT_NR).filter_map(move |i| {
            let c = self.fio_count(i);
            (c > 0).then(|| (bucket_value(i), c))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's default `percentile_list`.
    const DEFAULT: [f64; 17] = [
        1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
        99.95, 99.99,
    ];

    /// `(p, n, ceill((long double)p / 100.0 * n))` computed by a C program
    /// with gcc on x86-64, i.e. exactly fio's comparison in
    /// `calc_clat_percentiles()`.
    const RANK_ORACLE: &[(f64, u64, u64)] = &[
        (1.0, 1, 1),
        (1.0, 2, 1),
        (1.0, 3, 1),
        (1.0, 7, 1),
        (1.0, 10, 1),
        (1.0, 100, 1),
        (1.0, 170, 2),
        (1.0, 200, 2),
        (1.0, 999, 10),
        (1.0, 1000, 10),
        (1.0, 1001, 11),
        (1.0, 1024, 11),
        (1.0, 7335827, 73359),
        (1.0, 1099511627776, 10995116278),
        (1.0, 9007199254740993, 90071992547410),
        (1.0, 9223372036854775808, 92233720368547759),
        (1.0, 18446744073709551615, 184467440737095517),
        (5.0, 1, 1),
        (5.0, 2, 1),
        (5.0, 3, 1),
        (5.0, 7, 1),
        (5.0, 10, 1),
        (5.0, 100, 5),
        (5.0, 170, 9),
        (5.0, 200, 10),
        (5.0, 999, 50),
        (5.0, 1000, 50),
        (5.0, 1001, 51),
        (5.0, 1024, 52),
        (5.0, 7335827, 366792),
        (5.0, 1099511627776, 54975581389),
        (5.0, 9007199254740993, 450359962737050),
        (5.0, 9223372036854775808, 461168601842738791),
        (5.0, 18446744073709551615, 922337203685477581),
        (10.0, 1, 1),
        (10.0, 2, 1),
        (10.0, 3, 1),
        (10.0, 7, 1),
        (10.0, 10, 1),
        (10.0, 100, 10),
        (10.0, 170, 17),
        (10.0, 200, 20),
        (10.0, 999, 100),
        (10.0, 1000, 100),
        (10.0, 1001, 101),
        (10.0, 1024, 103),
        (10.0, 7335827, 733583),
        (10.0, 1099511627776, 109951162778),
        (10.0, 9007199254740993, 900719925474100),
        (10.0, 9223372036854775808, 922337203685477581),
        (10.0, 18446744073709551615, 1844674407370955162),
        (20.0, 1, 1),
        (20.0, 2, 1),
        (20.0, 3, 1),
        (20.0, 7, 2),
        (20.0, 10, 2),
        (20.0, 100, 20),
        (20.0, 170, 34),
        (20.0, 200, 40),
        (20.0, 999, 200),
        (20.0, 1000, 200),
        (20.0, 1001, 201),
        (20.0, 1024, 205),
        (20.0, 7335827, 1467166),
        (20.0, 1099511627776, 219902325556),
        (20.0, 9007199254740993, 1801439850948199),
        (20.0, 9223372036854775808, 1844674407370955162),
        (20.0, 18446744073709551615, 3689348814741910323),
        (30.0, 1, 1),
        (30.0, 2, 1),
        (30.0, 3, 1),
        (30.0, 7, 3),
        (30.0, 10, 3),
        (30.0, 100, 31),
        (30.0, 170, 52),
        (30.0, 200, 61),
        (30.0, 999, 300),
        (30.0, 1000, 300),
        (30.0, 1001, 301),
        (30.0, 1024, 308),
        (30.0, 7335827, 2200749),
        (30.0, 1099511627776, 329853488333),
        (30.0, 9007199254740993, 2702159776422298),
        (30.0, 9223372036854775808, 2767011611056432743),
        (30.0, 18446744073709551615, 5534023222112865485),
        (40.0, 1, 1),
        (40.0, 2, 1),
        (40.0, 3, 2),
        (40.0, 7, 3),
        (40.0, 10, 4),
        (40.0, 100, 40),
        (40.0, 170, 68),
        (40.0, 200, 80),
        (40.0, 999, 400),
        (40.0, 1000, 400),
        (40.0, 1001, 401),
        (40.0, 1024, 410),
        (40.0, 7335827, 2934331),
        (40.0, 1099511627776, 439804651111),
        (40.0, 9007199254740993, 3602879701896398),
        (40.0, 9223372036854775808, 3689348814741910324),
        (40.0, 18446744073709551615, 7378697629483820646),
        (50.0, 1, 1),
        (50.0, 2, 1),
        (50.0, 3, 2),
        (50.0, 7, 4),
        (50.0, 10, 5),
        (50.0, 100, 50),
        (50.0, 170, 85),
        (50.0, 200, 100),
        (50.0, 999, 500),
        (50.0, 1000, 500),
        (50.0, 1001, 501),
        (50.0, 1024, 512),
        (50.0, 7335827, 3667914),
        (50.0, 1099511627776, 549755813888),
        (50.0, 9007199254740993, 4503599627370497),
        (50.0, 9223372036854775808, 4611686018427387904),
        (50.0, 18446744073709551615, 9223372036854775808),
        (60.0, 1, 1),
        (60.0, 2, 2),
        (60.0, 3, 2),
        (60.0, 7, 5),
        (60.0, 10, 6),
        (60.0, 100, 61),
        (60.0, 170, 103),
        (60.0, 200, 121),
        (60.0, 999, 600),
        (60.0, 1000, 600),
        (60.0, 1001, 601),
        (60.0, 1024, 615),
        (60.0, 7335827, 4401497),
        (60.0, 1099511627776, 659706976666),
        (60.0, 9007199254740993, 5404319552844596),
        (60.0, 9223372036854775808, 5534023222112865485),
        (60.0, 18446744073709551615, 11068046444225730969),
        (70.0, 1, 1),
        (70.0, 2, 2),
        (70.0, 3, 3),
        (70.0, 7, 5),
        (70.0, 10, 7),
        (70.0, 100, 70),
        (70.0, 170, 119),
        (70.0, 200, 140),
        (70.0, 999, 700),
        (70.0, 1000, 700),
        (70.0, 1001, 701),
        (70.0, 1024, 717),
        (70.0, 7335827, 5135079),
        (70.0, 1099511627776, 769658139444),
        (70.0, 9007199254740993, 6305039478318696),
        (70.0, 9223372036854775808, 6456360425798343066),
        (70.0, 18446744073709551615, 12912720851596686130),
        (80.0, 1, 1),
        (80.0, 2, 2),
        (80.0, 3, 3),
        (80.0, 7, 6),
        (80.0, 10, 8),
        (80.0, 100, 80),
        (80.0, 170, 136),
        (80.0, 200, 160),
        (80.0, 999, 800),
        (80.0, 1000, 800),
        (80.0, 1001, 801),
        (80.0, 1024, 820),
        (80.0, 7335827, 5868662),
        (80.0, 1099511627776, 879609302221),
        (80.0, 9007199254740993, 7205759403792795),
        (80.0, 9223372036854775808, 7378697629483820647),
        (80.0, 18446744073709551615, 14757395258967641292),
        (90.0, 1, 1),
        (90.0, 2, 2),
        (90.0, 3, 3),
        (90.0, 7, 7),
        (90.0, 10, 9),
        (90.0, 100, 90),
        (90.0, 170, 153),
        (90.0, 200, 180),
        (90.0, 999, 900),
        (90.0, 1000, 900),
        (90.0, 1001, 901),
        (90.0, 1024, 922),
        (90.0, 7335827, 6602245),
        (90.0, 1099511627776, 989560464999),
        (90.0, 9007199254740993, 8106479329266894),
        (90.0, 9223372036854775808, 8301034833169298227),
        (90.0, 18446744073709551615, 16602069666338596453),
        (95.0, 1, 1),
        (95.0, 2, 2),
        (95.0, 3, 3),
        (95.0, 7, 7),
        (95.0, 10, 10),
        (95.0, 100, 95),
        (95.0, 170, 162),
        (95.0, 200, 190),
        (95.0, 999, 950),
        (95.0, 1000, 950),
        (95.0, 1001, 951),
        (95.0, 1024, 973),
        (95.0, 7335827, 6969036),
        (95.0, 1099511627776, 1044536046388),
        (95.0, 9007199254740993, 8556839292003944),
        (95.0, 9223372036854775808, 8762203435012037018),
        (95.0, 18446744073709551615, 17524406870024074034),
        (99.0, 1, 1),
        (99.0, 2, 2),
        (99.0, 3, 3),
        (99.0, 7, 7),
        (99.0, 10, 10),
        (99.0, 100, 99),
        (99.0, 170, 169),
        (99.0, 200, 198),
        (99.0, 999, 990),
        (99.0, 1000, 990),
        (99.0, 1001, 991),
        (99.0, 1024, 1014),
        (99.0, 7335827, 7262469),
        (99.0, 1099511627776, 1088516511499),
        (99.0, 9007199254740993, 8917127262193584),
        (99.0, 9223372036854775808, 9131138316486228050),
        (99.0, 18446744073709551615, 18262276632972456099),
        (99.5, 1, 1),
        (99.5, 2, 2),
        (99.5, 3, 3),
        (99.5, 7, 7),
        (99.5, 10, 10),
        (99.5, 100, 100),
        (99.5, 170, 170),
        (99.5, 200, 199),
        (99.5, 999, 995),
        (99.5, 1000, 995),
        (99.5, 1001, 996),
        (99.5, 1024, 1019),
        (99.5, 7335827, 7299148),
        (99.5, 1099511627776, 1094014069638),
        (99.5, 9007199254740993, 8962163258467289),
        (99.5, 9223372036854775808, 9177255176670501929),
        (99.5, 18446744073709551615, 18354510353341003857),
        (99.9, 1, 1),
        (99.9, 2, 2),
        (99.9, 3, 3),
        (99.9, 7, 7),
        (99.9, 10, 10),
        (99.9, 100, 100),
        (99.9, 170, 170),
        (99.9, 200, 200),
        (99.9, 999, 999),
        (99.9, 1000, 1000),
        (99.9, 1001, 1000),
        (99.9, 1024, 1023),
        (99.9, 7335827, 7328492),
        (99.9, 1099511627776, 1098412116149),
        (99.9, 9007199254740993, 8998192055486253),
        (99.9, 9223372036854775808, 9214148664817921557),
        (99.9, 18446744073709551615, 18428297329635843112),
        (99.95, 1, 1),
        (99.95, 2, 2),
        (99.95, 3, 3),
        (99.95, 7, 7),
        (99.95, 10, 10),
        (99.95, 100, 100),
        (99.95, 170, 170),
        (99.95, 200, 200),
        (99.95, 999, 999),
        (99.95, 1000, 1000),
        (99.95, 1001, 1001),
        (99.95, 1024, 1024),
        (99.95, 7335827, 7332160),
        (99.95, 1099511627776, 1098961871963),
        (99.95, 9007199254740993, 9002695655113623),
        (99.95, 9223372036854775808, 9218760350836348682),
        (99.95, 18446744073709551615, 18437520701672697363),
        (99.99, 1, 1),
        (99.99, 2, 2),
        (99.99, 3, 3),
        (99.99, 7, 7),
        (99.99, 10, 10),
        (99.99, 100, 100),
        (99.99, 170, 170),
        (99.99, 200, 200),
        (99.99, 999, 999),
        (99.99, 1000, 1000),
        (99.99, 1001, 1001),
        (99.99, 1024, 1024),
        (99.99, 7335827, 7335094),
        (99.99, 1099511627776, 1099401676614),
        (99.99, 9007199254740993, 9006298534815519),
        (99.99, 9223372036854775808, 9222449699651089859),
        (99.99, 18446744073709551615, 18444899399302179716),
        (99.999, 1, 1),
        (99.999, 2, 2),
        (99.999, 3, 3),
        (99.999, 7, 7),
        (99.999, 10, 10),
        (99.999, 100, 100),
        (99.999, 170, 170),
        (99.999, 200, 200),
        (99.999, 999, 999),
        (99.999, 1000, 1000),
        (99.999, 1001, 1001),
        (99.999, 1024, 1024),
        (99.999, 7335827, 7335754),
        (99.999, 1099511627776, 1099500632660),
        (99.999, 9007199254740993, 9007109182748446),
        (99.999, 9223372036854775808, 9223279803134406820),
        (99.999, 18446744073709551615, 18446559606268813639),
        (33.3, 1, 1),
        (33.3, 2, 1),
        (33.3, 3, 1),
        (33.3, 7, 3),
        (33.3, 10, 4),
        (33.3, 100, 34),
        (33.3, 170, 57),
        (33.3, 200, 67),
        (33.3, 999, 333),
        (33.3, 1000, 333),
        (33.3, 1001, 334),
        (33.3, 1024, 341),
        (33.3, 7335827, 2442831),
        (33.3, 1099511627776, 366137372050),
        (33.3, 9007199254740993, 2999397351828751),
        (33.3, 9223372036854775808, 3071382888272640082),
        (33.3, 18446744073709551615, 6142765776545280164),
        (12.345, 1, 1),
        (12.345, 2, 1),
        (12.345, 3, 1),
        (12.345, 7, 1),
        (12.345, 10, 2),
        (12.345, 100, 13),
        (12.345, 170, 21),
        (12.345, 200, 25),
        (12.345, 999, 124),
        (12.345, 1000, 124),
        (12.345, 1001, 124),
        (12.345, 1024, 127),
        (12.345, 7335827, 905608),
        (12.345, 1099511627776, 135734710449),
        (12.345, 9007199254740993, 1111938747997776),
        (12.345, 9223372036854775808, 1138625277949722133),
        (12.345, 18446744073709551615, 2277250555899444265),
        (100.0, 1, 1),
        (100.0, 2, 2),
        (100.0, 3, 3),
        (100.0, 7, 7),
        (100.0, 10, 10),
        (100.0, 100, 100),
        (100.0, 170, 170),
        (100.0, 200, 200),
        (100.0, 999, 999),
        (100.0, 1000, 1000),
        (100.0, 1001, 1001),
        (100.0, 1024, 1024),
        (100.0, 7335827, 7335827),
        (100.0, 1099511627776, 1099511627776),
        (100.0, 9007199254740993, 9007199254740993),
        (100.0, 9223372036854775808, 9223372036854775808),
        (100.0, 18446744073709551615, 18446744073709551615),
        (18.677, 6652, 1243),
        (85.871, 78044, 67018),
        (82.586, 17457, 14418),
        (52.153, 26442, 13791),
        (15.331, 92714, 14214),
        (69.72, 41091, 28649),
        (15.57, 5433, 846),
        (32.963, 45129, 14876),
        (12.749, 53794, 6859),
        (49.392, 2767, 1367),
        (83.213, 63763, 53060),
        (63.112, 46144, 29123),
        (43.907, 86066, 37789),
        (95.508, 47877, 45727),
        (24.829, 39339, 9768),
        (95.047, 70078, 66608),
        (47.145, 2270, 1071),
        (44.001, 20730, 9122),
        (14.505, 53318, 7734),
        (47.466, 35336, 16773),
        (57.048, 273583499294, 156073914678),
        (17.578, 605163152772, 106375578995),
        (55.786, 497739349604, 277668873571),
        (68.091, 560797131134, 381852374561),
        (48.063, 706063254650, 339355182083),
        (83.561, 789345175855, 659584722397),
        (27.59, 228863294037, 63143382825),
        (76.003, 322779784319, 245322319476),
        (86.556, 941323077495, 814771602957),
        (1.346, 51071386591, 687420864),
        (44.041, 332156765588, 146285161133),
        (66.022, 60286149586, 39802121680),
        (36.81, 825038500276, 303696671952),
        (71.693, 375394567817, 269131627506),
        (22.826, 416582245948, 95089063461),
        (21.892, 514915484278, 112725297819),
        (22.258, 327337995449, 72858891028),
        (72.198, 272306029693, 196599507318),
        (88.325, 460744015786, 406952151943),
        (99.739, 443996023873, 442837194251),
        (72.185, 256957124017, 185484499972),
        (56.172, 899695053227, 505376705299),
        (63.87, 825042817103, 526954847284),
        (39.185, 3252337998, 1274428645),
        (77.625, 507496112844, 393943857596),
    ];

    /// Independent transcription of fio's `plat_val_to_idx()` (stat.c).
    fn fio_val_to_idx(val: u64) -> usize {
        let msb = if val == 0 {
            0
        } else {
            63 - val.leading_zeros()
        };
        if msb <= 6 {
            return val as usize;
        }
        let error_bits = msb - 6;
        let base = (error_bits + 1) << 6;
        let offset = 63 & (val >> error_bits) as u32;
        ((base + offset) as usize).min(1855)
    }

    /// Independent transcription of fio's `plat_idx_to_val()` (stat.c),
    /// floating point included.
    fn fio_idx_to_val(idx: usize) -> u64 {
        if idx < 128 {
            return idx as u64;
        }
        let error_bits = (idx >> 6) as u32 - 1;
        let base = 1u64 << (error_bits + 6);
        let k = (idx % 64) as f64;
        (base as f64 + (k + 0.5) * f64::from(1u32 << error_bits)) as u64
    }

    fn oracle_rank(p: f64, n: u64) -> u64 {
        RANK_ORACLE
            .iter()
            .find(|(op, on, _)| *op == p && *on == n)
            .map(|t| t.2)
            .unwrap_or_else(|| panic!("no oracle entry for p={p} n={n}"))
    }

    /// Expected fio percentiles computed independently: sort the samples, take
    /// the sample at fio's rank and report the midpoint of its bucket.
    fn expected(values: &[u64], plist: &[f64]) -> Vec<(f64, u64)> {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let n = sorted.len() as u64;
        plist
            .iter()
            .map(|&p| {
                let rank = oracle_rank(p, n);
                (p, fio_idx_to_val(fio_val_to_idx(sorted[rank as usize - 1])))
            })
            .collect()
    }

    #[test]
    fn bucket_index_and_value_match_fio() {
        let mut probe = LatHistogram::new();
        let mut v = 0u64;
        while v < (1u64 << 36) {
            probe.reset();
            probe.record(v);
            let (value, count) = probe.buckets().next().unwrap();
            assert_eq!(count, 1);
            assert_eq!(value, fio_idx_to_val(fio_val_to_idx(v)), "value {v}");
            v = if v < 300 { v + 1 } else { v + v / 37 + 1 };
        }
        for idx in 0..FIO_PLAT_NR {
            assert_eq!(bucket_value(idx), fio_idx_to_val(idx), "idx {idx}");
        }
        assert_eq!(bucket_value(FIO_PLAT_NR - 1), 17_112_760_320);
    }

    #[test]
    fn rank_emulates_long_double() {
        for &(p, n, rank) in RANK_ORACLE {
            assert_eq!(fio_percentile_rank(p, n), rank, "p={p} n={n}");
        }
        // the classic case where f64 arithmetic gets it wrong
        assert_eq!(((30.0f64 / 100.0) * 100.0).ceil() as u64, 30);
        assert_eq!(fio_percentile_rank(30.0, 100), 31);
        assert_eq!(fio_percentile_rank(50.0, 0), 0);
    }

    #[test]
    fn percentiles_of_1_to_1000() {
        let values: Vec<u64> = (1..=1000).collect();
        let mut h = LatHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        let got = h.percentiles(&DEFAULT);
        assert_eq!(got, expected(&values, &DEFAULT));
        // spot checks by hand: rank 10 -> 10 (exact below 128); rank 300 ->
        // bucket [300, 304) of width 4 -> 302; rank 500 -> [500, 504) -> 502;
        // rank 1000 -> [1000, 1008) of width 8 -> 1004
        assert_eq!(got[0], (1.0, 10));
        assert_eq!(got[4], (30.0, 302));
        assert_eq!(got[6], (50.0, 502));
        assert_eq!(got[16], (99.99, 1004));
    }

    #[test]
    fn percentiles_of_1_to_100_use_fio_rank() {
        // Values below 128 are exact, so this shows the ranks alone. The
        // expected list is what a C transcription of fio's loop prints; note
        // 30th -> 31 and 60th -> 61 where f64 arithmetic would give 30, 60.
        let mut h = LatHistogram::new();
        (1..=100).for_each(|v| h.record(v));
        let got: Vec<u64> = h.percentiles(&DEFAULT).iter().map(|x| x.1).collect();
        assert_eq!(
            got,
            [
                1, 5, 10, 20, 31, 40, 50, 61, 70, 80, 90, 95, 99, 100, 100, 100, 100
            ]
        );
    }

    #[test]
    fn percentiles_across_powers_of_two() {
        // 1024 values spread over 2^0 .. 2^33 ns
        let values: Vec<u64> = (0..1024u64)
            .map(|i| {
                let shift = i % 34;
                (1u64 << shift) + (i * 7919) % (1u64 << shift).max(1)
            })
            .collect();
        let mut h = LatHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        assert_eq!(h.total(), 1024);
        assert_eq!(h.percentiles(&DEFAULT), expected(&values, &DEFAULT));
    }

    #[test]
    fn percentile_list_is_sorted_and_cleaned() {
        let mut h = LatHistogram::new();
        (1..=1000).for_each(|v| h.record(v));
        let got = h.percentiles(&[99.0, 1.0, 150.0, 50.0]);
        let ps: Vec<f64> = got.iter().map(|x| x.0).collect();
        assert_eq!(ps, vec![1.0, 50.0, 99.0]);
        assert!(LatHistogram::new().percentiles(&DEFAULT).is_empty());
        assert_eq!(effective_percentiles(&[5.0, 0.0, 7.0]), vec![5.0]);
        let long: Vec<f64> = (1..=30).map(f64::from).collect();
        assert_eq!(effective_percentiles(&long).len(), MAX_PERCENTILES);
    }

    #[test]
    fn saturates_like_fio_above_17s() {
        let mut h = LatHistogram::new();
        h.record(20_000_000_000);
        h.record(u64::MAX);
        h.record(1);
        let b: Vec<_> = h.buckets().collect();
        assert_eq!(b, vec![(1, 1), (17_112_760_320, 2)]);
        assert_eq!(
            h.percentiles(&[50.0, 99.0]),
            vec![(50.0, 17_112_760_320), (99.0, 17_112_760_320)]
        );
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = LatHistogram::new();
        let mut b = LatHistogram::new();
        (1..=500).for_each(|v| a.record(v));
        (501..=1000).for_each(|v| b.record(v));
        a.merge(&b);
        let mut all = LatHistogram::new();
        (1..=1000).for_each(|v| all.record(v));
        assert_eq!(a, all);
        assert_eq!(a.percentiles(&DEFAULT), all.percentiles(&DEFAULT));
    }

    #[test]
    fn buckets_lists_non_empty_midpoints() {
        let mut h = LatHistogram::new();
        for v in [5, 5, 130, 131, 1000] {
            h.record(v);
        }
        let b: Vec<_> = h.buckets().collect();
        // 130 and 131 share bucket [130, 132) -> midpoint 131; 1000 is in
        // [1000, 1008) -> 1004
        assert_eq!(b, vec![(5, 2), (131, 2), (1004, 1)]);
    }
}
