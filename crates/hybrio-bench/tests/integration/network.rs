//! Network jobs (fio's `net` engine) end to end, on loopback only.

use std::net::{TcpListener, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{engines, hybrio, run_json};

/// A port nothing listens on now (the kernel's pick for a socket just closed).
fn free_port(udp: bool) -> u16 {
    if udp {
        UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    } else {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }
}

fn job<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name}"))
}

fn hybrio_job<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["hybrio"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name}"))
}

/// A receiver on `engine` and a psync sender of 64-byte datagrams at a rate
/// loopback does not drop at: every datagram sent is received, once, and
/// the counts say so; io_uring's reaps publish the completion queue's head
/// once each. io_uring's multishot receive too (`recv_multishot`).
#[test]
fn every_udp_datagram_sent_is_received_through_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut receivers: Vec<(&str, &str)> = engines()
        .into_iter()
        .filter(|e| !matches!(*e, "libaio" | "posixaio" | "null"))
        .map(|e| (e, ""))
        .collect();
    if receivers.iter().any(|(e, _)| *e == "io_uring") {
        receivers.push(("io_uring", "recv_multishot=1\n"));
    }
    for (engine, extra) in receivers {
        let label = format!("{engine} {}", extra.trim());
        let port = free_port(true);
        let jobs = format!(
            "[global]\nprotocol=udp\nport={port}\nbs=64\nsize=64k\n\
             [receiver]\nioengine={engine}\niodepth=8\nrw=read\nruntime=20\nwindow_size=2m\n{extra}\
             [sender]\nioengine=psync\nhostname=127.0.0.1\nrw=write\nrate_iops=20000\nstartdelay=0.2\n"
        );
        std::fs::write(dir.path().join("udp.fio"), jobs).unwrap();
        let doc = run_json(&["udp.fio"], dir.path());
        let (receiver, sender) = (job(&doc, "receiver"), job(&doc, "sender"));
        assert_eq!(sender["write"]["total_ios"], 1024, "{label}: sent");
        // The receiver's 2 MiB buffer holds the whole run even when other
        // tests keep it off the processor (the default ~200 KiB held ~250
        // datagrams, and a receiver descheduled for 15 ms lost a quarter).
        // Loopback may still drop: what was dropped before a datagram that
        // came is counted; only a lost last few cannot be.
        let read = &receiver["read"];
        let received = read["total_ios"].as_u64().unwrap();
        let dropped = read["drop_ios"].as_u64().unwrap();
        assert_eq!(read["io_bytes"].as_u64().unwrap(), received * 64, "{label}");
        assert!(
            received + dropped <= 1024,
            "{label}: {received} + {dropped}"
        );
        assert!(
            received + dropped >= 1016,
            "{label}: {received} + {dropped}"
        );
        assert!(received >= 900, "{label}: {received} received");
        // The close message ended the receiver, long before its runtime.
        assert!(
            receiver["job_runtime"].as_u64().unwrap() < 10_000,
            "{label}"
        );
        if engine == "io_uring" {
            let queue = &hybrio_job(&doc, "receiver")["completion_queue"];
            assert_eq!(queue["head_commits_per_reap"], 1.0, "{label}: {queue}");
            assert_eq!(queue["completions"].as_u64(), Some(received), "{queue}");
        }
    }
}

/// Datagrams loopback dropped are counted from the gaps in fio's sequence
/// trailers: received and dropped add up to at most what was sent, and
/// exactly when the last one came.
#[test]
fn dropped_datagrams_are_counted_from_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port(true);
    // A sender of 64 datagrams a call (GSO) outruns a receiver of one a call.
    let jobs = format!(
        "[global]\nprotocol=udp\nport={port}\nsize=16m\n\
         [receiver]\nioengine=psync\nbs=64\nrw=read\nruntime=20\nwindow_size=4k\n\
         [sender]\nioengine=psync\nhostname=127.0.0.1\nrw=write\nbs=4k\ndatagram_size=64\nstartdelay=0.2\n"
    );
    std::fs::write(dir.path().join("drops.fio"), jobs).unwrap();
    let doc = run_json(&["drops.fio"], dir.path());
    let sent = job(&doc, "sender")["write"]["io_bytes"].as_u64().unwrap() / 64;
    let read = &job(&doc, "receiver")["read"];
    let (received, dropped) = (
        read["total_ios"].as_u64().unwrap(),
        read["drop_ios"].as_u64().unwrap(),
    );
    assert_eq!(sent, 262_144);
    assert!(
        received + dropped <= sent,
        "{received} + {dropped} > {sent}"
    );
    assert!(received > 0);
    if dropped == 0 {
        eprintln!("note: loopback dropped nothing this time ({received} of {sent} received)");
    }
}

