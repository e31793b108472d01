//! Copies a file through one hybrio engine, the way a storage program uses the
//! library for one short task: reads of `--bs` bytes, each read's buffer
//! becoming the write of the same bytes at the same offset, `--depth`
//! requests in flight. The [`Driver`]'s `submit` and `next_completion` keep
//! them there, as the crate docs advise for a loop whose completions lead to
//! more requests; both files are opened by the engine (`open_file`), each
//! path given once.
//!
//! ```text
//! cargo run --release -p hybrio --example copy -- [--engine NAME] [--direct]
//!     [--caching auto|cached|uncached] [--depth N] [--bs BYTES] [--fsync] [--json] SRC DST
//! ```
//!
//! Both files are opened with [`Caching::Auto`] unless `--caching` says
//! otherwise: the adaptive engine then writes the copy cached while the
//! page cache takes it without writing back, and uncached from where the
//! machine's dirty pages would pass the kernel's background threshold (a
//! copy larger than the machine's dirty limits would otherwise wait for
//! the kernel's flusher); and it reads ahead of the source's stream from a
//! thread of its own.
//! The other engines keep `auto` files cached.
//!
//! It prints the copy's time and, for the adaptive engine, which path its
//! requests took (`--json`: one JSON object per run, for scripts that compare
//! engines round by round). Its time counts from the first request: what a
//! caller that opens an engine for one task pays, learning included.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use hybrio::buf::{Buf, BufPool};
use hybrio::driver::{Driver, Order};
use hybrio::engine::{self, EngineConfig, EngineKind};
use hybrio::file::{Caching, FileHandle, OpenOptions};
use hybrio::request::{Op, Request};

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

/// What one copy did.
struct Copied {
    bytes: u64,
    seconds: f64,
    paths: Option<engine::PathCounts>,
    description: String,
}

fn copy(options: &Options) -> Result<Copied, String> {
    let (src_path, dst_path) = (Path::new(&options.src), Path::new(&options.dst));
    let pool = BufPool::new(options.depth as usize, options.bs).map_err(|e| e.to_string())?;
    let config = EngineConfig::with_depth(options.depth);
    let mut engine =
        engine::open(options.engine, &config, Some(&pool)).map_err(|e| e.to_string())?;
    let reading = OpenOptions::new().read(true).direct(options.direct);
    let src = engine
        .open_file(src_path, &reading)
        .map_err(|e| e.to_string())?;
    let size = std::fs::metadata(src_path)
        .map_err(|e| format!("stat {}: {e}", options.src))?
        .len();
    if options.direct && !size.is_multiple_of(DIRECT_ALIGN) {
        return Err(format!(
            "{} is {size} bytes: --direct copies only whole {DIRECT_ALIGN}-byte blocks",
            options.src
        ));
    }
    let writing = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .direct(options.direct);
    let dst = engine
        .open_file(dst_path, &writing)
        .map_err(|e| e.to_string())?;
    for file in [src, dst] {
        // Before any I/O: a filesystem or engine that refuses uncached I/O
        // says so in one line (auto is never refused).
        engine
            .set_caching(file, options.caching)
            .map_err(|e| e.to_string())?;
    }

    let start = Instant::now();
    let mut driver = Driver::new(engine.as_mut(), Order::Completion);
    let mut next_read = 0u64;
    let mut written = 0u64;
    loop {
        // Every free buffer reads on; the driver waits for room itself.
        while next_read < size
            && let Some(buf) = pool.take()
        {
            driver
                .submit(read_request(src, &mut next_read, size, buf))
                .map_err(|e| e.to_string())?;
        }
        let Some(mut done) = driver.next_completion().map_err(|e| e.to_string())? else {
            break;
        };
        let path = if done.file == src { src_path } else { dst_path };
        // The error names the operation, the file's handle and the offset;
        // the path says which of the two files that is.
        let moved = done
            .outcome()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if done.op == Op::Write {
            written += moved as u64;
            continue;
        }
        if moved == 0 {
            return Err(format!(
                "{} ended at {} while {size} bytes were to be copied",
                options.src, done.offset
            ));
        }
        // The read's buffer becomes the write of the same bytes: it comes
        // back with its window as the read had it, so only its length (a
        // short read's) changes.
        let mut buf = done.take_buf();
        buf.set_len(moved);
        driver
            .submit(Request::write(dst, done.offset, buf, 0))
            .map_err(|e| e.to_string())?;
    }
    if written != size {
        return Err(format!(
            "{} changed size during the copy: {written} of {size} bytes copied",
            options.src
        ));
    }
    if options.fsync {
        driver
            .submit(Request::sync(dst, false, 0))
            .map_err(|e| e.to_string())?;
        if let Some(done) = driver.next_completion().map_err(|e| e.to_string())? {
            done.outcome()
                .map_err(|e| format!("{}: {e}", options.dst))?;
        }
    }
    drop(driver);
    let seconds = start.elapsed().as_secs_f64();
    Ok(Copied {
        bytes: written,
        seconds,
        paths: engine.counters().paths,
        description: engine.description(),
    })
}

/// The next read of the source: a buffer's worth, or what is left.
fn read_request(src: FileHandle, next_read: &mut u64, size: u64, mut buf: Buf) -> Request {
    let len = (buf.capacity() as u64).min(size - *next_read);
    buf.set_len(len as usize);
    let request = Request::read(src, *next_read, buf, 0);
    *next_read += len;
    request
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
