//! Aligned buffers for `O_DIRECT` and io_uring fixed buffers.
//!
//! A [`BufPool`] is one contiguous, zeroed, 4096-aligned arena cut into
//! equal slots. Being one arena, it can be registered with io_uring as a
//! single iovec. A [`Buf`] owns one slot exclusively and keeps the arena
//! alive, so a buffer that is still inside an engine (or a completion) stays
//! valid after every [`BufPool`] handle is gone.
//!
//! Taking and returning a slot locks a mutex: buffers are meant to be taken
//! once and then reused request after request, not taken per I/O.

use std::alloc::{self, Layout};
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Error;

/// Alignment of the arena and of every buffer: a page, which satisfies
/// `O_DIRECT` on every filesystem and block device.
pub const ALIGN: usize = 4096;

/// Source of [`BufPool::id`]; starts at 1 so that 0 never names a pool.
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

/// The shared allocation behind a pool and its buffers.
struct Arena {
    base: NonNull<u8>,
    layout: Layout,
    buf_size: usize,
    count: usize,
    id: u64,
    /// Free slot indices; popped from the end, so the lowest slots go first.
    free: Mutex<Vec<u32>>,
}

// SAFETY: `Arena` owns its allocation; the raw pointer is only a handle to it.
// Every slot is handed to at most one `Buf` at a time (the free list is behind
// a mutex), so sending the arena between threads moves no unsynchronised access.
unsafe impl Send for Arena {}
// SAFETY: shared access to an `Arena` touches only immutable fields and the
// mutex-protected free list; slot memory is reached only through the `Buf`
// that exclusively owns the slot.
unsafe impl Sync for Arena {}

impl Arena {
    fn free_list(&self) -> MutexGuard<'_, Vec<u32>> {
        // A panic while holding the lock cannot leave the Vec half-updated
        // (push and pop are the only operations), so poisoning is ignored.
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: `base` was returned by `alloc_zeroed(self.layout)` in
        // `BufPool::new` and is freed only here, once, when the last `Arc`
        // (pool handle or `Buf`) is gone, so no slot is still in use.
        unsafe { alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

/// A pool of equal, 4096-aligned buffers carved from one zeroed arena.
///
/// Cloning is cheap and yields another handle to the same pool.
#[derive(Clone)]
pub struct BufPool {
    arena: Arc<Arena>,
}

impl BufPool {
    /// Makes `count` buffers of `size` bytes each, `size` rounded up to a
    /// multiple of 4096.
    ///
    /// Fails with [`Error::BufPool`] when `count` or `size` is 0, when
    /// `count` does not fit in a `u32`, when the total overflows, or when
    /// the allocation fails.
    pub fn new(count: usize, size: usize) -> Result<BufPool, Error> {
        let fail = |reason: &str| Error::BufPool {
            count,
            size,
            reason: reason.to_owned(),
        };
        if count == 0 {
            return Err(fail("a pool needs at least one buffer"));
        }
        if size == 0 {
            return Err(fail("buffers must not be empty"));
        }
        if u32::try_from(count).is_err() {
            return Err(fail("more buffers than a u32 can index"));
        }
        let buf_size = size
            .checked_next_multiple_of(ALIGN)
            .ok_or_else(|| fail("buffer size overflows when rounded up to 4096"))?;
        let total = buf_size
            .checked_mul(count)
            .ok_or_else(|| fail("total size overflows usize"))?;
        let layout = Layout::from_size_align(total, ALIGN)
            .map_err(|_| fail("total size exceeds isize::MAX"))?;
        // SAFETY: `layout` has a non-zero size (count and size are both >= 1).
        let base = unsafe { alloc::alloc_zeroed(layout) };
        let base = NonNull::new(base)
            .ok_or_else(|| fail(&format!("allocation of {total} bytes failed")))?;
        let free = (0..count as u32).rev().collect();
        let id = NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed);
        Ok(BufPool {
            arena: Arc::new(Arena {
                base,
                layout,
                buf_size,
                count,
                id,
                free: Mutex::new(free),
            }),
        })
    }

    /// A free buffer, its length set to its capacity; `None` when all are taken.
    pub fn take(&self) -> Option<Buf> {
        let index = self.arena.free_list().pop()?;
        let offset = index as usize * self.arena.buf_size;
        // SAFETY: `index < count`, so `offset + buf_size <= count * buf_size`,
        // the size of the allocation: the result stays inside it.
        let ptr = unsafe { self.arena.base.add(offset) };
        Some(Buf {
            arena: Some(Arc::clone(&self.arena)),
            ptr,
            index,
            capacity: self.arena.buf_size,
            start: 0,
            end: self.arena.buf_size,
        })
    }

    /// Size of each buffer in bytes (the requested size rounded up to 4096).
    pub fn buffer_size(&self) -> usize {
        self.arena.buf_size
    }

    /// Number of buffers in the pool, taken or free.
    pub fn count(&self) -> usize {
        self.arena.count
    }

    /// Number of buffers not currently taken.
    pub fn available(&self) -> usize {
        self.arena.free_list().len()
    }

    /// A number unique to this pool within the process (shared by its clones).
    pub fn id(&self) -> u64 {
        self.arena.id
    }

    /// Start of the arena, for registering it with the kernel.
    pub(crate) fn arena_ptr(&self) -> *mut u8 {
        self.arena.base.as_ptr()
    }

    /// Length of the arena in bytes (`count * buffer_size`).
    pub(crate) fn arena_len(&self) -> usize {
        self.arena.layout.size()
    }
}

impl fmt::Debug for BufPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufPool")
            .field("id", &self.arena.id)
            .field("count", &self.arena.count)
            .field("buffer_size", &self.arena.buf_size)
            .field("available", &self.available())
            .finish()
    }
}

