//! The adaptive engine's choice, for one class of requests: inline or
//! asynchronous, from what each path has cost lately.
//!
//! # What a path costs
//! Both paths are priced in the same unit, the wall time one request takes
//! of the caller's life, so that they compare whatever the machine does
//! underneath (a kernel worker taking ext4's buffered writes, a device
//! overlapping requests, the page cache answering at once):
//!
//! - **inline**: the time inside the call, plus the caller's own time since
//!   the engine last returned to it (what it spends between requests, which
//!   an inline call cannot overlap with anything);
//! - **asynchronous**: the time from a window's start to its end over the
//!   asynchronous completions reaped in between: the time per request of the
//!   caller's life at the asynchronous engine's throughput (by Little's law
//!   the mean latency over the mean number in flight). Time with nothing in
//!   flight counts, so a caller that keeps one request outstanding and works
//!   between them pays for its work on both paths alike; the caller's time in
//!   other classes' inline requests does not, since they pay for it on their
//!   own path (a copy's writes on a kernel worker cost what its inline reads
//!   do not hide). Its ends are timed requests' own queue and reap: nothing
//!   else reads the clock.
//!
//! # How it learns
//! A class starts inline and times every request until it has a price for
//! each path: a window inline (at depth, its first eight requests then a
//! full window: the first pay for the cold start of everything beneath
//! them), then one exploration epoch the other way,
//! which alone decides this first time if it finds the other path 1.5 times
//! cheaper (the starting path was no choice). Otherwise, and from then on,
//! it keeps the cheaper path and changes only when the epochs since its
//! last switch find the other one cheaper on average by a margin: 5%, or as
//! much as the chosen path's own window costs have varied lately (or the
//! path's it would go back to, when it was chosen), up to 25%, a difference
//! smaller than a path's own variation being no evidence; two epochs must
//! clear the whole margin, more of them less of it, and while they lean
//! the other way they come soon. The path switched to is priced by its own
//! first window, every request of it timed.
//!
//! The chosen path's cost is watched all the time, the other path's only
//! during explorations, and only one class of an engine explores at a time
//! (two at once would each price a path beside the other's exploration). They come back at a low rate: at most every
//! [`EXPLORE_INTERVAL_NS`] (doubling up to four times that while the other
//! path keeps coming out far dearer), and no more than once per
//! [`EXPLORE_SPACING`](class::EXPLORE_SPACING) epoch lengths of requests.
//! They come sooner after a switch (to look back once), and when the chosen path's cost moves by
//! half or more for two windows (a cache dropped, a device saturated) to a
//! level it has not held steadily before while the other path was far dearer
//! (writes swinging with writeback move back and forth between two levels).
//!
//! An asynchronous epoch is long enough for the caller to fill its queue
//! (four depths), and its first depth's worth of completions is left out,
//! so it sees the concurrency the caller really keeps.
//!
//! A class of a kind another class already learned (see [`super::priors`])
//! starts from that class's choice and prices instead.

// This file only declares and re-exports: `class` holds the type and its
// tuning, `measure` and `explore` build on it, so none of them reaches back
// up here.
mod class;
mod explore;
mod measure;
mod window;

pub(crate) use class::{
    CLOCK_CHECK_SPACING, ClassPolicy, EXPLORE_INTERVAL_NS, GAP_CAP_NS, SLOW_INLINE_CLOCK_READS,
    SLOW_INLINE_NS,
};
// Outside, only the engine's tests build a route of their own.
#[cfg(test)]
pub(crate) use class::Route;
pub(crate) use window::Tally;

#[cfg(test)]
mod tests;
