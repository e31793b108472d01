//! Random 4 KiB reads of a file at a depth, through the driver: the loop a
//! database's buffer manager or an object store's reader runs.
//!
//! ```text
//! cargo run --release -p hybrio --example random_reads -- [--engine NAME] [--depth N] [--reads N] FILE
//! ```
//!
//! Each block read is checked against the file's own bytes read with
//! `std::fs` (so a wrong offset or a mixed-up buffer cannot go unseen); it
//! prints the reads per second and, for the adaptive engine, which way its
//! requests went.

use std::process::ExitCode;
use std::time::Instant;

use hybrio::buf::BufPool;
use hybrio::driver::{Driver, Order};
use hybrio::engine::{self, EngineConfig, EngineKind};
use hybrio::file::OpenOptions;
use hybrio::request::Request;

const BLOCK: u64 = 4096;

fn run(args: &[String]) -> Result<String, Box<dyn std::error::Error>> {
    let mut engine_kind = EngineKind::Adaptive;
    let (mut depth, mut reads, mut path) = (16u32, 10_000u64, None);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--engine" => {
                let name = value()?;
                engine_kind =
                    EngineKind::from_name(name).ok_or(format!("unknown engine {name:?}"))?;
            }
            "--depth" => depth = value()?.parse()?,
            "--reads" => reads = value()?.parse()?,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}").into()),
            file => path = Some(file.to_owned()),
        }
    }
    let path = path.ok_or("usage: random_reads [--engine NAME] [--depth N] [--reads N] FILE")?;
    let contents = std::fs::read(&path).map_err(|e| format!("read {path}: {e}"))?;
    let blocks = contents.len() as u64 / BLOCK;
    if blocks == 0 {
        return Err(format!("{path} is shorter than one {BLOCK}-byte block").into());
    }

    let pool = BufPool::new(depth as usize, BLOCK as usize)?;
    let mut engine = engine::open(engine_kind, &EngineConfig::with_depth(depth), Some(&pool))?;
    let file = engine.open_file(path.as_ref(), &OpenOptions::default())?;
    // A fixed pseudo-random walk over the blocks (an LCG), so runs compare.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next_block = (0..reads).map(|_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % blocks
    });

    let started = Instant::now();
    Driver::new(engine.as_mut(), Order::Completion).stream(
        &pool,
        |buf| {
            next_block
                .next()
                .map(|b| Request::read(file, b * BLOCK, buf, b))
        },
        |done| {
            let at = (done.user_data * BLOCK) as usize;
            if done.outcome()? != BLOCK as usize
                || done.data() != &contents[at..at + BLOCK as usize]
            {
                return Err(format!("block {} read back wrong", done.user_data).into());
            }
            Ok::<(), Box<dyn std::error::Error>>(())
        },
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let mut line = format!(
        "{reads} random reads of {path} on {}: {:.0} reads/s, every block checked",
        engine.description(),
        reads as f64 / seconds
    );
    if let Some(paths) = engine.counters().paths {
        line += &format!(
            "; {} inline, {} asynchronous, {} switches",
            paths.inline, paths.asynchronous, paths.switches
        );
    }
    Ok(line)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("random_reads: {error}");
            ExitCode::from(1)
        }
    }
}