/// One buffer of a [`BufPool`], owned exclusively; returns to the pool when
/// dropped. Or a caller's own memory ([`Buf::from_raw_parts`]: a C program's
/// buffers), which stays the caller's and is left alone when dropped.
///
/// Its length (the bytes a request reads or writes) can be set anywhere from 0
/// to its capacity. After a short transfer, [`Buf::advance`] moves the start
/// of the window past the bytes already done, so that the same request can be
/// sent again for the rest; [`Buf::rewind`] restores the whole view.
pub struct Buf {
    /// The pool's arena; `None` for a caller's own memory.
    arena: Option<Arc<Arena>>,
    ptr: NonNull<u8>,
    index: u32,
    capacity: usize,
    /// Start of the window: bytes before it were transferred already.
    start: usize,
    /// End of the window.
    end: usize,
}

// SAFETY: a `Buf` is the only owner of its slot (or, from
// `Buf::from_raw_parts`, the only user of the caller's memory, as its caller
// promised), so moving it to another thread moves all access to that memory
// with it; a pool's arena is kept alive by the `Arc` and is itself `Send + Sync`.
unsafe impl Send for Buf {}
// SAFETY: through `&Buf` the slot can only be read (`as_slice`); mutation
// needs `&mut Buf`, so shared references never race with a writer.
unsafe impl Sync for Buf {}

impl Buf {
    /// A buffer over the caller's own `len` bytes at `ptr`, for callers
    /// that bring their own memory (the C API's). It is not a pool's: its
    /// [`pool_id`](Buf::pool_id) is 0, io_uring never reads it as a
    /// registered buffer, and dropping it leaves the memory alone. For
    /// `O_DIRECT`, `ptr` and `len` must be aligned as the file needs (the
    /// kernel answers `EINVAL` otherwise).
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads and writes of `len` bytes, and nothing
    /// else may read, write or free that memory until this `Buf` (and any
    /// request or completion carrying it) is dropped: an engine hands it to
    /// the kernel or a worker thread, which may write into it at any time
    /// until its completion comes back.
    pub unsafe fn from_raw_parts(ptr: NonNull<u8>, len: usize) -> Buf {
        Buf {
            arena: None,
            ptr,
            index: u32::MAX,
            capacity: len,
            start: 0,
            end: len,
        }
    }

