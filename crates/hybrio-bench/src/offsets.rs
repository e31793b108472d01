//! Where each I/O goes: direction, file, offset and length.
//!
//! Sequential jobs walk each file block by block and wrap at its end. Random
//! jobs visit every block of a file once per pass (fio's random map) through a
//! keyed permutation, which needs no bitmap and costs O(1) per offset; with
//! `norandommap` offsets are drawn uniformly and may repeat.

use crate::options::RwMode;

/// The direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A read.
    Read,
    /// A write.
    Write,
}

impl Direction {
    /// 0 for reads, 1 for writes: fio's ddir index.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One planned I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedIo {
    /// Read or write.
    pub direction: Direction,
    /// Index of the file in the job's file list.
    pub file: usize,
    /// Byte offset, a multiple of `len`.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

/// A small, fast, seedable generator (SplitMix64): reproducible runs need our
/// own generator, and the standard library has none.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A uniform value in `0..bound` (`bound > 0`).
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A keyed bijection of `0..count`: a Feistel network over the next even power
/// of two, cycle-walked back into range (at most ~4 steps on average).
#[derive(Debug, Clone)]
struct Permutation {
    count: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(count: u64, rng: &mut Rng) -> Permutation {
        let bits = (64 - count.saturating_sub(1).leading_zeros()).max(2);
        Permutation {
            count,
            half_bits: bits.div_ceil(2),
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    #[inline]
    fn apply(&self, index: u64) -> u64 {
        let mut x = index;
        loop {
            x = self.round_trip(x);
            if x < self.count {
                return x;
            }
        }
    }

    #[inline]
    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let next = left ^ (mix(right ^ key) & mask);
            left = right;
            right = next;
        }
        (left << self.half_bits) | right
    }
}

/// Per file and direction: where the next I/O goes.
#[derive(Debug, Clone)]
struct Cursor {
    blocks: u64,
    next: u64,
    permutation: Option<Permutation>,
}

/// The job's whole I/O sequence.
#[derive(Debug, Clone)]
pub struct IoPlan {
    mode: RwMode,
    read_percent: u32,
    block_size: [u64; 2],
    random_map: bool,
    cursors: Vec<[Cursor; 2]>,
    next_file: usize,
    rng: Rng,
}

impl IoPlan {
    /// A plan over files of the given sizes. Every file must hold at least one
    /// block of each direction the job uses.
    pub fn new(
        mode: RwMode,
        read_percent: u32,
        block_size: [u64; 2],
        file_sizes: &[u64],
        random_map: bool,
        seed: u64,
    ) -> IoPlan {
        let mut rng = Rng::new(seed);
        let cursors = file_sizes
            .iter()
            .map(|&size| {
                std::array::from_fn(|dir| {
                    let blocks = size / block_size[dir];
                    let permutation = (mode.is_random() && random_map && blocks > 0)
                        .then(|| Permutation::new(blocks, &mut rng));
                    Cursor {
                        blocks,
                        next: 0,
                        permutation,
                    }
                })
            })
            .collect();
        IoPlan {
            mode,
            read_percent,
            block_size,
            random_map,
            cursors,
            next_file: 0,
            rng,
        }
    }

    /// Starts a new pass: sequential I/O goes back to offset 0, random I/O
    /// draws a new order.
    pub fn restart(&mut self) {
        for cursor in self.cursors.iter_mut().flatten() {
            cursor.next = if self.mode.is_random() && self.random_map {
                cursor.blocks
            } else {
                0
            };
        }
        self.next_file = 0;
    }

