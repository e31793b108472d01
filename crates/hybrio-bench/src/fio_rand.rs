//! fio's random numbers, as fio 3.33 draws them: its per-job seeds, its
//! Tausworthe generators (`random_generator=tausworthe`, 32 bits, and
//! `tausworthe64`), and the way it fills a buffer from one seed. The same
//! seeds give the same offsets as fio's (`offsets`) and the same bytes, so
//! that a block written by either tool can be made again from the seed in
//! its header (`verify_dump`'s `.expected` file).

/// fio's `FIO_RAND_VER_OFF`: which of a job's seeds feeds verify's state.
pub const VERIFY_SEED: usize = 3;

/// fio's `FIO_RAND_BLOCK_OFF`: the seed of random offsets (unless
/// `randrepeat`, which makes it [`REPEATABLE_SEED`] times the job's number).
pub const BLOCK_SEED: usize = 6;

/// fio's `FIO_RAND_MIX_OFF`: the seed of a mixed job's directions.
pub const MIX_SEED: usize = 4;

/// fio's `FIO_RAND_FILE_OFF`: the seed of `file_service_type=random`'s draws.
pub const FILE_SEED: usize = 5;

/// fio's `FIO_RAND_BUF_OFF`: the seed of write buffers' bytes.
pub const BUFFER_SEED: usize = 9;

/// fio's `FIO_DEDUPE_OFF`: the seed of the draws of which writes repeat one.
pub const DEDUPE_SEED: usize = 14;

/// fio's `FIO_RAND_ZONE_OFF`: the seed of the draws of a zoned
/// distribution's zones.
pub const ZONE_SEED: usize = 16;

/// fio's `FIO_RAND_PRIO_CMDS`: the seed of the draws of which I/Os get
/// `cmdprio`'s priority.
pub const PRIORITY_SEED: usize = 19;

/// fio's `FIO_RAND_DEDUPE_WORKING_SET_IX`: the seed of the draws of which
/// buffer of the working set a deduplicated write repeats.
pub const DEDUPE_WORKING_SET_SEED: usize = 20;

/// fio's `FIO_RANDSEED`.
pub const REPEATABLE_SEED: u64 = 0xb189_9bed;

/// How many seeds fio keeps per job (`FIO_RAND_NR_OFFS`).
const SEEDS: usize = 21;

/// fio's seeds for a job: `randseed` spread by a fixed multiplier, times the
/// job's number (from 1), plus the seed's index (fio's `setup_random_seeds`
/// for a repeatable run).
pub fn job_seeds(randseed: u64, job_number: u64) -> [u64; SEEDS] {
    const SPREAD: u64 = 0x9e37_0001;
    let mut seed = randseed;
    for _ in 0..4 {
        seed = seed.wrapping_mul(SPREAD);
    }
    let mut seeds = [0; SEEDS];
    for (i, s) in seeds.iter_mut().enumerate() {
        *s = seed.wrapping_mul(job_number).wrapping_add(i as u64);
        seed = seed.wrapping_mul(SPREAD);
    }
    seeds
}

/// fio's generator state (`struct frand_state`).
#[derive(Debug, Clone)]
pub enum FioRand {
    /// `tausworthe`: L'Ecuyer's taus88, 32 bits.
    Taus88([u32; 3]),
    /// `tausworthe64`: taus258, 64 bits.
    Taus258([u64; 5]),
}

/// fio's seeding bound: a state word below it is raised past it.
fn at_least<T: PartialOrd + std::ops::Add<Output = T> + Copy>(x: T, bound: T) -> T {
    if x < bound { x + bound } else { x }
}

impl FioRand {
    /// fio's `init_rand_seed`.
    pub fn new(seed: u64, use64: bool) -> FioRand {
        // fio seeds from `(2^31) + (2^17) + (2^7)`, which C reads as XORs: 53.
        const START: u64 = 29 + 19 + 5;
        let mut rand = if use64 {
            let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let s1 = at_least(lcg(START), 1);
            let s2 = at_least(lcg(s1), 7);
            let s3 = at_least(lcg(s2), 15);
            let s4 = at_least(lcg(s3), 33);
            let s5 = at_least(lcg(s4), 49);
            FioRand::Taus258([s1, s2, s3, s4, s5])
        } else {
            let seed = seed as u32;
            let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
            let s1 = at_least(lcg(START as u32), 1);
            let s2 = at_least(lcg(s1), 7);
            let s3 = at_least(lcg(s2), 15);
            FioRand::Taus88([s1, s2, s3])
        };
        for _ in 0..6 {
            rand.next_value();
        }
        rand
    }

