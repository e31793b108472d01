//! A job's figures over time: one point per bandwidth window (500 ms by
//! default), for the report's pictures of IOPS, bandwidth and latency over
//! time and of the adaptive engine's choices over time.
//!
//! Each point holds what the window added (I/Os, bytes, completion-latency
//! count and sum per direction), so that points add up: two windows merge
//! into one, and a group's jobs merge point by point. The adaptive engine's
//! path counts are cumulative (as last noted before the window closed), so a
//! picture takes their differences.

use serde::{Deserialize, Serialize};

/// Points kept before two neighbours merge into one and the window doubles:
/// an hour at 500 ms, so a day-long job's report stays small.
const MAX_POINTS: usize = 7200;

/// One window of a job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// End of the window, in ms from the start of the job's measured time.
    pub t_ms: u64,
    /// I/Os completed in the window, per direction (read, write, trim).
    pub ios: [u64; 3],
    /// Bytes transferred in the window, per direction.
    pub bytes: [u64; 3],
    /// Completion latencies recorded in the window, per direction.
    pub clat_count: [u64; 3],
    /// Their sum, in ns.
    pub clat_sum_ns: [u64; 3],
    /// The adaptive engine's path counts so far, when the engine has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathPoint>,
}

/// The adaptive engine's choices until a point in time (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathPoint {
    /// Requests done inline.
    pub inline: u64,
    /// Requests sent to the asynchronous engine.
    #[serde(rename = "async")]
    pub asynchronous: u64,
    /// Times a class of requests changed its choice.
    pub switches: u64,
}

impl PathPoint {
    fn add(self, other: PathPoint) -> PathPoint {
        PathPoint {
            inline: self.inline.saturating_add(other.inline),
            asynchronous: self.asynchronous.saturating_add(other.asynchronous),
            switches: self.switches.saturating_add(other.switches),
        }
    }
}

impl TimelinePoint {
    /// This window and the `later` one as one window (ending when `later` ends).
    fn absorb(&mut self, later: &TimelinePoint) {
        self.t_ms = self.t_ms.max(later.t_ms);
        for i in 0..3 {
            self.ios[i] = self.ios[i].saturating_add(later.ios[i]);
            self.bytes[i] = self.bytes[i].saturating_add(later.bytes[i]);
            self.clat_count[i] = self.clat_count[i].saturating_add(later.clat_count[i]);
            self.clat_sum_ns[i] = self.clat_sum_ns[i].saturating_add(later.clat_sum_ns[i]);
        }
        // Cumulative: the later count stands for both.
        self.paths = later.paths.or(self.paths);
    }

    /// The same window of another job added in (group reporting).
    fn add_job(&mut self, other: &TimelinePoint) {
        let paths = match (self.paths, other.paths) {
            (Some(a), Some(b)) => Some(a.add(b)),
            (a, b) => a.or(b),
        };
        self.absorb(other);
        self.paths = paths;
    }
}

/// A job's windows, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The window's length in ms (doubled each time the points are halved).
    pub interval_ms: u64,
    /// The windows.
    pub points: Vec<TimelinePoint>,
    /// The adaptive engine's path counts when the timeline started (after
    /// a ramp, what the ramp did): the first window's choices are its
    /// counts less these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths_at_start: Option<PathPoint>,
}

impl Timeline {
    /// An empty timeline of `interval_ms` windows.
    pub fn new(interval_ms: u64) -> Timeline {
        Timeline {
            interval_ms,
            points: Vec::new(),
            paths_at_start: None,
        }
    }

    /// Appends a window, halving the points first when they are many.
    pub fn push(&mut self, point: TimelinePoint) {
        if self.points.len() >= MAX_POINTS {
            self.halve();
        }
        self.points.push(point);
    }

    /// Neighbours merged two by two, the window doubled.
    fn halve(&mut self) {
        let points = std::mem::take(&mut self.points);
        for pair in points.chunks(2) {
            let mut merged = pair[0];
            if let Some(second) = pair.get(1) {
                merged.absorb(second);
            }
            self.points.push(merged);
        }
        self.interval_ms = self.interval_ms.saturating_mul(2);
    }

    /// Adds another job's timeline window by window (fio's group
    /// reporting sums the jobs' rates): the finer of the two is coarsened to
    /// the other's window first; windows one of them lacks count as empty.
    pub fn merge(&mut self, other: &Timeline) {
        let mut other = other.clone();
        while self.interval_ms < other.interval_ms && self.interval_ms > 0 {
            self.halve();
        }
        while other.interval_ms < self.interval_ms && other.interval_ms > 0 {
            other.halve();
        }
        if self.interval_ms == 0 {
            self.interval_ms = other.interval_ms;
        }
        self.paths_at_start = match (self.paths_at_start, other.paths_at_start) {
            (Some(a), Some(b)) => Some(a.add(b)),
            (a, b) => a.or(b),
        };
        for (index, point) in other.points.iter().enumerate() {
            match self.points.get_mut(index) {
                Some(mine) => mine.add_job(point),
                None => self.points.push(*point),
            }
        }
    }

    /// Whether any window saw I/O.
    pub fn is_empty(&self) -> bool {
        self.points.iter().all(|p| p.ios.iter().all(|&n| n == 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t_ms: u64, reads: u64) -> TimelinePoint {
        TimelinePoint {
            t_ms,
            ios: [reads, 0, 0],
            bytes: [reads * 4096, 0, 0],
            clat_count: [reads, 0, 0],
            clat_sum_ns: [reads * 1000, 0, 0],
            paths: Some(PathPoint {
                inline: t_ms,
                asynchronous: 1,
                switches: 0,
            }),
        }
    }

    #[test]
    fn many_points_halve_and_keep_every_io() {
        let mut timeline = Timeline::new(500);
        for i in 0..(MAX_POINTS as u64 + 1) {
            timeline.push(point((i + 1) * 500, i + 1));
        }
        assert_eq!(timeline.interval_ms, 1000);
        assert_eq!(timeline.points.len(), MAX_POINTS / 2 + 1);
        let total: u64 = timeline.points.iter().map(|p| p.ios[0]).sum();
        let n = MAX_POINTS as u64 + 1;
        assert_eq!(total, n * (n + 1) / 2);
        // A merged window ends with its second half and keeps its later paths.
        assert_eq!(timeline.points[0].t_ms, 1000);
        assert_eq!(timeline.points[0].paths.unwrap().inline, 1000);
    }

    #[test]
    fn a_group_adds_window_by_window_at_the_coarser_window() {
        let mut a = Timeline::new(500);
        for i in 1..=4 {
            a.push(point(i * 500, 10));
        }
        let mut b = Timeline::new(1000);
        for i in 1..=3 {
            b.push(point(i * 1000, 1));
        }
        a.merge(&b);
        assert_eq!(a.interval_ms, 1000);
        let reads: Vec<u64> = a.points.iter().map(|p| p.ios[0]).collect();
        assert_eq!(reads, [21, 21, 1]);
        // Paths of both jobs add up.
        assert_eq!(a.points[0].paths.unwrap().asynchronous, 2);
    }
}
