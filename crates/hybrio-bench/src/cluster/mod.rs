//! The ranks of an MPI job (`hybrio --mpi` under `mpirun`): who this
//! process is, agreements that give up instead of hanging, the bytes every
//! rank sends to rank 0, and a watch on the other ranks. A rank that stops
//! answering (killed, its host gone) is noticed within [`SILENCE`]: rank 0
//! names it, stops the others' jobs, and the ranks still answering finish
//! the run among themselves. Built with the `mpi` feature only.

mod watch;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Root, *};

use watch::Watch;
pub use watch::{LostRank, SILENCE};

/// What went wrong between the ranks.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// MPI did not start.
    #[error("MPI did not start (run hybrio --mpi under mpirun)")]
    Init,
    /// A barrier waited its whole bound.
    #[error(
        "{what}: not every rank arrived within {} s (a rank is stuck or far behind)",
        .after.as_secs()
    )]
    Timeout {
        /// Which barrier.
        what: String,
        /// How long it waited.
        after: Duration,
    },
    /// Ranks stopped answering while this one waited for them: the others
    /// go on without them ([`Cluster::regroup`]).
    #[error("{what}: rank(s) {ranks:?} stopped answering")]
    Lost {
        /// What this rank was waiting for.
        what: String,
        /// The ranks lost so far.
        ranks: Vec<usize>,
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

/// The ranks still answering, once some are lost: a communicator of their
/// own, so that agreements among them never wait for the lost.
struct Living {
    comm: SimpleCommunicator,
    /// The members' ranks in the whole job, in order (rank 0 first).
    members: Vec<usize>,
}

/// This process's place among the ranks.
pub struct Cluster {
    world: SimpleCommunicator,
    living: RefCell<Option<Living>>,
    rank: usize,
    size: usize,
    /// Every rank's host, by rank.
    hosts: Vec<String>,
    /// `None` where MPI cannot take calls from two threads at once, or
    /// where there is one rank: a failure then ends the others at their
    /// next agreement, and a lost rank is not noticed.
    watch: Option<Watch>,
    // Finalizes MPI when dropped, after everything above, unless a rank
    // was lost: MPI_Finalize waits for every rank, the lost one too.
    universe: Option<Universe>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("host", &self.host())
            .finish()
    }
}

/// The longest host name the ranks exchange.
const HOST_BYTES: usize = 256;

