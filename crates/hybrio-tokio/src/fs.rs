//! Files, as `tokio::fs` has them, read and written at positions with
//! owned buffers, several requests at once on one file.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use hybrio::request::Request;

use crate::buf::{self, IoBuf, IoBufMut};
use crate::driver::{self, OnDone, Op};

mod cursor;
mod inner;
mod sync;

use inner::{Inline, InlineReads, Inner};
use sync::{SyncGroup, Turn, Waited};

/// A file open for positioned reads and writes from any task.
///
/// Reads are tried inline first where their class has been finding the
/// page cache (`preadv2(RWF_NOWAIT)` in the polling task: a hit is ready at
/// the first poll), and buffered writes where their class's writes have
/// been quick; the rest (reads of 256 KiB or more, `O_DIRECT` requests,
/// syncs and truncations among them) go to the process's io_uring engine
/// and wake the task when done. A `File` is one descriptor however many
/// tasks use it.
///
/// Dropping a future whose request is in the engine leaves its buffer with
/// the engine until the request completes: a read then fills memory no one
/// sees, and a write happens whole or, if it never reached the kernel, not
/// at all; either way nothing reports it.
#[derive(Debug)]
pub struct File {
    inner: Arc<Inner>,
    /// `AsyncRead`, `AsyncWrite` and `AsyncSeek`'s position and request
    /// (boxed: a `File` moves, and most never use it).
    cursor: Box<cursor::Cursor>,
}

/// How a file's requests went so far (each task's reads and writes alike).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads and writes that completed inline, in the polling task.
    pub inline: u64,
    /// Reads tried inline that would have waited on the device (each then
    /// went asynchronous as well), and writes that were slow inline.
    pub missed: u64,
    /// Requests that went to the engine.
    pub asynchronous: u64,
    /// Bytes asked of the kernel ahead of a stream of large reads.
    pub read_ahead: u64,
}

/// A failed open: the path, and the kernel's error (its `source`, with the
/// errno).
#[derive(Debug)]
struct OpenFailed {
    path: PathBuf,
    source: io::Error,
}

impl std::fmt::Display for OpenFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "open {}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for OpenFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Options for opening a file, as [`std::fs::OpenOptions`], plus `O_DIRECT`.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    std: std::fs::OpenOptions,
    direct: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions::new()
    }
}

impl OpenOptions {
    /// Nothing set: set at least `read` or `write`.
    pub fn new() -> OpenOptions {
        OpenOptions {
            std: std::fs::OpenOptions::new(),
            direct: false,
        }
    }
    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut Self {
        self.std.read(read);
        self
    }
    /// Open for writing.
    pub fn write(&mut self, write: bool) -> &mut Self {
        self.std.write(write);
        self
    }
    /// Open for appending.
    pub fn append(&mut self, append: bool) -> &mut Self {
        self.std.append(append);
        self
    }
    /// Create the file if it does not exist.
    pub fn create(&mut self, create: bool) -> &mut Self {
        self.std.create(create);
        self
    }
    /// Create the file, failing if it exists.
    pub fn create_new(&mut self, create_new: bool) -> &mut Self {
        self.std.create_new(create_new);
        self
    }
    /// Truncate the file to 0 bytes.
    pub fn truncate(&mut self, truncate: bool) -> &mut Self {
        self.std.truncate(truncate);
        self
    }
    /// Bypass the page cache (`O_DIRECT`): buffers, offsets and lengths
    /// must then be aligned as the device asks (hybrio's
    /// [`BufPool`](hybrio::buf::BufPool) buffers are), or requests fail with
    /// `EINVAL`.
    pub fn direct(&mut self, direct: bool) -> &mut Self {
        self.direct = direct;
        self
    }

