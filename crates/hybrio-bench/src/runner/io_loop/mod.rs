//! One job's I/O loop: fio's `do_io`.

// This file only declares and re-exports: the loop's state is in `state`,
// below every file that gives it methods (`run`, `complete`, `course`,
// `overlap`, `passes`, `read_back`, `status`), and the state of each of its parts in
// leaves below that, so that no file reaches back up into this one.

mod buffers;
mod complete;
mod course;
mod iolog;
mod latency_target;
mod min_rate;
mod overlap;
mod passes;
mod priority;
mod read_back;
mod replaying;
mod run;
mod state;
mod status;
mod verify;

pub(super) use state::{IoLoop, stats_config};
