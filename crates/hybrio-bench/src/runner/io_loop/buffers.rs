//! What a job writes when it does not verify, as fio makes it: random bytes
//! from fio's buffer generator (or the `buffer_pattern`, or zeros), a share
//! of each block made compressible (`buffer_compress_percentage`, in
//! `buffer_compress_chunk`s), a share of the writes repeating an earlier
//! one (`dedupe_percentage`), made afresh for every write
//! (`refill_buffers`) or lightly changed (`scramble_buffers`, fio's
//! default: the offset and the time in each 512-byte sector).

use std::time::SystemTime;

use crate::fio_rand::{
    BUFFER_SEED, DEDUPE_SEED, DEDUPE_WORKING_SET_SEED, FioRand, fill_compressible, fill_random,
    job_seeds,
};
use crate::options::JobOptions;

/// How a job's write buffers are made.
#[derive(Debug)]
pub(super) struct WriteData {
    pattern: Vec<u8>,
    zero: bool,
    compress: u32,
    chunk: usize,
    dedupe: u32,
    /// Make every write's bytes afresh, or change them a little.
    pub(super) refill: bool,
    pub(super) scramble: bool,
    state: FioRand,
    previous: FioRand,
    dedupe_draws: FioRand,
    /// `dedupe_mode=working_set`: the generators of the set's buffers, and
    /// the draws of which one a deduplicated write repeats.
    working_set: Vec<FioRand>,
    working_set_draws: FioRand,
}

/// What fio's working set is built from: the job's size, its smallest
/// write, its number and the run's count of jobs.
#[derive(Debug, Clone, Copy)]
pub(super) struct JobPlace {
    pub(super) size: u64,
    pub(super) number: u64,
    pub(super) jobs: u64,
}

impl WriteData {
    pub(super) fn new(options: &JobOptions, place: JobPlace) -> WriteData {
        let job_number = place.number;
        let seeds = job_seeds(options.randseed, job_number);
        let b = &options.buffers;
        // As fio: all-compressible data is zeros; a compressible share
        // needs fresh data for every write unless refill_buffers says no.
        let (compress, zero) = if b.compress_percentage >= 100 {
            (0, true)
        } else {
            (b.compress_percentage, b.zero)
        };
        let refill = b.refill.unwrap_or(compress > 0);
        let scramble = b.scramble && !(zero && b.zero_given);
        let state = FioRand::new(seeds[BUFFER_SEED], options.random_generator64);
        WriteData {
            pattern: b.pattern.clone(),
            zero,
            compress,
            chunk: b.compress_chunk as usize,
            dedupe: b.dedupe_percentage,
            refill,
            // fio's TD_F_COMPRESS: compressible or deduplicated data is not scrambled.
            scramble: scramble && compress == 0 && b.dedupe_percentage == 0,
            previous: state.clone(),
            working_set: working_set(options, place, &state),
            working_set_draws: FioRand::new(
                seeds[DEDUPE_WORKING_SET_SEED],
                options.random_generator64,
            ),
            state,
            dedupe_draws: FioRand::new(seeds[DEDUPE_SEED], false),
        }
    }

    /// fio's `get_buf_state` (repeat mode): the generator the next bytes
    /// come from, and whether it is the job's own (else a copy of the one
    /// before, so that the bytes repeat earlier ones).
    fn next_state(&mut self) -> (FioRand, bool) {
        match self.dedupe {
            0 => (self.state.clone(), true),
            100 => {
                self.previous = self.state.clone();
                (self.state.clone(), true)
            }
            share if self.dedupe_draws.next_between(1, 100) <= u64::from(share) => {
                if self.working_set.is_empty() {
                    (self.previous.clone(), false)
                } else {
                    let last = self.working_set.len() as u64 - 1;
                    let i = self.working_set_draws.next_between(0, last) as usize;
                    (self.working_set[i].clone(), false)
                }
            }
            _ => (self.state.clone(), true),
        }
    }

    /// The buffers of the working set, as many as it holds.
    #[cfg(test)]
    pub(super) fn working_set_len(&self) -> usize {
        self.working_set.len()
    }

    /// fio's `fill_io_buffer`: `buf`'s bytes, made afresh.
    pub(super) fn fill(&mut self, buf: &mut [u8], min_write: usize) {
        if self.compress > 0 || self.dedupe > 0 {
            let mut at = 0;
            let (mut rand, mut own) = self.next_state();
            while at < buf.len() {
                let left = buf.len() - at;
                let this = match self.chunk {
                    0 => min_write.min(left),
                    chunk => min_write.min(left).min(chunk),
                }
                .max(1);
                let seed = rand.next_buffer_seed();
                fill_compressible(
                    &mut buf[at..at + this],
                    seed,
                    self.compress,
                    this,
                    &self.pattern,
                );
                at += this;
                // fio's save_buf_state.
                if self.dedupe == 100 {
                    rand = self.previous.clone();
                    own = false;
                } else if own {
                    self.previous = rand.clone();
                }
            }
            if own {
                self.state = rand;
            }
        } else if !self.pattern.is_empty() {
            for chunk in buf.chunks_mut(self.pattern.len()) {
                chunk.copy_from_slice(&self.pattern[..chunk.len()]);
            }
        } else if self.zero {
            buf.fill(0);
        } else {
            let seed = self.state.next_buffer_seed();
            fill_random(buf, seed);
        }
    }