    /// Opens `path` with these options.
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_path_buf();
        let mut std = self.std.clone();
        if self.direct {
            std.custom_flags(libc::O_DIRECT);
        }
        // Off the worker: a path lookup may wait on the device.
        crate::blocking::off_the_worker(move || {
            let file = std.open(&path).map_err(|source| {
                let kind = source.kind();
                io::Error::new(
                    kind,
                    OpenFailed {
                        path: path.clone(),
                        source,
                    },
                )
            })?;
            File::register(file, path)
        })
        .await?
    }
}

impl File {
    /// Opens `path` for reading.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path).await
    }

    /// Opens `path` for writing, created if missing and truncated if not.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .await
    }

    /// Options to open a file with.
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// A file from an open standard one (its descriptor, not a copy).
    pub fn from_std(file: std::fs::File) -> io::Result<File> {
        File::register(file, PathBuf::from("(a std::fs::File)"))
    }

    /// The standard file back, if no request of this file is in flight
    /// (requests of dropped futures may still be); otherwise this file.
    pub fn try_into_std(self) -> Result<std::fs::File, File> {
        let File { inner, cursor } = self;
        if cursor.is_busy() {
            return Err(File { inner, cursor });
        }
        match Arc::try_unwrap(inner) {
            Ok(inner) => {
                let inner = std::mem::ManuallyDrop::new(inner);
                match inner.driver.remove_file(inner.handle) {
                    Ok(file) => Ok(file),
                    Err(_) => Err(File {
                        inner: Arc::new(std::mem::ManuallyDrop::into_inner(inner)),
                        cursor,
                    }),
                }
            }
            Err(inner) => Err(File { inner, cursor }),
        }
    }

    fn register(file: std::fs::File, path: PathBuf) -> io::Result<File> {
        let driver = driver::driver()?;
        let fd = file.as_raw_fd();
        let inline = if !file.metadata()?.is_file() || crate::sys::is_direct(fd)? {
            InlineReads::Never
        } else if crate::sys::in_memory(fd)? {
            InlineReads::InMemory
        } else {
            InlineReads::Nowait
        };
        let handle = driver.add_file(file, path)?;
        Ok(File {
            inner: Arc::new(Inner::new(driver, handle, fd, inline)),
            cursor: Box::default(),
        })
    }

    /// Reads into `buf` (its whole length) from `offset`: the bytes read
    /// (fewer only at the end of the file), and the buffer.
    pub async fn read_at<B: IoBufMut + Unpin>(
        &self,
        mut buf: B,
        offset: u64,
    ) -> (io::Result<usize>, B) {
        let len = buf.io_len();
        if len == 0 {
            // As `pread` of no bytes answers (the engines refuse an empty request).
            return (Ok(0), buf);
        }
        let mut done = 0;
        if self.inner.may_read_inline_now(len) {
            match self.inner.read_inline(buf::bytes_mut(&mut buf), offset) {
                Inline::Done(result) => return (result, buf),
                Inline::Rest(read) => done = read,
            }
        }
        let rest = buf::lend_mut(&mut buf, done);
        let request = self.inner.read_request(offset + done as u64, rest, len);
        let (result, buf) = self.submit(request, buf).await;
        (result.map(|n| done + n), buf)
    }

    /// Writes `buf` (its whole length) at `offset`: the bytes written, and
    /// the buffer.
    pub async fn write_at<B: IoBuf + Unpin>(&self, buf: B, offset: u64) -> (io::Result<usize>, B) {
        let len = buf.io_len();
        if len == 0 {
            // As `pwrite` of no bytes answers (the engines refuse an empty request).
            return (Ok(0), buf);
        }
        let mut done = 0;
        if self.inner.may_write_inline_now(len) {
            match self.inner.write_inline(buf::bytes(&buf), offset) {
                Inline::Done(result) => return (result, buf),
                Inline::Rest(written) => done = written,
            }
        }
        let rest = buf::lend_from(&buf, done);
        let request = Request::write(self.inner.handle, offset + done as u64, rest, 0);
        let (result, buf) = self.submit(request, buf).await;
        (result.map(|n| done + n), buf)
    }

    /// Reads exactly `buf`'s length from `offset`; `UnexpectedEof` if the
    /// file ends first.
    pub async fn read_exact_at<B: IoBufMut + Unpin>(
        &self,
        buf: B,
        offset: u64,
    ) -> (io::Result<()>, B) {
        let len = buf.io_len();
        let (result, buf) = self.read_at(buf, offset).await;
        // The engine reads a short read's rest itself: short means the end.
        let result = match result {
            Ok(n) if n == len => Ok(()),
            Ok(n) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("read {n} of {len} bytes at offset {offset}: the file ends there"),
            )),
            Err(e) => Err(e),
        };
        (result, buf)
    }

    /// Writes all of `buf` at `offset`.
    pub async fn write_all_at<B: IoBuf + Unpin>(&self, buf: B, offset: u64) -> (io::Result<()>, B) {
        let len = buf.io_len();
        let (result, buf) = self.write_at(buf, offset).await;
        // The engine writes a short write's rest itself: short means it could not.
        let result = match result {
            Ok(n) if n == len => Ok(()),
            Ok(n) => Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("wrote {n} of {len} bytes at offset {offset}"),
            )),
            Err(e) => Err(e),
        };
        (result, buf)
    }

    /// Flushes the file's data and metadata to the device (`fsync`): all
    /// that was written to the file before the call. Tasks that call it
    /// while another task's sync is in flight share the next one (see
    /// [`sync_data`](Self::sync_data)).
    pub async fn sync_all(&self) -> io::Result<()> {
        self.sync(false).await
    }

    /// Flushes the file's data to the device (`fdatasync`): all that was
    /// written to the file before the call.
    ///
    /// Tasks that call it on the same file (the same `File`, or clones of
    /// an `Arc` of it) while another task's sync is in flight share the
    /// next sync, which starts when that one ends: one system call for all
    /// of them (group commit), as each would have waited for the journal's
    /// next commit anyway. A failed sync's error goes to every task it
    /// served.
    pub async fn sync_data(&self) -> io::Result<()> {
        self.sync(true).await
    }

    async fn sync(&self, data_only: bool) -> io::Result<()> {
        let group = self.inner.syncs(data_only);
        let number = match group.ask() {
            Turn::Lead(number) => number,
            Turn::Wait(needs) => {
                match std::future::poll_fn(|cx| group.poll_wait(needs, cx)).await {
                    Waited::Done(result) => return result.map_err(io::Error::from_raw_os_error),
                    Waited::Lead(number) => number,
                }
            }
        };
        // The sync's end reaches the waiting tasks when its completion is
        // reaped, whether or not this future is still polled.
        let ends = group.clone();
        let on_done: OnDone = Box::new(move |result| ends.end(number, SyncGroup::outcome(result)));
        let request = Request::sync(self.inner.handle, data_only, 0);
        self.submit_then(request, (), Some(on_done))
            .await
            .0
            .map(drop)
    }

    /// Truncates or extends the file to `size` bytes.
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        let request = Request::truncate(self.inner.handle, size, 0);
        self.submit(request, ()).await.0.map(drop)
    }

    /// The file's metadata (`fstat`, in the calling task: no device wait).
    pub async fn metadata(&self) -> io::Result<std::fs::Metadata> {
        crate::sys::metadata(self.inner.fd)
    }

    /// How this file's requests went so far.
    pub fn counts(&self) -> Counts {
        let counts = &self.inner.route.counts;
        Counts {
            inline: counts.inline.load(Ordering::Relaxed),
            missed: counts.missed.load(Ordering::Relaxed),
            asynchronous: counts.asynchronous.load(Ordering::Relaxed),
            read_ahead: counts.read_ahead.load(Ordering::Relaxed),
        }
    }

    /// The engine the asynchronous requests go to, as set up.
    pub fn engine_description(&self) -> &'static str {
        self.inner.driver.description()
    }

    /// Sends `request` through the engine, keeping `keep` (its buffer) and
    /// the file until it completes.
    async fn submit<K: Send + Unpin + 'static>(
        &self,
        request: Request,
        keep: K,
    ) -> (io::Result<usize>, K) {
        self.submit_then(request, keep, None).await
    }

    /// As [`submit`](Self::submit), and calls `on_done` with the result when
    /// the completion is reaped (see [`Op::on_done`]).
    async fn submit_then<K: Send + Unpin + 'static>(
        &self,
        request: Request,
        keep: K,
        on_done: Option<OnDone>,
    ) -> (io::Result<usize>, K) {
        self.inner.route.went_async();
        let mut op = Op::new(self.inner.driver, request, (keep, self.inner.clone()));
        if let Some(on_done) = on_done {
            op = op.on_done(on_done);
        }
        let (result, (keep, _file)) = op.await;
        (result, keep)
    }
}

