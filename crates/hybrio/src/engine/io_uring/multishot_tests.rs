//! io_uring's multishot receive (`recv_multishot`): what only it does, beyond
//! the conformance suite (which runs every socket test through it too).

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::time::{Duration, Instant};

use super::IoUringEngine;
use crate::buf::BufPool;
use crate::engine::testkit::{finish, take};
use crate::engine::{Engine, EngineConfig, EngineKind, QueueOutcome};
use crate::file::FileHandle;
use crate::probe;
use crate::request::{Completion, Request};

/// An io_uring engine whose sockets receive through multishot receives, or
/// `None` (with the reason printed) where the kernel has none.
fn multishot_engine(depth: u32, pool: &BufPool) -> Option<IoUringEngine> {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping: {reason}");
        return None;
    }
    let config = EngineConfig {
        recv_multishot: true,
        ..EngineConfig::with_depth(depth)
    };
    Some(IoUringEngine::new(&config, Some(pool)).unwrap())
}

/// Adds `socket`, or `None` (with the reason printed) where the kernel has
/// no provided-buffer rings.
fn add(engine: &mut IoUringEngine, socket: OwnedFd) -> Option<FileHandle> {
    match engine.add_socket(socket, "socket") {
        Ok(handle) => Some(handle),
        Err(e @ crate::Error::FileRefused { .. }) => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// A datagram socket connected to a multishot engine's socket, and that
/// socket's handle. Unix datagrams, not UDP: a Unix datagram is in the
/// receiver's queue when `send` returns, where loopback UDP hands it to a
/// softirq that a busy machine may run later, so the tests would depend on
/// when the datagrams arrive.
fn datagrams_into(engine: &mut IoUringEngine) -> Option<(UnixDatagram, FileHandle)> {
    let (a, b) = UnixDatagram::pair().unwrap();
    Some((a, add(engine, OwnedFd::from(b))?))
}

/// Datagram `n`: its number, then bytes that depend on it.
fn datagram(n: u32) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..40 + n as usize % 50)
        .map(|i| (i as u32 * 7 + n) as u8)
        .collect();
    bytes[..4].copy_from_slice(&n.to_le_bytes());
    bytes
}

fn queue(engine: &mut dyn Engine, request: Request, done: &mut Vec<Completion>) {
    match engine.queue(request) {
        QueueOutcome::Completed(completion) => done.push(completion),
        QueueOutcome::Queued => {}
        QueueOutcome::Busy(_) => panic!("busy below the depth"),
    }
}

/// The number of the datagram a receive got, after checking its bytes.
fn received(completion: &Completion) -> u32 {
    assert!(completion.result >= 4, "receive {completion:?}");
    let bytes = &completion.buf.as_slice()[..completion.result as usize];
    let n = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    assert_eq!(bytes, datagram(n).as_slice(), "datagram {n}");
    n
}

/// Receives outstanding in [`receives_waiting`].
const DEPTH: u32 = 16;

/// A multishot engine with [`DEPTH`] receives of 256 bytes committed on a
/// datagram socket, and the socket that sends to it.
struct Waiting {
    engine: IoUringEngine,
    sender: UnixDatagram,
    done: Vec<Completion>,
    /// Holds the receives' buffers.
    _pool: BufPool,
}

fn receives_waiting() -> Option<Waiting> {
    let pool = BufPool::new(DEPTH as usize, 256).unwrap();
    let mut engine = multishot_engine(DEPTH, &pool)?;
    let (sender, socket) = datagrams_into(&mut engine)?;
    let mut done = Vec::new();
    for n in 0..DEPTH {
        let request = Request::recv(socket, take(&pool, 256), u64::from(n));
        queue(&mut engine, request, &mut done);
    }
    engine.commit().unwrap();
    Some(Waiting {
        engine,
        sender,
        done,
        _pool: pool,
    })
}

