//! Every raw system call the library makes, behind safe wrappers.
//!
//! This module (with `buf.rs`) is the only place with `unsafe`. Each wrapper
//! returns `io::Result` with the kernel's errno; the engines turn failures
//! into negative results or [`Error`](crate::Error)s with context.

pub(crate) mod aio;
mod errno;
mod eventfd;
mod fd;
pub(crate) mod host;
pub(crate) mod placement;
pub(crate) mod posix_aio;
mod rusage;
pub(crate) mod signal;
pub(crate) mod slot_book;
mod socket;
pub(crate) mod time;
pub(crate) mod tsc;
pub(crate) mod uring;

pub(crate) use errno::{negative_errno, retry_on_interrupt};
pub(crate) use eventfd::Readiness;
pub(crate) use fd::{
    Advice, Fallocate, atomic_write_units, cached_pages, clear_direct, discard, fadvise, fallocate,
    fdatasync, file_type, filesystem_type, fsync, ftruncate, is_block_device, is_direct, lseek_set,
    move_extents, pread, preadv2, probe_uncached, pwrite, pwritev2, read, status_flags, write,
};
#[cfg(test)]
pub(crate) use fd::{is_tmpfs, resident_pages};
pub(crate) use rusage::{locked_memory_limit, open_file_limit, process_rusage, thread_rusage};
pub(crate) use socket::{
    UDP_GRO, UDP_SEGMENT, is_datagram_socket, is_shut_for_reading, is_socket,
    keeps_message_boundaries, largest_datagram, recv, send, set_int_option, shutdown_both,
    wait_ready,
};
