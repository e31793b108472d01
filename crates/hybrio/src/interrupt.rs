//! Stopping a run early on Ctrl-C (SIGINT) or SIGTERM, as fio does: the
//! signal only sets a flag, the job loops see it, finish what is in flight
//! and report what they measured.

use std::sync::atomic::Ordering;

use crate::sys::signal;

/// Catches SIGINT and SIGTERM from now on. The first one sets the flag that
/// [`requested`] reads; a second one has the default effect (the process ends).
pub fn catch_signals() -> std::io::Result<()> {
    signal::catch(libc::SIGINT)?;
    signal::catch(libc::SIGTERM)
}

/// True once SIGINT or SIGTERM arrived (after [`catch_signals`]).
#[inline]
pub fn requested() -> bool {
    signal::INTERRUPTED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_signal_sets_the_flag() {
        // SIGTERM to ourselves: with the handler installed it only sets the flag.
        catch_signals().unwrap();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !requested() && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(requested());
    }
}
