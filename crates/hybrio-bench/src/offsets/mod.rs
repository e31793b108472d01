//! Where each I/O goes: direction, file, offset and length.
//!
//! Sequential jobs walk each file block by block and wrap at its end. Random
//! jobs draw their blocks as fio 3.33 draws them (`random_map.rs`): fio's
//! generator and seeds, and fio's map of the blocks done, so that every
//! block of a file is visited once per pass, in fio's order; with
//! `norandommap` offsets are drawn the same way and may repeat.

mod distribution;
mod random_map;

use crate::fio_rand::FioRand;
use crate::options::{BlockSplit, Distribution, FileService, JobOptions, RwMode};
use distribution::{BlockDraw, FioDraw};
use random_map::FioOffsets;
pub use random_map::MapTooLarge;

/// The direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A trim: the storage of the range given back.
    Trim,
}

impl Direction {
    /// 0 for reads, 1 for writes, 2 for trims: fio's ddir index.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Where the plan keeps this direction's sizes and places: a trim's
    /// are the writes' (a trimming job walks its blocks as a writing one would).
    #[inline]
    fn slot(self) -> usize {
        match self {
            Direction::Read => 0,
            Direction::Write | Direction::Trim => 1,
        }
    }
}

/// One planned I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedIo {
    /// Read or write.
    pub direction: Direction,
    /// Index of the file in the job's file list.
    pub file: usize,
    /// Byte offset, a multiple of the direction's smallest block size.
    pub offset: u64,
    /// Bytes, a multiple of the direction's smallest block size.
    pub len: u64,
}

/// How one direction sizes its I/Os.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSizing {
    /// Every I/O the same size (`bs=4k`).
    Fixed(u64),
    /// A size drawn uniformly from `min..=max` bytes, then rounded down to a
    /// multiple of `min`, as fio draws it (`bs=4k-16k`): `max` itself comes
    /// up only when it is drawn exactly.
    Range {
        /// Smallest size, and the unit of every size.
        min: u64,
        /// Largest size.
        max: u64,
    },
    /// Sizes with cumulative shares out of 100 (`bssplit=4k/60:64k/40` is
    /// `[(4096, 60), (65536, 100)]`); a draw past the last share takes the
    /// last size, as fio's does when the shares add up to less than 100.
    Split(Vec<(u64, u32)>),
}

impl From<u64> for BlockSizing {
    fn from(size: u64) -> BlockSizing {
        BlockSizing::Fixed(size)
    }
}

impl BlockSizing {
    /// Direction `dir` (0 reads, 1 writes) of a job: `bssplit` when set, as
    /// fio takes it, else `bs`.
    pub fn of_job(options: &JobOptions, dir: usize) -> BlockSizing {
        let split: &[BlockSplit] = &options.bssplit[dir];
        if !split.is_empty() {
            let mut cumulative = 0;
            return BlockSizing::Split(
                split
                    .iter()
                    .map(|s| {
                        cumulative += s.percent;
                        (s.size, cumulative)
                    })
                    .collect(),
            );
        }
        match options.block_range(dir) {
            (min, max) if min == max => BlockSizing::Fixed(min),
            (min, max) => BlockSizing::Range { min, max },
        }
    }

    /// Every size a draw can give: a range's are the multiples of its
    /// smallest size up to its largest.
    pub fn sizes(&self) -> Vec<u64> {
        match self {
            BlockSizing::Fixed(size) => vec![*size],
            BlockSizing::Range { min, max } => (1..=max / min.max(&1)).map(|k| k * min).collect(),
            BlockSizing::Split(sizes) => sizes.iter().map(|s| s.0).collect(),
        }
    }

    /// The unit of offsets and lengths: the smallest size.
    fn unit(&self) -> u64 {
        match self {
            BlockSizing::Fixed(size) => *size,
            BlockSizing::Range { min, .. } => *min,
            BlockSizing::Split(sizes) => sizes.iter().map(|s| s.0).min().unwrap_or(1),
        }
    }

