//! Non-uniform random offsets (`random_distribution`), drawn in the manner
//! of fio's generators.

use super::{Rng, mix};
use crate::options::{Distribution, ZoneSize};

/// fio computes the Zipf normalisation over at most this many blocks
/// (`ZIPF_MAX_GEN`): the sum costs one `powf` per block.
const ZIPF_MAX_BLOCKS: u64 = 10_000_000;

/// Draws the blocks of random I/O from a [`Distribution`], in the manner of
/// fio's generators: ranks from Zipf (Gray's method) or Pareto, scattered over
/// the file by a hash unless a center is given; a normal curve from twelve
/// uniform draws; zones chosen by their share of accesses.
#[derive(Debug, Clone)]
pub(super) enum BlockDraw {
    Zipf {
        theta: f64,
        /// Blocks the normalisation covers.
        ranks: u64,
        zeta_n: f64,
        alpha: f64,
        eta: f64,
        offset: Option<u64>,
    },
    Pareto {
        power: f64,
        offset: Option<u64>,
    },
    Normal {
        mean: f64,
        deviation: f64,
    },
    /// Per zone: cumulative share of accesses (percent), first block, blocks.
    Zoned(Vec<(f64, u64, u64)>),
}

impl BlockDraw {
    /// The draw over `blocks` blocks of `unit` bytes; `None` for uniform.
    pub(super) fn new(distribution: &Distribution, blocks: u64, unit: u64) -> Option<BlockDraw> {
        let offset = |center: Option<f64>| center.map(|c| (c * blocks as f64) as u64);
        Some(match distribution {
            Distribution::Uniform => return None,
            &Distribution::Zipf { theta, center } => {
                let ranks = blocks.clamp(1, ZIPF_MAX_BLOCKS);
                let zeta_n: f64 = (1..=ranks).map(|i| (i as f64).powf(-theta)).sum();
                let zeta_2 = 1.0 + 0.5f64.powf(theta);
                BlockDraw::Zipf {
                    theta,
                    ranks,
                    zeta_n,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / ranks as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n),
                    offset: offset(center),
                }
            }
            &Distribution::Pareto { h, center } => BlockDraw::Pareto {
                power: h.ln() / (1.0 - h).ln(),
                offset: offset(center),
            },
            &Distribution::Normal { deviation, center } => BlockDraw::Normal {
                mean: center * blocks as f64,
                deviation: deviation / 100.0 * blocks as f64,
            },
            Distribution::Zoned(zones) => {
                let mut cumulative = 0.0;
                let mut first = 0u64;
                let mut out = Vec::with_capacity(zones.len());
                for zone in zones {
                    let size = match zone.size {
                        ZoneSize::Percent(p) => (p / 100.0 * blocks as f64) as u64,
                        ZoneSize::Bytes(bytes) => bytes / unit,
                    };
                    let size = size.clamp(1, blocks.saturating_sub(first).max(1));
                    cumulative += zone.access_percent;
                    out.push((cumulative, first.min(blocks.saturating_sub(1)), size));
                    first = (first + size).min(blocks.saturating_sub(1));
                }
                BlockDraw::Zoned(out)
            }
        })
    }

    /// The next block, in `0..blocks`.
    pub(super) fn draw(&self, blocks: u64, rng: &mut Rng) -> u64 {
        let scatter = |rank: u64, offset: Option<u64>| match offset {
            Some(offset) => (rank + offset) % blocks,
            None => mix(rank) % blocks,
        };
        match self {
            BlockDraw::Zipf {
                theta,
                ranks,
                zeta_n,
                alpha,
                eta,
                offset,
            } => {
                let u = rng.unit_interval();
                let uz = u * zeta_n;
                let rank = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(*theta) {
                    1
                } else {
                    let value = *ranks as f64 * (eta * u - eta + 1.0).powf(*alpha);
                    (value as u64).min(ranks - 1)
                };
                scatter(rank, *offset)
            }
            BlockDraw::Pareto { power, offset } => {
                let rank = ((blocks - 1) as f64 * rng.unit_interval().powf(*power)) as u64;
                scatter(rank, *offset)
            }
            BlockDraw::Normal { mean, deviation } => {
                // Irwin-Hall: twelve uniforms less six are close to N(0, 1).
                let z: f64 = (0..12).map(|_| rng.unit_interval()).sum::<f64>() - 6.0;
                let block = (mean + z * deviation).round() as i64;
                block.rem_euclid(blocks as i64) as u64
            }
            BlockDraw::Zoned(zones) => {
                let r = rng.unit_interval() * 100.0;
                let &(_, first, size) = zones
                    .iter()
                    .find(|(cumulative, _, _)| r < *cumulative)
                    .or(zones.last())
                    .expect("a zoned distribution has zones");
                first + rng.below(size)
            }
        }
    }
}
