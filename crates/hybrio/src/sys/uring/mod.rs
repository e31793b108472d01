//! An io_uring ring together with the requests it has in flight.
//!
//! The kernel reads and writes a request's buffer from the moment its SQE is
//! visible until its CQE is posted. [`Ring`] makes that safe by owning every
//! request (and so its [`Buf`](crate::buf::Buf)) over exactly that span: the
//! request moves into a slot of a slab whose index is the SQE's `user_data`,
//! and moves out only when the CQE carrying that index is drained, or when
//! `Drop` has waited for it. If waiting is impossible, the requests are leaked
//! rather than freed under the kernel.
//!
//! The ring's memory and system calls are hybrio's own ([`raw`]), so that a
//! ring bound to one thread can close its descriptor; its entries are built
//! by the io-uring crate.

mod entry;
mod multishot;
mod raw;
mod receivers;
mod ring;
mod settle;
mod types;

pub(crate) use multishot::Receive;
pub(crate) use raw::RawRing;
pub(crate) use receivers::Messages;
pub(crate) use ring::Ring;
pub(crate) use types::{FileRef, Push};
