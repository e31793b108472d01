//! hybrio for async Rust: file I/O inside any tokio runtime (or any other
//! executor) at the cost of a page-cache hit, not a thread hop.
//!
//! `tokio::fs` sends every operation to `spawn_blocking`. Here a read
//! whose class of reads has been finding the page cache runs in the
//! polling task with `preadv2(RWF_NOWAIT)` and is ready at the first poll;
//! so does a buffered write whose class's writes have been quick (it
//! copies into the page cache). The rest go to the process's io_uring
//! engine (or worker pool) and wake the task when done: reads that would
//! wait on the device (the inline try then answers `EAGAIN` rather than
//! block the worker), reads of 256 KiB or more (straight to the kernel's
//! worker threads: a read that large sets off the kernel's readahead in the
//! thread that makes it; a stream of them has its next requests read ahead
//! by a thread of the crate's own), writes of classes that took long,
//! `O_DIRECT` requests, syncs and truncations.
//!
//! What bounds an inline write: a buffered `pwrite` that the kernel
//! throttles (too many dirty pages) or that waits for the inode's lock
//! blocks the worker for that long, once; the class's next 2 to 128 writes
//! then go to the engine (see the `route` module). Where the filesystem
//! takes `RWF_NOWAIT` for buffered writes, such a write answers `EAGAIN`
//! instead and goes to the engine at once; ext4 and tmpfs here do not.
//! Nothing is tuned; see [`fs::File`] and the design, with what it rests
//! on, in `docs/tokio-design.md`.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! let file = hybrio_tokio::fs::File::open("data.bin").await?;
//! let (result, buf) = file.read_at(vec![0u8; 4096], 0).await;
//! let n = result?;
//! println!("{n} bytes: {:?}", &buf[..n.min(16)]);
//! # Ok(())
//! # }
//! ```
//!
//! [`fs::File`] is also `tokio::io::AsyncRead`, `AsyncWrite` and
//! `AsyncSeek`, with `tokio::fs::File`'s meaning (a write's error comes back
//! at the latest at `flush`), so code written for `tokio::fs::File` runs
//! over it. Opening a file runs on a thread of its own (a path lookup may
//! read the disk), never on the runtime's worker. Where the kernel refuses io_uring
//! (Docker's default seccomp profile does), hybrio's worker pool takes the
//! asynchronous requests.

//! # How completions reach the task
//!
//! A request that goes asynchronous is committed at once, and its
//! completion is reaped by a task that hybrio-tokio starts in the reactor
//! of each runtime it is used in: the worker that waits for events wakes
//! the finished futures itself, and they run there, with no thread in
//! between. Futures polled outside any runtime, or in a runtime built
//! without an I/O driver (without `enable_io` or `enable_all`), are served
//! by hybrio-tokio's own thread instead, at one thread wake-up more each;
//! so are the requests of dropped futures once the last runtime has shut
//! down. tokio has no way to ask whether a runtime has an I/O driver other
//! than trying: in such a runtime, the first request prints tokio's panic
//! message ("IO is disabled"), caught, and a line saying so. Under
//! `panic = "abort"` the reactor is never tried, and the thread serves
//! every runtime. [`reaped`] counts the completions each way took.
//!
//! # Dropped futures and shutdown
//!
//! A future dropped while its request is in the engine (a `select!` that
//! went the other way, a timeout, a runtime shutting down) leaves the
//! request's buffer and file with the engine: the buffer is freed (a
//! hybrio `Buf` goes back to its pool) only when the kernel or the worker
//! is done with it. A dropped read then fills memory no one sees; a dropped
//! write happens whole or, if it never reached the kernel, not at all, and
//! nothing reports it. The engine and its thread live as long as the
//! process, so no runtime's shutdown frees memory the kernel may still
//! write.

mod ahead;
mod blocking;
pub mod buf;
mod driver;
pub mod fs;
mod route;
mod sys;

pub use buf::{IoBuf, IoBufMut};
pub use driver::{Reaped, reaped};
