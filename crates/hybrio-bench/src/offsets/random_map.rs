//! fio's random offsets: each block drawn by fio's generator and scaled as
//! fio scales it, and, unless `norandommap`, fio's map of the blocks done in
//! this pass (its `axmap`), so that a drawn block already done gives way to
//! the next one not done after it, wrapping to the start: the order in
//! which fio 3.33 visits a file, block for block.

use crate::fio_rand::FioRand;

/// The blocks of one file done in this pass, a bit each.
#[derive(Debug, Clone)]
pub(super) struct BlockMap {
    words: Vec<u64>,
    bits: u64,
}

/// A random map that cannot be allocated: a file of too many blocks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "fio's random map of {blocks} blocks ({} bytes) cannot be allocated: set norandommap=1, a larger bs or a smaller size",
    blocks.div_ceil(8)
)]
pub struct MapTooLarge {
    /// The blocks it would map.
    pub blocks: u64,
}

impl BlockMap {
    /// A map of `bits` blocks, none done; as fio's `axmap_new`, an error
    /// rather than an abort when there is no memory for it (a huge file in
    /// small blocks: 2^63 bytes in 4 KiB blocks take 256 TiB).
    pub(super) fn new(bits: u64) -> Result<BlockMap, MapTooLarge> {
        let too_large = MapTooLarge { blocks: bits };
        let len = usize::try_from(bits.div_ceil(64)).map_err(|_| too_large.clone())?;
        let mut words = Vec::new();
        words.try_reserve_exact(len).map_err(|_| too_large)?;
        words.resize(len, 0);
        Ok(BlockMap { words, bits })
    }

    pub(super) fn reset(&mut self) {
        self.words.fill(0);
    }

    /// Whether block `b` is done (a block past the map is not, as fio's).
    #[inline]
    pub(super) fn is_set(&self, b: u64) -> bool {
        b < self.bits && self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    /// Marks up to `n` blocks from `b` done, stopping at one already done,
    /// as fio's `axmap_set_nr`; returns how many it marked.
    #[inline]
    pub(super) fn set_run(&mut self, b: u64, n: u64) -> u64 {
        if n == 1 && b < self.bits {
            // One block, the common case: the caller found it not done.
            let word = &mut self.words[(b / 64) as usize];
            let bit = 1 << (b % 64);
            let was_free = *word & bit == 0;
            *word |= bit;
            return u64::from(was_free);
        }
        let mut marked = 0;
        while marked < n && b + marked < self.bits && !self.is_set(b + marked) {
            let at = b + marked;
            self.words[(at / 64) as usize] |= 1 << (at % 64);
            marked += 1;
        }
        marked
    }

    /// fio's `axmap_next_free`: the first block not done after `b`, else
    /// the first one from the start; `None` when every block is done.
    pub(super) fn next_free(&self, b: u64) -> Option<u64> {
        if b >= self.bits {
            return None;
        }
        let next = if b + 1 == self.bits { 0 } else { b + 1 };
        self.first_free_from(next).or_else(|| {
            if next != 0 {
                self.first_free_from(0)
            } else {
                None
            }
        })
    }

    fn first_free_from(&self, from: u64) -> Option<u64> {
        let mut word = (from / 64) as usize;
        // The bits below `from` in its word count as done.
        let mut free = !self.words.get(word)? & (u64::MAX << (from % 64));
        loop {
            if free != 0 {
                let b = word as u64 * 64 + u64::from(free.trailing_zeros());
                return (b < self.bits).then_some(b);
            }
            word += 1;
            free = !*self.words.get(word)?;
        }
    }
}

/// fio's offset generator for a job's uniform random I/O.
#[derive(Debug, Clone)]
pub(super) struct FioOffsets {
    rand: FioRand,
    /// The generator as seeded, for a new pass that repeats the last.
    seeded: FioRand,
    /// Start each pass from the seed again (fio's `randrepeat` across `loops`).
    repeat: bool,
    /// Per file, its map; `None` with `norandommap`.
    maps: Vec<Option<BlockMap>>,
    /// `random_generator=lfsr`: per file, its register (instead of the
    /// generator and the map).
    lfsrs: Vec<Lfsr>,
}

impl FioOffsets {
    /// Offsets over files of `map_bits` blocks each (fio's map counts in
    /// the smallest block size of the job), from `rand`.
    pub(super) fn new(
        rand: FioRand,
        map_bits: &[u64],
        random_map: bool,
        repeat: bool,
    ) -> Result<FioOffsets, MapTooLarge> {
        Ok(FioOffsets {
            seeded: rand.clone(),
            rand,
            repeat,
            maps: map_bits
                .iter()
                .map(|&bits| random_map.then(|| BlockMap::new(bits)).transpose())
                .collect::<Result<_, _>>()?,
            lfsrs: Vec::new(),
        })
    }

