//! The suite's socket part: receives and sends through every engine that
//! takes sockets, on loopback UDP and Unix socket pairs, and Linux AIO's
//! refusal.

use std::net::UdpSocket;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

use super::{Flavour, errno, io_flavours, run_one};
use crate::Error;
use crate::buf::BufPool;
use crate::engine::testkit::{finish, take};
use crate::engine::{Engine, EngineKind, QueueOutcome};
use crate::file::FileHandle;
use crate::request::{Completion, Request};

/// The flavours that take sockets: all but libaio and the emulated device,
/// which refuse them (tested below).
fn socket_flavours() -> Vec<Flavour> {
    io_flavours()
        .into_iter()
        .filter(|f| {
            !matches!(f.kind, EngineKind::Libaio | EngineKind::Posixaio)
                && f.config.completion_latency.is_none()
        })
        .collect()
}

/// Two UDP sockets on 127.0.0.1, each connected to the other.
fn udp_pair() -> (UdpSocket, UdpSocket) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    b.connect(a.local_addr().unwrap()).unwrap();
    (a, b)
}

/// Datagram `n`: its number, then bytes that depend on it, 1 + n * 37 % 900 long.
fn datagram(n: u32) -> Vec<u8> {
    let len = 4 + (n as usize * 37) % 900;
    let mut bytes: Vec<u8> = (0..len)
        .map(|i| (i as u32 ^ n.wrapping_mul(131)) as u8)
        .collect();
    bytes[..4].copy_from_slice(&n.to_le_bytes());
    bytes
}

/// Drives `requests` through `engine`, at most `at_once` outstanding, and returns every completion.
fn drive(engine: &mut dyn Engine, requests: Vec<Request>, at_once: usize) -> Vec<Completion> {
    let mut done = Vec::new();
    let mut requests = requests.into_iter().peekable();
    while requests.peek().is_some() {
        while engine.in_flight() < at_once
            && let Some(request) = requests.next()
        {
            match engine.queue(request) {
                QueueOutcome::Completed(completion) => done.push(completion),
                QueueOutcome::Queued => {}
                QueueOutcome::Busy(_) => panic!("busy below the depth"),
            }
        }
        engine.commit().unwrap();
        if engine.in_flight() > 0 {
            engine.reap(1, usize::MAX, &mut done).unwrap();
        }
    }
    finish(engine, &mut done);
    done
}

#[test]
fn datagrams_sent_through_an_engine_are_received_whole_and_once() {
    const COUNT: u32 = 48;
    for flavour in socket_flavours() {
        let pool = BufPool::new(2 * COUNT as usize, 1024).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let (a, b) = udp_pair();
        let sender = engine.add_socket(OwnedFd::from(a), "udp a").unwrap();
        let receiver = engine.add_socket(OwnedFd::from(b), "udp b").unwrap();
        let at_once = flavour.config.depth as usize;
        let sends = (0..COUNT)
            .map(|n| {
                let bytes = datagram(n);
                let mut buf = take(&pool, bytes.len());
                buf.as_mut_slice().copy_from_slice(&bytes);
                Request::send(sender, buf, u64::from(n))
            })
            .collect();
        for sent in drive(engine.as_mut(), sends, at_once) {
            assert_eq!(
                sent.result,
                datagram(sent.user_data as u32).len() as i64,
                "{name}: send {sent:?}"
            );
        }
        // Every datagram now waits in the receiver's queue: a receive of
        // any engine finds one, a synchronous one included.
        let receives = (0..COUNT)
            .map(|n| Request::recv(receiver, take(&pool, 1024), u64::from(n)))
            .collect();
        let mut seen = vec![false; COUNT as usize];
        for got in drive(engine.as_mut(), receives, at_once) {
            assert!(got.result >= 4, "{name}: receive {got:?}");
            let bytes = &got.buf.as_slice()[..got.result as usize];
            let n = u32::from_le_bytes(bytes[..4].try_into().unwrap());
            assert_eq!(bytes, datagram(n).as_slice(), "{name}: datagram {n}");
            assert!(
                !std::mem::replace(&mut seen[n as usize], true),
                "{name}: datagram {n} twice"
            );
        }
        assert!(seen.iter().all(|s| *s), "{name}: datagrams missing");
        drop(engine);
        assert_eq!(
            pool.available(),
            pool.count(),
            "{name}: buffers not returned"
        );
    }
}