    /// The next I/O.
    #[inline]
    pub fn next_io(&mut self) -> PlannedIo {
        let direction = match self.mode {
            RwMode::Read | RwMode::RandRead => Direction::Read,
            RwMode::Write | RwMode::RandWrite => Direction::Write,
            RwMode::ReadWrite | RwMode::RandReadWrite => {
                if self.rng.below(100) < self.read_percent as u64 {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
        };
        let file = self.next_file;
        self.next_file = if file + 1 == self.cursors.len() {
            0
        } else {
            file + 1
        };
        let len = self.block_size[direction.index()];
        let cursor = &mut self.cursors[file][direction.index()];
        let block = if !self.mode.is_random() {
            let block = cursor.next;
            cursor.next = if block + 1 >= cursor.blocks {
                0
            } else {
                block + 1
            };
            block
        } else if self.random_map {
            if cursor.next == cursor.blocks {
                // A pass is complete: start another in a new order.
                cursor.next = 0;
                cursor.permutation = Some(Permutation::new(cursor.blocks, &mut self.rng));
            }
            let index = cursor.next;
            cursor.next += 1;
            cursor
                .permutation
                .as_ref()
                .map_or(index, |p| p.apply(index))
        } else {
            self.rng.below(cursor.blocks)
        };
        PlannedIo {
            direction,
            file,
            offset: block * len,
            len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_visits_every_block_once() {
        for count in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(count, &mut Rng::new(count));
            let mut seen = vec![false; count as usize];
            for i in 0..count {
                let x = p.apply(i);
                assert!(x < count);
                assert!(!seen[x as usize], "{x} visited twice for count {count}");
                seen[x as usize] = true;
            }
        }
    }

    #[test]
    fn random_offsets_stay_inside_the_file_and_aligned() {
        let size = 10 * 4096 + 1000; // a partial block at the end must never be used
        for random_map in [true, false] {
            let mut plan = IoPlan::new(RwMode::RandRead, 100, [4096, 4096], &[size], random_map, 7);
            for _ in 0..10_000 {
                let io = plan.next_io();
                assert_eq!(io.offset % 4096, 0);
                assert!(io.offset + io.len <= size);
            }
        }
    }

    #[test]
    fn random_map_covers_each_block_once_per_pass() {
        let mut plan = IoPlan::new(RwMode::RandWrite, 0, [512, 512], &[512 * 100], true, 1);
        for _pass in 0..3 {
            let mut offsets: Vec<u64> = (0..100).map(|_| plan.next_io().offset).collect();
            offsets.sort();
            assert_eq!(offsets, (0..100).map(|b| b * 512).collect::<Vec<_>>());
        }
    }

    #[test]
    fn sequential_wraps_and_round_robins_files() {
        let mut plan = IoPlan::new(RwMode::Write, 0, [4096, 8192], &[16384, 16384], false, 0);
        let got: Vec<(usize, u64)> = (0..6)
            .map(|_| plan.next_io())
            .map(|io| (io.file, io.offset))
            .collect();
        assert_eq!(
            got,
            vec![(0, 0), (1, 0), (0, 8192), (1, 8192), (0, 0), (1, 0)]
        );
    }

    #[test]
    fn restart_begins_a_new_pass_at_offset_zero() {
        let mut plan = IoPlan::new(RwMode::Read, 100, [4096, 4096], &[4096 * 8], false, 0);
        plan.next_io();
        plan.next_io();
        plan.restart();
        assert_eq!(plan.next_io().offset, 0);
        let mut plan = IoPlan::new(RwMode::RandRead, 100, [4096, 4096], &[4096 * 8], true, 0);
        plan.next_io();
        plan.restart();
        let mut offsets: Vec<u64> = (0..8).map(|_| plan.next_io().offset).collect();
        offsets.sort();
        assert_eq!(
            offsets,
            (0..8).map(|b| b * 4096).collect::<Vec<_>>(),
            "a full pass after restart"
        );
    }

    #[test]
    fn mix_follows_rwmixread() {
        let mut plan = IoPlan::new(RwMode::RandReadWrite, 70, [4096, 4096], &[1 << 20], true, 3);
        let reads = (0..10_000)
            .filter(|_| plan.next_io().direction == Direction::Read)
            .count();
        assert!(
            (6_700..7_300).contains(&reads),
            "{reads} reads of 10000 at rwmixread=70"
        );
    }

    #[test]
    fn same_seed_same_sequence() {
        let run = |seed| {
            let mut plan = IoPlan::new(RwMode::RandRead, 100, [4096, 4096], &[1 << 24], true, seed);
            (0..100).map(|_| plan.next_io().offset).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
