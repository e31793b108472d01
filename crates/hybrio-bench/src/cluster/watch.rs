//! A rank's watch on the others: a thread that says this rank is alive,
//! takes the other ranks' notices, and at rank 0 finds the ranks that went
//! silent. Its messages never wait on a rank that is gone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

// Here, where the watch finds them, not in mod.rs: mod.rs uses the watch,
// so the watch takes nothing from mod.rs.
/// A rank that stopped answering.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LostRank {
    /// The rank.
    pub rank: usize,
    /// Its host.
    pub host: String,
    /// When rank 0 last heard from it, in ms after the ranks joined.
    pub last_heard_ms: u64,
}

/// How often each rank tells rank 0 it is alive, and rank 0 tells each rank.
const BEAT_EVERY: Duration = Duration::from_millis(500);

/// A rank not heard from for this long is lost: killed, or its host is
/// down (a rank busy with I/O still answers, as a thread of its own does).
pub const SILENCE: Duration = Duration::from_secs(4);

/// After a rank is lost, how long the others have to finish the run and
/// report before every rank is ended (MPI_Abort): the last resort, should
/// a second rank be lost while the others regroup.
const WIND_UP: Duration = Duration::from_secs(60);

/// The tag of the notice a rank whose run ended early sends every other rank.
const STOP_TAG: i32 = 77;
/// The tag of "I am alive" (each rank to rank 0, rank 0 to each rank).
const BEAT_TAG: i32 = 78;
/// The tag of rank 0's notice that a rank is lost: its rank and when it
/// was last heard from.
const LOST_TAG: i32 = 79;
/// The tag of "I am done, expect no more from me" (at [`super::Cluster`]'s end).
const BYE_TAG: i32 = 80;

/// What a rank's watch has heard, shared with the rank's own thread.
#[derive(Debug, Default)]
struct Heard {
    /// Tells the watch to say goodbye and end.
    done: AtomicBool,
    /// Another rank's stop notice came.
    stop: AtomicBool,
    /// This rank asks its watch to tell the others it has stopped.
    send_stop: AtomicBool,
    /// The ranks lost so far, in the order they were found lost.
    lost: Mutex<Vec<LostRank>>,
}

impl Heard {
    fn lost(&self) -> std::sync::MutexGuard<'_, Vec<LostRank>> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lose(&self, rank: usize, host: &str, last_heard_ms: u64) {
        let mut lost = self.lost();
        if lost.iter().all(|l| l.rank != rank) {
            lost.push(LostRank {
                rank,
                host: host.to_owned(),
                last_heard_ms,
            });
        }
    }
}

/// The thread that keeps in touch with the other ranks.
#[derive(Debug)]
pub(super) struct Watch {
    heard: Arc<Heard>,
    thread: JoinHandle<()>,
}

/// Stops this process's jobs as Ctrl-C does.
fn interrupt_own_jobs() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::INT);
}

impl Watch {
    /// Starts the thread that keeps in touch with the other ranks: `None`
    /// when no thread can be started (the run goes on without it).
    pub(super) fn start(rank: usize, size: usize, hosts: Vec<String>) -> Option<Watch> {
        let heard = Arc::new(Heard::default());
        let shared = Arc::clone(&heard);
        let thread = std::thread::Builder::new()
            .name("mpi-watch".into())
            .spawn(move || watch(&shared, rank, size, &hosts))
            .ok()?;
        Some(Watch { heard, thread })
    }

    /// The ranks lost so far.
    pub(super) fn lost(&self) -> Vec<LostRank> {
        self.heard.lost().clone()
    }

    /// How many ranks are lost so far.
    pub(super) fn lost_count(&self) -> usize {
        self.heard.lost().len()
    }

    /// True when another rank's stop notice has come.
    pub(super) fn stop_heard(&self) -> bool {
        self.heard.stop.load(Ordering::Relaxed)
    }

    /// Asks the watch to tell every other rank still answering that this
    /// one has stopped.
    pub(super) fn send_stop(&self) {
        self.heard.send_stop.store(true, Ordering::Relaxed);
    }

    /// Says goodbye to the ranks it keeps in touch with and ends.
    pub(super) fn finish(self) {
        self.heard.done.store(true, Ordering::Relaxed);
        // A watch that panicked has nothing left to say.
        let _ = self.thread.join();
    }
}

/// The payload of the notices whose sender and tag say it all.
static EMPTY_NOTICE: [u64; 1] = [0];

/// Notices on their way. They are sent without waiting for them to
/// arrive, so that a rank that is gone (over TCP: its connection refused,
/// and a blocking send never returns) cannot hold up the watch.
#[derive(Default)]
struct Outbox {
    pending: Vec<(
        usize,
        mpi::request::Request<'static, [u64], mpi::request::StaticScope>,
    )>,
}

impl Outbox {
    /// Starts sending `payload` to `rank`.
    fn send(&mut self, world: &SimpleCommunicator, rank: usize, payload: &'static [u64], tag: i32) {
        let request = world.process_at_rank(rank as i32).immediate_send_with_tag(
            mpi::request::StaticScope,
            payload,
            tag,
        );
        self.pending.push((rank, request));
    }

    /// Lets go of the notices that have left.
    fn poll(&mut self) {
        let mut still = Vec::with_capacity(self.pending.len());
        for (rank, request) in self.pending.drain(..) {
            if let Err(request) = request.test() {
                still.push((rank, request));
            }
        }
        self.pending = still;
    }