#[test]
fn a_stream_carries_its_bytes_exactly_one_request_at_a_time() {
    const TOTAL: usize = 48 * 1024;
    for flavour in socket_flavours() {
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let (a, b) = UnixStream::pair().unwrap();
        let sender = engine.add_socket(OwnedFd::from(a), "stream a").unwrap();
        let receiver = engine.add_socket(OwnedFd::from(b), "stream b").unwrap();
        let mut stream = vec![0u8; TOTAL];
        super::pattern(TOTAL as u64, &mut stream);
        // Under the socket's buffer, so that a synchronous engine's sends
        // all finish before anything receives (same thread).
        for (i, chunk) in stream.chunks(3000).enumerate() {
            let mut buf = take(&pool, chunk.len());
            buf.as_mut_slice().copy_from_slice(chunk);
            let sent = run_one(engine.as_mut(), Request::send(sender, buf, i as u64));
            assert_eq!(sent.result, chunk.len() as i64, "{name}: send {i}");
        }
        let mut received = Vec::new();
        while received.len() < TOTAL {
            let got = run_one(
                engine.as_mut(),
                Request::recv(receiver, take(&pool, 4096), 0),
            );
            assert!(
                got.result > 0,
                "{name}: receive at {}: {got:?}",
                received.len()
            );
            received.extend_from_slice(&got.buf.as_slice()[..got.result as usize]);
        }
        assert!(received == stream, "{name}: the stream came back different");
    }
}

#[test]
fn socket_calls_fail_with_the_kernels_errno() {
    for flavour in socket_flavours() {
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        // A peer gone: EPIPE, and no SIGPIPE to end the test process.
        let (a, b) = UnixStream::pair().unwrap();
        let lonely = engine.add_socket(OwnedFd::from(a), "stream").unwrap();
        drop(b);
        let sent = run_one(engine.as_mut(), Request::send(lonely, take(&pool, 100), 1));
        assert_eq!(errno(&sent), Some(libc::EPIPE), "{name}: {sent:?}");
        // A stream whose peer is gone reads its end: 0 bytes.
        let got = run_one(engine.as_mut(), Request::recv(lonely, take(&pool, 100), 2));
        assert_eq!(got.result, 0, "{name}: {got:?}");
        // A receive on a file is not a read.
        let file: FileHandle = engine
            .add_file(tempfile::tempfile().unwrap(), "plain file".into())
            .unwrap();
        let got = run_one(engine.as_mut(), Request::recv(file, take(&pool, 100), 3));
        assert_eq!(errno(&got), Some(libc::ENOTSOCK), "{name}: {got:?}");
        // A receive with no buffer, as a read with none: EINVAL.
        let mut bare = Request::recv(lonely, take(&pool, 1), 4);
        bare.buf = crate::buf::Buf::empty();
        assert_eq!(
            errno(&run_one(engine.as_mut(), bare)),
            Some(libc::EINVAL),
            "{name}"
        );
    }
}

#[test]
fn a_file_is_not_taken_as_a_socket_and_the_aio_engines_and_the_emulated_device_refuse_sockets() {
    for flavour in io_flavours() {
        let Some(mut engine) = flavour.open(None) else {
            continue;
        };
        let name = flavour.name();
        let file = tempfile::tempfile().unwrap();
        match engine.add_socket(OwnedFd::from(file), "not a socket") {
            Err(Error::Io { op, source, .. }) => {
                assert_eq!(
                    (op, source.raw_os_error()),
                    ("add as a socket", Some(libc::ENOTSOCK)),
                    "{name}"
                )
            }
            other => panic!("{name}: a file added as a socket: {other:?}"),
        }
        let (a, _b) = udp_pair();
        let refused = matches!(flavour.kind, EngineKind::Libaio | EngineKind::Posixaio)
            || flavour.config.completion_latency.is_some();
        match engine.add_socket(OwnedFd::from(a), "127.0.0.1 udp") {
            Ok(_) => assert!(!refused, "{name} took a socket"),
            Err(error) => {
                assert!(refused, "{name} refused a socket: {error}");
                let line = error.to_string();
                assert!(
                    line.contains("127.0.0.1 udp") && line.contains("cannot do I/O on"),
                    "{name}: {line}"
                );
                let (back, _) = error.into_refused_file().expect("the socket comes back");
                assert!(crate::sys::is_socket(std::os::fd::AsRawFd::as_raw_fd(&back)).unwrap());
            }
        }
    }
}