#[test]
fn datagrams_beyond_the_provided_buffers_wait_in_the_socket_and_all_come_in_order() {
    // Receives of 1 MiB get the fewest buffers, 8: the 20 datagrams sent
    // while 16 receives wait fill them, the kernel ends the standing receive
    // (ENOBUFS) with 8 receives still waiting, and the rest of the
    // datagrams wait in the socket for the receive started again.
    const COUNT: usize = 20;
    let pool = BufPool::new(DEPTH as usize, 1 << 20).unwrap();
    let Some(mut engine) = multishot_engine(DEPTH, &pool) else {
        return;
    };
    let Some((sender, socket)) = datagrams_into(&mut engine) else {
        return;
    };
    let mut done = Vec::new();
    let mut queued = 0;
    let mut order = Vec::new();
    for round in 0.. {
        assert!(round < 10_000, "receives stopped after {order:?}");
        while engine.in_flight() < DEPTH as usize && queued < COUNT {
            let request = Request::recv(socket, take(&pool, 1 << 20), 0);
            queue(&mut engine, request, &mut done);
            queued += 1;
        }
        engine.commit().unwrap();
        if round == 0 {
            assert!(done.is_empty(), "nothing was sent yet");
            for n in 0..COUNT as u32 {
                sender.send(&datagram(n)).unwrap();
            }
        }
        if engine.in_flight() > 0 {
            engine.reap(1, usize::MAX, &mut done).unwrap();
        }
        order.extend(done.drain(..).map(|c| received(&c)));
        if order.len() == COUNT {
            break;
        }
    }
    assert_eq!(order, (0..COUNT as u32).collect::<Vec<_>>());
    assert!(
        engine.standing_receives_started() >= 2,
        "the kernel ran out of buffers, so the receive was started again: {}",
        engine.standing_receives_started()
    );
    finish(&mut engine, &mut done);
}

#[test]
fn one_reap_takes_a_batch_of_datagrams_and_publishes_the_cq_head_once() {
    let Some(Waiting {
        mut engine,
        sender,
        mut done,
        ..
    }) = receives_waiting()
    else {
        return;
    };
    for n in 0..DEPTH {
        sender.send(&datagram(n)).unwrap();
    }
    let commits = engine.cq_head_commits();
    let got = engine.reap(DEPTH as usize, usize::MAX, &mut done).unwrap();
    assert_eq!(got, DEPTH as usize);
    assert_eq!(
        engine.cq_head_commits() - commits,
        1,
        "one CQ head store for the batch"
    );
    let order: Vec<u32> = done.iter().map(received).collect();
    assert_eq!(order, (0..DEPTH).collect::<Vec<_>>());
    assert_eq!(
        engine.standing_receives_started(),
        1,
        "one standing receive served every request"
    );
    let ring = engine.counters().ring.unwrap();
    assert_eq!((ring.reaps, ring.completions), (1, u64::from(DEPTH)));
}

#[test]
fn a_stream_is_taken_in_parts_and_its_end_comes_to_every_receive_after() {
    let pool = BufPool::new(2, 300).unwrap();
    let Some(mut engine) = multishot_engine(2, &pool) else {
        return;
    };
    let (mut peer, ours) = UnixStream::pair().unwrap();
    let Some(socket) = add(&mut engine, OwnedFd::from(ours)) else {
        return;
    };
    let stream: Vec<u8> = (0..1000u32).map(|i| (i * 13 % 251) as u8).collect();
    let mut done = Vec::new();
    // The first receive sets the buffers' size (300); later ones take 128
    // bytes at a time, so a buffer is taken in parts.
    queue(
        &mut engine,
        Request::recv(socket, take(&pool, 300), 0),
        &mut done,
    );
    engine.commit().unwrap();
    peer.write_all(&stream).unwrap();
    let mut received = Vec::new();
    while received.len() < stream.len() {
        if engine.in_flight() == 0 {
            queue(
                &mut engine,
                Request::recv(socket, take(&pool, 128), 0),
                &mut done,
            );
            engine.commit().unwrap();
        }
        if engine.in_flight() > 0 {
            engine.reap(1, usize::MAX, &mut done).unwrap();
        }
        for got in done.drain(..) {
            assert!(got.result > 0, "receive at {}: {got:?}", received.len());
            assert!(got.result <= 300, "at most a buffer: {got:?}");
            received.extend_from_slice(&got.buf.as_slice()[..got.result as usize]);
        }
    }
    assert!(received == stream, "the stream came back different");
    drop(peer);
    for _ in 0..3 {
        queue(
            &mut engine,
            Request::recv(socket, take(&pool, 128), 0),
            &mut done,
        );
        finish(&mut engine, &mut done);
        let end = done.pop().expect("the receive completed");
        assert_eq!(end.result, 0, "the end of the stream, every time");
    }
}

#[test]
fn a_removed_socket_keeps_what_its_standing_receive_had_not_taken() {
    let pool = BufPool::new(2, 256).unwrap();
    let Some(mut engine) = multishot_engine(2, &pool) else {
        return;
    };
    let Some((sender, socket)) = datagrams_into(&mut engine) else {
        return;
    };
    let mut done = Vec::new();
    queue(
        &mut engine,
        Request::recv(socket, take(&pool, 256), 0),
        &mut done,
    );
    engine.commit().unwrap();
    sender.send(&datagram(0)).unwrap();
    finish(&mut engine, &mut done);
    assert_eq!(received(&done[0]), 0);
    // The standing receive goes with the socket: the next datagram stays in
    // the socket for whoever holds it now.
    let socket = UnixDatagram::from(OwnedFd::from(engine.remove_file(socket).unwrap()));
    sender.send(&datagram(1)).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut bytes = [0u8; 256];
    let n = socket.recv(&mut bytes).unwrap();
    assert_eq!(&bytes[..n], datagram(1).as_slice());
}