    /// A buffer of no bytes over no memory: what the completion of a sync,
    /// a trim, an allocation or a truncation carries, and what
    /// [`Completion::take_buf`](crate::request::Completion::take_buf)
    /// leaves behind. Dropping it returns nothing to any pool.
    pub const fn empty() -> Buf {
        Buf {
            arena: None,
            ptr: NonNull::dangling(),
            index: u32::MAX,
            capacity: 0,
            start: 0,
            end: 0,
        }
    }

    /// Where the buffer starts (its first byte, whatever the window; for
    /// the caller's memory, the pointer it gave): the same for no two
    /// buffers a request can carry at once.
    pub fn base_addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Bytes a request will transfer: the window from [`Buf::start`].
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when `len() == 0`.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Bytes of the buffer before the window (0 unless [`Buf::advance`] moved it).
    pub fn start(&self) -> usize {
        self.start
    }

    /// Moves the start of the window `n` bytes on: the next request with this
    /// buffer transfers only the rest.
    ///
    /// # Panics
    ///
    /// If `n > self.len()`.
    pub fn advance(&mut self, n: usize) {
        assert!(
            n <= self.len(),
            "Buf::advance({n}) beyond the window of {}",
            self.len()
        );
        self.start += n;
    }

    /// Moves the start of the window back to the start of the buffer, after
    /// [`advance`](Buf::advance): for a caller that sends the rest of a
    /// short transfer itself and then wants the whole buffer again. A
    /// completion hands its buffer back with the window its request had
    /// (the engines' own resending of short transfers undone), so a read's
    /// buffer becomes a write with [`set_len`](Buf::set_len) alone.
    pub fn rewind(&mut self) {
        self.start = 0;
    }

    /// The buffer's full size (the pool's buffer size, or the caller's length).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Sets the number of bytes a request will transfer (the window's length).
    ///
    /// # Panics
    ///
    /// If `start() + len > self.capacity()`.
    #[inline]
    pub fn set_len(&mut self, len: usize) {
        if self.start + len > self.capacity() {
            self.set_len_failed(len);
        }
        self.end = self.start + len;
    }

    #[cold]
    #[inline(never)]
    fn set_len_failed(&self, len: usize) -> ! {
        panic!(
            "Buf::set_len({len}) from {} exceeds capacity {}",
            self.start,
            self.capacity()
        );
    }

    /// The window's `len()` bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points at `capacity()` bytes inside the live arena
        // (held by `self.arena`), zero-initialised at allocation and owned by
        // this `Buf` alone, or at the caller's memory that `from_raw_parts`'s
        // caller promised valid and ours alone; `start <= end <= capacity()`. The shared borrow of
        // `self` prevents mutation through `as_mut_slice` while the slice lives.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len()) }
    }

    /// The window's `len()` bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len();
        // SAFETY: as in `as_slice`; the exclusive borrow of `self` makes this
        // the only reference to the slot's bytes while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), len) }
    }

    /// The slot index inside its pool (`u32::MAX` for the caller's memory).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The [`BufPool::id`] of the pool it came from; 0 (no pool's) for the
    /// caller's memory.
    pub fn pool_id(&self) -> u64 {
        self.arena.as_ref().map_or(0, |arena| arena.id)
    }

    /// Start of the window, for handing to the kernel.
    pub(crate) fn as_ptr(&self) -> *const u8 {
        // SAFETY: `start <= capacity()`, so the result stays inside (or one
        // past the end of) this buffer's slot of the arena.
        unsafe { self.ptr.as_ptr().add(self.start) }
    }

    /// Start of the window, for the kernel to write into.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: as in `as_ptr`.
        unsafe { self.ptr.as_ptr().add(self.start) }
    }
}

impl Default for Buf {
    /// [`Buf::empty`].
    fn default() -> Buf {
        Buf::empty()
    }
}

impl Drop for Buf {
    // Inline, so that the caller's own memory (no arena) costs one test:
    // the C API drops one such buffer a request.
    #[inline]
    fn drop(&mut self) {
        if let Some(arena) = self.arena.take() {
            give_back(arena, self.index);
        }
    }
}