/// Ping-pong over TCP: each round trip counted once on each side, timed by
/// the sender; the stream's bytes add up. Last, both sides on io_uring's
/// multishot receive, which takes the stream in parts.
#[test]
fn tcp_pingpong_counts_each_round_trip_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    for (engine, echo) in [
        ("psync", "net"),
        ("io_uring", "net"),
        ("adaptive", "net"),
        ("io_uring", "io_uring\nprotocol=tcp\nrecv_multishot=1"),
    ] {
        if !engines().contains(&engine) {
            continue;
        }
        let port = free_port(false);
        let multishot = if echo == "net" {
            ""
        } else {
            "recv_multishot=1\n"
        };
        let engine = format!("{engine}\n{multishot}");
        let jobs = format!(
            "[global]\nport={port}\nbs=64\nsize=64k\nnodelay=1\npingpong=1\n\
             [echo]\nioengine={echo}\nlisten\nrw=read\nruntime=20\n\
             [sender]\nioengine={engine}\nhostname=127.0.0.1\nprotocol=tcp\nrw=write\nstartdelay=0.2\n"
        );
        std::fs::write(dir.path().join("pp.fio"), jobs).unwrap();
        let doc = run_json(&["pp.fio"], dir.path());
        let (echo, sender) = (job(&doc, "echo"), job(&doc, "sender"));
        assert_eq!(sender["write"]["total_ios"], 1024, "{engine}");
        assert_eq!(echo["read"]["io_bytes"], 65536, "{engine}");
        // Submission and completion together: an asynchronous engine's
        // submission sends at once, and the reply may be there by the reap.
        let mean = sender["write"]["lat_ns"]["mean"].as_f64().unwrap();
        assert!(mean > 1_000.0, "{engine}: a round trip of {mean} ns");
    }
}

/// Every mistake and every peer that never comes ends in one line and exit
/// status 1, within the job's runtime; libaio is refused before the run.
#[test]
fn network_mistakes_and_missing_peers_are_one_line_and_never_hang() {
    let dir = tempfile::tempdir().unwrap();
    let busy = TcpListener::bind("0.0.0.0:0").unwrap();
    let busy_port = busy.local_addr().unwrap().port().to_string();
    let quiet_port = free_port(true).to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--protocol=sctp".into()], "invalid value 'sctp'"),
        (
            vec![
                "--listen".into(),
                format!("--port={busy_port}"),
                "--rw=read".into(),
            ],
            "Address already in use",
        ),
        (
            vec![
                "--port=9".into(),
                "--hostname=no.such.host.invalid".into(),
                "--rw=write".into(),
            ],
            "does not resolve",
        ),
        (
            vec![
                "--protocol=udp".into(),
                format!("--port={quiet_port}"),
                "--rw=read".into(),
                "--runtime=1".into(),
            ],
            "none came before the job's time ran out",
        ),
        (
            vec![
                "--port=9".into(),
                "--hostname=127.0.0.1".into(),
                "--rw=write".into(),
            ],
            "Connection refused",
        ),
        (
            vec!["--port=9".into(), "--listen".into(), "--rw=randread".into()],
            "network I/O cannot be random",
        ),
        (
            vec![
                "--ioengine=libaio".into(),
                "--protocol=udp".into(),
                format!("--port={quiet_port}"),
                "--rw=read".into(),
            ],
            "Linux AIO has no socket commands",
        ),
    ];
    for (args, fragment) in cases {
        let mut all = vec![
            "--name=n".to_string(),
            "--ioengine=net".into(),
            "--size=1m".into(),
        ];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let started = Instant::now();
        let out = hybrio(&all, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{all:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{all:?}: {stderr}");
        assert!(
            stderr.contains(fragment),
            "{all:?}: no '{fragment}' in {stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{all:?} took {:?}",
            started.elapsed()
        );
    }
    drop(busy);
}

/// hybrio and fio speak the same protocol: a hybrio receiver counts what a
/// fio sender sent (when fio is installed here).
#[test]
fn a_hybrio_receiver_takes_a_fio_senders_datagrams() {
    if !super::fio_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port(true);
    let receiver = Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args([
            "--output-format=json",
            "--name=receiver",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--protocol=udp",
            &format!("--port={port}"),
            "--bs=64",
            "--size=64k",
            "--rw=read",
            "--runtime=20",
            "--window_size=2m",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let sender = Command::new("fio")
        .args([
            "--name=sender",
            "--ioengine=net",
            "--protocol=udp",
            "--hostname=127.0.0.1",
            &format!("--port={port}"),
            "--bs=64",
            "--size=64k",
            "--rw=write",
            "--rate_iops=20000",
            "--output-format=json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        sender.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&sender.stderr)
    );
    let out = receiver.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = &job(&doc, "receiver")["read"];
    let received = read["total_ios"].as_u64().unwrap();
    let dropped = read["drop_ios"].as_u64().unwrap();
    assert!((1016..=1024).contains(&(received + dropped)), "{read}");
    assert!(received >= 900, "{read}");
    assert_eq!(read["io_bytes"].as_u64().unwrap(), received * 64);
}

/// `hybrio compare` on network jobs leaves libaio out (Linux AIO has no
/// socket commands) and says so, rather than ending at the first cell; with
/// nothing else to compare, one line and exit status 1.
#[test]
fn compare_leaves_libaio_out_of_network_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port(false);
    let jobs = format!(
        "[global]\nport={port}\nbs=4k\nsize=1m\nprotocol=tcp\n\
         [receiver]\nlisten\nrw=read\nruntime=20\n\
         [sender]\npeer\nioengine=psync\nhostname=127.0.0.1\nrw=write\nstartdelay=0.2\n"
    );
    std::fs::write(dir.path().join("net.fio"), jobs).unwrap();
    let out = hybrio(
        &["compare", "--rounds=1", "--engines=psync,libaio", "net.fio"],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("libaio left out"), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| psync |"), "{table}");
    assert!(!table.contains("| libaio |"), "{table}");
    let out = hybrio(
        &["compare", "--rounds=1", "--engines=libaio", "net.fio"],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no engine left to compare"), "{stderr}");
}
