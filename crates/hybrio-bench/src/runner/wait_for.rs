//! fio's `wait_for=NAME`: a job starts its I/O only once every job (every
//! clone) of that name has ended.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The jobs still running, by name, of the jobs that run together.
#[derive(Debug, Default)]
pub struct Running {
    left: Mutex<HashMap<String, usize>>,
    ended: Condvar,
}

impl Running {
    /// `names`: the name of every job (clone) that runs together.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Running {
        let mut left = HashMap::new();
        for name in names {
            *left.entry(name.to_string()).or_insert(0) += 1;
        }
        Running {
            left: Mutex::new(left),
            ended: Condvar::new(),
        }
    }

    /// A job (clone) of `name` has ended.
    pub fn ended(&self, name: &str) {
        if let Ok(mut left) = self.left.lock() {
            if let Some(count) = left.get_mut(name) {
                *count = count.saturating_sub(1);
            }
            self.ended.notify_all();
        }
    }

    /// Counts a job (clone) of `name` ended when the guard drops, however
    /// the job ends (a panic included): no job waits for it forever.
    pub fn ends_on_drop(self: &std::sync::Arc<Self>, name: &str) -> EndsOnDrop {
        EndsOnDrop {
            running: std::sync::Arc::clone(self),
            name: name.to_string(),
        }
    }

    /// Waits until no job of `name` runs, or `give_up` says to stop (it is
    /// asked every 100 ms). Returns whether they all ended.
    pub fn wait_for(&self, name: &str, give_up: impl Fn() -> bool) -> bool {
        let Ok(mut left) = self.left.lock() else {
            return false;
        };
        loop {
            if left.get(name).copied().unwrap_or(0) == 0 {
                return true;
            }
            if give_up() {
                return false;
            }
            left = match self.ended.wait_timeout(left, Duration::from_millis(100)) {
                Ok((guard, _)) => guard,
                Err(_) => return false,
            };
        }
    }
}

/// See [`Running::ends_on_drop`].
#[derive(Debug)]
pub struct EndsOnDrop {
    running: std::sync::Arc<Running>,
    name: String,
}

impl Drop for EndsOnDrop {
    fn drop(&mut self) {
        self.running.ended(&self.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_goes_once_every_clone_of_its_waitee_ended() {
        let running = Arc::new(Running::new(["w", "w", "r"]));
        let waiter = {
            let running = Arc::clone(&running);
            std::thread::spawn(move || running.wait_for("w", || false))
        };
        running.ended("w");
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        running.ended("w");
        assert!(waiter.join().unwrap());
        assert!(!running.wait_for("r", || true), "gives up when told to");
        assert!(running.wait_for("nobody", || false));
    }
}