#[test]
fn dropping_the_engine_with_receives_waiting_returns_their_buffers() {
    let pool = BufPool::new(4, 256).unwrap();
    let Some(mut engine) = multishot_engine(4, &pool) else {
        return;
    };
    let Some((_sender, socket)) = datagrams_into(&mut engine) else {
        return;
    };
    let mut done = Vec::new();
    for _ in 0..4 {
        queue(
            &mut engine,
            Request::recv(socket, take(&pool, 256), 0),
            &mut done,
        );
    }
    engine.commit().unwrap();
    assert_eq!(engine.in_flight(), 4);
    assert_eq!(
        engine.reap(0, usize::MAX, &mut done).unwrap(),
        0,
        "nothing was sent"
    );
    // Nothing is ever sent: a drop that waited for data would never end,
    // and 5 s (against the few ms a drop takes) only tells that from a slow one.
    let started = Instant::now();
    drop(engine);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the drop waited for data"
    );
    assert_eq!(pool.available(), pool.count());
}

#[test]
fn a_shut_down_socket_ends_every_waiting_receive() {
    let pool = BufPool::new(4, 256).unwrap();
    let Some(mut engine) = multishot_engine(4, &pool) else {
        return;
    };
    // How a benchmark's guard ends a receiver's job: a shutdown from
    // another thread, on another descriptor of the socket.
    let (_peer, ours) = std::os::unix::net::UnixDatagram::pair().unwrap();
    let guard = ours.try_clone().unwrap();
    let Some(socket) = add(&mut engine, OwnedFd::from(ours)) else {
        return;
    };
    let mut done = Vec::new();
    for _ in 0..4 {
        let request = Request::recv(socket, take(&pool, 256), 0);
        queue(&mut engine, request, &mut done);
    }
    engine.commit().unwrap();
    let shutter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        let _ = guard.shutdown(std::net::Shutdown::Both);
    });
    finish(&mut engine, &mut done);
    shutter.join().unwrap();
    assert_eq!(done.iter().map(|c| c.result).collect::<Vec<_>>(), [0; 4]);
}

#[test]
fn a_reap_waits_for_its_batch_before_draining_what_arrived_since_the_last() {
    let Some(Waiting {
        mut engine,
        sender,
        mut done,
        ..
    }) = receives_waiting()
    else {
        return;
    };
    for n in 0..4 {
        sender.send(&datagram(n)).unwrap();
    }
    // A reap of at most 2 leaves the other 2 arrivals in the CQ.
    assert_eq!(engine.reap(4, 2, &mut done).unwrap(), 2);
    for n in 4..DEPTH {
        sender.send(&datagram(n)).unwrap();
    }
    let commits = engine.cq_head_commits();
    let want = DEPTH as usize - 2;
    assert_eq!(engine.reap(want, usize::MAX, &mut done).unwrap(), want);
    assert_eq!(
        engine.cq_head_commits() - commits,
        1,
        "the 2 left in the CQ and the 12 after them, drained at once"
    );
    let order: Vec<u32> = done.iter().map(received).collect();
    assert_eq!(order, (0..DEPTH).collect::<Vec<_>>());
}

/// Queues `request` on a committed-as-it-goes engine and reaps its
/// completion (a receive waits for what arrives).
fn complete(engine: &mut IoUringEngine, request: Request) -> Completion {
    let mut done = Vec::new();
    match engine.queue(request) {
        QueueOutcome::Completed(completion) => return completion,
        QueueOutcome::Queued => {}
        QueueOutcome::Busy(_) => panic!("busy with {} in flight", engine.in_flight()),
    }
    engine.commit().unwrap();
    while done.is_empty() {
        engine.reap(1, 1, &mut done).unwrap();
    }
    done.pop().unwrap()
}