    /// fio's `small_content_scramble`: in each 512-byte sector, the offset
    /// in one of its first eight 64-byte lines, and the time at the end of
    /// its first line, so that no two writes carry the same bytes.
    pub(super) fn scramble(buf: &mut [u8], offset: u64, now: SystemTime) {
        let since = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let (sec, nsec) = (since.as_secs(), u64::from(since.subsec_nanos()));
        let line = ((nsec ^ offset) & 7) as usize * 64;
        for (i, sector) in buf.chunks_exact_mut(512).enumerate() {
            sector[line..line + 8].copy_from_slice(&(offset + i as u64 * 512).to_le_bytes());
            sector[48..56].copy_from_slice(&sec.to_le_bytes());
            sector[56..64].copy_from_slice(&nsec.to_le_bytes());
        }
    }
}

/// fio's dedupe working set (`init_dedupe_working_set_seeds`): the
/// generator of each of its buffers, one buffer's draws apart, from the
/// job's own buffer generator; with `dedupe_global` the set moves on to the
/// next job's generator every `buffers / jobs` buffers, so that the jobs
/// write the same buffers.
fn working_set(options: &JobOptions, place: JobPlace, own: &FioRand) -> Vec<FioRand> {
    let b = &options.buffers;
    if b.dedupe_percentage == 0 || !b.dedupe_working_set {
        return Vec::new();
    }
    let min_write = options.block_range(1).0.max(1);
    let buffers = (place.size * u64::from(b.dedupe_working_set_percentage) / 100) / min_write;
    let draws_per_buffer = match b.compress_chunk {
        0 => 1,
        chunk => (min_write / chunk.min(min_write)).max(1),
    };
    let per_job = (buffers / place.jobs.max(1)).max(1);
    let mut next_job = place.number.saturating_sub(1);
    let mut state = own.clone();
    let mut set = Vec::with_capacity(buffers as usize);
    for i in 0..buffers {
        if i > 0 {
            for _ in 0..draws_per_buffer {
                state.next_buffer_seed();
            }
            if b.dedupe_global && i % per_job == 0 {
                next_job = (next_job + 1) % place.jobs.max(1);
                let seeds = job_seeds(options.randseed, next_job + 1);
                state = FioRand::new(seeds[BUFFER_SEED], options.random_generator64);
            }
        }
        set.push(state.clone());
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::BufferOptions;

    fn data(buffers: BufferOptions) -> WriteData {
        let options = JobOptions {
            buffers,
            ..JobOptions::default()
        };
        WriteData::new(
            &options,
            JobPlace {
                size: 1 << 20,
                number: 1,
                jobs: 1,
            },
        )
    }

    /// Bytes of `buf` that are zeros.
    fn zeros(buf: &[u8]) -> usize {
        buf.iter().filter(|&&b| b == 0).count()
    }

    #[test]
    fn a_compressible_share_is_zeros_and_the_rest_random() {
        let mut d = data(BufferOptions {
            compress_percentage: 60,
            ..BufferOptions::default()
        });
        assert!(d.refill, "fio refills compressible buffers");
        let mut buf = vec![0xffu8; 65536];
        d.fill(&mut buf, 4096);
        // Each 4 KiB: 40% random, 60% zeros.
        let zero_share = zeros(&buf) as f64 / buf.len() as f64;
        assert!((0.59..0.62).contains(&zero_share), "{zero_share}");
    }

    #[test]
    fn the_working_set_is_its_share_of_the_job_in_smallest_writes() {
        let mut options = JobOptions {
            bs: [4096; 3],
            buffers: BufferOptions {
                dedupe_percentage: 50,
                dedupe_working_set: true,
                dedupe_working_set_percentage: 10,
                ..BufferOptions::default()
            },
            ..JobOptions::default()
        };
        let place = JobPlace {
            size: 2 << 20,
            number: 1,
            jobs: 1,
        };
        // 10% of 2 MiB, in 4 KiB buffers, rounded down as fio rounds it.
        assert_eq!(WriteData::new(&options, place).working_set_len(), 51);
        options.buffers.dedupe_working_set = false;
        assert_eq!(WriteData::new(&options, place).working_set_len(), 0);
    }

    #[test]
    fn dedupe_repeats_earlier_buffers_in_its_share() {
        let mut d = data(BufferOptions {
            dedupe_percentage: 50,
            ..BufferOptions::default()
        });
        let mut seen = std::collections::HashSet::new();
        let mut repeats = 0;
        for _ in 0..400 {
            let mut buf = vec![0u8; 4096];
            d.fill(&mut buf, 4096);
            if !seen.insert(buf) {
                repeats += 1;
            }
        }
        assert!((150..250).contains(&repeats), "{repeats} of 400 repeat");
    }

    #[test]
    fn patterns_zeros_and_scrambles() {
        let mut d = data(BufferOptions {
            pattern: vec![0xde, 0xad],
            ..BufferOptions::default()
        });
        let mut buf = vec![0u8; 1024];
        d.fill(&mut buf, 1024);
        assert!(buf.chunks(2).all(|c| c == [0xde, 0xad]));
        WriteData::scramble(
            &mut buf,
            8192,
            SystemTime::UNIX_EPOCH + std::time::Duration::new(7, 3),
        );
        assert_eq!(&buf[512 + 48..512 + 56], &7u64.to_le_bytes());
        let line = ((3 ^ 8192) & 7) * 64;
        assert_eq!(
            &buf[512 + line..512 + line + 8],
            &(8192u64 + 512).to_le_bytes()
        );
        let mut z = data(BufferOptions {
            zero: true,
            zero_given: true,
            ..BufferOptions::default()
        });
        assert!(!z.scramble, "zero_buffers given: no scramble");
        let mut buf = vec![1u8; 512];
        z.fill(&mut buf, 512);
        assert_eq!(zeros(&buf), 512);
    }
}
