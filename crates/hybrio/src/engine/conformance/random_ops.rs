//! The suite's random part: a seeded sequence of mixed operations through
//! every engine, checked against a model of the file.

use super::*;
use crate::engine::inject::SplitMix64;

/// A tiny deterministic generator for the random operations (fault
/// injection's SplitMix64).
struct Draw(SplitMix64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0.next()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One operation of the random sequence.
#[derive(Debug, Clone, Copy)]
struct Planned {
    op: Op,
    offset: u64,
    len: usize,
}

/// What the model says each request returns, and what every engine must match.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Per operation: (result, FNV-1a hash of the bytes read).
    results: Vec<(i64, u64)>,
    /// The file's bytes at the end.
    file: Vec<u8>,
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// `count` operations over a file that starts `initial` bytes long: reads and
/// writes of 1 byte to 8 KiB at any offset (some across or past the end), and
/// an occasional fsync, fdatasync or trim (a hole punched, any length and offset).
fn plan_operations(count: usize, initial: u64) -> Vec<Planned> {
    let mut draw = Draw(SplitMix64(0x5EED));
    (0..count)
        .map(|_| {
            let kind = draw.below(100);
            let len = match draw.below(4) {
                0 => 1 + draw.below(64) as usize,
                1 => 4096,
                _ => 1 + draw.below(8192) as usize,
            };
            // Mostly inside the file, sometimes across its end or past it.
            let span = initial + initial / 4;
            let offset = if draw.below(2) == 0 {
                draw.below(span / 512) * 512
            } else {
                draw.below(span)
            };
            let op = match kind {
                0 => Op::Fsync,
                1 => Op::Fdatasync,
                2..=4 => Op::Trim,
                k if k < 55 => Op::Read,
                _ => Op::Write,
            };
            Planned { op, offset, len }
        })
        .collect()
}

/// What the file model says a planned operation returns; applies writes.
fn apply_to_model(model: &mut Vec<u8>, planned: &Planned) -> (i64, u64) {
    let start = planned.offset as usize;
    match planned.op {
        Op::Fsync | Op::Fdatasync => (0, 0),
        Op::Read => {
            let end = (start + planned.len).min(model.len());
            match model.get(start..end) {
                Some(bytes) if !bytes.is_empty() => (bytes.len() as i64, fnv(bytes)),
                _ => (0, 0),
            }
        }
        Op::Write => {
            let end = start + planned.len;
            if model.len() < end {
                model.resize(end, 0);
            }
            pattern(planned.offset ^ planned.len as u64, &mut model[start..end]);
            (planned.len as i64, 0)
        }
        Op::Trim => {
            // The hole reads as zeros; the size is kept.
            let end = (start + planned.len).min(model.len());
            if let Some(bytes) = model.get_mut(start..end) {
                bytes.fill(0);
            }
            (planned.len as i64, 0)
        }
        // The plan is of reads, writes, syncs and trims only (`plan_operations`).
        Op::Recv | Op::Send | Op::Allocate | Op::AllocateKeepSize | Op::Truncate => {
            (-i64::from(libc::EINVAL), 0)
        }
    }
}

/// Drives planned operations through an engine and records what each returned.
struct PlanDriver<'a> {
    engine: &'a mut dyn Engine,
    /// Byte ranges of the requests in flight, by index.
    in_flight: BTreeMap<u64, (u64, u64)>,
    results: Vec<(i64, u64)>,
    /// The file's size as the completed writes made it.
    size: u64,
    done: Vec<Completion>,
}

impl PlanDriver<'_> {
    /// Records the completions gathered in `done`.
    fn record(&mut self) {
        for completion in self.done.drain(..) {
            self.in_flight.remove(&completion.user_data);
            let hash = match (completion.op, completion.result) {
                (Op::Read, n) if n > 0 => fnv(&completion.buf.as_slice()[..n as usize]),
                _ => 0,
            };
            if completion.op == Op::Write && completion.result > 0 {
                self.size = self.size.max(completion.offset + completion.result as u64);
            }
            self.results[completion.user_data as usize] = (completion.result, hash);
        }
    }

    /// Commits, then waits for one completion, or for all of them.
    fn settle(&mut self, all: bool) {
        self.engine.commit().unwrap();
        let want = if all { self.in_flight.len() } else { 1 };
        let mut got = 0;
        while got < want {
            got += self.engine.reap(1, usize::MAX, &mut self.done).unwrap();
        }
        self.record();
    }
}