    /// fio's `get_next_buflen` for a size that varies: drawn from `rand`
    /// (fio's `bsrange_state` of the direction) until one fits in `room`
    /// bytes; 0 when not even the smallest does.
    fn draw_len(&self, rand: &mut FioRand, room: u64) -> u64 {
        let (min, max) = match self {
            BlockSizing::Fixed(size) => return if *size <= room { *size } else { 0 },
            BlockSizing::Range { min, max } => (*min, *max),
            BlockSizing::Split(sizes) => (
                sizes.iter().map(|s| s.0).min().unwrap_or(1),
                sizes.iter().map(|s| s.0).max().unwrap_or(1),
            ),
        };
        if min > room {
            return 0;
        }
        let rand_max = rand.max();
        // Bounded: the smallest size fits, and a draw of it comes.
        for _ in 0..100_000 {
            let r = rand.next_value();
            let mut len = match self {
                BlockSizing::Split(sizes) => {
                    let mut len = min;
                    let mut previous = 0;
                    for &(size, cumulative) in sizes {
                        let percent = u64::from(cumulative - previous);
                        previous = cumulative;
                        if percent == 0 {
                            continue;
                        }
                        len = size;
                        if r / u64::from(cumulative) <= rand_max / 100 && size <= room {
                            break;
                        }
                    }
                    len
                }
                _ => min + (max as f64 * (r as f64 / (rand_max as f64 + 1.0))) as u64,
            };
            len = if min.is_power_of_two() {
                len & !(min - 1)
            } else {
                len - len % min
            };
            len = len.min(max);
            if len <= room && len > 0 {
                return len;
            }
        }
        min
    }

    /// The size of the next I/O, in units.
    #[inline]
    fn pick_units(&self, unit: u64, rng: &mut Rng) -> u64 {
        match self {
            BlockSizing::Fixed(_) => 1,
            BlockSizing::Range { min, max } => (min + rng.below(max - min + 1)) / unit,
            BlockSizing::Split(sizes) => {
                let draw = rng.below(100) as u32;
                let size = sizes
                    .iter()
                    .find(|(_, cumulative)| draw < *cumulative)
                    .or(sizes.last())
                    .map_or(unit, |(size, _)| *size);
                // A split size that is not a multiple of the smallest one is
                // rounded down, as fio rounds it without bs_unaligned.
                (size / unit).max(1)
            }
        }
    }
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

