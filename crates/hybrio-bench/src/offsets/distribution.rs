//! Non-uniform random offsets (`random_distribution`): Zipf, Pareto and
//! normal as fio 3.33 draws them, range for range; zones by their share of
//! accesses.

use crate::fio_rand::{FioRand, fio_hash};
use crate::options::{Distribution, ZoneSize};

/// fio computes the Zipf normalisation over at most this many ranges
/// (`ZIPF_MAX_GEN`): the sum costs one `powf` per range.
const ZIPF_MAX_RANGES: u64 = 10_000_000;

/// fio's generators of non-uniform offsets (lib/zipf.c, lib/gauss.c), one
/// per file, shared by its reads and writes: a rank drawn from Zipf (Gray's
/// method), Pareto or a sum of twelve uniform draws, scattered over the
/// file by fio's hash and moved by `rand_off` (a first draw, or the center).
#[derive(Debug, Clone)]
pub(super) struct FioDraw {
    kind: FioDrawKind,
    rand: FioRand,
    ranges: u64,
    rand_off: u64,
}

#[derive(Debug, Clone)]
enum FioDrawKind {
    Zipf {
        theta: f64,
        zeta_n: f64,
        zeta_2: f64,
    },
    Pareto {
        power: f64,
    },
    Gauss {
        deviation: u64,
    },
}

impl FioDraw {
    /// fio's `zipf_init`, `pareto_init` or `gauss_init` over `ranges`
    /// ranges, from `seed`; `None` for the other distributions.
    pub(super) fn new(distribution: &Distribution, ranges: u64, seed: u32) -> Option<FioDraw> {
        let ranges = ranges.max(1);
        let mut rand = FioRand::new(u64::from(seed), false);
        let (kind, center) = match *distribution {
            Distribution::Zipf { theta, center } => {
                let zeta_n = (0..ranges.min(ZIPF_MAX_RANGES))
                    .map(|i| (1.0 / (i + 1) as f64).powf(theta))
                    .sum();
                let zeta_2 = 1.0f64.powf(theta) + 0.5f64.powf(theta);
                (
                    FioDrawKind::Zipf {
                        theta,
                        zeta_n,
                        zeta_2,
                    },
                    center,
                )
            }
            Distribution::Pareto { h, center } => (
                FioDrawKind::Pareto {
                    power: h.ln() / (1.0 - h).ln(),
                },
                center,
            ),
            Distribution::Normal { deviation, center } => {
                let deviation = ((ranges as f64 * deviation) / 100.0).ceil() as u64;
                let rand_off = center.map_or(0, |c| (ranges as f64 * (c - 0.5)) as i64 as u64);
                return Some(FioDraw {
                    kind: FioDrawKind::Gauss {
                        deviation: deviation.min(ranges / 2),
                    },
                    rand,
                    ranges,
                    rand_off,
                });
            }
            _ => return None,
        };
        let first = rand.next_value();
        let rand_off = center.map_or(first, |c| (ranges as f64 * c) as u64);
        Some(FioDraw {
            kind,
            rand,
            ranges,
            rand_off,
        })
    }

    /// The next range, in `0..ranges` (fio's `zipf_next`, `pareto_next`,
    /// `gauss_next`).
    pub(super) fn next(&mut self) -> u64 {
        let n = self.ranges;
        let uniform = |rand: &mut FioRand| rand.next_value() as f64 / f64::from(u32::MAX);
        let value = match self.kind {
            FioDrawKind::Zipf {
                theta,
                zeta_n,
                zeta_2,
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
                let u = uniform(&mut self.rand);
                let z = u * zeta_n;
                let value = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                value - 1
            }
            FioDrawKind::Pareto { power } => {
                ((n - 1) as f64 * uniform(&mut self.rand).powf(power)) as u64
            }
            FioDrawKind::Gauss { deviation } => {
                let mut sum: u64 = (0..12)
                    .map(|_| self.rand.next_value() % (n + 1))
                    .sum::<u64>();
                sum = sum.div_ceil(12);
                if deviation > 0 {
                    // fio's gauss_dev: a draw within the deviation, around 0.
                    let r = self.rand.next_value() as u32;
                    let mut dev =
                        ((deviation as f64) * (f64::from(r) / (f64::from(u32::MAX) + 1.0))) as i32
                            - (deviation / 2) as i32;
                    while (i64::from(dev) + sum as i64) as u64 >= n {
                        dev /= 2;
                    }
                    sum = (sum as i64 + i64::from(dev)) as u64;
                }
                sum
            }
        };
        fio_hash(value).wrapping_add(self.rand_off) % n
    }
}

/// The draw of a direction's random blocks, when it is not uniform.
#[derive(Debug, Clone)]
pub(super) enum BlockDraw {
    /// From the file's [`FioDraw`] (Zipf, Pareto, normal).
    Shared,
    /// fio's zoned draw (`zone_state_index`): for each draw of 1..=100, the
    /// zone's start and end, in percent of the file (`zoned`) or in bytes
    /// (`zoned_abs`).
    Zoned {
        index: Vec<(u64, u64)>,
        absolute: bool,
    },
}

impl BlockDraw {
    /// The draw of `distribution`; `None` for uniform.
    pub(super) fn new(distribution: &Distribution) -> Option<BlockDraw> {
        Some(match distribution {
            Distribution::Uniform => return None,
            Distribution::Zipf { .. }
            | Distribution::Pareto { .. }
            | Distribution::Normal { .. } => BlockDraw::Shared,
            Distribution::Zoned(zones) => {
                // fio's __td_zone_gen_index: whole percents, each zone's
                // share of the 100 draws pointing at its extent.
                let absolute = zones.iter().any(|z| matches!(z.size, ZoneSize::Bytes(_)));
                let mut index = vec![(0, 0); 100];
                let (mut access, mut start) = (0usize, 0u64);
                for zone in zones {
                    let size = match zone.size {
                        ZoneSize::Percent(p) => p as u64,
                        ZoneSize::Bytes(bytes) => bytes,
                    };
                    let share = zone.access_percent as usize;
                    for slot in index.iter_mut().skip(access).take(share) {
                        *slot = (start, start + size);
                    }
                    access += share;
                    start += size;
                }
                BlockDraw::Zoned { index, absolute }
            }
        })
    }

    /// The next block among `blocks` of `unit` bytes: from the file's
    /// `shared` draw, or, for zones, a zone by `zone_draws` (fio's
    /// `zone_state`) and a block in it by `offsets` (fio's offset generator).
    pub(super) fn draw(
        &self,
        blocks: u64,
        unit: u64,
        shared: &mut Option<FioDraw>,
        zone_draws: &mut FioRand,
        offsets: &mut super::random_map::FioOffsets,
    ) -> u64 {
        let blocks = blocks.max(1);
        match self {
            // fio's range can lie past a direction with larger blocks' last
            // (its ranges are the smaller size's): it wraps.
            BlockDraw::Shared => shared.as_mut().map_or(0, FioDraw::next) % blocks,
            BlockDraw::Zoned { index, absolute } => {
                let v = zone_draws.next_between(1, 100) as usize;
                let (start, end) = index[v - 1];
                let (first, count) = if *absolute {
                    (
                        start / unit,
                        (end / unit).min(blocks).saturating_sub(start / unit),
                    )
                } else {
                    (start * blocks / 100, blocks * (end - start) / 100)
                };
                (first + offsets.next_unmapped(count.max(1))) % blocks
            }
        }
    }
}