    /// fio's `__rand`: the next number (32 bits wide for taus88).
    #[inline]
    pub fn next_value(&mut self) -> u64 {
        match self {
            FioRand::Taus88(s) => {
                let step =
                    |s: u32, a: u32, b: u32, c: u32, d: u32| ((s & c) << d) ^ (((s << a) ^ s) >> b);
                s[0] = step(s[0], 13, 19, 0xffff_fffe, 12);
                s[1] = step(s[1], 2, 25, 0xffff_fff8, 4);
                s[2] = step(s[2], 3, 11, 0xffff_fff0, 17);
                u64::from(s[0] ^ s[1] ^ s[2])
            }
            FioRand::Taus258(s) => {
                let step = |s: u64, a: u32, b: u32, mask: u64, d: u32| {
                    let x = ((s << a) ^ s) >> b;
                    ((s & mask) << d) ^ x
                };
                s[0] = step(s[0], 1, 53, 0xffff_ffff_ffff_fffe, 10);
                s[1] = step(s[1], 24, 50, 0xffff_ffff_ffff_fe00, 5);
                s[2] = step(s[2], 3, 23, 0xffff_ffff_ffff_f000, 29);
                s[3] = step(s[3], 5, 24, 0xffff_ffff_fffe_0000, 23);
                s[4] = step(s[4], 3, 33, 0xffff_ffff_ff80_0000, 8);
                s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
            }
        }
    }

    /// fio's `rand_max`: the largest number the generator gives.
    #[inline]
    pub fn max(&self) -> u64 {
        match self {
            FioRand::Taus88(_) => u64::from(u32::MAX),
            FioRand::Taus258(_) => u64::MAX,
        }
    }

    /// fio's scaled draw of a block in `0..blocks`: the next number as a
    /// fraction of the generator's range, times `blocks`, in doubles as fio
    /// computes it (`__get_next_rand_offset`).
    #[inline]
    pub fn next_below(&mut self, blocks: u64) -> u64 {
        // Dividing by a power of two is multiplying by its inverse, exactly:
        // the same double as fio's division, without one.
        let scaled = match self {
            // 32-bit draws and block counts below 2^63 convert through
            // signed integers, exactly and without the unsigned conversions'
            // extra steps.
            FioRand::Taus88(_) => {
                let r = self.next_value() as i64 as f64;
                blocks as i64 as f64 * (r * (1.0 / 4_294_967_296.0))
            }
            FioRand::Taus258(_) => {
                let r = self.next_value() as f64;
                blocks as f64 * (r * (1.0 / 18_446_744_073_709_551_616.0))
            }
        };
        // Below `blocks`, so below 2^63.
        scaled as i64 as u64
    }

    /// fio's `rand_between(start, end)`, both included, for the 32-bit
    /// generator (fio draws directions and percentages with it).
    pub fn next_between(&mut self, start: u64, end: u64) -> u64 {
        let r = self.next_value();
        let range = match self {
            FioRand::Taus88(_) => 4_294_967_296.0,
            FioRand::Taus258(_) => 18_446_744_073_709_551_616.0,
        };
        start + ((end - start + 1) as f64 * (r as f64 / range)) as u64
    }

    /// The seed of one verified write's bytes, as fio draws it on a 64-bit
    /// machine: the product of two draws.
    pub fn next_buffer_seed(&mut self) -> u64 {
        let first = self.next_value();
        first.wrapping_mul(self.next_value())
    }
}

/// fio's `__hash_u64`.
pub fn fio_hash(x: u64) -> u64 {
    hash(x)
}

