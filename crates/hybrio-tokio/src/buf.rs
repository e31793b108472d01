//! Buffers a request owns while the kernel uses them.
//!
//! A positioned read or write takes its buffer by value and gives it back
//! with the result, so that the memory stays put and untouched for as long
//! as the kernel (or a worker thread) may read or write it, even if the
//! future is dropped first: the buffer then stays with the engine until the
//! request completes (see [`fs::File`](crate::fs::File)).
//!
//! A read fills the buffer's whole length, as `pread` fills a slice: a
//! `Vec<u8>` is read into up to its `len()`, not its capacity. A write writes
//! the buffer's whole length.

use std::ptr::NonNull;

/// Memory a request may own while the kernel uses it.
///
/// # Safety
///
/// The pointer [`io_ptr`](IoBuf::io_ptr) returns must stay valid for reads
/// of [`io_len`](IoBuf::io_len) bytes, and those bytes must not move, for as
/// long as the value lives and is not touched through any other method:
/// moving the value (into a future, a slot, another thread) must not move
/// the bytes, and dropping it is the only thing that may free them.
pub unsafe trait IoBuf: Send + 'static {
    /// Where the bytes start.
    fn io_ptr(&self) -> *const u8;
    /// How many bytes a request reads or writes.
    fn io_len(&self) -> usize;
}

/// A buffer a read may fill.
///
/// # Safety
///
/// As [`IoBuf`], and [`io_mut_ptr`](IoBufMut::io_mut_ptr) is valid for
/// writes of [`io_len`](IoBuf::io_len) bytes, which stay initialized memory
/// whatever bytes the kernel writes into them.
pub unsafe trait IoBufMut: IoBuf {
    /// Where the bytes start, for writing.
    fn io_mut_ptr(&mut self) -> *mut u8;
}

// SAFETY: a Vec's bytes live on the heap: moving the Vec moves only its
// pointer, and they are freed only when it drops (or is changed through its
// own methods, which the trait's user does not call while a request owns it).
unsafe impl IoBuf for Vec<u8> {
    fn io_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn io_len(&self) -> usize {
        self.len()
    }
}

// SAFETY: as `IoBuf for Vec<u8>`; any byte pattern is a valid `u8`.
unsafe impl IoBufMut for Vec<u8> {
    fn io_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
}

// SAFETY: a boxed slice's bytes live on the heap, as a Vec's.
unsafe impl IoBuf for Box<[u8]> {
    fn io_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn io_len(&self) -> usize {
        self.len()
    }
}

// SAFETY: as `IoBuf for Box<[u8]>`; any byte pattern is a valid `u8`.
unsafe impl IoBufMut for Box<[u8]> {
    fn io_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
}

// SAFETY: a `BytesMut`'s bytes live on the heap behind its pointer; moving
// it does not move them, and only its own methods (not called while a
// request owns it) reallocate.
unsafe impl IoBuf for bytes::BytesMut {
    fn io_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn io_len(&self) -> usize {
        self.len()
    }
}

// SAFETY: as `IoBuf for BytesMut`; its `len()` bytes are initialized.
unsafe impl IoBufMut for bytes::BytesMut {
    fn io_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
}

// SAFETY: a hybrio buffer is a pool's slot or memory its maker promised;
// neither moves with the `Buf`, and its window changes only through its own
// methods. Its window is what requests use, as the engines' do.
unsafe impl IoBuf for hybrio::buf::Buf {
    fn io_ptr(&self) -> *const u8 {
        self.as_slice().as_ptr()
    }
    fn io_len(&self) -> usize {
        self.len()
    }
}

// SAFETY: as `IoBuf for Buf`.
unsafe impl IoBufMut for hybrio::buf::Buf {
    fn io_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_slice().as_mut_ptr()
    }
}

/// A hybrio buffer over `buf`'s bytes from `from` on, for a write (the
/// kernel only reads them). The caller keeps `buf` alive and untouched
/// until the request's completion is reaped: the future does, or the
/// driver's slot once the future is dropped.
pub(crate) fn lend_from<B: IoBuf>(buf: &B, from: usize) -> hybrio::buf::Buf {
    let len = buf.io_len();
    let from = from.min(len);
    raw(buf.io_ptr().cast_mut().wrapping_add(from), len - from)
}

/// [`lend_from`] the start.
pub(crate) fn lend<B: IoBuf>(buf: &B) -> hybrio::buf::Buf {
    lend_from(buf, 0)
}

/// `buf`'s bytes as a slice, for a write from them in the caller's thread.
pub(crate) fn bytes<B: IoBuf>(buf: &B) -> &[u8] {
    let len = buf.io_len();
    if len == 0 {
        return &[];
    }
    // SAFETY: `IoBuf`'s contract: `len` readable bytes at `io_ptr`, borrowed
    // here through `&buf` for the slice's lifetime.
    unsafe { std::slice::from_raw_parts(buf.io_ptr(), len) }
}

/// A hybrio buffer over `buf`'s bytes from `from` on, for a read (the
/// kernel writes them), kept as [`lend`]'s.
pub(crate) fn lend_mut<B: IoBufMut>(buf: &mut B, from: usize) -> hybrio::buf::Buf {
    let len = buf.io_len();
    let from = from.min(len);
    // `from` bytes on stays within the buffer (`wrapping_add`: no
    // arithmetic on a pointer that could be null for an empty buffer).
    raw(buf.io_mut_ptr().wrapping_add(from), len - from)
}

/// `buf`'s bytes as a slice, for a read into them in the caller's thread.
pub(crate) fn bytes_mut<B: IoBufMut>(buf: &mut B) -> &mut [u8] {
    let len = buf.io_len();
    let ptr = buf.io_mut_ptr();
    if len == 0 {
        return &mut [];
    }
    // SAFETY: `IoBufMut`'s contract: `len` initialized, writable bytes at
    // `ptr`, borrowed here through `&mut buf` for the slice's lifetime.
    unsafe { std::slice::from_raw_parts_mut(ptr, len) }
}

fn raw(ptr: *mut u8, len: usize) -> hybrio::buf::Buf {
    // A buffer of no bytes lends none: the dangling pointer is never used.
    let Some(ptr) = NonNull::new(ptr).filter(|_| len > 0) else {
        return hybrio::buf::Buf::empty();
    };
    // SAFETY: `IoBuf`'s contract: `len` bytes at `ptr`, valid and unmoved
    // while the owner lives untouched, which `lend`'s caller keeps it until
    // the request's completion is reaped.
    unsafe { hybrio::buf::Buf::from_raw_parts(ptr, len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_buffer_is_the_owners_bytes() {
        let mut owned = vec![7u8; 4096];
        let at = owned.as_ptr();
        let lent = lend_mut(&mut owned, 0);
        assert_eq!(lent.as_slice().as_ptr(), at);
        assert_eq!(lent.len(), 4096);
        let rest = lend_mut(&mut owned, 4000);
        assert_eq!(rest.as_slice().as_ptr(), at.wrapping_add(4000));
        assert_eq!(rest.len(), 96);
        assert!(lend_mut(&mut owned, 4096).is_empty());
        let empty = lend(&Vec::<u8>::new());
        assert!(empty.is_empty());
        let boxed: Box<[u8]> = vec![1, 2, 3].into_boxed_slice();
        assert_eq!(lend(&boxed).as_slice(), &[1, 2, 3]);
        let bytes = bytes::BytesMut::from(&b"abc"[..]);
        assert_eq!(lend(&bytes).as_slice(), b"abc");
    }
}