impl Cluster {
    /// Starts MPI, finds this rank and every rank's host, and starts
    /// keeping in touch with the others.
    pub fn join() -> Result<Cluster, ClusterError> {
        let (universe, threading) =
            mpi::initialize_with_threading(mpi::Threading::Multiple).ok_or(ClusterError::Init)?;
        let world = universe.world();
        let rank = usize::try_from(world.rank()).map_err(|_| ClusterError::Init)?;
        let size = usize::try_from(world.size()).map_err(|_| ClusterError::Init)?;
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        let mut mine = [0u8; HOST_BYTES];
        let len = host.len().min(HOST_BYTES);
        mine[..len].copy_from_slice(&host.as_bytes()[..len]);
        let mut all = vec![0u8; HOST_BYTES * size];
        world.all_gather_into(&mine[..], &mut all[..]);
        let hosts: Vec<String> = all
            .chunks(HOST_BYTES)
            .map(|name| {
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                String::from_utf8_lossy(&name[..end]).into_owned()
            })
            .collect();
        let watch = (threading == mpi::Threading::Multiple && size > 1)
            .then(|| Watch::start(rank, size, hosts.clone()))
            .flatten();
        Ok(Cluster {
            world,
            living: RefCell::new(None),
            rank,
            size,
            hosts,
            watch,
            universe: Some(universe),
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
        &self.hosts[self.rank]
    }

    /// The ranks lost so far (rank 0 finds them; the others hear it).
    pub fn lost(&self) -> Vec<LostRank> {
        self.watch.as_ref().map_or_else(Vec::new, Watch::lost)
    }

    /// True when another rank's stop notice has come (and stopped this
    /// rank's jobs).
    pub fn stop_heard(&self) -> bool {
        self.watch.as_ref().is_some_and(Watch::stop_heard)
    }

    /// How many ranks are lost but still in the communicator agreements use.
    fn unaccounted_losses(&self) -> bool {
        let lost = self.watch.as_ref().map_or(0, Watch::lost_count);
        let left_out = self
            .living
            .borrow()
            .as_ref()
            .map_or(0, |l| self.size - l.members.len());
        lost > left_out
    }

    /// Makes the ranks still answering the ones agreements are among, when
    /// ranks were lost since the last time. Every rank still answering
    /// calls it, having heard of the same losses.
    pub fn regroup(&self) -> Result<(), ClusterError> {
        if !self.unaccounted_losses() {
            return Ok(());
        }
        let lost: Vec<i32> = self.lost().iter().map(|l| l.rank as i32).collect();
        let group = self.world.group().exclude(&lost);
        let comm = self
            .world
            .split_by_subgroup(&group)
            .ok_or(ClusterError::Init)?;
        let members = (0..self.size)
            .filter(|r| !lost.contains(&(*r as i32)))
            .collect();
        *self.living.borrow_mut() = Some(Living { comm, members });
        Ok(())
    }

    /// `f` on the communicator agreements are among (every rank, or those
    /// still answering) and its members' ranks in the whole job.
    fn among_living<R>(&self, f: impl FnOnce(&SimpleCommunicator, &[usize]) -> R) -> R {
        match &*self.living.borrow() {
            Some(living) => f(&living.comm, &living.members),
            None => f(&self.world, &(0..self.size).collect::<Vec<_>>()),
        }
    }

    /// Waits until every rank still answering is here, at most `bound`;
    /// gives up at once (with [`ClusterError::Lost`]) when a rank is lost
    /// meanwhile, or was before: call [`Cluster::regroup`] and try again.
    pub fn barrier(&self, what: &str, bound: Duration) -> Result<(), ClusterError> {
        let start = Instant::now();
        let lost = |cluster: &Cluster| ClusterError::Lost {
            what: what.to_owned(),
            ranks: cluster.lost().iter().map(|l| l.rank).collect(),
        };
        if self.unaccounted_losses() {
            return Err(lost(self));
        }
        let mut request = self.among_living(|comm, _| comm.immediate_barrier());
        loop {
            match request.test() {
                Ok(_) => return Ok(()),
                Err(pending) => request = pending,
            }
            let lost_meanwhile = self.unaccounted_losses();
            if lost_meanwhile || start.elapsed() >= bound {
                // MPI still owns the request: dropping it unfinished aborts
                // the process, so it is left to the job's end.
                std::mem::forget(request);
                return Err(if lost_meanwhile {
                    lost(self)
                } else {
                    ClusterError::Timeout {
                        what: what.to_owned(),
                        after: bound,
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until every rank still answering is here (at most `bound`)
    /// and returns the largest of the ranks' `status`: how every rank
    /// learns at once that one of them has stopped.
    pub fn agree(&self, what: &str, status: u32, bound: Duration) -> Result<u32, ClusterError> {
        self.barrier(what, bound)?;
        let mut largest = 0u32;
        self.among_living(|comm, _| {
            comm.all_reduce_into(
                &status,
                &mut largest,
                mpi::collective::SystemOperation::max(),
            );
        });
        Ok(largest)
    }

    /// Every rank's `bytes`, in rank order, at rank 0 (`None` elsewhere),
    /// from the ranks still answering. Starts with a barrier bounded by
    /// `bound`, so that a rank that never comes makes it an error rather
    /// than a hang.
    pub fn gather(
        &self,
        bytes: &[u8],
        bound: Duration,
    ) -> Result<Option<Vec<Vec<u8>>>, ClusterError> {
        self.barrier("collecting the ranks' results", bound)?;
        Ok(self.among_living(|comm, members| {
            let root = comm.process_at_rank(0);
            let len = bytes.len() as u64;
            if self.rank != 0 {
                root.gather_into(&len);
                root.gather_varcount_into(bytes);
                return None;
            }
            let mut lens = vec![0u64; members.len()];
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
                let mut partition =
                    mpi::datatype::PartitionMut::new(&mut all[..], counts, &displs[..]);
                root.gather_varcount_into_root(bytes, &mut partition);
            }
            let mut out = Vec::with_capacity(members.len());
            let mut at = 0usize;
            for &n in &lens {
                out.push(all[at..at + n as usize].to_vec());
                at += n as usize;
            }
            Some(out)
        }))
    }

    /// How far each rank's wall clock (`CLOCK_REALTIME`, which the
    /// reports' times are in) is from rank 0's, at rank 0 (`None`
    /// elsewhere), for the ranks still answering: rank 0 sends each rank a
    /// message 8 times and notes its clock before sending and after the
    /// answer, which carries the rank's clock; the offset is the rank's
    /// clock less the middle of the round trip that took least time
    /// (Cristian's method), to within half of it.
    pub fn clock_offsets(&self, bound: Duration) -> Result<Option<Vec<ClockOffset>>, ClusterError> {
        const TRIPS: usize = 8;
        self.barrier("measuring the ranks' clocks", bound)?;
        let now = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64)
        };
        Ok(self.among_living(|comm, members| {
            if self.rank != 0 {
                let root = comm.process_at_rank(0);
                for _ in 0..TRIPS {
                    let (_ping, _) = root.receive::<i64>();
                    root.send(&now());
                }
                return None;
            }
            let mut out = vec![ClockOffset {
                rank: 0,
                offset_ns: 0,
                round_trip_ns: 0,
            }];
            for (index, &rank) in members.iter().enumerate().skip(1) {
                let peer = comm.process_at_rank(index as i32);
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
            Some(out)
        }))
    }

    /// Tells every other rank still answering that this one has stopped
    /// (their watch stops their jobs). This rank's watch sends the notices,
    /// within moments, without waiting on a rank that is gone.
    pub fn tell_others_to_stop(&self) {
        // No watch: one rank, or MPI without threads, where nobody listens
        // for the notices either.
        if let Some(watch) = &self.watch {
            watch.send_stop();
        }
    }

    /// Ends every rank's process with `code` (MPI_Abort).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let lost = !self.lost().is_empty();
        // The watch says goodbye before MPI ends.
        if let Some(watch) = self.watch.take() {
            watch.finish();
        }
        *self.living.get_mut() = None;
        if lost {
            // Not finalized: the process ends without MPI_Finalize, which
            // `mpirun --enable-recovery` allows.
            std::mem::forget(self.universe.take());
        }
    }
}