/// Runs the planned operations through `engine`, keeping as many in flight as
/// the pool allows, except that requests whose byte ranges overlap never are,
/// and an operation reaching past the end of the file (or a sync) is alone in
/// flight: the outcome is then the same whatever order the engine completes
/// them in.
fn run_planned(
    engine: &mut dyn Engine,
    pool: &BufPool,
    handle: FileHandle,
    plan: &[Planned],
    initial_len: u64,
) -> Vec<(i64, u64)> {
    let mut driver = PlanDriver {
        engine,
        in_flight: BTreeMap::new(),
        results: vec![(i64::MIN, 0); plan.len()],
        size: initial_len,
        done: Vec::new(),
    };
    for (index, planned) in plan.iter().enumerate() {
        let range = (planned.offset, planned.offset + planned.len as u64);
        let alone = !planned.op.moves_data() || range.1 > driver.size;
        loop {
            let overlaps = driver
                .in_flight
                .values()
                .any(|&(a, b)| a < range.1 && range.0 < b);
            let full = driver.in_flight.len() >= pool.count() - 1;
            if driver.in_flight.is_empty() || !(alone || overlaps || full) {
                break;
            }
            driver.settle(alone);
        }
        let tag = index as u64;
        let mut request = Some(match planned.op {
            Op::Read => Request::read(handle, planned.offset, take(pool, planned.len), tag),
            Op::Write => {
                let mut buf = take(pool, planned.len);
                pattern(planned.offset ^ planned.len as u64, buf.as_mut_slice());
                Request::write(handle, planned.offset, buf, tag)
            }
            Op::Trim => Request::trim(handle, planned.offset, planned.len as u64, tag),
            op => Request::sync(handle, op == Op::Fdatasync, tag),
        });
        driver.in_flight.insert(tag, range);
        while let Some(next) = request.take() {
            match driver.engine.queue(next) {
                QueueOutcome::Completed(completion) => driver.done.push(completion),
                QueueOutcome::Queued => {}
                QueueOutcome::Busy(back) => {
                    request = Some(back);
                    driver.in_flight.remove(&tag);
                    driver.settle(false);
                    driver.in_flight.insert(tag, range);
                }
            }
        }
        driver.record();
        if alone && !driver.in_flight.is_empty() {
            driver.settle(true);
        }
    }
    if !driver.in_flight.is_empty() {
        driver.settle(true);
    }
    driver.results
}

#[test]
fn random_mixed_operations_match_a_model_of_the_file() {
    const OPERATIONS: usize = 10_000;
    const INITIAL: usize = 256 * 1024;
    let plan = plan_operations(OPERATIONS, INITIAL as u64);
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "model-seed", INITIAL);
    let mut model = contents.clone();
    let expected = Outcome {
        results: plan.iter().map(|p| apply_to_model(&mut model, p)).collect(),
        file: model,
    };
    for flavour in io_flavours() {
        let pool = BufPool::new(9, 8192).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        fs::write(&path, &contents).unwrap();
        let handle = add(engine.as_mut(), &path, &read_write());
        let results = run_planned(engine.as_mut(), &pool, handle, &plan, INITIAL as u64);
        engine.remove_file(handle).unwrap();
        let outcome = Outcome {
            results,
            file: fs::read(&path).unwrap(),
        };
        if let Some(i) = (0..plan.len()).find(|&i| outcome.results[i] != expected.results[i]) {
            panic!(
                "{name}: operation {i} {:?} gave {:?}, the model {:?}",
                plan[i], outcome.results[i], expected.results[i]
            );
        }
        assert!(
            outcome.file == expected.file,
            "{name}: file contents differ"
        );
        assert_eq!(
            pool.available(),
            pool.count(),
            "{name}: buffers not returned"
        );
    }
}