#[test]
fn a_receive_with_nothing_waiting_never_blocks_the_asynchronous_engines() {
    for flavour in socket_flavours().into_iter().filter(|f| {
        f.config.depth > 1
            && !matches!(
                f.kind,
                EngineKind::Sync | EngineKind::Psync | EngineKind::Pvsync2
            )
    }) {
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let (a, b) = udp_pair();
        let receiver = engine.add_socket(OwnedFd::from(b), "udp b").unwrap();
        assert!(
            matches!(
                engine.queue(Request::recv(receiver, take(&pool, 4096), 7)),
                QueueOutcome::Queued
            ),
            "{name}: a receive with nothing waiting did not wait in the engine"
        );
        engine.commit().unwrap();
        let mut done = Vec::new();
        assert_eq!(engine.reap(0, 8, &mut done).unwrap(), 0, "{name}");
        a.send(b"late").unwrap();
        assert_eq!(engine.reap(1, 8, &mut done).unwrap(), 1, "{name}");
        assert_eq!((done[0].result, done[0].user_data), (4, 7), "{name}");
        assert_eq!(&done[0].buf.as_slice()[..4], b"late");
    }
}

#[test]
fn adaptive_receives_inline_what_is_waiting_and_waits_asynchronously_for_the_rest() {
    let pool = BufPool::new(16, 4096).unwrap();
    let Some(mut engine) = Flavour::new(EngineKind::Adaptive, 8).open(Some(&pool)) else {
        return;
    };
    // Unix datagrams: each is in the receiver's queue when `send` returns
    // (loopback UDP's may wait for a softirq a busy machine runs later, and
    // a receive tried inline would then not find it).
    let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
    let receiver = engine.add_socket(OwnedFd::from(b), "datagrams b").unwrap();
    for n in 0..4u32 {
        a.send(&datagram(n)).unwrap();
    }
    // Four waiting: each receive completes in the call, in order.
    for n in 0..4u32 {
        match engine.queue(Request::recv(receiver, take(&pool, 4096), u64::from(n))) {
            QueueOutcome::Completed(got) => {
                let len = datagram(n).len();
                assert_eq!(got.result, len as i64);
                assert_eq!(&got.buf.as_slice()[..len], datagram(n).as_slice());
            }
            other => panic!("receive {n} with a datagram waiting: {other:?}"),
        }
    }
    // None waiting: the next two wait in the asynchronous engine; a
    // datagram that comes while they are out is taken by the next receive
    // at once (datagrams have no order among receives outstanding).
    for n in 4..6u64 {
        assert!(matches!(
            engine.queue(Request::recv(receiver, take(&pool, 4096), n)),
            QueueOutcome::Queued
        ));
    }
    engine.commit().unwrap();
    a.send(&datagram(4)).unwrap();
    let mut got = Vec::new();
    match engine.queue(Request::recv(receiver, take(&pool, 4096), 6)) {
        QueueOutcome::Completed(c) => got.push(c),
        // io_uring's outstanding receive may have taken it first.
        QueueOutcome::Queued => {}
        other => panic!("{other:?}"),
    }
    engine.commit().unwrap();
    a.send(&datagram(5)).unwrap();
    a.send(&datagram(6)).unwrap();
    while got.len() < 3 {
        engine.reap(1, 8, &mut got).unwrap();
    }
    let mut numbers: Vec<u32> = got
        .iter()
        .map(|c| u32::from_le_bytes(c.buf.as_slice()[..4].try_into().unwrap()))
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [4, 5, 6]);
    let paths = engine.counters().paths.unwrap();
    assert_eq!(paths.inline + paths.asynchronous, 7, "{paths:?}");
    assert!(paths.inline >= 4, "{paths:?}");
}

