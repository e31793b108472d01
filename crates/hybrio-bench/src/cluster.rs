//! The ranks of an MPI job (`hybrio --mpi` under `mpirun`): who this
//! process is, a barrier that gives up instead of hanging, and the bytes
//! every rank sends to rank 0. Built with the `mpi` feature only.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Root, *};

/// What went wrong between the ranks.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// MPI did not start.
    #[error("MPI did not start (run hybrio --mpi under mpirun)")]
    Init,
    /// A barrier waited its whole bound.
    #[error(
        "{what}: not every rank arrived within {} s (a rank failed, was killed, or is far behind; with Open MPI, mpirun --enable-recovery lets the others report)",
        .after.as_secs()
    )]
    Timeout {
        /// Which barrier.
        what: String,
        /// How long it waited.
        after: Duration,
    },
}

/// A rank's wall clock against rank 0's ([`Cluster::clock_offsets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ClockOffset {
    /// The rank.
    pub rank: usize,
    /// Its clock less rank 0's, in ns (positive: ahead).
    pub offset_ns: i64,
    /// The round trip the offset comes from: the offset is good to half of it.
    pub round_trip_ns: i64,
}

/// This process's place among the ranks.
pub struct Cluster {
    // Finalizes MPI when dropped: kept for the whole run.
    _universe: Universe,
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    host: String,
    /// MPI allows calls from several threads at once (a listener for
    /// [`Cluster::tell_others_to_stop`]'s notices beside the run).
    threads: bool,
}

/// The tag of the notice a rank whose run failed sends every other rank.
const STOP_TAG: i32 = 77;

/// A thread that waits for another rank's stop notice while this rank runs
/// its jobs, and stops them (as Ctrl-C does) when one comes.
#[derive(Debug)]
pub struct StopListener {
    done: Arc<AtomicBool>,
    heard: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl StopListener {
    /// Ends the listening; true when a notice came.
    pub fn finish(self) -> bool {
        self.done.store(true, Ordering::Relaxed);
        // A listener that panicked heard nothing it could act on.
        let _ = self.thread.join();
        self.heard.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("host", &self.host)
            .finish()
    }
}

impl Cluster {
    /// Starts MPI and finds this rank.
    pub fn join() -> Result<Cluster, ClusterError> {
        let (universe, threading) =
            mpi::initialize_with_threading(mpi::Threading::Multiple).ok_or(ClusterError::Init)?;
        let world = universe.world();
        let rank = usize::try_from(world.rank()).map_err(|_| ClusterError::Init)?;
        let size = usize::try_from(world.size()).map_err(|_| ClusterError::Init)?;
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Ok(Cluster {
            _universe: universe,
            world,
            rank,
            size,
            host,
            threads: threading == mpi::Threading::Multiple,
        })
    }

