//! Running min/max/mean/variance of a stream of samples (fio's `struct io_stat`).

/// Running statistics of a sample stream: min, max, count, and the Welford
/// running mean and sum of squared deviations (M2).
///
/// This mirrors fio's `struct io_stat`, including the exact floating-point
/// update of `add_stat_sample()` and the merges of `sum_stat()`, so numbers
/// come out as fio computes them. The same type holds latencies (ns) and the
/// per-window bandwidth (KiB/s) and IOPS samples.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatStat {
    min: u64,
    max: u64,
    count: u64,
    mean: f64,
    m2: f64,
}

impl Default for LatStat {
    fn default() -> Self {
        Self::new()
    }
}

impl LatStat {
    /// An empty statistic.
    pub const fn new() -> Self {
        Self {
            min: u64::MAX,
            max: 0,
            count: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// Adds one sample (fio's `add_stat_sample()`).
    #[inline]
    pub fn add(&mut self, value: u64) {
        if value > self.max {
            self.max = value;
        }
        if value < self.min {
            self.min = value;
        }
        let val = value as f64;
        let delta = val - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.count as f64 + 1.0);
            self.m2 += delta * (val - self.mean);
        }
        self.count += 1;
    }

    /// Merges another statistic into this one as if all of its samples had
    /// been added here: the parallel Welford combination fio's `__sum_stat()`
    /// uses for latencies.
    pub fn merge(&mut self, other: &LatStat) {
        if other.count == 0 {
            return;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if self.count == 0 {
            self.mean = other.mean;
            self.m2 = other.m2;
        } else {
            let (dn, sn) = (self.count, other.count);
            let total = dn as u128 + sn as u128;
            let delta = other.mean - self.mean;
            let mean = (other.mean * sn as f64 + self.mean * dn as f64) / total as f64;
            let m2 = other.m2
                + self.m2
                + delta * delta * (dn as u128 * sn as u128) as f64 / total as f64;
            self.mean = mean;
            self.m2 = m2;
        }
        self.count += other.count;
    }

    /// Adds another statistic term by term: min, max, count, mean and M2 are
    /// each summed (fio's `sum_stat(.., pure_sum = true)`), which is how
    /// `group_reporting` aggregates the bandwidth and IOPS samples of the jobs
    /// of a group into figures for the group as a whole.
    pub fn sum_merge(&mut self, other: &LatStat) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
        } else {
            self.min = self.min.wrapping_add(other.min);
            self.max = self.max.wrapping_add(other.max);
            self.count += other.count;
            self.mean += other.mean;
            self.m2 += other.m2;
        }
    }

    /// Number of samples.
    #[inline]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True when no sample was added.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Smallest sample, 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min }
    }

    /// Largest sample, 0 when empty.
    pub fn max(&self) -> u64 {
        if self.count == 0 { 0 } else { self.max }
    }

    /// Mean of the samples, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.mean }
    }

    /// Sample standard deviation (divisor n-1, as fio's `calc_lat()`); 0 with
    /// fewer than two samples.
    pub fn stddev(&self) -> f64 {
        if self.count > 1 {
            (self.m2 / (self.count as f64 - 1.0)).sqrt()
        } else {
            0.0
        }
    }

    /// The running sum of squared deviations from the mean (Welford's M2).
    pub fn m2(&self) -> f64 {
        self.m2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// Two-pass reference mean and sample standard deviation.
    fn reference(values: &[u64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        let ss: f64 = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
        (
            mean,
            if values.len() > 1 {
                (ss / (n - 1.0)).sqrt()
            } else {
                0.0
            },
        )
    }

    fn values(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 1_000_000) + 40
            })
            .collect()
    }

    #[test]
    fn empty_is_all_zero() {
        let s = LatStat::new();
        assert!(s.is_empty());
        assert_eq!((s.min(), s.max(), s.count()), (0, 0, 0));
        assert_eq!((s.mean(), s.stddev()), (0.0, 0.0));
    }

    #[test]
    fn single_pass_matches_two_pass() {
        let v = values(1, 10_000);
        let mut s = LatStat::new();
        v.iter().for_each(|&x| s.add(x));
        let (mean, sd) = reference(&v);
        assert!(close(s.mean(), mean), "{} vs {mean}", s.mean());
        assert!(close(s.stddev(), sd), "{} vs {sd}", s.stddev());
        assert_eq!(s.min(), *v.iter().min().unwrap());
        assert_eq!(s.max(), *v.iter().max().unwrap());
        assert_eq!(s.count(), 10_000);
    }

    #[test]
    fn stddev_uses_n_minus_one() {
        let mut s = LatStat::new();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            s.add(v);
        }
        assert_eq!(s.mean(), 5.0);
        // population sd is 2, sample sd is sqrt(32/7)
        assert!(close(s.stddev(), (32.0f64 / 7.0).sqrt()));
        let mut one = LatStat::new();
        one.add(7);
        assert_eq!(one.stddev(), 0.0);
    }

    #[test]
    fn merge_equals_single_pass() {
        let v = values(99, 5_000);
        for split in [0usize, 1, 17, 2_500, 4_999, 5_000] {
            let (a, b) = v.split_at(split);
            let mut sa = LatStat::new();
            a.iter().for_each(|&x| sa.add(x));
            let mut sb = LatStat::new();
            b.iter().for_each(|&x| sb.add(x));
            let mut all = LatStat::new();
            v.iter().for_each(|&x| all.add(x));
            sa.merge(&sb);
            assert_eq!(sa.count(), all.count());
            assert_eq!((sa.min(), sa.max()), (all.min(), all.max()));
            assert!(close(sa.mean(), all.mean()), "split {split}");
            assert!(close(sa.stddev(), all.stddev()), "split {split}");
        }
    }

    #[test]
    fn merge_many_parts_equals_single_pass() {
        let v = values(5, 9_000);
        let mut merged = LatStat::new();
        for chunk in v.chunks(700) {
            let mut part = LatStat::new();
            chunk.iter().for_each(|&x| part.add(x));
            merged.merge(&part);
        }
        let (mean, sd) = reference(&v);
        assert!(close(merged.mean(), mean));
        assert!(close(merged.stddev(), sd));
    }

    #[test]
    fn sum_merge_adds_term_by_term() {
        let mut a = LatStat::new();
        [10, 20, 30].iter().for_each(|&x| a.add(x));
        let mut b = LatStat::new();
        [1, 2].iter().for_each(|&x| b.add(x));
        let m2 = a.m2() + b.m2();
        a.sum_merge(&b);
        assert_eq!((a.min(), a.max(), a.count()), (11, 32, 5));
        assert_eq!(a.mean(), 21.5);
        assert!(close(a.m2(), m2));
        let mut empty = LatStat::new();
        empty.sum_merge(&b);
        assert_eq!(empty, b);
        b.sum_merge(&LatStat::new());
        assert_eq!(b.count(), 2);
    }
}
