//! A UDP echo on loopback through one engine and the driver: a client
//! sends numbered datagrams, a server receives each and sends it back, the
//! client checks every echo, with up to `--window` datagrams on their way.
//!
//! ```text
//! cargo run --release -p hybrio --example udp_echo -- [--engine NAME] [--count N] [--window N]
//! ```
//!
//! Sockets go into the engine's table beside files ([`Engine::add_socket`]);
//! a receive takes one datagram, a send sends one. Loopback only.

use std::net::UdpSocket;
use std::os::fd::OwnedFd;
use std::process::ExitCode;
use std::time::Instant;

use hybrio::buf::BufPool;
use hybrio::driver::{Driver, Order};
use hybrio::engine::{self, EngineConfig, EngineKind};
use hybrio::request::{Op, Request};

const SIZE: usize = 64;

/// What a request's tag says: whose socket, and which datagram.
const SERVER: u64 = 1 << 63;

fn run(args: &[String]) -> Result<String, Box<dyn std::error::Error>> {
    let (mut kind, mut count, mut window) = (EngineKind::Adaptive, 10_000u64, 8usize);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--engine" => {
                let name = value()?;
                kind = EngineKind::from_name(name).ok_or(format!("unknown engine {name:?}"))?;
            }
            "--count" => count = value()?.parse()?,
            "--window" => window = value()?.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if window == 0 {
        return Err("--window must be at least 1".into());
    }
    // Each connected to the other: `send` needs a peer, and `recv` then
    // takes only the peer's datagrams.
    let server = UdpSocket::bind("127.0.0.1:0")?;
    let client = UdpSocket::bind("127.0.0.1:0")?;
    server.connect(client.local_addr()?)?;
    client.connect(server.local_addr()?)?;

    // Receives kept waiting on both sides, the datagrams and echoes on
    // their way, and sends done whose completions are not taken yet: a
    // client sends only while a buffer is free, so the pool bounds them.
    let pool = BufPool::new(window * 6, SIZE)?;
    let depth = u32::try_from(window * 4)?;
    let mut engine = engine::open(kind, &EngineConfig::with_depth(depth), Some(&pool))?;
    let server_socket = engine.add_socket(OwnedFd::from(server), "udp echo server")?;
    let client_socket = engine.add_socket(OwnedFd::from(client), "udp echo client")?;
    if engine.is_synchronous() {
        return Err(format!(
            "{kind} receives in the caller's thread, which would wait for ever for a datagram \
             not sent yet: use adaptive, io_uring or pool"
        )
        .into());
    }
    let mut driver = Driver::new(engine.as_mut(), Order::Completion);
    let buffer = |len: usize| {
        let mut buf = pool.take().ok_or("out of buffers")?;
        buf.set_len(len);
        Ok::<_, &str>(buf)
    };

    let started = Instant::now();
    let (mut sent, mut echoed) = (0u64, 0u64);
    // The server and the client each keep `window` receives waiting.
    for _ in 0..window {
        driver.submit(Request::recv(server_socket, buffer(SIZE)?, SERVER))?;
        driver.submit(Request::recv(client_socket, buffer(SIZE)?, 0))?;
    }
    while echoed < count {
        while sent < count && sent - echoed < window as u64 && pool.available() > window {
            let mut buf = buffer(SIZE)?;
            buf.as_mut_slice()[..8].copy_from_slice(&sent.to_le_bytes());
            driver.submit(Request::send(client_socket, buf, sent))?;
            sent += 1;
        }
        let Some(mut done) = driver.next_completion()? else {
            return Err("nothing in flight before every echo came back".into());
        };
        let moved = done.outcome()?;
        let server_side = done.user_data & SERVER != 0;
        match (done.op, server_side) {
            // The server sends what it received back, and waits for the next.
            (Op::Recv, true) => {
                let mut buf = done.take_buf();
                buf.set_len(moved);
                driver.submit(Request::send(server_socket, buf, SERVER))?;
                driver.submit(Request::recv(server_socket, buffer(SIZE)?, SERVER))?;
            }
            (Op::Recv, false) => {
                let number = u64::from_le_bytes(done.data()[..8].try_into()?);
                if moved != SIZE || number >= sent {
                    return Err(format!("echo {number} of {moved} bytes: not one sent").into());
                }
                echoed += 1;
                if echoed + window as u64 <= count {
                    driver.submit(Request::recv(client_socket, buffer(SIZE)?, 0))?;
                }
            }
            // A send done: its buffer goes back to the pool.
            _ => {}
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    drop(driver);
    Ok(format!(
        "{count} datagrams echoed on {}: {:.0} round trips/s",
        engine.description(),
        count as f64 / seconds
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("udp_echo: {error}");
            ExitCode::from(1)
        }
    }
}