/// Returns slot `index` to `arena`'s free list.
#[inline(never)]
fn give_back(arena: Arc<Arena>, index: u32) {
    arena.free_list().push(index);
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buf")
            .field("pool_id", &self.pool_id())
            .field("index", &self.index)
            .field("start", &self.start)
            .field("end", &self.end)
            .field("capacity", &self.capacity)
            .finish()
    }
}

#[cfg(test)]
/// Tests: the caller's own memory, as a C program brings it.
pub(crate) mod caller {
    use super::*;

    /// Tests: page-aligned memory of the caller's own, freed when dropped, for
    /// requests over [`Buf::from_raw_parts`].
    pub(crate) struct Caller {
        ptr: NonNull<u8>,
        layout: Layout,
    }

    impl Caller {
        pub(crate) fn new(len: usize) -> Caller {
            let layout = Layout::from_size_align(len, ALIGN).unwrap();
            // SAFETY: `len` is not 0 in these tests.
            let ptr = NonNull::new(unsafe { alloc::alloc_zeroed(layout) }).unwrap();
            Caller { ptr, layout }
        }

        pub(crate) fn buf(&self) -> Buf {
            // SAFETY: the memory lives until `self` drops, after every
            // request using it completed (each test reaps them all first);
            // only those requests' engines touch it meanwhile (writes that
            // share it only read it).
            unsafe { Buf::from_raw_parts(self.ptr, self.layout.size()) }
        }

        pub(crate) fn bytes(&self) -> &[u8] {
            // SAFETY: as in `buf`; no request is in flight when it is read.
            unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
        }
    }