    /// Gives up the notices to `rank`, which is gone: MPI keeps them, as a
    /// request dropped unfinished would abort the process.
    fn give_up(&mut self, rank: usize) {
        let (gone, still): (Vec<_>, Vec<_>) =
            self.pending.drain(..).partition(|(to, _)| *to == rank);
        self.pending = still;
        gone.into_iter().for_each(std::mem::forget);
    }

    /// Waits up to `bound` for every notice to leave, then gives up the rest.
    fn settle(mut self, bound: Duration) {
        let start = Instant::now();
        while !self.pending.is_empty() && start.elapsed() < bound {
            self.poll();
            std::thread::sleep(Duration::from_millis(1));
        }
        self.pending.into_iter().for_each(std::mem::forget);
    }
}

/// The watch's loop: takes the other ranks' notices (stop, lost, alive,
/// goodbye), says this rank is alive, and at rank 0 finds the ranks not
/// heard from for [`SILENCE`], which it tells the others are lost. A rank
/// that no longer hears from rank 0 ends itself: nobody else can report.
fn watch(heard: &Heard, rank: usize, size: usize, hosts: &[String]) {
    let world = SimpleCommunicator::world();
    let mut outbox = Outbox::default();
    let start = Instant::now();
    let mut last_heard = vec![start; size];
    // Ranks not to expect anything from any more (lost, or said goodbye),
    // and not to send to.
    let mut quiet = vec![false; size];
    quiet[rank] = true;
    let mut next_beat = start;
    let mut first_loss: Option<Instant> = None;
    // The ranks this one keeps in touch with: rank 0 with all, the others with rank 0.
    let peers: Vec<usize> = if rank == 0 {
        (1..size).collect()
    } else {
        vec![0]
    };
    let take = |tag: i32| {
        world
            .any_process()
            .immediate_matched_probe_with_tag(tag)
            .map(|(message, status)| {
                let mut payload = [0u64; 2];
                message.matched_receive_into(&mut payload[..]);
                (status.source_rank() as usize, payload)
            })
    };
    loop {
        let now = Instant::now();
        outbox.poll();
        while take(STOP_TAG).is_some() {
            heard.stop.store(true, Ordering::Relaxed);
            interrupt_own_jobs();
        }
        while let Some((from, _)) = take(BEAT_TAG) {
            last_heard[from] = now;
        }
        while let Some((from, _)) = take(BYE_TAG) {
            quiet[from] = true;
        }
        while let Some((_, [who, last_heard_ms])) = take(LOST_TAG) {
            let who = who as usize;
            if who < size {
                quiet[who] = true;
                outbox.give_up(who);
                heard.lose(who, &hosts[who], last_heard_ms);
                first_loss.get_or_insert(now);
                interrupt_own_jobs();
            }
        }
        if heard.send_stop.swap(false, Ordering::Relaxed) {
            for other in (0..size).filter(|&r| !quiet[r]) {
                outbox.send(&world, other, &EMPTY_NOTICE, STOP_TAG);
            }
        }
        if heard.done.load(Ordering::Relaxed) {
            break;
        }
        if now >= next_beat {
            next_beat = now + BEAT_EVERY;
            for &peer in peers.iter().filter(|&&p| !quiet[p]) {
                outbox.send(&world, peer, &EMPTY_NOTICE, BEAT_TAG);
            }
        }
        if rank == 0 {
            let silent: Vec<usize> = peers
                .iter()
                .copied()
                .filter(|&p| !quiet[p] && now.duration_since(last_heard[p]) > SILENCE)
                .collect();
            for &lost in &silent {
                quiet[lost] = true;
                outbox.give_up(lost);
                let last_heard_ms = last_heard[lost].duration_since(start).as_millis() as u64;
                heard.lose(lost, &hosts[lost], last_heard_ms);
                // Kept for MPI until sent: 16 bytes per lost rank and rank told.
                for &peer in peers.iter().filter(|&&p| !quiet[p]) {
                    let notice: &'static [u64] = Box::leak(Box::new([lost as u64, last_heard_ms]));
                    outbox.send(&world, peer, notice, LOST_TAG);
                }
            }
            if !silent.is_empty() {
                first_loss.get_or_insert(now);
                interrupt_own_jobs();
            }
        } else if !quiet[0] && now.duration_since(last_heard[0]) > SILENCE {
            // Every rank finds this on its own, so each ends itself: an
            // MPI_Abort could end a rank 0 that only gave this one up
            // (stopped for a while, it came back too late) mid-report.
            eprintln!(
                "hybrio: rank {rank} ({}): rank 0 ({}) has not been heard from for {} s (killed, or its host is down): there is no report",
                hosts[rank],
                hosts[0],
                SILENCE.as_secs()
            );
            std::process::exit(1);
        }
        if first_loss.is_some_and(|at| now.duration_since(at) > WIND_UP) {
            eprintln!(
                "hybrio: rank {rank} ({}): the ranks still answering could not finish within {} s of losing one: ending every rank",
                hosts[rank],
                WIND_UP.as_secs()
            );
            world.abort(1);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for &peer in peers.iter().filter(|&&p| !quiet[p]) {
        outbox.send(&world, peer, &EMPTY_NOTICE, BYE_TAG);
    }
    outbox.settle(Duration::from_secs(1));
}
