//! What the two AIO queues ([`aio`](super::aio), [`posix_aio`](super::posix_aio))
//! keep of the requests in their slots besides the slots themselves: which
//! slots are free, which wait to be handed over, the answers not yet handed
//! out; and how an answer is handed out, the rule asked what it means while
//! the request is still in its slot.

use std::collections::VecDeque;

use crate::request::{Completion, Request, Verdict};

/// A slot of a queue: where a request waits from `push` until it is handed out.
pub(crate) trait HoldsRequest {
    /// The request in the slot, if any.
    fn request(&mut self) -> &mut Option<Request>;

    /// The request leaves the slot, or stays to be sent again: what the
    /// slot kept of its last transfer no longer holds.
    fn forget_transfer(&mut self) {}
}

impl<T: HoldsRequest> HoldsRequest for Box<T> {
    fn request(&mut self) -> &mut Option<Request> {
        (**self).request()
    }

    fn forget_transfer(&mut self) {
        (**self).forget_transfer();
    }
}

/// The bookkeeping of a queue's slots.
#[derive(Debug, Default)]
pub(crate) struct SlotBook {
    /// Free slots (made already), the next to use last.
    pub(crate) free: Vec<u32>,
    /// Slots holding a request: queued, handed over, or answered.
    pub(crate) occupied: usize,
    /// Slots pushed (or kept to be sent again) since the last submit, in order.
    pub(crate) queued: Vec<u32>,
    /// Answers not yet handed out, by slot, oldest first. Their requests
    /// are still in their slots until a reap decides what each answer means.
    pub(crate) arrived: VecDeque<(u32, i64)>,
    /// Slots a reap's `decide` kept to be sent again: queued for the next submit.
    pub(crate) again: usize,
}

impl SlotBook {
    /// Room made for `slots` slots.
    pub(crate) fn with_capacity(slots: usize) -> SlotBook {
        SlotBook {
            free: Vec::with_capacity(slots),
            occupied: 0,
            queued: Vec::with_capacity(slots),
            arrived: VecDeque::with_capacity(slots),
            again: 0,
        }
    }

    /// Requests pushed and not yet handed out.
    #[inline]
    pub(crate) fn in_flight(&self) -> usize {
        self.occupied
    }

    /// Requests queued for the next submit: the caller's, and those kept to
    /// be sent again ([`again`](Self::again)).
    pub(crate) fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Requests the reaps kept in their slots to be sent again, queued for
    /// the next submit, which clears the count.
    pub(crate) fn again(&self) -> usize {
        self.again
    }

    /// Takes the request out of slot `index` of `slots` and frees the slot.
    pub(crate) fn release<S: HoldsRequest>(
        &mut self,
        slots: &mut [S],
        index: u32,
    ) -> Option<Request> {
        let slot = slots.get_mut(index as usize)?;
        let request = slot.request().take()?;
        slot.forget_transfer();
        self.free.push(index);
        self.occupied -= 1;
        Some(request)
    }

    /// Hands out up to `max` of the answers that arrived, as `decide(slot,
    /// request, result)` says: [`Verdict::Done`] hands the request out with
    /// that result, [`Verdict::Again`] keeps it in its slot, edited for what
    /// it asks for next, queued for the next submit. Returns how many went
    /// to `out`.
    #[inline]
    pub(crate) fn deliver<S, F>(
        &mut self,
        slots: &mut [S],
        max: usize,
        decide: &mut F,
        out: &mut Vec<Completion>,
    ) -> usize
    where
        S: HoldsRequest,
        F: FnMut(u32, &mut Request, i64) -> Verdict,
    {
        let mut got = 0;
        while got < max {
            let Some((index, result)) = self.arrived.pop_front() else {
                break;
            };
            let Some(slot) = slots.get_mut(index as usize) else {
                debug_assert!(false, "an answer for unknown slot {index}");
                continue;
            };
            let Some(request) = slot.request().as_mut() else {
                debug_assert!(false, "an answer for empty slot {index}");
                continue;
            };
            match decide(index, request, result) {
                Verdict::Done(result) => {
                    let request = self.release(slots, index).expect("held a request");
                    out.push(request.complete(result));
                    got += 1;
                }
                Verdict::Again => {
                    // Its data moves again at the next submit (the device).
                    slot.forget_transfer();
                    self.queued.push(index);
                    self.again += 1;
                }
            }
        }
        got
    }
}