/// Issue 44, defect 4: each socket's standing receive held one of the
/// ring's slots, of which there were twice the depth: at depth 1 with two
/// sockets listening, a send was refused as busy with nothing in flight
/// (and a driver spun for ever), and a third socket's receive failed with
/// EAGAIN although a datagram waited for it.
#[test]
fn standing_receives_take_no_room_of_the_depth() {
    let pool = BufPool::new(4, 4096).unwrap();
    let Some(mut engine) = multishot_engine(1, &pool) else {
        return;
    };
    let mut sockets = Vec::new();
    for n in 0..3 {
        let Some((sender, socket)) = datagrams_into(&mut engine) else {
            return;
        };
        sender.send(&datagram(n)).unwrap();
        sockets.push((sender, socket));
    }
    // One receive at a time: each leaves its socket's receive standing.
    for (n, (_, socket)) in sockets.iter().enumerate() {
        assert_eq!(engine.in_flight(), 0);
        let done = complete(&mut engine, Request::recv(*socket, take(&pool, 4096), 0));
        assert_eq!(received(&done), n as u32);
    }
    assert_eq!(engine.standing_receives_started(), 3);
    // Three receives stand; the depth's one request still has its room.
    let mut message = take(&pool, 4096);
    message.set_len(5);
    message.as_mut_slice().copy_from_slice(b"hello");
    let (peer, socket) = &sockets[0];
    let sent = complete(&mut engine, Request::send(*socket, message, 7));
    assert_eq!(sent.result, 5);
    let mut back = [0u8; 16];
    assert_eq!(peer.recv(&mut back).unwrap(), 5);
    assert_eq!(&back[..5], b"hello");
    // And a receive on each again, the datagrams sent first.
    for (n, (sender, socket)) in sockets.iter().enumerate() {
        sender.send(&datagram(10 + n as u32)).unwrap();
        let done = complete(&mut engine, Request::recv(*socket, take(&pool, 4096), 0));
        assert_eq!(received(&done), 10 + n as u32);
    }
    let mut done = Vec::new();
    finish(&mut engine, &mut done);
}

/// Issue 44, defect 7: a socket's buffers were as large as its first
/// receive, so a UDP datagram of 1000 bytes came into a later receive of
/// 4096 cut to the first's 64, silently.
#[test]
fn a_udp_datagram_comes_whole_into_a_receive_longer_than_the_first() {
    let pool = BufPool::new(2, 4096).unwrap();
    let Some(mut engine) = multishot_engine(2, &pool) else {
        return;
    };
    let receiver = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sender.connect(receiver.local_addr().unwrap()).unwrap();
    let Some(socket) = add(&mut engine, OwnedFd::from(receiver)) else {
        return;
    };
    let first = datagram(1);
    let mut short = take(&pool, 4096);
    short.set_len(64);
    sender.send(&first).unwrap();
    let done = complete(&mut engine, Request::recv(socket, short, 0));
    assert_eq!(received(&done), 1);
    drop(done);
    let long: Vec<u8> = (0..1000u32).map(|i| (i * 13 + 5) as u8).collect();
    sender.send(&long).unwrap();
    let done = complete(&mut engine, Request::recv(socket, take(&pool, 4096), 0));
    assert_eq!(done.result, 1000, "the datagram whole");
    assert_eq!(&done.buf.as_slice()[..1000], long.as_slice());
    drop(done);
    // A receive shorter than its datagram takes what fits, as recv does.
    sender.send(&long).unwrap();
    let mut shorter = take(&pool, 4096);
    shorter.set_len(100);
    let done = complete(&mut engine, Request::recv(socket, shorter, 0));
    assert_eq!(done.result, 100);
    assert_eq!(done.buf.as_slice(), &long[..100]);
    drop(done);
    let mut done = Vec::new();
    finish(&mut engine, &mut done);
}

/// On a Unix datagram socket, whose datagrams have no bound but the
/// sender's buffer, a receive longer than the buffers the first one set
/// could get a datagram cut short: it is refused with EMSGSIZE at once, and
/// the datagram waits for a receive that fits.
#[test]
fn a_unix_receive_longer_than_the_first_is_refused_not_cut() {
    let pool = BufPool::new(2, 4096).unwrap();
    let Some(mut engine) = multishot_engine(2, &pool) else {
        return;
    };
    let Some((sender, socket)) = datagrams_into(&mut engine) else {
        return;
    };
    sender.send(&datagram(1)).unwrap();
    let mut first = take(&pool, 4096);
    first.set_len(128);
    let done = complete(&mut engine, Request::recv(socket, first, 0));
    assert_eq!(received(&done), 1);
    drop(done);
    sender.send(&datagram(2)).unwrap();
    let refused = complete(&mut engine, Request::recv(socket, take(&pool, 4096), 0));
    assert_eq!(refused.result, -i64::from(libc::EMSGSIZE));
    drop(refused);
    let mut fits = take(&pool, 4096);
    fits.set_len(128);
    let done = complete(&mut engine, Request::recv(socket, fits, 0));
    assert_eq!(received(&done), 2, "the datagram waited");
    drop(done);
    let mut done = Vec::new();
    finish(&mut engine, &mut done);
}
