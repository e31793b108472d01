use super::*;
use crate::options::{self, JobOptions, Protocol};

/// A job made of `name=value` pairs, as a job file would give them.
fn job(pairs: &[(&str, &str)]) -> JobOptions {
    let mut job = JobOptions {
        name: "j".into(),
        ..JobOptions::default()
    };
    for (name, value) in pairs {
        options::find(name)
            .unwrap_or_else(|| panic!("no option {name}"))
            .apply(&mut job, value)
            .unwrap();
    }
    job
}

fn refusal(pairs: &[(&str, &str)]) -> String {
    let job = job(pairs);
    let protocol = job.network().expect("a network job");
    check(&job, protocol).unwrap_err().to_string()
}

#[test]
fn a_job_is_a_network_job_with_ioengine_net_or_a_protocol() {
    assert_eq!(job(&[("ioengine", "net")]).network(), Some(Protocol::Tcp));
    assert_eq!(
        job(&[("ioengine", "io_uring"), ("protocol", "udp")]).network(),
        Some(Protocol::Udp)
    );
    assert_eq!(job(&[("ioengine", "io_uring")]).network(), None);
}

#[test]
fn options_that_do_not_fit_together_are_refused_as_fio_refuses_them() {
    let net = [("ioengine", "net"), ("size", "1m")];
    let with = |more: &[(&'static str, &'static str)]| {
        let mut all = net.to_vec();
        all.extend_from_slice(more);
        refusal(&all)
    };
    assert_eq!(
        with(&[("port", "9"), ("rw", "randread")]),
        "network I/O cannot be random (rw=randread)"
    );
    assert_eq!(with(&[]), "protocol=tcp needs port= (1 to 65535)");
    assert!(with(&[("protocol", "unix"), ("port", "9")]).starts_with("port is not valid"));
    assert!(with(&[("protocol", "unix")]).contains("needs hostname="));
    assert!(
        with(&[("protocol", "udp"), ("port", "9"), ("listen", "1")])
            .starts_with("listen is only valid for TCP")
    );
    assert!(with(&[("protocol", "udp"), ("port", "9"), ("rw", "rw")]).contains("not both"));
    let no_size = job(&[("ioengine", "net"), ("port", "9")]);
    assert!(
        check(&no_size, Protocol::Tcp)
            .unwrap_err()
            .to_string()
            .contains("needs size=")
    );
}

#[test]
fn who_listens_follows_fio() {
    let tcp_reader = job(&[("ioengine", "net"), ("rw", "read")]);
    assert!(
        !listens(&tcp_reader, Protocol::Tcp),
        "TCP listens only when told"
    );
    let tcp_listening_writer = job(&[("ioengine", "net"), ("rw", "write"), ("listen", "1")]);
    assert!(listens(&tcp_listening_writer, Protocol::Tcp));
    let udp_reader = job(&[("ioengine", "net"), ("protocol", "udp"), ("rw", "read")]);
    assert!(listens(&udp_reader, Protocol::Udp), "a UDP reader binds");
}

#[test]
fn a_listening_job_names_a_host_only_for_a_multicast_group_and_a_sender_needs_one() {
    let prepare = |pairs: &[(&str, &str)]| {
        let job = job(pairs);
        let protocol = job.network().unwrap();
        Endpoint::prepare(&job, protocol)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let err = prepare(&[
        ("ioengine", "net"),
        ("size", "1m"),
        ("port", "1"),
        ("listen", "1"),
        ("hostname", "127.0.0.1"),
    ])
    .unwrap_err();
    assert!(err.contains("not valid for a job that listens"), "{err}");
    let err = prepare(&[
        ("ioengine", "net"),
        ("size", "1m"),
        ("port", "1"),
        ("rw", "write"),
    ])
    .unwrap_err();
    assert!(err.contains("needs hostname="), "{err}");
    let err = prepare(&[
        ("ioengine", "net"),
        ("size", "1m"),
        ("port", "1"),
        ("rw", "write"),
        ("hostname", "no.such.host.invalid"),
    ])
    .unwrap_err();
    assert!(err.contains("does not resolve"), "{err}");
}
