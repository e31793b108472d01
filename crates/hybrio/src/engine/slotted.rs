//! What the engines over an AIO interface share (`libaio` over the kernel's
//! native AIO, `posixaio` over the C library's POSIX AIO): a file table; a
//! queue below that keeps each request in a slot from `queue` until its
//! completion is reaped; one commit handing it everything queued; and the
//! [rule](super::retry) applied where answers arrive, a request sent again
//! from its slot. Each engine supplies its queue ([`SlotQueue`]): its calls,
//! what it refuses and how it describes itself.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::alias::SharesFiles;
use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, QueueOutcome};
use super::inject::{self, Faults, FaultsFirst};
use super::retry::{Retry, Track};
use crate::Error;
use crate::blocking;
use crate::device::EmulatedDevice;
use crate::file::{Caching, FileEntry, FileHandle, FileTable};
use crate::request::{Completion, Marks, Request, Verdict};
use crate::sys::slot_book::SlotBook;

/// The queue below an engine over an AIO interface: it owns each request,
/// in a slot, from [`push`](SlotQueue::push) until a reap hands it out.
pub(crate) trait SlotQueue: Send + std::fmt::Debug {
    /// Which engine this is.
    const KIND: EngineKind;
    /// The call that hands requests over, and the one that waits for
    /// them, for errors.
    const SUBMIT_CALL: &'static str;
    const WAIT_CALL: &'static str;
    /// Whether a file's `RWF_*` write flags reach the kernel with each
    /// write, so that writes can be atomic ([`Engine::set_atomic_writes`]).
    const TAKES_WRITE_FLAGS: bool = false;

    /// Its slots' bookkeeping: requests in flight, queued for the next
    /// [`submit_all`](SlotQueue::submit_all), and of those the ones a reap
    /// kept to be sent again.
    fn book(&self) -> &SlotBook;
    /// Slots made so far: each slot index a reap names is below it.
    fn slots(&self) -> usize;
    /// Takes `request`, on the file `entry`, to be handed over at the next
    /// [`submit_all`](SlotQueue::submit_all); hands it back when full.
    fn push(&mut self, request: Request, entry: &FileEntry) -> Result<(), Request>;
    /// Hands every queued request over; returns how many.
    fn submit_all(&mut self) -> io::Result<usize>;
    /// Waits for at least `min` answers (fewer only if fewer were handed
    /// over, or when `decide` kept some to be sent again), appends at most
    /// `max` completions to `out` as `decide(slot, request, result)` says,
    /// and returns how many.
    fn reap_with<F>(
        &mut self,
        min: usize,
        max: usize,
        decide: F,
        out: &mut Vec<Completion>,
    ) -> io::Result<usize>
    where
        F: FnMut(u32, &mut Request, i64) -> Verdict;
    /// Calls of its own repeated after a "try again".
    fn retries(&self) -> u64;
    /// The emulated device requests go to, if any.
    fn device(&self) -> Option<&EmulatedDevice> {
        None
    }
    /// Why a file of this type (`S_IF*`) is refused, if it is; sockets are
    /// refused by [`SOCKETS_REFUSED`](SlotQueue::SOCKETS_REFUSED).
    fn refuses_type(&self, file_type: libc::mode_t) -> Option<&'static str>;
    /// Why sockets are refused.
    const SOCKETS_REFUSED: &'static str;
    /// What refuses a file, in errors ("ioengine libaio").
    const REFUSER: &'static str;
    /// The engine's line in reports; `buffered`: a file without `O_DIRECT` was added.
    fn describe(&self, depth: usize, buffered: bool) -> String;
}

/// An engine over an AIO interface. See the [module documentation](self).
///
/// Requests sit in the queue's slots from [`queue`](Engine::queue) until
/// their completion is reaped; dropping the engine waits for every request
/// the queue has handed over, so no buffer is freed while it may still be used.
#[derive(Debug)]
pub(crate) struct SlottedEngine<Q> {
    // Declared first: dropping the queue waits for in-flight requests
    // before their files are closed.
    pub(super) queue: Q,
    files: FileTable,
    depth: usize,
    /// A file without O_DIRECT was added.
    buffered: bool,
    /// Short transfers and "try again" answers: what to do, and what was
    /// done. A request to send again stays in its slot.
    pub(super) retry: Retry,
    /// Per slot, the record of a request being sent again.
    tracks: Vec<Option<Track>>,
    /// The caller's requests a resubmission's submit handed over before the
    /// caller's commit: that commit counts them.
    early: usize,
    /// Injected faults ([`inject`](super::inject)), if the caller asked.
    faults: Option<Box<Faults>>,
    /// The depth less the completions `faults` holds back: what the queue
    /// may have in flight.
    room: usize,
}