    impl Drop for Caller {
        fn drop(&mut self) {
            // SAFETY: allocated in `new` with this layout, freed once.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::caller::Caller;
    use super::*;

    #[test]
    fn every_buffer_is_page_aligned_and_sized_up() {
        let pool = BufPool::new(5, 1000).unwrap();
        assert_eq!(pool.buffer_size(), 4096);
        assert_eq!(pool.count(), 5);
        assert_eq!(pool.arena_len(), 5 * 4096);
        assert_eq!(pool.arena_ptr() as usize % ALIGN, 0);
        let bufs: Vec<Buf> = std::iter::from_fn(|| pool.take()).collect();
        assert_eq!(bufs.len(), 5);
        for buf in &bufs {
            assert_eq!(
                buf.as_ptr() as usize % ALIGN,
                0,
                "slot {} misaligned",
                buf.index()
            );
            assert_eq!(buf.len(), 4096);
            assert_eq!(buf.capacity(), 4096);
            assert!(
                buf.as_slice().iter().all(|&b| b == 0),
                "arena must start zeroed"
            );
        }
    }

    #[test]
    fn take_until_none_then_drop_returns_the_slot() {
        let pool = BufPool::new(3, 4096).unwrap();
        let a = pool.take().unwrap();
        let b = pool.take().unwrap();
        let c = pool.take().unwrap();
        assert_eq!(
            (a.index(), b.index(), c.index()),
            (0, 1, 2),
            "lowest slots first"
        );
        assert!(pool.take().is_none());
        assert_eq!(pool.available(), 0);
        let b_index = b.index();
        drop(b);
        assert_eq!(pool.available(), 1);
        let again = pool.take().unwrap();
        assert_eq!(again.index(), b_index);
        assert!(pool.take().is_none());
    }

    #[test]
    fn writes_stay_inside_their_buffer() {
        let pool = BufPool::new(3, 8192).unwrap();
        let mut bufs: Vec<Buf> = std::iter::from_fn(|| pool.take()).collect();
        bufs[1].as_mut_slice().fill(0xA5);
        assert!(bufs[0].as_slice().iter().all(|&b| b == 0));
        assert!(bufs[2].as_slice().iter().all(|&b| b == 0));
        assert!(bufs[1].as_slice().iter().all(|&b| b == 0xA5));
    }

    #[test]
    fn set_len_limits_the_slices() {
        let pool = BufPool::new(1, 4096).unwrap();
        let mut buf = pool.take().unwrap();
        buf.set_len(10);
        assert_eq!(buf.as_mut_slice().len(), 10);
        assert_eq!(buf.as_slice().len(), 10);
        buf.set_len(0);
        assert!(buf.is_empty());
        buf.set_len(4096);
        assert_eq!(buf.len(), 4096);
    }

    #[test]
    #[should_panic(expected = "exceeds capacity")]
    fn set_len_beyond_capacity_panics() {
        let pool = BufPool::new(1, 4096).unwrap();
        pool.take().unwrap().set_len(4097);
    }

    #[test]
    fn buf_outlives_its_pool_handle() {
        let pool = BufPool::new(2, 4096).unwrap();
        let id = pool.id();
        let mut buf = pool.take().unwrap();
        drop(pool);
        buf.as_mut_slice().fill(7);
        assert!(buf.as_slice().iter().all(|&b| b == 7));
        assert_eq!(buf.pool_id(), id);
        let moved = std::thread::spawn(move || buf.as_slice()[4095])
            .join()
            .unwrap();
        assert_eq!(moved, 7);
    }

    #[test]
    fn ids_are_unique_and_shared_by_clones() {
        let a = BufPool::new(1, 1).unwrap();
        let b = BufPool::new(1, 1).unwrap();
        assert_ne!(a.id(), b.id());
        assert_eq!(a.clone().id(), a.id());
        let buf = a.clone().take().unwrap();
        assert!(a.take().is_none(), "clones share one free list");
        assert_eq!(buf.pool_id(), a.id());
    }

    #[test]
    fn bad_shapes_are_refused() {
        for (count, size) in [(0, 4096), (4, 0), (2, usize::MAX), (usize::MAX / 2, 4096)] {
            match BufPool::new(count, size) {
                Err(Error::BufPool {
                    count: c, size: s, ..
                }) => assert_eq!((c, s), (count, size)),
                other => panic!("{count} x {size}: expected a BufPool error, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_callers_own_memory_goes_through_every_engine_and_stays_the_callers() {
        use crate::engine::{self, EngineConfig, EngineKind};
        use crate::request::Request;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        for kind in EngineKind::ALL {
            if crate::probe::engine_available(kind).is_err() || kind == EngineKind::Null {
                continue;
            }
            // Short transfers injected: the layer that sends the rest names
            // requests by their buffer, a caller's buffer too.
            let mut config = EngineConfig::with_depth(4);
            config.inject = Some("short:0.5,seed:3".parse().unwrap());
            let mut engine = engine::open(kind, &config, None).unwrap();
            let options = crate::file::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true);
            let file = engine.open_file(&path, &options).unwrap();
            let blocks: Vec<Caller> = (0..4).map(|_| Caller::new(8192)).collect();
            let writes = blocks.iter().enumerate().map(|(i, block)| {
                let mut buf = block.buf();
                buf.as_mut_slice().fill(i as u8 + 1);
                Request::write(file, i as u64 * 8192, buf, i as u64)
            });
            let done = crate::engine::testkit::run(engine.as_mut(), writes);
            assert!(done.iter().all(|c| c.result == 8192), "{kind}: {done:?}");
            assert!(done.iter().all(|c| c.buf.pool_id() == 0), "{kind}");
            drop(done);
            let into: Vec<Caller> = (0..4).map(|_| Caller::new(8192)).collect();
            let reads = into
                .iter()
                .enumerate()
                .rev()
                .map(|(i, block)| Request::read(file, i as u64 * 8192, block.buf(), i as u64));
            let done = crate::engine::testkit::run(engine.as_mut(), reads);
            assert!(done.iter().all(|c| c.result == 8192), "{kind}");
            drop(done);
            for (i, block) in into.iter().enumerate() {
                assert!(
                    block.bytes().iter().all(|&b| b == i as u8 + 1),
                    "{kind}: block {i}"
                );
            }
        }
    }
}
