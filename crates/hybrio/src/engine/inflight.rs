//! Which requests in flight a layer keeps a record of: the resubmission
//! layer of those it sends again, fault injection of those it shortened or
//! holds back. Apart from both, which wrap one another.

use crate::buf::Buf;
use crate::file::FileHandle;
use crate::request::{Completion, Op, Request};

/// Names a request in flight, for the layers that keep a record of some.
///
/// A pool's buffer belongs to one request at a time, so it names its
/// request by itself, and finding its record costs an index. The caller's
/// own memory does not: two writes of one source buffer (zeros, a pattern)
/// may be in flight at once, so such a request, and one without a buffer
/// (a sync, a trim), is named by all it is: operation, file, offset, the
/// window's first byte and length, and the caller's tag. Two requests alike
/// in all of that are the same I/O, so either may take either record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    /// A request carrying a pool's buffer.
    Slot {
        /// [`Buf::pool_id`] (never 0).
        pool: u64,
        /// [`Buf::index`].
        index: u32,
    },
    /// A request carrying the caller's memory, or no buffer.
    Whole {
        op: Op,
        file: FileHandle,
        offset: u64,
        /// The window's first byte (0 without a buffer).
        addr: usize,
        /// The window's length.
        len: usize,
        /// The caller's tag.
        user_data: u64,
    },
}

impl Key {
    fn new(op: Op, file: FileHandle, offset: u64, user_data: u64, buf: &Buf) -> Key {
        let pool = buf.pool_id();
        // A completion of a sync or a trim carries the empty buffer, which
        // tells no two requests apart.
        if pool != 0 && op.moves_data() {
            return Key::Slot {
                pool,
                index: buf.index(),
            };
        }
        let (addr, len) = if op.moves_data() {
            (buf.base_addr() + buf.start(), buf.len())
        } else {
            (0, 0)
        };
        Key::Whole {
            op,
            file,
            offset,
            addr,
            len,
            user_data,
        }
    }

    /// The key of a request.
    pub(super) fn of_request(request: &Request) -> Key {
        Key::new(
            request.op,
            request.file,
            request.offset,
            request.user_data,
            &request.buf,
        )
    }

    /// The key of the request a completion answers (engines hand back the
    /// offset and the window as they were queued).
    pub(super) fn of_completion(completion: &Completion) -> Key {
        Key::new(
            completion.op,
            completion.file,
            completion.offset,
            completion.user_data,
            &completion.buf,
        )
    }
}

/// Records about some of the requests in flight, by [`Key`].
///
/// Records of pool buffers are kept in a table indexed by the buffer's slot
/// in its pool, so finding one costs an index whatever the depth; the table
/// grows to the highest slot that ever had a record, so slots beyond
/// [`InFlight::MAX_SLOTS`], records of a second pool's buffers that meet a
/// taken slot, and the other requests go to a list searched in order.
#[derive(Debug)]
pub(super) struct InFlight<T> {
    /// By [`Buf::index`]: the pool id of the buffer, and its record.
    slots: Vec<Option<(u64, T)>>,
    others: Vec<(Key, T)>,
    len: usize,
}

impl<T> InFlight<T> {
    const MAX_SLOTS: usize = 1 << 16;

    /// No records.
    pub(super) fn new() -> Self {
        InFlight {
            slots: Vec::new(),
            others: Vec::new(),
            len: 0,
        }
    }

    /// True when there is no record: the test the common path makes.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many records there are.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Keeps `value` for the request named `key`, which has no record yet.
    pub(super) fn insert(&mut self, key: Key, value: T) {
        self.len += 1;
        if let Key::Slot { pool, index } = key {
            let slot = index as usize;
            if slot < Self::MAX_SLOTS {
                if self.slots.len() <= slot {
                    self.slots.resize_with(slot + 1, || None);
                }
                if self.slots[slot].is_none() {
                    self.slots[slot] = Some((pool, value));
                    return;
                }
            }
        }
        self.others.push((key, value));
    }

    /// Takes the record of the request named `key`, if it has one.
    pub(super) fn take(&mut self, key: &Key) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        if let Key::Slot { pool, index } = *key
            && let Some(slot) = self.slots.get_mut(index as usize)
            && matches!(slot, Some((owner, _)) if *owner == pool)
        {
            self.len -= 1;
            return slot.take().map(|(_, value)| value);
        }
        let at = self.others.iter().position(|(k, _)| k == key)?;
        self.len -= 1;
        Some(self.others.swap_remove(at).1)
    }
}
