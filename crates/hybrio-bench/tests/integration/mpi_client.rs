//! `hybrio --mpi`'s JSON against fio's client mode on the same job file:
//! fio servers on loopback, each on a port of its own, and a fio client
//! driving them (a build with the `mpi` feature; skipped, saying so, where
//! `mpirun` or a fio is missing).

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::fio_json::{fio_document, shape_problems, since_3_33};

/// fio servers, each in a process group of its own, killed with the
/// processes it forked for its jobs when dropped, also when a test fails.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for server in &mut self.0 {
            let group = i32::try_from(server.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw);
            match group {
                Some(group) => {
                    let _ =
                        rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                }
                None => {
                    let _ = server.kill();
                }
            }
            let _ = server.wait();
        }
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().unwrap().port()
}

/// Waits for `child` to end, killing it after `bound` (a hung run, not a
/// slow one: the bound is far beyond the job's time).
fn output_within(mut child: Child, bound: Duration, what: &str) -> std::process::Output {
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    while child.try_wait().expect("try_wait").is_none() {
        if waited >= bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {bound:?}, killed");
        }
        std::thread::sleep(step);
        waited += step;
    }
    child.wait_with_output().expect("its output")
}

/// fio's client-mode document for `job` run by `servers` servers of the fio
/// at `fio`, on loopback.
fn fio_client(fio: &Path, job: &Path, servers: usize, dir: &Path) -> Value {
    let ports: Vec<u16> = (0..servers).map(|_| free_port()).collect();
    let mut running = Servers(Vec::new());
    for port in &ports {
        let server = Command::new(fio)
            .arg(format!("--server=ip:127.0.0.1,{port}"))
            .process_group(0)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("fio --server starts");
        running.0.push(server);
    }
    for port in &ports {
        let listening = (0..400).any(|_| {
            TcpStream::connect(("127.0.0.1", *port)).is_ok() || {
                std::thread::sleep(Duration::from_millis(50));
                false
            }
        });
        assert!(listening, "fio --server on port {port} does not listen");
    }
    let client = Command::new(fio)
        .args(
            ports
                .iter()
                .map(|port| format!("--client=ip:127.0.0.1,{port}")),
        )
        .arg("--output-format=json")
        .arg(job)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fio --client starts");
    let output = output_within(client, Duration::from_secs(300), "fio --client");
    drop(running);
    assert!(
        output.status.success(),
        "fio --client: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    fio_document(&output.stdout)
}

/// Every key path of fio's client-mode document (global options, each
/// server's jobs and the `All clients` entry, each server's disks) is in
/// hybrio's with its type, and hybrio writes no other but its own; as fio
/// 3.39 and later, `global options` is an array of each server's, and
/// `All clients` has percentiles, as 3.33 it is one object.
#[test]
fn the_json_of_ranks_has_the_shape_of_fio_client_modes() {
    let fios = super::fios();
    if fios.is_empty() {
        eprintln!("skipped: no fio to compare with");
        return;
    }
    for fio in fios {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("clients.fio");
        std::fs::write(
            &job,
            format!(
                "[global]\nioengine=psync\nbs=4k\nsize=1m\ndirectory={}\n\
                 filename_format=$jobname.$clientuid\n\
                 [w]\nrw=write\n[r]\nstonewall\nrw=randread\nloops=2\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let compat = format!("--fio-compat={}", fio.version);
        let Some(output) =
            super::mpi::mpirun(&["--output-format=json", &compat, job.to_str().unwrap()])
        else {
            return;
        };
        assert!(
            output.status.success(),
            "mpirun: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let ours: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
        let theirs = fio_client(&fio.path, &job, 2, dir.path());
        let old = fio.version == "3.33";
        let (count, problems) = shape_problems(&theirs, &ours, &|path| {
            old && since_3_33(path, "client_stats[]")
        });
        assert!(count > 200, "only {count} key paths in fio's document");
        assert!(
            problems.is_empty(),
            "against fio {}'s client mode, {} of its {count} key paths:\n{}",
            fio.version,
            problems.len(),
            problems.join("\n")
        );
        let all = |doc: &Value| -> Value {
            doc["client_stats"]
                .as_array()
                .unwrap()
                .iter()
                .rfind(|entry| entry["jobname"] == "All clients")
                .cloned()
                .unwrap_or_else(|| panic!("no All clients entry: {doc}"))
        };
        let percentiles = |entry: &Value| -> Option<Vec<String>> {
            entry["read"]["clat_ns"]["percentile"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
        };
        if old {
            assert!(ours["global options"].is_object(), "{ours}");
            assert!(theirs["global options"].is_object(), "{theirs}");
            assert_eq!(percentiles(&all(&theirs)), None, "fio 3.33 wrote none");
        } else {
            for (doc, servers) in [(&ours, super::mpi::RANKS), (&theirs, 2)] {
                let per_server = doc["global options"].as_array().expect("an array");
                assert_eq!(per_server.len(), servers, "{doc}");
                for server in per_server {
                    assert!(server["hostname"].is_string(), "{server}");
                    assert!(server["port"].is_u64(), "{server}");
                    assert_eq!(server["ioengine"], "psync", "{server}");
                }
            }
            let listed = percentiles(&all(&theirs)).expect("fio 3.42: pooled percentiles");
            assert_eq!(percentiles(&all(&ours)), Some(listed));
        }
    }
}
