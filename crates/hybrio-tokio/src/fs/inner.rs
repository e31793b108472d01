//! What every task using a file shares: its descriptor in the engine,
//! how its reads and writes may run inline, and their routes; and the
//! inline reads and writes themselves.

use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hybrio::file::FileHandle;

use super::sync::SyncGroup;
use crate::ahead;
use crate::driver::Driver;
use crate::route::{Kind, Route, SLOW_WRITE};

/// A read at least this large is never tried inline: it goes to the kernel's
/// worker threads at once (`IOSQE_ASYNC`). Copying it costs the same in
/// either thread, but a read this large sets off the kernel's readahead on
/// nearly every call (twice its default window, 128 KiB), and that readahead
/// is allocated and submitted in the calling thread. On a cold 4 GiB stream
/// in 1 MiB reads, inline tries stalled the worker up to 42 ms, 11-22 ms
/// at p99.9; sent to the kernel's workers, no call stalled it, for 0.87-1.00
/// of the tries' rate (docs/tokio-design.md).
pub(crate) const LARGE_READ: usize = 256 << 10;

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) driver: &'static Driver,
    pub(crate) handle: FileHandle,
    /// The engine's descriptor of the file, which it holds until `Inner`
    /// drops: inline reads use it too.
    pub(crate) fd: RawFd,
    /// How reads may be tried inline.
    inline: InlineReads,
    /// The kernel refused `RWF_NOWAIT` for the file's reads: no read is
    /// tried inline any more.
    nowait_refused: AtomicBool,
    /// The kernel refused `RWF_NOWAIT` for the file's writes (ext4's and
    /// tmpfs's buffered writes here): inline writes are plain `pwrite`s.
    nowait_writes_refused: AtomicBool,
    pub(crate) route: Route,
    /// Where its large reads have been going, to read ahead of a stream.
    stream: ahead::Stream,
    /// Its syncs: data only, and data and metadata.
    syncs: [Arc<SyncGroup>; 2],
}

/// How a file's reads may be tried inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InlineReads {
    /// `preadv2(RWF_NOWAIT)`: a regular file on a device, without `O_DIRECT`.
    Nowait,
    /// `pread`: a regular file in memory only (tmpfs, which refuses
    /// `RWF_NOWAIT`, and whose reads never wait on a device).
    InMemory,
    /// Never: an `O_DIRECT` file or a device (the read would wait for the
    /// device even with `RWF_NOWAIT`), a pipe (no offsets to read at).
    Never,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Every request of the file is done: futures and the slots of
        // dropped ones hold this `Inner` until then. A failure here leaves
        // the descriptor with the engine; nothing else can be done.
        let _ = self.driver.remove_file(self.handle);
    }
}

impl Inner {
    pub(crate) fn new(
        driver: &'static Driver,
        handle: FileHandle,
        fd: RawFd,
        inline: InlineReads,
    ) -> Inner {
        Inner {
            driver,
            handle,
            fd,
            inline,
            nowait_refused: AtomicBool::new(false),
            nowait_writes_refused: AtomicBool::new(false),
            route: Route::default(),
            stream: ahead::Stream::default(),
            syncs: Default::default(),
        }
    }

    /// The file's syncs of one kind: data only (`fdatasync`), or data and
    /// metadata (`fsync`).
    pub(crate) fn syncs(&self, data_only: bool) -> &Arc<SyncGroup> {
        &self.syncs[usize::from(!data_only)]
    }

    /// Whether a read of `len` bytes may be tried inline.
    pub(crate) fn may_read_inline_now(&self, len: usize) -> bool {
        len < LARGE_READ && self.may_read_inline() && self.route.try_inline(Kind::Read, len)
    }

