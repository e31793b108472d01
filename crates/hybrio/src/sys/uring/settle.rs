//! Dropping a ring: cancelling what the kernel holds and waiting for it, so
//! that no buffer is freed while the kernel may still use it.

use std::io;
use std::time::{Duration, Instant};

use io_uring::opcode;
use rustix::io_uring as kernel;

use super::ring::Ring;
use super::types::{CANCEL_TAG, MAX_STALLS, SETTLE_LIMIT, WAIT_SLICE, is_transient};

/// How long dropping a ring waits for its cancellations before it waits for completions.
const SYNC_CANCEL_TIMEOUT_SECS: i64 = 1;

/// How long dropping an SQPOLL ring waits for its thread to take the SQ.
const SQ_TAKE_LIMIT: Duration = Duration::from_secs(1);

/// While dropping, how often the requests still out are cancelled again.
const CANCEL_AGAIN_EVERY: Duration = Duration::from_secs(1);

impl Ring {
    /// Cancels what the kernel can cancel (a read from an empty pipe would
    /// otherwise never end) and waits until every request the kernel has is
    /// complete. Fails when that takes longer than [`SETTLE_LIMIT`]: the
    /// requests still out must then be leaked, never freed.
    ///
    /// Requests queued but never committed are not performed: their SQEs stay
    /// unread in the SQ ring and go with it. Only an SQPOLL thread reads the
    /// SQ on its own, so there they are handed over and waited for like the
    /// rest (and likewise on kernels before 6.0, see [`Ring::cancel_each`]).
    fn settle(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + SETTLE_LIMIT;
        self.receivers.closing = true;
        // Requests kept to be sent again are no longer the kernel's.
        for slot in self.take_again() {
            drop(self.finish(slot, -i64::from(libc::ECANCELED)));
        }
        if self.sqpoll {
            self.submit_all()?;
            // A synchronous cancel finds only what the thread has taken from
            // the SQ: an entry still there is missed, then issued, and
            // waited for (a read of an empty pipe: for ever).
            self.wait_until_sq_taken(deadline.min(Instant::now() + SQ_TAKE_LIMIT));
        }
        self.cancel_all()?;
        let mut done = Vec::with_capacity(self.occupied);
        let mut stalls = 0;
        let mut next_cancel = Instant::now() + CANCEL_AGAIN_EVERY;
        while self.slots_in_kernel() > 0 {
            self.drain(usize::MAX, &mut done);
            // Dropping the completions returns their buffers to the pool.
            done.clear();
            if self.slots_in_kernel() == 0 {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::from_raw_os_error(libc::ETIME));
            }
            if now >= next_cancel {
                // What was not cancellable a moment ago may be now (a
                // request that went from the SQ thread to a worker).
                self.cancel_all()?;
                next_cancel = now + CANCEL_AGAIN_EVERY;
            }
            match self.wait_at_most(self.slots_in_kernel(), WAIT_SLICE) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_transient(&e) && stalls < MAX_STALLS => stalls += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// SQPOLL: waits until the kernel thread has taken every entry from the
    /// SQ (or `deadline` passes), waking it when it sleeps.
    fn wait_until_sq_taken(&mut self, deadline: Instant) {
        let mut spins = 0u32;
        while self.ring.sq_len() > 0 && Instant::now() < deadline {
            // `submit` enters the kernel only to wake a sleeping thread.
            let _ = self.ring.submit();
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// Cancels every request the kernel holds: synchronously where the kernel
    /// can (6.0), else one cancel request per slot.
    fn cancel_all(&mut self) -> io::Result<()> {
        if self.slots_in_kernel() == 0 {
            return Ok(());
        }
        #[cfg(test)]
        let cancelled = if self.without_sync_cancel {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            self.sync_cancel()
        };
        #[cfg(not(test))]
        let cancelled = self.sync_cancel();
        // Other errors are fine here: nothing left to cancel (ENOENT),
        // requests that outlast the timeout (ETIME) are covered by the
        // wait that follows, and a ring that may not be waited on from this
        // thread fails that wait too (EEXIST).
        if cancelled.is_err_and(|e| e.raw_os_error() == Some(libc::EINVAL)) {
            self.cancel_each()?;
        }
        Ok(())
    }

    /// [`wait`](Self::wait) for `min_complete` CQEs, but for no longer than
    /// `limit` (`IORING_ENTER_EXT_ARG`, Linux 5.11; before that, a pause and
    /// a wait that does not block).
    pub(super) fn wait_at_most(&mut self, min_complete: usize, limit: Duration) -> io::Result<()> {
        #[cfg(test)]
        self.entered_kernel();
        let timeout = kernel::Timespec {
            tv_sec: i64::try_from(limit.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(limit.subsec_nanos()),
        };
        let arg = kernel::io_uring_getevents_arg {
            ts: kernel::io_uring_ptr::new((&raw const timeout).cast_mut().cast()),
            ..Default::default()
        };
        let mut flags = kernel::IoringEnterFlags::GETEVENTS | kernel::IoringEnterFlags::EXT_ARG;
        if self.sqpoll {
            flags |= kernel::IoringEnterFlags::SQ_WAKEUP;
        }
        let min_complete = u32::try_from(min_complete).unwrap_or(u32::MAX);
        // SAFETY: to_submit is 0, so the kernel reads no SQE. With EXT_ARG it
        // reads `arg` (a `struct io_uring_getevents_arg`, whose size is
        // passed) and the timespec it points at, both alive on this stack
        // until the call returns; the kernel keeps no pointer to either.
        let waited = unsafe {
            self.ring.enter(
                0,
                min_complete,
                flags,
                (&raw const arg).cast(),
                std::mem::size_of::<kernel::io_uring_getevents_arg>(),
            )
        };
        match waited {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                std::thread::sleep(limit.min(Duration::from_millis(1)));
                self.wait(0)
            }
            Err(e) => Err(e),
        }
    }

    /// `IORING_REGISTER_SYNC_CANCEL` of the request in `slot` (Linux 6.0).
    pub(super) fn sync_cancel_slot(&self, slot: u32) -> io::Result<()> {
        self.ring
            .sync_cancel(Some(u64::from(slot)), SYNC_CANCEL_TIMEOUT_SECS)
    }

    /// `IORING_REGISTER_SYNC_CANCEL` of every request (Linux 6.0).
    fn sync_cancel(&self) -> io::Result<()> {
        self.ring.sync_cancel(None, SYNC_CANCEL_TIMEOUT_SECS)
    }

    /// Kernels before 6.0 have no synchronous cancel: sends one
    /// `IORING_OP_ASYNC_CANCEL` per request, naming its slot. The SQ is a
    /// queue, so the cancels can only follow what is already in it: the
    /// uncommitted requests are handed over first, and cancelled with the rest.
    fn cancel_each(&mut self) -> io::Result<()> {
        self.submit_all()?;
        let targets: Vec<u64> = (0..self.awaiting_submit.len() as u64)
            .filter(|&i| {
                self.slots.get(i as usize).is_some_and(Option::is_some)
                    || self.receivers.arm_of(i).is_some()
            })
            .collect();
        for target in targets {
            let entry = opcode::AsyncCancel::new(target)
                .build()
                .user_data(CANCEL_TAG);
            // SAFETY: a cancel entry carries only the user_data it looks for;
            // it points at no memory of ours.
            while !unsafe { self.ring.push(&entry) } {
                // The SQ holds at least `capacity` entries and only cancels are
                // in it now, so this happens only past the first SQ-full of cancels.
                self.ring.submit()?;
            }
        }
        // Cancel CQEs take at most `capacity` more CQ entries: the CQ is twice the SQ.
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Ring {
    /// Waits for every request the kernel has (cancelling those it can), so
    /// that no buffer is freed while the kernel may still use it.
    fn drop(&mut self) {
        // A ring that was never enabled never looked at its SQ: nothing of
        // ours reached the kernel, and the slab can simply be dropped.
        if self.occupied == 0 || !self.enabled {
            return;
        }
        if self.settle().is_err() {
            // Some requests may still be in the kernel (e.g. the ring is being
            // dropped on another thread than its SINGLE_ISSUER owner, which may
            // not wait on it). Their buffers must never be freed or reused:
            // leak them, and with them the arena they point into.
            std::mem::forget(std::mem::take(&mut self.slots));
            std::mem::forget(std::mem::take(&mut self.receivers));
        }
    }
}