impl<Q: SlotQueue> SlottedEngine<Q> {
    /// An engine over `queue`, which has a slot for each of `config.depth` requests.
    pub(crate) fn with_queue(queue: Q, config: &EngineConfig) -> Self {
        let depth = config.depth.max(1) as usize;
        SlottedEngine {
            queue,
            files: FileTable::new(),
            depth,
            buffered: false,
            retry: Retry::new(config.nowait),
            // Grown as the queue makes slots: a depth is a limit, not a
            // promise of use.
            tracks: Vec::new(),
            early: 0,
            faults: Faults::of(config),
            room: depth,
        }
    }

    /// Reaps as [`Engine::reap`] says, sending again from its slot a request
    /// whose answer is short or "try again" (after one pause for the lot,
    /// when one was retried many times), before anything waits for it.
    #[inline(always)]
    fn reap_and_send_again(
        &mut self,
        mut faults: Option<&mut Faults>,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        if self.tracks.len() < self.queue.slots() {
            self.tracks.resize(self.queue.slots(), None);
        }
        let mut got = 0;
        while got < max {
            let (retry, tracks) = (&mut self.retry, &mut self.tracks);
            let reaped = match faults.as_deref_mut() {
                None => self.queue.reap_with(
                    min.saturating_sub(got),
                    max - got,
                    |slot, request, result| {
                        retry.decide_request(request, &mut tracks[slot as usize], result)
                    },
                    out,
                ),
                Some(faults) => Self::reap_faulty(
                    &mut self.queue,
                    (retry, tracks),
                    faults,
                    (min.saturating_sub(got), max - got),
                    out,
                ),
            };
            got += reaped.map_err(|e| engine_error::<Q>(Q::WAIT_CALL, e))?;
            let again = self.queue.book().again();
            if again == 0 {
                break;
            }
            self.retry.take_pause();
            let callers = self.queue.book().queued() - again;
            self.queue
                .submit_all()
                .map_err(|e| engine_error::<Q>(Q::SUBMIT_CALL, e))?;
            self.early += callers;
            if got >= min.min(max) {
                break;
            }
        }
        Ok(got)
    }

    /// [`SlotQueue::reap_with`] with faults injected: a marked answer is
    /// shortened before the rule, and the request marked to be corrupted or
    /// delayed is so after it; a delayed completion is taken out of `out`
    /// and held back by `faults`. Returns how many stay in `out`.
    #[cold]
    fn reap_faulty(
        queue: &mut Q,
        (retry, tracks): (&mut Retry, &mut [Option<Track>]),
        faults: &mut Faults,
        (min, max): (usize, usize),
        out: &mut Vec<Completion>,
    ) -> io::Result<usize> {
        let start = out.len();
        // Where each delayed one went among those handed out: the queue
        // appends every finished request in the order it decides.
        let mut late = Vec::new();
        let mut finished = 0;
        let reaped = queue.reap_with(
            min,
            max,
            |slot, request, result| {
                let result = faults.shorten(request, result);
                let verdict = retry.decide_request(request, &mut tracks[slot as usize], result);
                if let Verdict::Done(result) = verdict {
                    if request.marks.any(Marks::FAULTS) && faults.finish(request, result) {
                        late.push(start + finished);
                    }
                    finished += 1;
                }
                verdict
            },
            out,
        );
        // In order: each one taken out moves the later ones down by one.
        for (taken, &at) in late.iter().enumerate() {
            faults.hold(out.remove(at - taken));
        }
        Ok(reaped? - late.len())
    }

    /// Keeps the file just added at `handle`, or refuses it (taken out
    /// again) as the queue says.
    fn adopt(&mut self, handle: FileHandle) -> Result<FileHandle, Error> {
        let Some(entry) = self.files.get(handle) else {
            return Err(Error::BadHandle(handle.0));
        };
        let refusal = if entry.is_socket() {
            Some(Q::SOCKETS_REFUSED)
        } else {
            crate::sys::file_type(entry.fd())
                .ok()
                .and_then(|kind| self.queue.refuses_type(kind))
        };
        let direct = entry.is_direct();
        if let Some(reason) = refusal {
            return Err(self.files.refuse(handle, |path| Error::Unsupported {
                what: Q::REFUSER,
                path: path.to_owned(),
                reason,
            }));
        }
        self.buffered |= !direct;
        Ok(handle)
    }
}

