//! Copies a file through one hybrio engine, the way a storage program uses the
//! library for one short task: reads of `--bs` bytes, each feeding a write of
//! the same bytes at the same offset, `--depth` requests in flight.
//!
//! ```text
//! cargo run --release -p hybrio --example copy -- [--engine NAME] [--direct]
//!     [--caching auto|cached|uncached] [--depth N] [--bs BYTES] [--fsync] [--json] SRC DST
//! ```
//!
//! Both files are opened with [`Caching::Auto`] unless `--caching` says
//! otherwise: the adaptive engine then writes the copy uncached once it
//! streams past what one file should leave dirty in the page cache (a copy
//! larger than the machine's dirty limits would otherwise wait for the
//! kernel's flusher), and a small copy stays cached for whoever reads it
//! next; and it reads ahead of the source's stream from a thread of its own.
//! The other engines keep `auto` files cached.
//!
//! It prints the copy's time and, for the adaptive engine, which path its
//! requests took (`--json`: one JSON object per run, for scripts that compare
//! engines round by round). The engine is opened after the files, and its
//! time counts from the first request: what a caller that opens an engine for
//! one task pays, learning included.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;
use std::time::Instant;

use hybrio::buf::BufPool;
use hybrio::engine::{self, EngineConfig, EngineKind, QueueOutcome};
use hybrio::file::Caching;
use hybrio::request::{Completion, Op, Request};

/// `O_DIRECT` buffers and offsets must be aligned to the device's block; 4096
/// covers every device this runs on.
const DIRECT_ALIGN: u64 = 4096;

struct Options {
    engine: EngineKind,
    direct: bool,
    caching: Caching,
    depth: u32,
    bs: usize,
    fsync: bool,
    json: bool,
    src: String,
    dst: String,
}

fn usage() -> String {
    "usage: copy [--engine NAME] [--direct] [--caching auto|cached|uncached] [--depth N] [--bs BYTES] [--fsync] [--json] SRC DST"
        .to_owned()
}

fn parse_size(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let (digits, unit) = match lower.strip_suffix(['k', 'm']) {
        Some(digits) if lower.ends_with('k') => (digits, 1 << 10),
        Some(digits) => (digits, 1 << 20),
        None => (lower.as_str(), 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        engine: EngineKind::Adaptive,
        direct: false,
        caching: Caching::Auto,
        depth: 4,
        bs: 128 << 10,
        fsync: false,
        json: false,
        src: String::new(),
        dst: String::new(),
    };
    let mut paths = Vec::new();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--engine" => {
                let name = value("--engine")?;
                options.engine =
                    EngineKind::from_name(&name).ok_or(format!("unknown engine {name:?}"))?;
            }
            "--direct" => options.direct = true,
            "--caching" => {
                options.caching = match value("--caching")?.as_str() {
                    "auto" => Caching::Auto,
                    "cached" => Caching::Cached,
                    "uncached" => Caching::Uncached,
                    other => {
                        return Err(format!("--caching {other:?}: auto, cached or uncached"));
                    }
                }
            }
            "--depth" => {
                let text = value("--depth")?;
                options.depth = text
                    .parse()
                    .ok()
                    .filter(|&depth| depth > 0)
                    .ok_or(format!("--depth {text:?} is not a positive number"))?;
            }
            "--bs" => {
                let text = value("--bs")?;
                options.bs = parse_size(&text).filter(|&bs| bs > 0).ok_or(format!(
                    "--bs {text:?} is not a size (bytes, or with k or m)"
                ))?;
            }
            "--fsync" => options.fsync = true,
            "--json" => options.json = true,
            "-h" | "--help" => return Err(usage()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => paths.push(arg),
        }
    }
    let [src, dst] = <[String; 2]>::try_from(paths).map_err(|_| usage())?;
    if options.direct && !(options.bs as u64).is_multiple_of(DIRECT_ALIGN) {
        return Err(format!("--direct needs --bs a multiple of {DIRECT_ALIGN}"));
    }
    options.src = src;
    options.dst = dst;
    Ok(options)
}

fn open_files(options: &Options) -> Result<(File, File, u64), String> {
    let flags = if options.direct { libc::O_DIRECT } else { 0 };
    let src = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(&options.src)
        .map_err(|e| format!("open {}: {e}", options.src))?;
    let size = src
        .metadata()
        .map_err(|e| format!("stat {}: {e}", options.src))?
        .len();
    if options.direct && !size.is_multiple_of(DIRECT_ALIGN) {
        return Err(format!(
            "{} is {size} bytes: --direct copies only whole {DIRECT_ALIGN}-byte blocks",
            options.src
        ));
    }
    let dst = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(flags)
        .open(&options.dst)
        .map_err(|e| format!("open {}: {e}", options.dst))?;
    Ok((src, dst, size))
}

/// What one copy did.
struct Copied {
    bytes: u64,
    seconds: f64,
    paths: Option<engine::PathCounts>,
    description: String,
}