    /// A uniform value in `[0, 1)`.
    #[inline]
    pub fn unit_interval(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
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

/// Per file and direction: where the next I/O goes.
#[derive(Debug, Clone)]
struct Cursor {
    blocks: u64,
    next: u64,
    /// The file's bytes, where the last I/O ended and where it began
    /// (fio's `real_file_size`, `last_pos`, `last_start`): what `rw=WORD:N`
    /// counts from.
    size: u64,
    last_pos: u64,
    last_start: Option<u64>,
    /// A non-uniform distribution: it replaces the random map.
    draw: Option<BlockDraw>,
}

impl Cursor {
    /// The I/O at `offset`, remembered as the last one (fio's `last_start`
    /// and `last_pos`, which `rw=WORD:N` counts from).
    #[inline]
    fn plan(&mut self, direction: Direction, file: usize, offset: u64, len: u64) -> PlannedIo {
        self.last_start = Some(offset);
        self.last_pos = offset + len;
        PlannedIo {
            direction,
            file,
            offset,
            len,
        }
    }
}

/// The job's whole I/O sequence.
#[derive(Debug, Clone)]
pub struct IoPlan {
    mode: RwMode,
    read_percent: u32,
    sizing: [BlockSizing; 2],
    unit: [u64; 2],
    /// Per direction, the size when it is fixed, else 0: read on every I/O,
    /// so kept apart from `sizing`.
    fixed_len: [u64; 2],
    /// `mode.is_random()`, read on every I/O.
    random: bool,
    cursors: Vec<[Cursor; 2]>,
    next_file: usize,
    /// fio's `file_service_type`, the I/Os to the current file so far, and
    /// the draws of `random`.
    file_service: FileService,
    in_file: u64,
    file_draws: FioRand,
    rng: Rng,
    /// Uniform random blocks, as fio draws them.
    fio: FioOffsets,
    /// A mixed job's directions, as fio picks them.
    mix: FioMix,
    /// `rw=WORD:N`: bytes added to each sequential offset, and for random
    /// I/O a new offset every `seq_nr` I/Os (the others following on, or
    /// repeating it with `identical`); `seq_left` counts down to the next.
    seq_add: i64,
    /// An offset the modifiers gave leaves less than a block before the
    /// region's end: fio's pass ends there (its `io_u_fits` fails).
    past_end: bool,
    seq_nr: u32,
    seq_left: u32,
    identical: bool,
    /// Where each file's region starts (fio's `offset`).
    starts: Vec<u64>,
    /// `blockalign`: random offsets are multiples of it, per direction (0:
    /// the direction's smallest size).
    align: [u64; 2],
    /// What fio's random map and LFSR count in: the job's smallest block size.
    map_unit: u64,
    /// Per file, fio's generator of a Zipf, Pareto or normal distribution,
    /// which its reads and writes share.
    shared_draws: Vec<Option<FioDraw>>,
    /// fio's `zone_state`: which zone of a zoned distribution each I/O goes to.
    zone_draws: FioRand,
    /// Bytes of each file's region done this pass.
    file_bytes: Vec<u64>,
    /// `openfiles`: which files are open, how many may be, and the files
    /// the last I/O opened and closed (the I/O loop opens and closes them).
    open: Vec<bool>,
    open_limit: usize,
    opened_now: Vec<usize>,
    closed_now: Vec<usize>,
    /// The distribution it draws, for `with_distribution_seeds`.
    shared_distribution: Option<Distribution>,
    /// fio's generators of varying sizes (`bsrange_state`), per direction,
    /// and as seeded: with `randrepeat` each pass draws the same sizes.
    size_draws: [FioRand; 2],
    size_seeded: [FioRand; 2],
    repeat: bool,
    /// A trimming job: its I/Os are trims, and with `trimwrite` each is
    /// followed by a write of the same block (`then_write` holds it).
    trims: bool,
    writes_after_trim: bool,
    then_write: Option<PlannedIo>,
}

/// fio's choice of direction in a mixed job (`get_rw_ddir`): a direction is
/// kept until its I/Os reach a limit, then one is drawn by `rwmixread`;
/// turning to the other sets the next limit from the I/Os done in the one
/// left, in the new one's share.
#[derive(Debug, Clone)]
struct FioMix {
    rand: FioRand,
    seeded: FioRand,
    repeat: bool,
    direction: Direction,
    limit: u64,
    issued: [u64; 2],
}

impl FioMix {
    fn new(rand: FioRand, repeat: bool) -> FioMix {
        FioMix {
            seeded: rand.clone(),
            rand,
            repeat,
            direction: Direction::Read,
            limit: 0,
            issued: [0; 2],
        }
    }

    fn next(&mut self, read_percent: u32) -> Direction {
        if self.issued[self.direction.index()] >= self.limit {
            let drawn = if self.rand.next_between(1, 100) <= u64::from(read_percent) {
                Direction::Read
            } else {
                Direction::Write
            };
            if drawn != self.direction {
                let share = match drawn {
                    Direction::Read => read_percent,
                    Direction::Write | Direction::Trim => 100 - read_percent,
                };
                self.limit = self.issued[self.direction.index()] * u64::from(share) / 100;
            }
            self.direction = drawn;
        }
        self.direction
    }

    /// A new pass, as fio's new loop: the limit goes, and with `repeat`
    /// the draws start again from the seed.
    fn restart(&mut self) {
        self.limit = 0;
        if self.repeat {
            self.rand = self.seeded.clone();
        }
    }
}

impl IoPlan {
    /// A plan over files of the given sizes, with block sizes for reads and
    /// writes. Every file must hold at least one of the smallest block of
    /// each direction the job uses. Offsets and the random map count in the
    /// smallest block size; a larger I/O that would cross the end of the
    /// file is cut short there.
    pub fn new(
        mode: RwMode,
        read_percent: u32,
        sizing: [impl Into<BlockSizing>; 2],
        file_sizes: &[u64],
        random_map: bool,
        seed: u64,
    ) -> Result<IoPlan, MapTooLarge> {
        let (trims, writes_after_trim) = (mode.trims(), mode.writes_after_trim());
        let mode = mode.offsets_as();
        let sizing = sizing.map(Into::into);
        let unit = [sizing[0].unit(), sizing[1].unit()];
        let rng = Rng::new(seed);
        let cursors = file_sizes
            .iter()
            .map(|&size| {
                std::array::from_fn(|dir| Cursor {
                    blocks: size / unit[dir],
                    next: 0,
                    size,
                    last_pos: 0,
                    last_start: None,
                    draw: None,
                })
            })
            .collect();
        // fio's map counts in the smallest block size of the directions used.
        let map_unit = match (mode.reads(), mode.writes()) {
            (true, false) => unit[0],
            (false, true) => unit[1],
            _ => unit[0].min(unit[1]),
        };
        let map_bits: Vec<u64> = file_sizes
            .iter()
            .map(|size| size / map_unit.max(1))
            .collect();
        let fio = FioOffsets::new(
            FioRand::new(seed, false),
            &map_bits,
            mode.is_random() && random_map,
            false,
        )?;
        let mix = FioMix::new(FioRand::new(seed ^ 0x6d69, false), false);
        let fixed_len = [0, 1].map(|dir| match sizing[dir] {
            BlockSizing::Fixed(size) => size,
            _ => 0,
        });
        Ok(IoPlan {
            mode,
            read_percent,
            sizing,
            unit,
            fixed_len,
            random: mode.is_random(),
            cursors,
            next_file: 0,
            file_service: FileService::RoundRobin(1),
            in_file: 0,
            file_draws: FioRand::new(seed ^ 0x66, false),
            rng,
            fio,
            mix,
            seq_add: 0,
            past_end: false,
            seq_nr: 1,
            seq_left: 1,
            identical: false,
            starts: Vec::new(),
            align: [0; 2],
            map_unit: map_unit.max(1),
            size_draws: [
                FioRand::new(seed ^ 0x6273, false),
                FioRand::new(seed ^ 0x6274, false),
            ],
            size_seeded: [
                FioRand::new(seed ^ 0x6273, false),
                FioRand::new(seed ^ 0x6274, false),
            ],
            repeat: false,
            shared_draws: vec![None; file_sizes.len()],
            shared_distribution: None,
            zone_draws: FioRand::new(seed ^ 0x7a6f, false),
            file_bytes: vec![0; file_sizes.len()],
            open: vec![true; file_sizes.len()],
            open_limit: usize::MAX,
            opened_now: Vec::new(),
            closed_now: Vec::new(),
            trims,
            writes_after_trim,
            then_write: None,
        })
    }

    /// fio's generators of varying sizes, reads' and writes' (or trims'),
    /// seeded as fio seeds its `bsrange_state`.
    pub fn with_size_generators(mut self, draws: [FioRand; 2]) -> IoPlan {
        self.size_seeded = draws.clone();
        self.size_draws = draws;
        self
    }

    /// fio's `blockalign`: random offsets are multiples of `align` bytes
    /// (reads, writes; 0 leaves a direction at its smallest block size).
    pub fn with_block_align(mut self, align: [u64; 2]) -> IoPlan {
        self.align = align;
        self
    }

    /// Each file's region starts this far into it (fio's `offset`): every
    /// offset is counted from there.
    pub fn with_file_starts(mut self, starts: &[u64]) -> IoPlan {
        self.starts = starts.to_vec();
        self
    }

    /// fio's `random_generator=lfsr`, seeded with `seed`: each file's
    /// blocks once per pass in a shift register's order. False (and the
    /// plan as it was) where fio's register cannot be set up.
    pub fn use_lfsr(&mut self, seed: u64) -> bool {
        let bits: Vec<u64> = self
            .cursors
            .iter()
            .map(|c| c[0].size / self.map_unit)
            .collect();
        self.fio.use_lfsr(&bits, seed)
    }

    /// fio's offset modifiers (`rw=WORD:N`, `rw_sequencer`): `seq_nr` I/Os
    /// per random offset, `seq_add` bytes added to each sequential one.
    pub fn with_offset_modifiers(mut self, seq_nr: u32, seq_add: i64, identical: bool) -> IoPlan {
        self.seq_nr = seq_nr.max(1);
        // fio takes a new random offset for the first I/O too.
        self.seq_left = 1;
        self.seq_add = seq_add;
        self.identical = identical;
        self
    }

    /// fio's `get_next_seq_offset`: on from where the last I/O ended, plus
    /// `seq_add`, wrapping to the start (or, going backwards, to the end);
    /// `None` once the last I/O ended at the file's end.
    fn next_sequential(cursor: &Cursor, seq_add: i64) -> Option<u64> {
        if cursor.last_pos >= cursor.size {
            return None;
        }
        let mut pos = cursor.last_pos;
        if pos != 0 && seq_add != 0 {
            pos = pos.wrapping_add_signed(seq_add);
            if pos >= cursor.size {
                pos = if seq_add > 0 {
                    0
                } else {
                    cursor.size.wrapping_add_signed(seq_add)
                };
            }
        }
        Some(pos)
    }

    /// Random blocks and a mixed job's directions from fio's generators as
    /// fio seeds them for the job (`random_generator`, `randseed`,
    /// `randrepeat`): `repeat` starts each pass from the seeds again, as
    /// fio's `randrepeat` does across `loops`.
    pub fn with_fio_generators(mut self, offsets: FioRand, mix: FioRand, repeat: bool) -> IoPlan {
        self.fio.set_generator(offsets, repeat);
        self.mix = FioMix::new(mix, repeat);
        self.repeat = repeat;
        self
    }

    /// Random offsets drawn from these distributions (reads, writes) instead
    /// of uniformly: as in fio, a non-uniform one turns the random map off.
    pub fn with_distributions(mut self, distributions: [&Distribution; 2]) -> IoPlan {
        self.shared_distribution = distributions
            .iter()
            .find(|d| {
                matches!(
                    d,
                    Distribution::Zipf { .. }
                        | Distribution::Pareto { .. }
                        | Distribution::Normal { .. }
                )
            })
            .map(|d| (*d).clone());
        for cursors in &mut self.cursors {
            for (dir, cursor) in cursors.iter_mut().enumerate() {
                cursor.draw = BlockDraw::new(distributions[dir]);
            }
        }
        self
    }

    /// `openfiles`: which files are open now, and how many may be; the
    /// job opens a file when it reaches it with room in the budget, goes
    /// on with an open one when there is none, and closes a file once it is
    /// done for the pass, as fio's file service does.
    pub fn with_open_files(mut self, open: &[bool], limit: Option<usize>) -> IoPlan {
        if let Some(limit) = limit {
            self.open = open.to_vec();
            self.open_limit = limit;
        }
        self
    }

    /// Whether the last I/O would pass the region's end, where fio ends
    /// the pass instead (`rw=read:N`'s holes, fio's test t0007).
    pub fn past_end(&self) -> bool {
        self.past_end
    }

    /// The files the last I/O opened (the I/O loop opens them before that
    /// I/O) and closed (after it), when `openfiles` limits them.
    pub fn take_file_changes(&mut self) -> Option<(Vec<usize>, Vec<usize>)> {
        if self.opened_now.is_empty() && self.closed_now.is_empty() {
            return None;
        }
        Some((
            std::mem::take(&mut self.opened_now),
            std::mem::take(&mut self.closed_now),
        ))
    }

    /// `file` itself when open; else opened when the budget has room; else
    /// the next open file in turn (fio's chooser passes over files it may
    /// not open).
    fn open_or_next(&mut self, file: usize) -> usize {
        if self.open[file] {
            return file;
        }
        let open = self.open.iter().filter(|&&o| o).count();
        if open < self.open_limit {
            self.open[file] = true;
            self.opened_now.push(file);
            return file;
        }
        self.next_in_turn(file, |plan, f| plan.open[f] && !plan.file_done(f))
    }

    /// fio's `zone_state`, which picks the zone of each I/O of a zoned distribution.
    pub fn with_zone_generator(mut self, draws: FioRand) -> IoPlan {
        self.zone_draws = draws;
        self
    }

    /// Seeds fio's Zipf, Pareto or normal generator of each file (fio's
    /// `jhash` of its name times the job's number, or the block seed
    /// without `randrepeat`), over its ranges of the reads' and writes'
    /// smallest size.
    pub fn with_distribution_seeds(mut self, seeds: &[u32]) -> IoPlan {
        let range = self.unit[0].min(self.unit[1]).max(1);
        self.shared_draws = self
            .cursors
            .iter()
            .zip(seeds)
            .map(|(cursors, &seed)| {
                let distribution = self.shared_distribution.as_ref()?;
                FioDraw::new(distribution, cursors[0].size.div_ceil(range), seed)
            })
            .collect();
        self
    }

    /// The smallest block size of a direction: offsets and lengths are
    /// multiples of it.
    pub fn unit(&self, direction: Direction) -> u64 {
        self.unit[direction.slot()]
    }

    /// Starts a new pass: sequential I/O goes back to offset 0, random I/O
    /// may visit every block again (in the same order with `randrepeat`).
    pub fn restart(&mut self) {
        self.past_end = false;
        for cursor in self.cursors.iter_mut().flatten() {
            cursor.next = 0;
        }
        self.fio.restart();
        self.mix.restart();
        if self.repeat {
            self.size_draws = self.size_seeded.clone();
        }
        for cursor in self.cursors.iter_mut().flatten() {
            cursor.last_pos = 0;
            cursor.last_start = None;
        }
        self.next_file = 0;
        self.in_file = 0;
        self.then_write = None;
        self.file_bytes.iter_mut().for_each(|done| *done = 0);
    }

    /// A new strided zone (fio's `fio_file_reset`): sequential I/O from its
    /// start, every block free again for random I/O, the draws going on.
    pub fn reset_zone(&mut self) {
        for cursor in self.cursors.iter_mut().flatten() {
            cursor.next = 0;
            cursor.last_pos = 0;
            cursor.last_start = None;
        }
        self.fio.reset_maps();
    }

    /// The next I/O.
    #[inline]
    pub fn next_io(&mut self) -> PlannedIo {
        let direction = self.next_direction();
        self.next_io_in(direction)
    }

    /// The next I/O in `direction`, at its place in the file (its region's
    /// start added).
    #[inline]
    pub fn next_io_in(&mut self, direction: Direction) -> PlannedIo {
        if direction == Direction::Write
            && let Some(write) = self.then_write.take()
        {
            return write;
        }
        let slot = if direction == Direction::Read {
            Direction::Read
        } else {
            Direction::Write
        };
        let mut io = self.next_in_region(slot);
        if let Some(&start) = self.starts.get(io.file) {
            io.offset += start;
        }
        if self.trims {
            // As fio's trimwrite: the write goes where the trim went.
            io.direction = Direction::Trim;
            if self.writes_after_trim {
                self.then_write = Some(PlannedIo {
                    direction: Direction::Write,
                    ..io
                });
            }
        }
        io
    }

    /// True when a `trimwrite` job's last trim still waits for its write.
    #[inline]
    pub fn write_after_trim_pending(&self) -> bool {
        self.then_write.is_some()
    }

    /// The direction of the next I/O, by `rwmixread`.
    #[inline]
    pub fn next_direction(&mut self) -> Direction {
        if self.then_write.is_some() {
            return Direction::Write;
        }
        if self.trims {
            return Direction::Trim;
        }
        match self.mode {
            RwMode::Read | RwMode::RandRead => Direction::Read,
            RwMode::ReadWrite | RwMode::RandReadWrite => self.mix.next(self.read_percent),
            // The others write (a trimming job's mode is the writes' it walks as).
            _ => Direction::Write,
        }
    }

    /// Whether the job does both reads and writes, so that a rate limit may
    /// turn to the other direction while one has to wait.
    pub fn mixes_directions(&self) -> bool {
        matches!(self.mode, RwMode::ReadWrite | RwMode::RandReadWrite)
            && (1..100).contains(&self.read_percent)
    }

    /// fio's `file_service_type`: the file the I/O after this one (to
    /// `file`) goes to.
    fn choose_next_file(&mut self, file: usize) {
        let files = self.cursors.len();
        self.in_file += 1;
        self.next_file = match self.file_service {
            FileService::RoundRobin(every) if self.in_file >= every => {
                self.in_file = 0;
                (file + 1) % files
            }
            FileService::Random(every) if self.in_file >= every => {
                self.in_file = 0;
                self.file_draws.next_below(files as u64) as usize
            }
            // One file's region, then the next: its I/Os, at its smallest
            // block size, cover it.
            FileService::Sequential => {
                let cursor = &self.cursors[file][0];
                if self.in_file >= cursor.blocks.max(1) {
                    self.in_file = 0;
                    (file + 1) % files
                } else {
                    file
                }
            }
            _ => file,
        };
    }

    /// How the job moves between its files (fio's `file_service_type`);
    /// `draws` picks files for `random`.
    pub fn with_file_service(mut self, service: FileService, draws: FioRand) -> IoPlan {
        self.file_service = service;
        self.file_draws = draws;
        if matches!(service, FileService::Random(_)) && self.cursors.len() > 1 {
            self.next_file = self.file_draws.next_below(self.cursors.len() as u64) as usize;
        }
        self
    }

    /// The next I/O in `direction`, counted from its file's region.
    #[inline]
    fn next_in_region(&mut self, direction: Direction) -> PlannedIo {
        let mut file = self.next_file;
        let limited = self.open_limit != usize::MAX;
        if self.cursors.len() > 1 {
            if self.file_done(file) {
                file = self.instead_of_done(file);
            }
            if limited {
                file = self.open_or_next(file);
            }
            self.choose_next_file(file);
        }
        let io = self.next_in_file(direction, file);
        if let Some(done) = self.file_bytes.get_mut(file) {
            *done += io.len;
        }
        if limited && self.file_done(file) {
            // Done for the pass: closed, as fio closes it once it finds it
            // so, asking it for an offset (a random one costs a draw).
            self.open[file] = false;
            self.closed_now.push(file);
            if self.random && self.cursors[file][0].draw.is_none() {
                self.fio.next_unmapped(1);
            }
        }
        io
    }

    /// Whether `file` had its whole region this pass (fio then closes it
    /// and goes on with the others).
    fn file_done(&self, file: usize) -> bool {
        self.file_bytes
            .get(file)
            .is_some_and(|&done| done >= self.cursors[file][0].size)
    }

    /// The file to go to when `file` is done, as fio's `__get_next_file`
    /// picks it: the next one not done in turn, or, for `random`, one
    /// drawn until it is not done; its turn starts afresh.
    fn instead_of_done(&mut self, file: usize) -> usize {
        let files = self.cursors.len();
        self.in_file = 0;
        // fio finds a file done by asking it for an offset: a random one
        // costs a draw of the offsets' generator.
        if self.random && self.cursors[file][0].draw.is_none() {
            self.fio.next_unmapped(1);
        }
        if matches!(self.file_service, FileService::Random(_)) {
            for _ in 0..files * 64 {
                let drawn = self.file_draws.next_below(files as u64) as usize;
                if !self.file_done(drawn) {
                    return drawn;
                }
            }
        }
        self.next_in_turn(file, |plan, f| !plan.file_done(f))
    }

    /// The first file after `file` in turn (wrapping) that `wanted` takes,
    /// or `file` when none does.
    fn next_in_turn(&self, file: usize, wanted: impl Fn(&IoPlan, usize) -> bool) -> usize {
        let files = self.cursors.len();
        (1..files)
            .map(|step| (file + step) % files)
            .find(|&f| wanted(self, f))
            .unwrap_or(file)
    }

    /// The next I/O in `direction` to `file`, counted from its region.
    #[inline]
    fn next_in_file(&mut self, direction: Direction, file: usize) -> PlannedIo {
        let dir = direction.index();
        self.mix.issued[dir] += 1;
        // One size is the common case: no draw, and an I/O of one unit
        // always fits where its block starts.
        let fixed = self.fixed_len[direction.slot()];
        let unit = if fixed != 0 { fixed } else { self.unit[dir] };
        let cursor = &mut self.cursors[file][dir];
        // fio's offset modifiers give some offsets in bytes.
        let modified = if !self.random && self.seq_add != 0 {
            Some(Self::next_sequential(cursor, self.seq_add).unwrap_or(0))
        } else if self.random && self.seq_nr > 1 {
            self.seq_left -= 1;
            if self.seq_left == 0 {
                self.seq_left = self.seq_nr;
                None
            } else if self.identical {
                Some(cursor.last_start.unwrap_or(0))
            } else {
                Self::next_sequential(cursor, 0)
            }
        } else {
            None
        };
        // The offset modifiers and blockalign draw sizes of their own.
        let units = if fixed != 0 {
            1
        } else if modified.is_some()
            || (self.random && self.align[dir] != 0 && self.align[dir] != unit)
        {
            self.sizing[dir].pick_units(unit, &mut self.rng)
        } else {
            return self.next_varying(direction, file, unit);
        };
        let cursor = &mut self.cursors[file][dir];
        if let Some(offset) = modified {
            if cursor.size.saturating_sub(offset) < unit {
                self.past_end = true;
            }
            let len = (units * unit)
                .min(cursor.size.saturating_sub(offset))
                .max(unit.min(cursor.size));
            return cursor.plan(direction, file, offset, len);
        }
        let align = self.align[dir];
        if self.random && align != 0 && align != unit {
            // Offsets in `align` steps over the region; the size as drawn,
            // cut at the region's end (whole units).
            let blocks = (cursor.size / align).max(1);
            let block = match &cursor.draw {
                // The distribution was laid over the direction's own blocks:
                // its block, rounded down to the alignment.
                Some(draw) => (draw.draw(
                    cursor.blocks,
                    unit,
                    &mut self.shared_draws[file],
                    &mut self.zone_draws,
                    &mut self.fio,
                ) * unit
                    / align)
                    .min(blocks - 1),
                // As fio: blockalign turns the random map off.
                None => self.fio.next_unmapped(blocks),
            };
            let offset = block * align;
            let room = cursor.size.saturating_sub(offset);
            let len = (units * unit).min(room.max(unit));
            let len = (len - len % unit).max(unit);
            return cursor.plan(direction, file, offset, len);
        }
        let block = if !self.random {
            let block = cursor.next;
            let end = block + 1;
            cursor.next = if end >= cursor.blocks { 0 } else { end };
            block
        } else if let Some(draw) = &cursor.draw {
            draw.draw(
                cursor.blocks,
                unit,
                &mut self.shared_draws[file],
                &mut self.zone_draws,
                &mut self.fio,
            )
        } else {
            // fio's map counts in the job's smallest size: a direction with
            // larger blocks can be handed one past its own last; it wraps.
            match self.fio.next_block(file, cursor.blocks, 1) {
                block if block < cursor.blocks => block,
                block => block % cursor.blocks,
            }
        };
        // One size (varying ones are next_varying's): one unit.
        cursor.plan(direction, file, block * unit, unit)
    }

    /// An I/O of a size that varies (`bsrange`, `bssplit`), as fio makes it
    /// (`fill_io_u`): the offset first, then the size drawn with fio's
    /// generator until one fits before the region's end, then, for random
    /// I/O, the blocks marked done, the I/O cut short at one done already.
    fn next_varying(&mut self, direction: Direction, file: usize, unit: u64) -> PlannedIo {
        let dir = direction.slot();
        let cursor = &mut self.cursors[file][dir];
        let mapped = self.random && cursor.draw.is_none();
        let block = if !self.random {
            cursor.next
        } else if let Some(draw) = &cursor.draw {
            draw.draw(
                cursor.blocks,
                unit,
                &mut self.shared_draws[file],
                &mut self.zone_draws,
                &mut self.fio,
            )
        } else {
            match self.fio.draw_block(file, cursor.blocks) {
                block if block < cursor.blocks => block,
                block => block % cursor.blocks,
            }
        };
        let offset = block * unit;
        let room = cursor.size.saturating_sub(offset);
        let mut len = self.sizing[dir].draw_len(&mut self.size_draws[dir], room);
        if len == 0 {
            // Not even the smallest size fits: what is left, whole units.
            len = (room - room % unit).max(unit.min(cursor.size));
        }
        if mapped {
            let marked = self.fio.mark(file, block, len.div_ceil(unit));
            len = len.min(marked.max(1) * unit);
        } else if !self.random {
            let end = block + len.div_ceil(unit);
            cursor.next = if end >= cursor.blocks { 0 } else { end };
        }
        cursor.plan(direction, file, offset, len)
    }
}

#[cfg(test)]
mod tests;