    /// Draws from another generator from now on.
    pub(super) fn set_generator(&mut self, rand: FioRand, repeat: bool) {
        self.seeded = rand.clone();
        self.rand = rand;
        self.repeat = repeat;
    }

    /// fio's `random_generator=lfsr`: each file's blocks (`map_bits`, in
    /// the job's smallest size) from a register seeded with `seed`. False
    /// where fio's cannot be set up.
    pub(super) fn use_lfsr(&mut self, map_bits: &[u64], seed: u64) -> bool {
        let lfsrs: Option<Vec<Lfsr>> = map_bits.iter().map(|&bits| Lfsr::new(bits, seed)).collect();
        match lfsrs {
            Some(lfsrs) => {
                self.lfsrs = lfsrs;
                true
            }
            None => false,
        }
    }

    /// A new pass: every block is to do again; with `repeat` the same
    /// order as the last.
    pub(super) fn restart(&mut self) {
        self.reset_maps();
        if self.repeat {
            self.rand = self.seeded.clone();
        }
    }

    /// Every block free again, the generator going on (fio's
    /// `fio_file_reset` in a new strided zone).
    pub(super) fn reset_maps(&mut self) {
        for map in self.maps.iter_mut().flatten() {
            map.reset();
        }
        for lfsr in &mut self.lfsrs {
            lfsr.reset();
        }
    }

    /// A block among `blocks`, drawn as fio draws it, without the map (fio
    /// turns its random map off for `blockalign`).
    pub(super) fn next_unmapped(&mut self, blocks: u64) -> u64 {
        self.rand.next_below(blocks)
    }

    /// The next block of `file`, among its `blocks` of this direction, and
    /// marks the `units` blocks an I/O of that size covers from it done.
    /// A file whose blocks are all done starts a new pass of its own (fio
    /// does when a job runs by time).
    #[inline(always)]
    pub(super) fn next_block(&mut self, file: usize, blocks: u64, units: u64) -> u64 {
        let b = self.draw_block(file, blocks);
        self.mark(file, b, units);
        b
    }

    /// As fio's `mark_random_map`: marks up to `units` blocks from `b`
    /// done, stopping at one done already; returns how many it marked (all
    /// of them without a map).
    #[inline(always)]
    pub(super) fn mark(&mut self, file: usize, b: u64, units: u64) -> u64 {
        match self.maps.get_mut(file).and_then(Option::as_mut) {
            Some(map) if self.lfsrs.get(file).is_none() => map.set_run(b, units.max(1)),
            _ => units,
        }
    }