/// A stream send larger than the socket's room, tried inline, goes in
/// part: the adaptive engine sends the rest asynchronous and answers once,
/// with every byte, the window and offset as queued; the peer gets the
/// stream in order.
#[test]
fn adaptive_sends_the_rest_of_a_send_that_went_in_part_asynchronous() {
    const TOTAL: usize = 1 << 20;
    let pool = BufPool::new(2, TOTAL).unwrap();
    let Some(mut engine) = Flavour::new(EngineKind::Adaptive, 4).open(Some(&pool)) else {
        return;
    };
    let (a, mut b) = UnixStream::pair().unwrap();
    let sender = engine.add_socket(OwnedFd::from(a), "stream a").unwrap();
    let mut stream = vec![0u8; TOTAL];
    super::pattern(TOTAL as u64, &mut stream);
    let mut buf = take(&pool, TOTAL);
    buf.as_mut_slice().copy_from_slice(&stream);
    // Nobody reads yet: the inline try fills the socket's buffer (far less
    // than a MiB) and the rest waits for room.
    match engine.queue(Request::send(sender, buf, 9)) {
        QueueOutcome::Queued => {}
        other => panic!("a MiB sent with nobody reading: {other:?}"),
    }
    engine.commit().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = vec![0u8; TOTAL];
        std::io::Read::read_exact(&mut b, &mut got).unwrap();
        got
    });
    let mut done = Vec::new();
    finish(engine.as_mut(), &mut done);
    assert_eq!(done.len(), 1);
    let sent = &done[0];
    assert_eq!(
        (
            sent.result,
            sent.user_data,
            sent.offset,
            sent.buf.start(),
            sent.buf.len()
        ),
        (TOTAL as i64, 9, 0, 0, TOTAL)
    );
    assert!(
        reader.join().unwrap() == stream,
        "the stream came out different"
    );
    let counters = engine.counters();
    assert_eq!(counters.paths.unwrap().asynchronous, 1, "{counters:?}");
    // The inline part at least (the asynchronous rest may go in parts too,
    // as the reader makes room).
    assert!(counters.short_ios.iter().sum::<u64>() >= 1, "{counters:?}");
}

#[test]
fn adaptive_tries_no_receive_of_a_stream_inline_while_one_is_out() {
    let pool = BufPool::new(16, 4096).unwrap();
    let Some(mut engine) = Flavour::new(EngineKind::Adaptive, 8).open(Some(&pool)) else {
        return;
    };
    let (mut a, b) = UnixStream::pair().unwrap();
    let receiver = engine.add_socket(OwnedFd::from(b), "stream b").unwrap();
    // Nothing waiting: the first receive goes out.
    assert!(matches!(
        engine.queue(Request::recv(receiver, take(&pool, 4), 1)),
        QueueOutcome::Queued
    ));
    engine.commit().unwrap();
    std::io::Write::write_all(&mut a, b"firstsecond").unwrap();
    // Bytes are waiting now, but a receive is out: taking them inline could
    // put them ahead of it.
    assert!(matches!(
        engine.queue(Request::recv(receiver, take(&pool, 4096), 2)),
        QueueOutcome::Queued
    ));
    engine.commit().unwrap();
    // (io_uring orders two receives of a stream no more than that: which
    // takes which bytes is its own; more bytes let both finish.)
    std::io::Write::write_all(&mut a, b"third").unwrap();
    let mut done = Vec::new();
    while done.len() < 2 {
        engine.reap(1, 8, &mut done).unwrap();
    }
    let received: usize = done.iter().map(|c| c.result as usize).sum();
    assert!((5..=16).contains(&received), "{done:?}");
    let paths = engine.counters().paths.unwrap();
    assert_eq!((paths.inline, paths.asynchronous), (0, 2), "{paths:?}");
}

#[test]
fn a_socket_try_lingers_for_data_that_comes_and_gives_up_when_none_does() {
    use crate::engine::inline::InlinePath;
    let pool = BufPool::new(4, 4096).unwrap();
    // The inline engine itself, as the adaptive engine holds it.
    let mut engine =
        crate::engine::psync::PsyncEngine::new(&crate::engine::EngineConfig::with_depth(1));
    let (a, b) = udp_pair();
    let receiver = engine.add_socket(OwnedFd::from(b), "udp b").unwrap();
    // Nothing comes: -EAGAIN, the request untouched, after the linger.
    let mut request = Request::recv(receiver, take(&pool, 64), 1);
    let started = std::time::Instant::now();
    let got = engine.try_socket_now(&mut request, 2_000_000);
    assert_eq!(got, Some(-i64::from(libc::EAGAIN)));
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(2),
        "gave up early"
    );
    // A datagram that comes while it lingers is taken. The try ends when it
    // comes: the minute is only there so that the sending thread, however
    // late a busy machine runs it, is sure to come within it.
    let sender = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(5));
        a.send(b"late").unwrap();
    });
    let got = engine.try_socket_now(&mut request, 60_000_000_000);
    sender.join().unwrap();
    assert_eq!(got, Some(4));
    assert_eq!(&request.buffer().unwrap().as_slice()[..4], b"late");
}
