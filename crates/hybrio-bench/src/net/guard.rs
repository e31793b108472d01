//! The guard of a network job's sockets: a thread that shuts them down when
//! the job's time is up or the run is interrupted. A shut-down socket ends
//! every wait on it at once (an accept fails, a receive returns 0 bytes, a
//! send fails), in whichever engine it waits, a synchronous call or a
//! receive outstanding in io_uring: so a receiver whose sender never comes,
//! or a sender whose receiver went away, ends with its job.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use socket2::Socket;

/// How often the guard looks at the interrupt flag (a Ctrl-C waits at most
/// this long); otherwise it sleeps until the deadline or a change of it. It
/// must not wake often: each wake-up takes a CPU from the job's threads
/// (polling every 5 ms put a ping-pong's p99 at 1.12-1.14 x fio's).
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// What the guard and the job share.
#[derive(Debug)]
struct Shared {
    /// The sockets to shut down (duplicates of the job's descriptors: a
    /// shutdown acts on the socket, whichever descriptor names it).
    sockets: Mutex<Vec<Socket>>,
    /// When to shut them down, in ns from `epoch`; `u64::MAX` for never.
    deadline_ns: AtomicU64,
    /// The job asked for a shutdown now.
    now: AtomicBool,
    /// The guard shut them down.
    fired: AtomicBool,
    /// The job is over: the guard leaves without a shutdown.
    done: AtomicBool,
    /// Wakes the guard when the deadline moves or the job ends.
    changed: Condvar,
    asleep: Mutex<()>,
}

/// A running guard; dropping it stops the thread.
#[derive(Debug)]
pub struct Guard {
    shared: Arc<Shared>,
    epoch: Instant,
    thread: Option<JoinHandle<()>>,
}

impl Guard {
    /// A guard that shuts `sockets` down at `deadline` (never, for `None`,
    /// unless the run is interrupted).
    pub fn start(sockets: Vec<Socket>, deadline: Option<Instant>) -> Guard {
        let epoch = Instant::now();
        let shared = Arc::new(Shared {
            sockets: Mutex::new(sockets),
            deadline_ns: AtomicU64::new(u64::MAX),
            now: AtomicBool::new(false),
            fired: AtomicBool::new(false),
            done: AtomicBool::new(false),
            changed: Condvar::new(),
            asleep: Mutex::new(()),
        });
        let guard_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("net guard".into())
            .spawn(move || watch(&guard_shared, epoch))
            .ok();
        let guard = Guard {
            shared,
            epoch,
            thread,
        };
        guard.set_deadline(deadline);
        guard
    }

    /// Guards `socket` too.
    pub fn add(&self, socket: Socket) {
        lock(&self.shared.sockets).push(socket);
    }

    /// Moves the deadline (`None`: no deadline).
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        let ns = deadline.map_or(u64::MAX, |d| {
            u64::try_from(d.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
        });
        self.shared.deadline_ns.store(ns, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        let _held = self.shared.asleep.lock().unwrap_or_else(|e| e.into_inner());
        self.shared.changed.notify_all();
    }

    /// Shuts the sockets down now: the peer said it is done, and waits
    /// still outstanding must end.
    /// Only receiving is shut down, so that the job can still say goodbye.
    pub fn release_now(&self) {
        self.shared.now.store(true, Ordering::Release);
        shut_down(&self.shared, std::net::Shutdown::Read);
    }

    /// True once the sockets were shut down (time up, interrupted, or released).
    pub fn fired(&self) -> bool {
        self.shared.fired.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.shared.done.store(true, Ordering::Release);
        self.wake();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock(sockets: &Mutex<Vec<Socket>>) -> std::sync::MutexGuard<'_, Vec<Socket>> {
    sockets.lock().unwrap_or_else(|e| e.into_inner())
}

fn watch(shared: &Shared, epoch: Instant) {
    let mut asleep = shared.asleep.lock().unwrap_or_else(|e| e.into_inner());
    while !shared.done.load(Ordering::Acquire) {
        let elapsed = u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let deadline = shared.deadline_ns.load(Ordering::Acquire);
        if hybrio::interrupt::requested()
            || elapsed >= deadline
            || shared.now.load(Ordering::Acquire)
        {
            if !shared.now.load(Ordering::Acquire) {
                shut_down(shared, std::net::Shutdown::Both);
            }
            return;
        }
        let wait = Duration::from_nanos(deadline - elapsed).min(LOOK_EVERY);
        asleep = shared
            .changed
            .wait_timeout(asleep, wait)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

fn shut_down(shared: &Shared, how: std::net::Shutdown) {
    shared.fired.store(true, Ordering::Release);
    for socket in lock(&shared.sockets).iter() {
        // An unconnected UDP socket says ENOTCONN, and is shut down all the
        // same: its receives return at once.
        let _ = socket.shutdown(how);
    }
}