/// The whole of the file at `path` (as `tokio::fs::read`).
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref();
    let file = File::open(path).await?;
    let len = file.metadata().await?.len();
    let len = usize::try_from(len).map_err(|_| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("{}: {len} bytes do not fit in memory here", path.display()),
        )
    })?;
    // One read of the length the file has (a short read is the end: the
    // engine reads a short read's rest itself), then on to the end, which
    // may come later (a file growing as it is read).
    let (result, mut data) = file.read_at(vec![0u8; len], 0).await;
    data.truncate(result?);
    if data.len() < len {
        return Ok(data);
    }
    loop {
        let at = data.len() as u64;
        let (result, more) = file.read_at(vec![0u8; 64 << 10], at).await;
        let n = result?;
        if n == 0 {
            return Ok(data);
        }
        data.extend_from_slice(&more[..n]);
    }
}

/// Writes `contents` to `path`, created or truncated (as `tokio::fs::write`).
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let file = File::create(path).await?;
    let (result, _) = file.write_all_at(contents.as_ref().to_vec(), 0).await;
    result
}

/// Copies the file at `from` to `to`, created or truncated: the bytes
/// copied (as `tokio::fs::copy`, without the permissions). Reads and writes
/// of 1 MiB, four in flight.
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    const CHUNK: u64 = 1 << 20;
    let source = File::open(from).await?;
    let len = source.metadata().await?.len();
    let target = File::create(to).await?;
    let (source, target) = (&source, &target);
    let mut chunks = (0..len.div_ceil(CHUNK)).map(|chunk| async move {
        let at = chunk * CHUNK;
        let size = CHUNK.min(len - at) as usize;
        let (read, mut data) = source.read_at(vec![0u8; size], at).await;
        let n = read?;
        data.truncate(n);
        let (written, _) = target.write_all_at(data, at).await;
        written.map(|()| n as u64)
    });
    let mut copied = 0;
    // Four chunks at a time, each its read then its write.
    loop {
        let batch: Vec<_> = chunks.by_ref().take(4).collect();
        if batch.is_empty() {
            return Ok(copied);
        }
        for result in join_all(batch).await {
            copied += result?;
        }
    }
}

/// Polls every future in turn until all are ready (a small `join_all`, so
/// that the crate needs no futures crate).
async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future ready"))
        .collect()
}

impl tokio::io::AsyncRead for File {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        dst: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let this = self.get_mut();
        this.cursor.poll_read(&this.inner, cx, dst)
    }
}

impl tokio::io::AsyncWrite for File {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        src: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.cursor.poll_write(&this.inner, cx, src)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        self.get_mut().cursor.poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        self.get_mut().cursor.poll_flush(cx)
    }
}

impl tokio::io::AsyncSeek for File {
    fn start_seek(self: std::pin::Pin<&mut Self>, position: io::SeekFrom) -> io::Result<()> {
        self.get_mut().cursor.start_seek(position)
    }

    fn poll_complete(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<u64>> {
        let this = self.get_mut();
        this.cursor.poll_complete(&this.inner, cx)
    }
}
