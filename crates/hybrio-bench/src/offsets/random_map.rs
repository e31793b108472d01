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

impl BlockMap {
    pub(super) fn new(bits: u64) -> BlockMap {
        BlockMap {
            words: vec![0; bits.div_ceil(64) as usize],
            bits,
        }
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
}

impl FioOffsets {
    /// Offsets over files of `map_bits` blocks each (fio's map counts in
    /// the smallest block size of the job), from `rand`.
    pub(super) fn new(
        rand: FioRand,
        map_bits: &[u64],
        random_map: bool,
        repeat: bool,
    ) -> FioOffsets {
        FioOffsets {
            seeded: rand.clone(),
            rand,
            repeat,
            maps: map_bits
                .iter()
                .map(|&bits| random_map.then(|| BlockMap::new(bits)))
                .collect(),
        }
    }

    /// Draws from another generator from now on.
    pub(super) fn set_generator(&mut self, rand: FioRand, repeat: bool) {
        self.seeded = rand.clone();
        self.rand = rand;
        self.repeat = repeat;
    }

    /// A new pass: every block is to do again; with `repeat` the same
    /// order as the last.
    pub(super) fn restart(&mut self) {
        for map in self.maps.iter_mut().flatten() {
            map.reset();
        }
        if self.repeat {
            self.rand = self.seeded.clone();
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
    #[inline]
    pub(super) fn next_block(&mut self, file: usize, blocks: u64, units: u64) -> u64 {
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
        map.set_run(b, units.max(1));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_free_block_is_after_the_drawn_one_then_from_the_start() {
        let mut map = BlockMap::new(130);
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
    fn a_pass_visits_every_block_once_and_a_repeated_pass_repeats_it() {
        let mut offsets = FioOffsets::new(FioRand::new(7, false), &[1000], true, true);
        let first: Vec<u64> = (0..1000).map(|_| offsets.next_block(0, 1000, 1)).collect();
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        offsets.restart();
        let again: Vec<u64> = (0..1000).map(|_| offsets.next_block(0, 1000, 1)).collect();
        assert_eq!(first, again);
    }
}
