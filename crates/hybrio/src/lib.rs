//! # hybrio
//!
//! One batched queue/commit/reap interface over every way Linux does file I/O:
//! plain synchronous calls (`sync`, `psync`), io_uring, and a `null` engine
//! that measures the caller's own overhead.
//!
//! # Brief overview
//!
//! * A [`BufPool`](buf::BufPool) hands out 4096-aligned buffers ([`Buf`](buf::Buf)),
//!   usable for `O_DIRECT` and registrable with io_uring. A buffer *moves* into a
//!   [`Request`](request::Request) and comes back inside its
//!   [`Completion`](request::Completion), so an in-flight buffer can be neither
//!   touched nor freed.
//! * Files are added to an engine once and then named by a small
//!   [`FileHandle`](file::FileHandle), an index into an O(1) table.
//! * [`Engine::queue`](engine::Engine::queue) either completes a request inline,
//!   queues it, or hands it back when the queue is full;
//!   [`Engine::commit`](engine::Engine::commit) submits everything queued in one
//!   call; [`Engine::reap`](engine::Engine::reap) collects completions in a batch.
//! * I/O errors never panic: they come back as a negative errno in
//!   [`Completion::result`](request::Completion::result).
//!
//! ```no_run
//! use hybrio::{buf::BufPool, engine::{self, EngineConfig, EngineKind, QueueOutcome}, request::Request};
//! # fn main() -> Result<(), hybrio::Error> {
//! let pool = BufPool::new(8, 4096)?;
//! let mut engine = engine::open(EngineKind::IoUring, &EngineConfig::with_depth(8), Some(&pool))?;
//! let file = std::fs::File::open("/etc/hostname").map_err(|e| hybrio::Error::io("open", "/etc/hostname", 0, e))?;
//! let handle = engine.add_file(file, "/etc/hostname".into())?;
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

pub mod buf;
pub mod clock;
mod device;
pub mod engine;
mod error;
pub mod file;
pub mod interrupt;
pub mod probe;
pub mod request;
pub mod rusage;
mod sys;

pub use error::Error;