    /// The engine's request for a read of `len` bytes at `offset` into
    /// `buf`: a large one goes to the kernel's workers at once (see
    /// [`LARGE_READ`]) and, when it continues a stream, has the stream's next
    /// requests read ahead (see [`crate::ahead`]).
    pub(crate) fn read_request(
        self: &Arc<Self>,
        offset: u64,
        buf: hybrio::buf::Buf,
        len: usize,
    ) -> hybrio::request::Request {
        let request = hybrio::request::Request::read(self.handle, offset, buf, 0);
        if len < LARGE_READ {
            return request;
        }
        if let Some((from, bytes)) = self.stream.read(offset, len as u64) {
            ahead::ask(self.fd, from, bytes, Box::new(self.clone()));
            let asked = &self.route.counts.read_ahead;
            asked.fetch_add(bytes, Ordering::Relaxed);
        }
        request.to_kernel_workers()
    }

    /// Whether a write of `len` bytes may be tried inline: to a regular
    /// file without `O_DIRECT` (whose writes wait for the device), of a
    /// class whose writes have been quick.
    pub(crate) fn may_write_inline_now(&self, len: usize) -> bool {
        self.inline != InlineReads::Never && self.route.try_inline(Kind::Write, len)
    }

    /// Writes `bytes` at `offset` in this task, into the page cache: done
    /// (all of them, or an error), or the bytes written before the rest was
    /// left to the engine (the filesystem answered `EAGAIN` to
    /// `RWF_NOWAIT`, or wrote part). A write that took long sends its class's
    /// next writes to the engine.
    pub(crate) fn write_inline(&self, bytes: &[u8], offset: u64) -> Inline {
        let len = bytes.len();
        let started = std::time::Instant::now();
        let mut done = 0;
        while done < len {
            let at = offset + done as u64;
            let nowait = !self.nowait_writes_refused.load(Ordering::Relaxed);
            let written = if nowait {
                crate::sys::write_nowait(self.fd, &bytes[done..], at)
            } else {
                crate::sys::write(self.fd, &bytes[done..], at)
            };
            match written {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if nowait && e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                    self.nowait_writes_refused.store(true, Ordering::Relaxed);
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    self.route.miss(Kind::Write, len);
                    return Inline::Rest(done);
                }
                Err(e) => return Inline::Done(Err(e)),
            }
        }
        if done < len {
            return Inline::Rest(done);
        }
        if started.elapsed() > SLOW_WRITE {
            self.route.miss(Kind::Write, len);
            self.route.counts.inline.fetch_add(1, Ordering::Relaxed);
        } else {
            self.route.hit(Kind::Write, len);
        }
        Inline::Done(Ok(done))
    }

    pub(crate) fn may_read_inline(&self) -> bool {
        match self.inline {
            InlineReads::Never => false,
            InlineReads::InMemory => true,
            InlineReads::Nowait => !self.nowait_refused.load(Ordering::Relaxed),
        }
    }

    /// Reads `bytes` at `offset` in this task, as far as the page cache has
    /// them: done (all of them, up to the end of the file, or an error), or
    /// the bytes read before the rest would have waited on the device.
    pub(crate) fn read_inline(&self, bytes: &mut [u8], offset: u64) -> Inline {
        let route = &self.route;
        let len = bytes.len();
        let mut done = 0;
        // Each turn ends, or moves on by at least a byte.
        while done < len {
            let at = offset + done as u64;
            let read = match self.inline {
                InlineReads::InMemory => crate::sys::read(self.fd, &mut bytes[done..], at),
                _ => crate::sys::read_nowait(self.fd, &mut bytes[done..], at),
            };
            match read {
                // The end of the file.
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    route.miss(Kind::Read, len);
                    return Inline::Rest(done);
                }
                // RWF_NOWAIT refused for this file (an old kernel, a
                // filesystem that cannot): its reads go to the engine.
                Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                    self.nowait_refused.store(true, Ordering::Relaxed);
                    return Inline::Rest(done);
                }
                Err(e) => return Inline::Done(Err(e)),
            }
        }
        route.hit(Kind::Read, len);
        Inline::Done(Ok(done))
    }
}

/// What a read tried inline came to.
pub(crate) enum Inline {
    Done(io::Result<usize>),
    /// These many bytes were read; the rest would wait on the device.
    Rest(usize),
}
