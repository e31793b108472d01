//! # hybrio
//!
//! One batched queue/commit/reap interface over every way Linux does file
//! and socket I/O, and an engine that picks among them per request.
//!
//! # Which engine
//!
//! | engine | what it is | pick it when |
//! |---|---|---|
//! | `adaptive` (the default) | each request inline or asynchronous (io_uring; libaio for some `O_DIRECT` files; the pool where io_uring is refused), whichever has cost less lately for requests like it | you do not know the workload, filesystem or device in advance: this one |
//! | `io_uring` | batched submission and reaping through one ring | you know requests wait on a device, at depth |
//! | `libaio` | Linux AIO, one `io_submit` per commit | `O_DIRECT` at depth on kernels where io_uring is off |
//! | `posixaio` | POSIX AIO as the C library does it: its threads, one request of a file at a time | measuring what a program written to `aio_*` gets (fio's `posixaio`) |
//! | `pool` | worker threads running the calls, growing and shrinking with the load | blocking calls at depth without io_uring |
//! | `psync` | `pread`/`pwrite` in the caller's thread | page-cache hits, depth 1 |
//! | `pvsync2` | `preadv2`/`pwritev2`, with per-request flags | as psync, with `RWF_HIPRI`, `RWF_NOWAIT`, uncached I/O |
//! | `sync` | `read`/`write` after `lseek` | fio's `sync`, for comparison |
//! | `null` | completes every request at once, touching nothing | measuring the caller's own cost |
//!
//! The adaptive engine learns per class of requests (file, operation,
//! size). Its first requests of a class try both ways; after that one in
//! 128 is timed, and now and then one goes the other way to keep that
//! price current ([`PathCounts`](engine::PathCounts) counts what this
//! cost). Jobs of 500-2,000 requests came out at 0.94-1.0 of the best
//! fixed engine's IOPS (docs/results.md, short jobs); a 300 MiB buffered
//! copy through the [`Driver`](driver::Driver) at depth 16, its files
//! [`Caching::Auto`](file::Caching::Auto), took 1.00 and 1.05x the best
//! fixed engine's time in the same round without a final fsync and 1.02
//! and 0.98x with one (medians of 15 rounds, two runs,
//! `scenarios/copy_engines.py`, 2026-11-29, once its source, cached, was
//! no longer read ahead of): 300 MiB stay cached, within what the page
//! cache takes without writing back. What it learned starts the next class of
//! the same kind, in this process, or across processes from a file
//! ([`AdaptiveMemory`](engine::AdaptiveMemory)).
//!
//! # A first program
//!
//! [`Driver`](driver::Driver) keeps requests in flight and hands their
//! completions back in submission order (or as they complete), the same
//! on every engine:
//!
//! ```no_run
//! use hybrio::{buf::BufPool, driver::{Driver, Order}, file::OpenOptions, request::Request};
//! use hybrio::engine::{self, EngineConfig, EngineKind};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let pool = BufPool::new(16, 4096)?;                    // 16 aligned 4 KiB buffers
//! let mut engine = engine::open(EngineKind::Adaptive, &EngineConfig::with_depth(16), Some(&pool))?;
//! let file = engine.open_file("data".as_ref(), &OpenOptions::default())?;
//! let mut blocks = (0..1000u64).map(|i| i * 7919 % 1000);
//! Driver::new(engine.as_mut(), Order::Submission).stream(
//!     &pool,
//!     |buf| blocks.next().map(|b| Request::read(file, b * 4096, buf, b)),
//!     |done| Ok::<(), Box<dyn std::error::Error>>(assert_eq!(done.outcome()?, 4096)),
//! )?;
//! # Ok(()) }
//! ```
//!
//! The engine interface under it ([`Engine`](engine::Engine): queue,
//! commit, reap) is for loops the driver does not fit; its docs say the
//! contract every engine keeps. `examples/` has a random-read loop, a
//! file copy and a UDP echo. Dropping an engine waits for what it has in flight (10 s at
//! most, then leaks it rather than free memory the kernel may still write).
//!
//! # Brief overview
//!
//! * A [`BufPool`](buf::BufPool) hands out 4096-aligned buffers ([`Buf`](buf::Buf)),
//!   usable for `O_DIRECT` and registrable with io_uring. A buffer *moves* into a
//!   [`Request`](request::Request) and comes back inside its
//!   [`Completion`](request::Completion), so an in-flight buffer can be neither
//!   touched nor freed.
//! * Files are added to an engine once and then named by a small
//!   [`FileHandle`](file::FileHandle), an index into an O(1) table. An engine
//!   that refuses a file hands it back, open ([`Error::into_refused_file`]).
//! * A file can be uncached ([`Engine::set_caching`](engine::Engine::set_caching),
//!   [`Caching`](file::Caching)): its reads and writes carry `RWF_DONTCACHE`
//!   (Linux 6.14) on pvsync2, io_uring, the pool and adaptive, so its pages
//!   leave the page cache once done, with buffered I/O's semantics otherwise.
//!   The filesystem is probed when it is set; the other engines, tmpfs,
//!   sockets and the emulated device refuse it in one line.
//!   [`Caching::Auto`](file::Caching::Auto) lets the adaptive engine choose:
//!   a file's writes go uncached once they stream sequentially past what one
//!   file should leave dirty (seeds/002: 10 GiB of 128 KiB writes ran 6x
//!   faster uncached than cached here), and stay cached otherwise, as reads
//!   do; a sequential read stream is read ahead of by a helper thread, so
//!   that the page cache's work runs on another core (not where its pages
//!   are cached already).
//! * A file's writes can be atomic ([`Engine::set_atomic_writes`](engine::Engine::set_atomic_writes)):
//!   each carries `RWF_ATOMIC` (Linux 6.11) on pvsync2, io_uring, libaio,
//!   the pool and adaptive, and lands whole or not at all across a crash.
//!   The file must be `O_DIRECT` on a filesystem or device that offers them
//!   ([`atomic_write_units`](file::atomic_write_units), `statx`): XFS does
//!   on any device from Linux 6.16. Each write must fit the units
//!   ([`AtomicWriteUnits::fits`](file::AtomicWriteUnits::fits)); the kernel
//!   answers any other with `-EINVAL`.
//! * Sockets (UDP, TCP, Unix) go into the same table
//!   ([`Engine::add_socket`](engine::Engine::add_socket)) for
//!   [`Request::recv`](request::Request::recv) and
//!   [`Request::send`](request::Request::send): `recv`/`send` in the
//!   synchronous engines and the pool's workers, `IORING_OP_RECV`/`SEND` with
//!   many outstanding in io_uring, and in the adaptive engine inline
//!   (`MSG_DONTWAIT`) while data is waiting, asynchronous from the first try
//!   that finds none until its asynchronous requests are back. Linux AIO has
//!   no socket commands and refuses them. A receive is whole at any length
//!   (one datagram); short sends of a stream are sent again for the rest.
//!   io_uring's reaps publish the completion queue's head once per batch
//!   ([`RingCounts`](engine::RingCounts), seeds/004). With
//!   [`EngineConfig::recv_multishot`](engine::EngineConfig::recv_multishot),
//!   io_uring receives through one standing multishot receive per socket into
//!   buffers the ring provides, and each receive request takes what arrived
//!   by copy, in order (at once when data was waiting); the standing
//!   receives take no room of the depth, and no datagram is cut short of a
//!   receive's length.
//! * An engine moves between threads (it is `Send`) but an io_uring ring
//!   stays with the thread that first commits (and from then on holds no
//!   descriptor, where the kernel allows:
//!   [`probe::ring_gives_descriptor_back`]), unless built with
//!   [`EngineConfig::any_thread`](engine::EngineConfig::any_thread), as the
//!   C API builds its engines.
//! * Requests on a file's space and size go through every engine too:
//!   [`Request::trim`](request::Request::trim) (a hole punched in a file, a
//!   `BLKDISCARD` on a block device), [`Request::allocate`](request::Request::allocate)
//!   (`fallocate`, growing the file or keeping its size) and
//!   [`Request::truncate`](request::Request::truncate). io_uring sends them
//!   as `IORING_OP_FALLOCATE`/`FTRUNCATE`; Linux AIO has no command for
//!   them, so libaio runs them inside `queue`, as it does a block device's
//!   discard for io_uring (whose fallocate on a device writes zeros).
//!   [`file::move_extents`] is ext4's online defragmentation for a file.
//! * A read or write may carry its own I/O priority
//!   ([`Request::ioprio`](request::Request::ioprio)), which io_uring and
//!   libaio send with it.
//! * [`Engine::queue`](engine::Engine::queue) either completes a request inline,
//!   queues it, or hands it back when the engine is full;
//!   [`Engine::commit`](engine::Engine::commit) submits everything queued in one
//!   call; [`Engine::reap`](engine::Engine::reap) collects completions in a batch.
//! * The adaptive engine learns per class of requests (file, operation, size)
//!   which path is cheaper, and what it learned starts the next class of the
//!   same kind: in this process by default, or from a file across processes
//!   ([`AdaptiveMemory`](engine::AdaptiveMemory)). How many requests it sent
//!   each way, and what exploring cost, are in
//!   [`Engine::counters`](engine::Engine::counters)
//!   ([`PathCounts`](engine::PathCounts)). Its asynchronous path is io_uring,
//!   and libaio for an `O_DIRECT` file that is empty when added and open for
//!   writing, on a filesystem that cannot start a direct write past a file's
//!   end without blocking (ext4, XFS: io_uring hands each such write to a
//!   kernel worker, one at a time; asked once per filesystem); from the
//!   first such file on, libaio takes every `O_DIRECT` file of the engine,
//!   so that they have one engine to wait on. A file added to it costs one
//!   descriptor, the caller's, as on every engine: the engines inside it
//!   share it.
//! * I/O errors never panic: they come back as a negative errno in
//!   [`Completion::result`](request::Completion::result). Short transfers are
//!   sent again for the rest and `EINTR`/`EAGAIN` retried, by each engine
//!   where its requests complete (in place, in the worker, or from the
//!   request's slot in the ring or the AIO context); a transfer an error
//!   cuts short after some bytes completes with those bytes, and the error is
//!   counted ([`EngineCounters::short_errors`](engine::EngineCounters::short_errors)).
//! * Any engine can be made to misbehave on purpose
//!   ([`engine::inject`]): fail, come back short or late, or, for a read,
//!   come back with one bit of its data flipped (`corrupt`), to test what
//!   sits above the kernel's answers: each engine injects the faults into
//!   its own requests, below its retry rule.
//! * [`placement`] pins the calling thread to CPUs, sets its nice value,
//!   its I/O priority and its NUMA memory policy: for engines' threads, or
//!   a benchmark's jobs.
//!
//! # What every engine promises
//!
//! The contract is in [`Engine`](engine::Engine)'s docs: a completion
//! comes back exactly once, from `queue` or from `reap`; `in_flight` is
//! the caller's count of requests taken and not handed back; `Busy` only
//! when that is at the depth; buffers return to their pool when dropped;
//! dropping an engine waits for its requests.
//! [`held()`](engine::Engine::held) counts the completions an engine holds
//! for a reap (only the adaptive engine holds any).
//!
//! A model test (`engine/model/`) drives the engines with random sequences and
//! engines whose every answer it draws, checking these after every step.
//!
//! ```no_run
//! use hybrio::{buf::BufPool, engine::{self, EngineConfig, EngineKind, QueueOutcome}};
//! use hybrio::{file::OpenOptions, request::Request};
//! # fn main() -> Result<(), hybrio::Error> {
//! let pool = BufPool::new(8, 4096)?;
//! let mut engine = engine::open(EngineKind::IoUring, &EngineConfig::with_depth(8), Some(&pool))?;
//! let handle = engine.open_file("/etc/hostname".as_ref(), &OpenOptions::default())?;
//! let buf = pool.take().expect("pool has free buffers");
//! match engine.queue(Request::read(handle, 0, buf, 1)) {
//!     QueueOutcome::Completed(done) => println!("read {} bytes inline", done.result),
//!     QueueOutcome::Queued => {
//!         engine.commit()?;
//!         let mut done = Vec::new();
//!         engine.reap(1, 1, &mut done)?;
//!         println!("read {} bytes", done[0].result);
//!     }
//!     QueueOutcome::Busy(_) => unreachable!("empty engine"),
//! }
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod blocking;
pub mod buf;
pub mod clock;
mod device;
pub mod driver;
pub mod engine;
mod error;
pub mod file;
pub mod interrupt;
pub mod placement;
pub mod probe;
pub mod request;
pub mod rusage;
pub mod socket;
mod sys;

pub use error::Error;

/// The READMEs' programs, compiled with the doc tests so that what a new
/// user copies from them builds as written.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadme;

/// See [`CrateReadme`]: the workspace's README.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct WorkspaceReadme;
