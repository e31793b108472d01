//! Probe: what each way of reading a cached 4 KiB block from tokio tasks costs here.
use std::future::poll_fn;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Instant;

use io_uring::{IoUring, opcode, types};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

const TASKS: usize = 64;
const BS: usize = 4096;

fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

struct Slot {
    result: Option<i32>,
    waker: Option<Waker>,
}
struct State {
    ring: IoUring,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
}
struct Uring {
    state: Mutex<State>,
}

impl Uring {
    fn drain(state: &mut State) {
        let State { ring, slots, .. } = state;
        for cqe in ring.completion() {
            let i = cqe.user_data() as usize;
            if let Some(slot) = slots[i].as_mut() {
                slot.result = Some(cqe.result());
                if let Some(w) = slot.waker.take() {
                    w.wake();
                }
            }
        }
    }
    async fn read(&self, fd: RawFd, buf: &mut [u8], off: u64) -> i32 {
        let i;
        {
            let mut st = self.state.lock().unwrap();
            i = match st.free.pop() {
                Some(i) => i,
                None => {
                    st.slots.push(None);
                    st.slots.len() - 1
                }
            };
            st.slots[i] = Some(Slot {
                result: None,
                waker: None,
            });
            let e = opcode::Read::new(types::Fd(fd), buf.as_mut_ptr(), buf.len() as u32)
                .offset(off)
                .build()
                .user_data(i as u64);
            // SAFETY: the buffer is the calling task's, which awaits this read before it touches or drops it (the probe drops no future early).
            unsafe { st.ring.submission().push(&e).unwrap() };
            st.ring.submit().unwrap();
            Self::drain(&mut st);
        }
        poll_fn(|cx| {
            let mut st = self.state.lock().unwrap();
            let slot = st.slots[i].as_mut().unwrap();
            match slot.result {
                Some(r) => {
                    st.slots[i] = None;
                    st.free.push(i);
                    Poll::Ready(r)
                }
                None => {
                    slot.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

async fn reaper(u: Arc<Uring>, efd: OwnedFd) {
    // SAFETY: `efd` is an OwnedFd, so its descriptor is open; the AsyncFd owns it until
    // it drops, so it stays open and the same.
    let afd = unsafe { AsyncFd::register_with_interest(efd, tokio::io::Interest::READABLE) }
        .unwrap_or_else(|_| panic!("register the eventfd with tokio"));
    loop {
        let mut g = afd.readable().await.unwrap();
        let mut v = 0u64;
        // SAFETY: `v` is 8 writable bytes, as an eventfd read needs.
        unsafe { libc::read(afd.as_raw_fd(), &mut v as *mut u64 as *mut _, 8) };
        g.clear_ready();
        let mut st = u.state.lock().unwrap();
        Uring::drain(&mut st);
    }
}

/// `pread` of `buf` at `off` on tokio's blocking pool (the buffer moves there and back).
async fn pread_blocking(fd: RawFd, buf: &mut Vec<u8>, off: u64) -> i64 {
    let mut moved = std::mem::take(buf);
    let (n, moved) = tokio::task::spawn_blocking(move || {
        // SAFETY: the buffer moved here; nothing else uses it during the call.
        let n = unsafe { libc::pread(fd, moved.as_mut_ptr().cast(), moved.len(), off as i64) };
        (n, moved)
    })
    .await
    .expect("the blocking pool ran the read");
    *buf = moved;
    n as i64
}

#[derive(Clone, Copy, Debug)]
enum Way {
    Floor,
    InTask,
    Nowait,
    SpawnBlocking,
    TokioFs,
    Uring,
    Hybrio,
}

/// How a way shows in the ratios.
fn name(way: Way) -> &'static str {
    match way {
        Way::Floor => "floor",
        Way::InTask => "pread in the task",
        Way::Nowait => "RWF_NOWAIT in the task",
        Way::SpawnBlocking => "spawn_blocking",
        Way::TokioFs => "tokio::fs",
        Way::Uring => "one ring",
        Way::Hybrio => "hybrio-tokio",
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args[1].clone();
    let per_task: usize = args[2].parse().unwrap();
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().unwrap());
    let file = std::fs::File::open(&path).unwrap();
    let blocks = file.metadata().unwrap().len() / BS as u64;
    let fd = file.as_raw_fd();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ring = IoUring::new(256).unwrap();
    // SAFETY: no memory is passed.
    let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    assert!(raw >= 0, "eventfd: {}", std::io::Error::last_os_error());
    // SAFETY: a new descriptor, open, that nothing else owns.
    let efd = unsafe { OwnedFd::from_raw_fd(raw) };
    ring.submitter().register_eventfd(efd.as_raw_fd()).unwrap();
    let uring = Arc::new(Uring {
        state: Mutex::new(State {
            ring,
            slots: Vec::new(),
            free: Vec::new(),
        }),
    });
    rt.spawn(reaper(uring.clone(), efd));
    let ways = [
        Way::Floor,
        Way::InTask,
        Way::Nowait,
        Way::SpawnBlocking,
        Way::TokioFs,
        Way::Uring,
        Way::Hybrio,
    ];
    let hybrio_file = Arc::new(
        rt.block_on(hybrio_tokio::fs::File::open(&path))
            .expect("open the file through hybrio-tokio"),
    );
    let names: Vec<&'static str> = ways.iter().map(|&way| name(way)).collect();
    let mut results = tprobe::Rounds::new(&names, "reads/s");
    for round in 0..rounds {
        println!("round {round}");
        for index in tprobe::in_turn(ways.len(), round) {
            let way = ways[index];
            let ops = TASKS * per_task;
            let cpu0 = tprobe::cpu_ns();
            let t0 = Instant::now();
            let lat: Vec<u32> = match way {
                Way::Floor => {
                    let hs: Vec<_> = (0..2)
                        .map(|t| {
                            std::thread::spawn(move || {
                                let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
                                let mut buf = vec![0u8; BS];
                                let mut lat = Vec::with_capacity(ops / 2);
                                for _ in 0..ops / 2 {
                                    let off = (rng(&mut seed) % blocks) * BS as u64;
                                    let s = Instant::now();
                                    // SAFETY: the buffer is this task's own, alive and unshared for the call.
                                    let n = unsafe {
                                        libc::pread(fd, buf.as_mut_ptr().cast(), BS, off as i64)
                                    };
                                    assert_eq!(n, BS as isize);
                                    lat.push(s.elapsed().as_nanos() as u32);
                                }
                                lat
                            })
                        })
                        .collect();
                    hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
                }
                _ => rt.block_on(async {
                    let mut hs = Vec::new();
                    for t in 0..TASKS {
                        let uring = uring.clone();
                        let path = path.clone();
                        let hybrio_file = hybrio_file.clone();
                        hs.push(tokio::spawn(async move {
                            let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
                            let mut buf = vec![0u8; BS];
                            let mut lat = Vec::with_capacity(per_task);
                            let mut tf = match way {
                                Way::TokioFs => Some(tokio::fs::File::open(&path).await.unwrap()),
                                _ => None,
                            };
                            for _ in 0..per_task {
                                let off = (rng(&mut seed) % blocks) * BS as u64;
                                let s = Instant::now();
                                let n = match way {
                                    // SAFETY: the buffer is this task's own, alive and unshared for the call.
                                    Way::InTask => unsafe {
                                        libc::pread(fd, buf.as_mut_ptr().cast(), BS, off as i64)
                                            as i64
                                    },
                                    Way::Nowait => {
                                        let n = {
                                            let iov = libc::iovec {
                                                iov_base: buf.as_mut_ptr().cast(),
                                                iov_len: BS,
                                            };
                                            // SAFETY: the buffer is this task's own, alive and unshared for the call.
                                            unsafe {
                                                libc::preadv2(
                                                    fd,
                                                    &iov,
                                                    1,
                                                    off as i64,
                                                    libc::RWF_NOWAIT,
                                                )
                                            }
                                        };
                                        if n < 0 {
                                            pread_blocking(fd, &mut buf, off).await
                                        } else {
                                            n as i64
                                        }
                                    }
                                    Way::SpawnBlocking => pread_blocking(fd, &mut buf, off).await,
                                    Way::TokioFs => {
                                        let f = tf.as_mut().unwrap();
                                        f.seek(std::io::SeekFrom::Start(off)).await.unwrap();
                                        f.read_exact(&mut buf).await.unwrap() as i64
                                    }
                                    Way::Uring => uring.read(fd, &mut buf, off).await as i64,
                                    Way::Hybrio => {
                                        let (n, back) = hybrio_file
                                            .read_at(std::mem::take(&mut buf), off)
                                            .await;
                                        buf = back;
                                        n.expect("read through hybrio-tokio") as i64
                                    }
                                    Way::Floor => unreachable!(),
                                };
                                assert_eq!(n, BS as i64, "{way:?}");
                                lat.push(s.elapsed().as_nanos() as u32);
                            }
                            lat
                        }));
                    }
                    let mut all = Vec::new();
                    for h in hs {
                        all.extend(h.await.unwrap());
                    }
                    all
                }),
            };
            let index = ways
                .iter()
                .position(|&w| w as u8 == way as u8)
                .expect("a way");
            results.record(index, tprobe::figure(ops as f64, t0, cpu0, lat));
        }
    }
    results.print_ratios(ways.len() - 1);
    println!("hybrio-tokio's reads: {:?}", hybrio_file.counts());
}