/// The error of the queue's call `op`.
pub(crate) fn engine_error<Q: SlotQueue>(op: &'static str, source: io::Error) -> Error {
    Error::Engine {
        engine: Q::KIND.name(),
        op,
        source,
    }
}

impl<Q: SlotQueue> inject::HoldsBack for SlottedEngine<Q> {
    fn faults(&mut self) -> &mut Option<Box<Faults>> {
        &mut self.faults
    }

    fn holding_back(&mut self, held: usize) {
        self.room = self.depth - held;
    }

    fn below(&self) -> usize {
        self.queue.book().in_flight()
    }

    fn reap_below(
        &mut self,
        faults: &mut Faults,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        self.reap_and_send_again(Some(faults), min, max, out)
    }
}

impl<Q: SlotQueue> FaultsFirst for SlottedEngine<Q> {
    fn faults_mut(&mut self) -> Option<&mut Faults> {
        self.faults.as_deref_mut()
    }

    #[inline(always)]
    fn queue_plain(&mut self, request: Request) -> QueueOutcome {
        let entry = match request.entry_in(&self.files) {
            Ok(entry) => entry,
            Err(errno) => return QueueOutcome::Completed(request.complete(errno)),
        };
        if request.op.changes_space() {
            // Neither AIO interface has a command for these: run here, as
            // fio's libaio engine does its trims.
            let result = blocking::result(blocking::change_space(
                entry.fd(),
                entry.is_block_device(),
                &request,
            ));
            return QueueOutcome::Completed(request.complete(result));
        }
        if self.queue.book().in_flight() >= self.room {
            return QueueOutcome::Busy(request);
        }
        match self.queue.push(request, entry) {
            Ok(()) => QueueOutcome::Queued,
            Err(request) => QueueOutcome::Busy(request),
        }
    }
}

impl<Q: SlotQueue> Engine for SlottedEngine<Q> {
    fn kind(&self) -> EngineKind {
        Q::KIND
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        if self.queue.device().is_some() {
            return EmulatedDevice::insert(&mut self.files, file, path);
        }
        let handle = self.files.insert(file, path);
        self.adopt(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.files.remove_idle(handle, self.in_flight())
    }

    /// Only an `O_DIRECT` file (uncached already) can be uncached here:
    /// neither AIO interface takes hybrio's per-request flags.
    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        let entry = self.files.get(handle).ok_or(Error::BadHandle(handle.0))?;
        if caching == Caching::Uncached && !entry.is_direct() {
            return Err(Error::CachingUnsupported {
                engine: Q::KIND.name(),
            });
        }
        Ok(())
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        if atomic && !Q::TAKES_WRITE_FLAGS {
            return Err(super::api::atomic_writes_not_offered(Q::KIND));
        }
        self.files
            .set_atomic_writes(handle, atomic, self.queue.device().is_some())
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.queue_faults_first(request)
    }

    fn commit(&mut self) -> Result<usize, Error> {
        let committed = self
            .queue
            .submit_all()
            .map_err(|e| engine_error::<Q>(Q::SUBMIT_CALL, e))?;
        Ok(committed + std::mem::take(&mut self.early))
    }

    /// Requests queued but not committed are not waited for: `min` counts
    /// only committed ones.
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if self.faults.is_some() {
            return inject::HoldsBack::reap_holding_back(self, min, max, out);
        }
        self.reap_and_send_again(None, min, max, out)
    }

    fn in_flight(&self) -> usize {
        self.queue.book().in_flight() + (self.depth - self.room)
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn description(&self) -> String {
        inject::described(
            self.queue.describe(self.depth, self.buffered),
            self.faults.as_deref(),
        )
    }

    fn counters(&self) -> EngineCounters {
        let rule = self.retry.counters();
        let mut counters = EngineCounters {
            retries: self.queue.retries() + rule.retries,
            ..rule
        };
        if let Some(faults) = &self.faults {
            faults.add_to(&mut counters);
        }
        counters
    }
}

impl<Q: SlotQueue> SharesFiles for SlottedEngine<Q> {
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        self.files.insert_alias(at, file, path, direct)?;
        self.adopt(at).map(drop)
    }

    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        self.files.discard(handle, self.queue.book().in_flight())
    }
}