    /// The next block of `file` as fio draws it (`get_next_rand_block`),
    /// not marked yet: one already done gives way to the next free one.
    #[inline(always)]
    pub(super) fn draw_block(&mut self, file: usize, blocks: u64) -> u64 {
        if let Some(lfsr) = self.lfsrs.get_mut(file) {
            // Every block came: the file starts over (a job run by time).
            return lfsr.next().unwrap_or_else(|| {
                lfsr.reset();
                lfsr.next().unwrap_or(0)
            });
        }
        let mut b = self.rand.next_below(blocks);
        let Some(map) = self.maps.get_mut(file).and_then(Option::as_mut) else {
            return b;
        };
        if map.is_set(b) {
            b = match map.next_free(b) {
                Some(free) => free,
                None => {
                    map.reset();
                    self.rand.next_below(blocks)
                }
            };
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_free_block_is_after_the_drawn_one_then_from_the_start() {
        let mut map = BlockMap::new(130).unwrap();
        assert_eq!(map.set_run(0, 3), 3);
        assert_eq!(map.set_run(2, 5), 0, "stops at a block already done");
        assert_eq!(map.next_free(0), Some(3));
        map.set_run(3, 126);
        // Done: 0..129; free: 129 only.
        assert_eq!(map.next_free(5), Some(129));
        map.set_run(129, 1);
        assert_eq!(map.next_free(5), None);
        map.reset();
        map.set_run(100, 30);
        assert_eq!(map.next_free(110), Some(0), "wraps to the start");
        assert_eq!(map.next_free(129), Some(0));
        assert!(!map.is_set(500));
    }

    #[test]
    fn the_lfsr_gives_every_block_once_then_ends() {
        for blocks in [1u64, 7, 8, 1000, 4096] {
            let mut lfsr = Lfsr::new(blocks, 0xb189_9bed).unwrap();
            let mut seen: Vec<u64> = std::iter::from_fn(|| lfsr.next()).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..blocks).collect::<Vec<_>>(), "{blocks}");
            assert!(lfsr.reset());
            assert!(lfsr.next().is_some());
        }
        // All ones in the register's width: fio refuses the seed.
        assert!(Lfsr::new(1000, 1023).is_none());
    }

    #[test]
    fn a_pass_visits_every_block_once_and_a_repeated_pass_repeats_it() {
        let mut offsets = FioOffsets::new(FioRand::new(7, false), &[1000], true, true).unwrap();
        let first: Vec<u64> = (0..1000).map(|_| offsets.next_block(0, 1000, 1)).collect();
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        offsets.restart();
        let again: Vec<u64> = (0..1000).map(|_| offsets.next_block(0, 1000, 1)).collect();
        assert_eq!(first, again);
    }
}

/// fio's taps of a maximal-length XNOR LFSR of each width (lib/lfsr.c):
/// the bit positions, from 1, whose mask the register feeds back.
const LFSR_TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// fio's `random_generator=lfsr`: every block of a file once, in the order
/// of a linear feedback shift register just wide enough, as fio 3.33 steps
/// it (no random map needed).
#[derive(Debug, Clone)]
pub(super) struct Lfsr {
    xormask: u64,
    cached_bit: u64,
    max_val: u64,
    last_val: u64,
    num_vals: u64,
    cycle_length: u64,
    seed: u64,
}

impl Lfsr {
    /// fio's `lfsr_init(blocks, seed, 0)`; `None` where fio's fails (a
    /// file of more than 2^63 blocks, or a seed whose low bits are all ones).
    pub(super) fn new(blocks: u64, seed: u64) -> Option<Lfsr> {
        let taps = (3..64)
            .find(|&i| (1u64 << i) > blocks)
            .map(|i| LFSR_TAPS[i])?;
        let xormask = taps.iter().fold(0u64, |mask, &t| mask | 1 << (t - 1));
        let mut lfsr = Lfsr {
            xormask,
            cached_bit: 1 << (taps[0] - 1),
            max_val: blocks.saturating_sub(1),
            last_val: 0,
            num_vals: 0,
            // fio's prepare_spin(0): no cycle, then one more step the first time.
            cycle_length: 1,
            seed,
        };
        lfsr.reset().then_some(lfsr)
    }

    /// fio's `lfsr_reset`: from the seed again.
    pub(super) fn reset(&mut self) -> bool {
        let bitmask = (self.cached_bit << 1) - 1;
        self.num_vals = 0;
        self.last_val = self.seed & bitmask;
        self.last_val != bitmask
    }

    fn step(&mut self) {
        let v = self.last_val;
        self.last_val = ((v >> 1) | self.cached_bit) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }

    /// fio's `lfsr_next`: the next block, `None` once every block came.
    pub(super) fn next(&mut self) -> Option<u64> {
        if self.num_vals > self.max_val {
            return None;
        }
        self.num_vals += 1;
        loop {
            if self.cycle_length > 0 {
                self.cycle_length -= 1;
                if self.cycle_length == 0 {
                    self.step();
                }
            }
            self.step();
            if self.last_val <= self.max_val {
                return Some(self.last_val);
            }
        }
    }
}