/// fio's `jhash` (hash.h) of `key`, from `initval`, with fio's own way of
/// taking whole 12-byte blocks (one byte of each word).
pub fn jhash(key: &[u8], initval: u32) -> u32 {
    let mix = |a: &mut u32, b: &mut u32, c: &mut u32| {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    };
    let fin = |a: &mut u32, b: &mut u32, c: &mut u32| {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    };
    // JHASH_INITVAL, fio's GOLDEN_RATIO_32.
    let init = 0x61c8_8647u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(u32::from(k[0]));
        b = b.wrapping_add(u32::from(k[4]));
        c = c.wrapping_add(u32::from(k[8]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    // The last block: byte i into word i / 4, at bits 8 * (i % 4).
    for (i, &byte) in k.iter().enumerate() {
        let value = u32::from(byte) << (8 * (i % 4));
        let word = match i / 4 {
            0 => &mut a,
            1 => &mut b,
            _ => &mut c,
        };
        *word = word.wrapping_add(value);
    }
    fin(&mut a, &mut b, &mut c);
    c
}

fn hash(x: u64) -> u64 {
    x.wrapping_mul(0x61c8_8646_80b5_83eb)
}

/// fio's `CONFIG_SEED_BUCKETS` as Debian and a plain `./configure` build it.
const BUCKETS: usize = 4;

/// Fills `buf` from `seed` as fio's `__fill_random_buf` does: four streams
/// of 64-bit words interleaved, each the seed times a small prime, hashed
/// from one word to the next; the tail from the first stream.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    const PRIMES: [u64; BUCKETS] = [1, 2, 3, 5];
    let mut streams = PRIMES.map(|p| seed.wrapping_mul(p));
    let whole = buf.len() / 8 / BUCKETS * BUCKETS * 8;
    let (interleaved, rest) = buf.split_at_mut(whole);
    for group in interleaved.chunks_exact_mut(8 * BUCKETS) {
        for (word, stream) in group.chunks_exact_mut(8).zip(streams.iter_mut()) {
            word.copy_from_slice(&stream.to_le_bytes());
            *stream = hash(*stream);
        }
    }
    let mut next = streams[0];
    let mut words = rest.chunks_exact_mut(8);
    for word in words.by_ref() {
        word.copy_from_slice(&next.to_le_bytes());
        next = hash(next);
    }
    let tail = words.into_remainder();
    let len = tail.len();
    tail.copy_from_slice(&next.to_le_bytes()[..len]);
}

/// fio's `__fill_random_buf_percentage`: in each `segment`, the first
/// `100 - percent`% random (from `seed`, the same in every segment), the
/// rest the pattern (or zeros); a rest shorter than a word joins the last.
pub fn fill_compressible(buf: &mut [u8], seed: u64, percent: u32, segment: usize, pattern: &[u8]) {
    let fill_rest = |part: &mut [u8]| {
        if pattern.is_empty() {
            part.fill(0);
        } else {
            for chunk in part.chunks_mut(pattern.len()) {
                chunk.copy_from_slice(&pattern[..chunk.len()]);
            }
        }
    };
    if percent >= 100 {
        fill_rest(buf);
        return;
    }
    let segment = segment.clamp(1, buf.len().max(1));
    let mut at = 0;
    while at < buf.len() {
        let left = buf.len() - at;
        let random = (segment * (100 - percent as usize) / 100).min(left);
        fill_random(&mut buf[at..at + random], seed);
        at += random;
        let left = buf.len() - at;
        if left == 0 {
            break;
        }
        let mut rest = (segment - random).min(left);
        if left - rest <= 8 {
            rest = left;
        }
        fill_rest(&mut buf[at..at + rest]);
        at += rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fill_is_the_seeds_streams_interleaved() {
        let mut buf = [0u8; 76];
        fill_random(&mut buf, 3);
        let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!([word(0), word(1), word(2), word(3)], [3, 6, 9, 15]);
        assert_eq!(word(4), hash(3));
        // 76 = 64 interleaved + 8 + 4: then the first stream, on from there.
        assert_eq!(word(8), hash(hash(3)));
        assert_eq!(&buf[72..], &hash(hash(hash(3))).to_le_bytes()[..4]);
    }

    #[test]
    fn seeds_differ_per_job_and_per_use() {
        let one = job_seeds(0x89, 1);
        let two = job_seeds(0x89, 2);
        assert_ne!(one[VERIFY_SEED], two[VERIFY_SEED]);
        assert_ne!(one[0], one[1]);
        // Whether they are fio's is checked against fio itself: the
        // integration tests read the seed in the header of fio's first block.
    }
}