fn copy(options: &Options) -> Result<Copied, String> {
    let (src, dst, size) = open_files(options)?;
    let depth = options.depth as usize;
    let pool = BufPool::new(depth, options.bs).map_err(|e| e.to_string())?;
    let config = EngineConfig::with_depth(options.depth);
    let mut engine =
        engine::open(options.engine, &config, Some(&pool)).map_err(|e| e.to_string())?;
    let src = engine
        .add_file(src, options.src.clone().into())
        .map_err(|e| e.to_string())?;
    let dst = engine
        .add_file(dst, options.dst.clone().into())
        .map_err(|e| e.to_string())?;
    for file in [src, dst] {
        // Before any I/O: a filesystem or engine that refuses uncached I/O
        // says so in one line (auto is never refused).
        engine
            .set_caching(file, options.caching)
            .map_err(|e| e.to_string())?;
    }

    let start = Instant::now();
    let mut next_read = 0u64;
    let mut written = 0u64;
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    // Requests to offer, in order: writes of data read, then new reads.
    let mut writes: Vec<Request> = Vec::new();
    while written < size {
        let mut offered = false;
        while let Some(request) = writes.pop().or_else(|| {
            let buf = (next_read < size).then(|| pool.take()).flatten()?;
            Some(read_request(src, &mut next_read, size, buf))
        }) {
            offered = true;
            match engine.queue(request) {
                QueueOutcome::Queued => {}
                QueueOutcome::Completed(completion) => done.push(completion),
                QueueOutcome::Busy(request) => {
                    // Full: it goes again after the next reap.
                    if request.op == Op::Read {
                        next_read = request.offset;
                    } else {
                        writes.push(request);
                    }
                    break;
                }
            }
        }
        if offered {
            engine.commit().map_err(|e| e.to_string())?;
        }
        if done.is_empty() {
            let min = usize::from(engine.in_flight() > 0);
            engine
                .reap(min, depth, &mut done)
                .map_err(|e| e.to_string())?;
        }
        for completion in done.drain(..) {
            let path = if completion.file == src {
                &options.src
            } else {
                &options.dst
            };
            if let Some(error) = completion.error() {
                return Err(format!(
                    "{} {path} at offset {}: {error}",
                    completion.op.name(),
                    completion.offset
                ));
            }
            let mut buf = completion.buf;
            let moved = completion.result as usize;
            match completion.op {
                Op::Read if moved == 0 => {
                    return Err(format!(
                        "{path} ended at {} while {size} bytes were to be copied",
                        completion.offset
                    ));
                }
                Op::Read => {
                    buf.rewind();
                    buf.set_len(moved);
                    writes.push(Request::write(dst, completion.offset, buf, 0));
                }
                _ => written += moved as u64,
            }
        }
    }
    if options.fsync {
        sync(engine.as_mut(), dst).map_err(|e| format!("fsync {}: {e}", options.dst))?;
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Copied {
        bytes: written,
        seconds,
        paths: engine.counters().paths,
        description: engine.description(),
    })
}

fn read_request(
    src: hybrio::file::FileHandle,
    next_read: &mut u64,
    size: u64,
    mut buf: hybrio::buf::Buf,
) -> Request {
    let len = (buf.capacity() as u64).min(size - *next_read);
    buf.set_len(len as usize);
    let request = Request::read(src, *next_read, buf, 0);
    *next_read += len;
    request
}

fn sync(engine: &mut dyn engine::Engine, file: hybrio::file::FileHandle) -> Result<(), String> {
    let completion = match engine.queue(Request::sync(file, false, 0)) {
        QueueOutcome::Completed(completion) => completion,
        QueueOutcome::Queued => {
            engine.commit().map_err(|e| e.to_string())?;
            let mut done = Vec::new();
            engine.reap(1, 1, &mut done).map_err(|e| e.to_string())?;
            done.pop().ok_or("no completion")?
        }
        QueueOutcome::Busy(_) => return Err("the engine is full with nothing in flight".into()),
    };
    match completion.error() {
        Some(error) => Err(error.to_string()),
        None => Ok(()),
    }
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("copy: {message}");
            return ExitCode::from(1);
        }
    };
    let copied = match copy(&options) {
        Ok(copied) => copied,
        Err(message) => {
            eprintln!("copy: {message}");
            return ExitCode::from(1);
        }
    };
    let paths = copied.paths.unwrap_or_default();
    if options.json {
        println!(
            "{{\"engine\": \"{}\", \"direct\": {}, \"caching\": \"{:?}\", \"bytes\": {}, \"seconds\": {:.6}, \"inline\": {}, \"async\": {}, \"explored\": {}, \"switches\": {}, \"learning_ns\": {}, \"uncached\": {}, \"read_ahead\": {}}}",
            options.engine.name(),
            options.direct,
            options.caching,
            copied.bytes,
            copied.seconds,
            paths.inline,
            paths.asynchronous,
            paths.explored,
            paths.switches,
            paths.learning_ns,
            paths.uncached,
            paths.read_ahead,
        );
    } else {
        println!(
            "{}: {} bytes in {:.3} s ({:.0} MiB/s)",
            copied.description,
            copied.bytes,
            copied.seconds,
            copied.bytes as f64 / copied.seconds / f64::from(1 << 20),
        );
        if copied.paths.is_some() {
            println!(
                "paths: inline={} async={} explored={} switches={} learning={:.2} ms ({:.1}% of the copy); sent uncached by its choice: {}; read ahead: {} MiB",
                paths.inline,
                paths.asynchronous,
                paths.explored,
                paths.switches,
                paths.learning_ns as f64 / 1e6,
                paths.learning_ns as f64 / 1e7 / copied.seconds,
                paths.uncached,
                paths.read_ahead >> 20,
            );
        }
    }
    ExitCode::SUCCESS
}
