//! fio's `net` engine: a job whose file is a socket, run through any of
//! hybrio's engines (fio's own is synchronous: `ioengine=net` here is the
//! `psync` engine's `recv`/`send`).
//!
//! A job is prepared before the run's gate opens ([`Endpoint::prepare`]:
//! options checked, the address resolved, a listening socket bound, so that
//! a sender starting with the run finds it), and opened once it starts
//! ([`Endpoint::open`]: accept or connect, and for UDP fio's link messages),
//! under a [`Guard`] that shuts the sockets down when the job's time is up or
//! the run is interrupted, so that no accept, receive or send outlives it.
//! What goes on the wire is fio's ([`link`]), so hybrio and fio talk to each
//! other.
//!
//! Everything here talks to the address the job names; hybrio's own tests
//! and scenarios name loopback only. A multicast sender goes through the
//! interface `interface` names, and through loopback (127.0.0.1) when none is
//! named, never out of the machine unasked.

mod endpoint;
mod guard;
pub mod link;
mod session;
mod setup;

pub use endpoint::{Connection, Endpoint};
pub use guard::Guard;
pub use session::{Session, Verdict};
pub use setup::{NetError, check, listens};

#[cfg(test)]
mod tests;
