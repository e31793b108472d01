//! `verify_async=N`: blocks read back are checked on N threads of their
//! own, so that the job's thread goes on issuing I/O while checksums are
//! computed. Each read's bytes are copied to a checker (the I/O buffer goes
//! back to the job at once); results come back as they are ready, and all
//! of them by [`Offload::finish`].

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::verifier::{Checked, Expected, Verifier};

/// One read to check.
#[derive(Debug)]
struct Job {
    bytes: Vec<u8>,
    offset: u64,
    path: PathBuf,
    expected: Expected,
}

/// Checker threads and what they have found.
#[derive(Debug)]
pub struct Offload {
    jobs: Option<SyncSender<Job>>,
    results: Receiver<Checked>,
    threads: Vec<JoinHandle<()>>,
    /// Buffers back from the checkers, to copy the next reads into.
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Offload {
    /// `threads` checkers, each with a copy of `verifier` (checking changes
    /// nothing in it).
    pub fn new(verifier: &Verifier, threads: usize) -> std::io::Result<Offload> {
        // A few reads per checker may wait: beyond that the job's thread
        // waits for a checker, as fio's does when its verify list is long.
        let (jobs, queue) = sync_channel::<Job>(threads * 4);
        let (found, results) = std::sync::mpsc::channel();
        let queue = Arc::new(Mutex::new(queue));
        let spare = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::with_capacity(threads);
        for n in 0..threads {
            let verifier = verifier.clone();
            let queue = Arc::clone(&queue);
            let found = found.clone();
            let spare = Arc::clone(&spare);
            let handle = std::thread::Builder::new()
                .name(format!("verify-async-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is held only to take the next job.
                        let next = queue.lock().map(|q| q.recv());
                        let Ok(Ok(mut job)) = next else {
                            return;
                        };
                        let checked =
                            verifier.check(&mut job.bytes, job.offset, &job.path, job.expected);
                        if found.send(checked).is_err() {
                            return;
                        }
                        if let Ok(mut spare) = spare.lock() {
                            spare.push(job.bytes);
                        }
                    }
                })?;
            handles.push(handle);
        }
        Ok(Offload {
            jobs: Some(jobs),
            results,
            threads: handles,
            spare,
        })
    }

    /// Hands a read's bytes to a checker (waiting while all are busy and
    /// their queue is full).
    pub fn submit(&mut self, bytes: &[u8], offset: u64, path: PathBuf, expected: Expected) {
        let mut copy = self
            .spare
            .lock()
            .ok()
            .and_then(|mut spare| spare.pop())
            .unwrap_or_default();
        copy.clear();
        copy.extend_from_slice(bytes);
        if let Some(jobs) = &self.jobs {
            // A checker that is gone (it panicked) leaves its jobs unchecked:
            // `finish` reports that.
            let _ = jobs.send(Job {
                bytes: copy,
                offset,
                path,
                expected,
            });
        }
    }

    /// What the checkers have found so far, without waiting.
    pub fn ready(&mut self) -> Vec<Checked> {
        let mut ready = Vec::new();
        loop {
            match self.results.try_recv() {
                Ok(checked) => ready.push(checked),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return ready,
            }
        }
    }

    /// Waits for every read handed over to be checked; returns what was
    /// found since the last [`ready`](Self::ready), and whether every
    /// checker ended well.
    pub fn finish(&mut self) -> (Vec<Checked>, bool) {
        self.jobs = None;
        let mut all_well = true;
        for handle in self.threads.drain(..) {
            all_well &= handle.join().is_ok();
        }
        (self.results.try_iter().collect(), all_well)
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::VerifyKind;
    use std::path::Path;
    use std::time::SystemTime;

    #[test]
    fn checkers_find_what_the_job_thread_would() {
        let config = crate::verify::verifier::tests::config(VerifyKind::Crc32c);
        let mut verifier = Verifier::new(config, 1, 5, false);
        let mut offload = Offload::new(&verifier, 3).unwrap();
        let mut bad = 0;
        for i in 0..64u64 {
            let mut buf = vec![0u8; 4096];
            verifier.fill(&mut buf, i * 4096, 0, SystemTime::now());
            if i % 5 == 0 {
                buf[100] ^= 1;
                bad += 1;
            }
            offload.submit(&buf, i * 4096, Path::new("f").into(), Expected::default());
        }
        let mut checked = offload.ready();
        let (rest, all_well) = offload.finish();
        checked.extend(rest);
        assert!(all_well);
        assert_eq!(checked.iter().map(|c| c.blocks).sum::<u64>(), 64);
        assert_eq!(
            checked.iter().map(|c| c.mismatches.len()).sum::<usize>(),
            bad
        );
    }
}
