//! The io_uring engine's completion side: the CQ drained, the retry rule
//! (and the faults injected below it) applied to each answer while its
//! request is still in its slot, what the rule asks for sent again from
//! there, and the reaps that wait for it all.

use std::io;

use super::error::{engine_error, enter_op};
use super::state::IoUringEngine;
use crate::Error;
use crate::device::EmulatedDevice;
use crate::engine::inject::{self, Faults};
use crate::request::{Completion, Marks, Verdict};

/// Waits in a row that may return without a completion before reaping
/// gives up with an error instead of spinning.
const MAX_FRUITLESS_WAITS: u32 = 1_000_000;

impl IoUringEngine {
    /// Moves up to `max` completions from the CQ to `out`; a request whose
    /// answer is short or "try again" goes down again from its slot instead.
    #[inline(always)]
    pub(super) fn drain(
        &mut self,
        faults: Option<&mut Faults>,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        if let Some(faults) = faults {
            return self.drain_with_faults(faults, max, out);
        }
        let (retry, tracks) = (&mut self.retry, &mut self.tracks);
        let got = self.ring.drain_with(
            max,
            |slot, request, result| {
                retry.decide_request(request, &mut tracks[slot as usize], result)
            },
            out,
        );
        if self.ring.has_again() {
            return Ok(got + self.send_again(max - got, out)?);
        }
        Ok(got)
    }

    /// [`drain`](Self::drain) with faults injected: a marked answer is
    /// shortened before the rule and the request marked to be corrupted or
    /// delayed is so after it; a delayed completion is held back by `faults`.
    #[cold]
    fn drain_with_faults(
        &mut self,
        faults: &mut Faults,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let mut late = Vec::new();
        let (retry, tracks) = (&mut self.retry, &mut self.tracks);
        let got = self.ring.drain_with(
            max,
            |slot, request, result| {
                let result = faults.shorten(request, result);
                let verdict = retry.decide_request(request, &mut tracks[slot as usize], result);
                match verdict {
                    Verdict::Done(result)
                        if request.marks.any(Marks::FAULTS) && faults.finish(request, result) =>
                    {
                        // Left in its slot by the drain, so that it does
                        // not reach `out`; ended below and held back.
                        late.push((slot, result));
                        Verdict::Again
                    }
                    verdict => verdict,
                }
            },
            out,
        );
        if !late.is_empty() {
            let again = self.ring.take_again();
            for slot in again {
                match late.iter().find(|&&(late, _)| late == slot) {
                    Some(&(_, result)) => faults.hold(self.ring.finish(slot, result)),
                    None => self.ring.keep_again(slot),
                }
            }
        }
        if self.ring.has_again() {
            return Ok(got + self.send_again(max - got, out)?);
        }
        Ok(got)
    }

    /// Sends again the requests the drains kept in their slots (after one
    /// pause for the lot, when one was retried many times), and submits
    /// them, so that a wait can count on them. One the SQ refuses ends with
    /// the error (or its progress), if `room` lets `out` take it; otherwise
    /// it stays kept for the next drain. Returns how many ended.
    #[cold]
    fn send_again(&mut self, room: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        let again = self.ring.take_again();
        self.retry.take_pause();
        let callers = self.ring.unsubmitted();
        let (mut ended, mut sent) = (0, 0);
        for &slot in &again {
            let pushed = self.push_kept(slot);
            match pushed {
                Ok(()) => sent += 1,
                Err(error) if ended < room => {
                    let result = -i64::from(error.raw_os_error().unwrap_or(libc::EAGAIN));
                    let track = &mut self.tracks[slot as usize];
                    let result = self
                        .retry
                        .finish_request(self.ring.kept(slot), track, result);
                    out.push(self.ring.finish(slot, result));
                    ended += 1;
                }
                Err(_) => self.ring.keep_again(slot),
            }
        }
        if sent > 0 {
            self.ring
                .submit_all()
                .map_err(|e| engine_error(enter_op(&e, "io_uring_enter (submit)"), e))?;
            self.early += callers;
        }
        Ok(ended)
    }

    /// Puts the request kept in `slot` into the SQ again: its file as it is
    /// named now, or, on the emulated device, its data moved now and its
    /// completion due one latency from now.
    fn push_kept(&mut self, slot: u32) -> io::Result<()> {
        let request = self.ring.kept(slot);
        let handle = request.file;
        let Some(entry) = self.files.get(handle) else {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        };
        if let Some(device) = self.device {
            let result = EmulatedDevice::transfer(entry.fd(), entry.is_direct(), request);
            return self.ring.push_timed_again(slot, result, device.deadline());
        }
        let flags = entry.rw_flags(request.op) | request.rw_flags();
        let file = self.file_ref(handle, entry);
        self.ring.push_again(slot, file, flags)
    }

    /// [`Engine::reap`] of what the ring has (with `faults`, holding back
    /// the completions they delay).
    #[inline(always)]
    pub(super) fn reap_ring(
        &mut self,
        mut faults: Option<&mut Faults>,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let mut want = min.min(max).min(self.ring.in_kernel());
        let mut entered = false;
        if self.ring.has_waiting_receives() && !self.ring.has_again() && self.ring.cq_len() < want {
            // Standing receives post CQEs between reaps: draining those
            // first and the rest after a wait would store the CQ head twice
            // a reap (1.2-1.9 times); wait for all, then drain once.
            self.enter(want)?;
            entered = true;
        }
        let mut got = self.drain(faults.as_deref_mut(), max, out)?;
        let mut fruitless = 0u32;
        while got < max && self.ring.in_kernel() > 0 {
            // A completion the faults hold back leaves the kernel without
            // counting here: wait for no more than the kernel still has.
            want = want.min(got + self.ring.in_kernel());
            if got >= want {
                // Enough to return, but the kernel may hold completions back
                // until an enter: deferred task work or unpolled IOPOLL
                // requests (when the CQ showed nothing), flagged task work,
                // or overflowed CQEs. Enter once without waiting.
                let held_back = (self.ring.completes_only_on_enter() && got == 0)
                    || self.ring.kernel_holds_completions();
                if entered || !held_back {
                    break;
                }
                self.enter(0)?;
            } else {
                self.enter(want - got)?;
            }
            entered = true;
            let drained = self.drain(faults.as_deref_mut(), max - got, out)?;
            got += drained;
            // An enter that returns at once without a completion (an
            // interruption, a transient refusal) is asked again; one that
            // keeps doing so must not spin for ever.
            fruitless = if drained == 0 { fruitless + 1 } else { 0 };
            if fruitless > 0 && fruitless.is_multiple_of(64) {
                std::thread::yield_now();
            }
            if fruitless > MAX_FRUITLESS_WAITS {
                return Err(engine_error(
                    "io_uring_enter (wait)",
                    io::Error::other(format!(
                        "returned {MAX_FRUITLESS_WAITS} times in a row without a completion, with {} requests in the kernel",
                        self.ring.in_kernel()
                    )),
                ));
            }
        }
        if got > 0 {
            self.reaps += 1;
            self.reaped += got as u64;
        }
        Ok(got)
    }
}

impl inject::HoldsBack for IoUringEngine {
    fn faults(&mut self) -> &mut Option<Box<Faults>> {
        &mut self.faults
    }

    fn holding_back(&mut self, held: usize) {
        self.room = self.depth - held;
    }

    fn below(&self) -> usize {
        IoUringEngine::below(self)
    }

    fn reap_below(
        &mut self,
        faults: &mut Faults,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        self.reap_ring(Some(faults), min, max, out)
    }
}