    /// This process's rank, from 0.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks there are.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The host this rank runs on (MPI's processor name).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Waits until every rank is here, at most `bound`.
    pub fn barrier(&self, what: &str, bound: Duration) -> Result<(), ClusterError> {
        let start = Instant::now();
        let mut request = self.world.immediate_barrier();
        loop {
            match request.test() {
                Ok(_) => return Ok(()),
                Err(pending) => request = pending,
            }
            if start.elapsed() >= bound {
                // MPI still owns the request: dropping it unfinished aborts
                // the process, so it is left to the job's end.
                std::mem::forget(request);
                return Err(ClusterError::Timeout {
                    what: what.to_owned(),
                    after: bound,
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until every rank is here (at most `bound`) and returns the
    /// largest of the ranks' `status`: how every rank learns at once that
    /// one of them has stopped.
    pub fn agree(&self, what: &str, status: u32, bound: Duration) -> Result<u32, ClusterError> {
        self.barrier(what, bound)?;
        let mut largest = 0u32;
        self.world.all_reduce_into(
            &status,
            &mut largest,
            mpi::collective::SystemOperation::max(),
        );
        Ok(largest)
    }

    /// Every rank's `bytes`, in rank order, at rank 0 (`None` elsewhere).
    /// Starts with a barrier bounded by `bound`, so that a rank that never
    /// comes makes it an error rather than a hang.
    pub fn gather(
        &self,
        bytes: &[u8],
        bound: Duration,
    ) -> Result<Option<Vec<Vec<u8>>>, ClusterError> {
        self.barrier("collecting the ranks' results", bound)?;
        let root = self.world.process_at_rank(0);
        let len = bytes.len() as u64;
        if self.rank != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return Ok(None);
        }
        let mut lens = vec![0u64; self.size];
        root.gather_into_root(&len, &mut lens[..]);
        let counts: Vec<i32> = lens.iter().map(|&n| n as i32).collect();
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |at, &n| {
                let here = *at;
                *at += n;
                Some(here)
            })
            .collect();
        let total = lens.iter().sum::<u64>() as usize;
        let mut all = vec![0u8; total];
        {
            let mut partition = mpi::datatype::PartitionMut::new(&mut all[..], counts, &displs[..]);
            root.gather_varcount_into_root(bytes, &mut partition);
        }
        let mut out = Vec::with_capacity(self.size);
        let mut at = 0usize;
        for &n in &lens {
            out.push(all[at..at + n as usize].to_vec());
            at += n as usize;
        }
        Ok(Some(out))
    }

    /// How far each rank's wall clock (`CLOCK_REALTIME`, which the
    /// reports' times are in) is from rank 0's, at rank 0 (`None`
    /// elsewhere): rank 0 sends each rank a message 8 times and notes its
    /// clock before sending and after the answer, which carries the rank's
    /// clock; the offset is the rank's clock less the middle of the round
    /// trip that took least time (Cristian's method), to within half of it.
    pub fn clock_offsets(&self, bound: Duration) -> Result<Option<Vec<ClockOffset>>, ClusterError> {
        const TRIPS: usize = 8;
        self.barrier("measuring the ranks' clocks", bound)?;
        let now = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64)
        };
        if self.rank != 0 {
            let root = self.world.process_at_rank(0);
            for _ in 0..TRIPS {
                let (_ping, _) = root.receive::<i64>();
                root.send(&now());
            }
            return Ok(None);
        }
        let mut out = vec![ClockOffset {
            rank: 0,
            offset_ns: 0,
            round_trip_ns: 0,
        }];
        for rank in 1..self.size {
            let peer = self.world.process_at_rank(rank as i32);
            let mut best: Option<ClockOffset> = None;
            for _ in 0..TRIPS {
                let sent = now();
                peer.send(&sent);
                let (theirs, _) = peer.receive::<i64>();
                let back = now();
                let trip = ClockOffset {
                    rank,
                    offset_ns: theirs - (sent + (back - sent) / 2),
                    round_trip_ns: back - sent,
                };
                if best.is_none_or(|b| trip.round_trip_ns < b.round_trip_ns) {
                    best = Some(trip);
                }
            }
            out.extend(best);
        }
        Ok(Some(out))
    }

    /// Listens for another rank's stop notice while this rank runs, and
    /// stops this rank's jobs (raising SIGINT, as Ctrl-C does) when one
    /// comes: a failure elsewhere ends the run here within moments rather
    /// than at the end of the group. `None` where MPI cannot take calls
    /// from two threads at once: the run then stops at its next group.
    pub fn listen_for_stop(&self) -> Option<StopListener> {
        if !self.threads || self.size < 2 {
            return None;
        }
        let done = Arc::new(AtomicBool::new(false));
        let heard = Arc::new(AtomicBool::new(false));
        let (until, flag) = (Arc::clone(&done), Arc::clone(&heard));
        let thread = std::thread::Builder::new()
            .name("mpi-stop".into())
            .spawn(move || {
                let world = SimpleCommunicator::world();
                while !until.load(Ordering::Relaxed) {
                    if let Some(status) = world.any_process().immediate_probe_with_tag(STOP_TAG) {
                        let from = world.process_at_rank(status.source_rank());
                        let (_rank, _) = from.receive_with_tag::<u32>(STOP_TAG);
                        flag.store(true, Ordering::Relaxed);
                        let _ = rustix::process::kill_process(
                            rustix::process::getpid(),
                            rustix::process::Signal::INT,
                        );
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .ok()?;
        Some(StopListener {
            done,
            heard,
            thread,
        })
    }

    /// Tells every other rank that this one has stopped (its listener, if
    /// it has one, stops its jobs).
    pub fn tell_others_to_stop(&self) {
        for rank in (0..self.size).filter(|&r| r != self.rank) {
            self.world
                .process_at_rank(rank as i32)
                .send_with_tag(&(self.rank as u32), STOP_TAG);
        }
    }

    /// Receives the stop notices nobody listened for any more (sent while
    /// this rank was already past its run), so none is left at the end.
    pub fn drain_stop_notices(&self) {
        while let Some(status) = self.world.any_process().immediate_probe_with_tag(STOP_TAG) {
            let (_rank, _) = self
                .world
                .process_at_rank(status.source_rank())
                .receive_with_tag::<u32>(STOP_TAG);
        }
    }

    /// Ends every rank's process with `code` (MPI_Abort).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
