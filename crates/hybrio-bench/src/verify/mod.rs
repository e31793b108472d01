//! fio's `verify`, compatible on disk: every written block carries fio's
//! header and checksum, laid out byte for byte as fio 3.33 lays them out, so
//! that a file written by fio is checked by hybrio and the other way round.
//!
//! A block of `verify_interval` bytes (the block size unless set) starts
//! with a 40-byte [`Header`] (magic, kind, length, the seed of the block's
//! random bytes, its offset, when and by which job it was written, a
//! sequence number, and a CRC-32C of those), then the kind's checksum of
//! the rest of the block. `verify_offset` moves the header inside the block.
//! `verify=pattern` checks the bytes after the header against
//! `verify_pattern`; `meta` checks the header alone.

mod checksum;
mod header;
mod offload;
mod pattern;
mod state;
mod verifier;

pub use crate::fio_rand::{FioRand, VERIFY_SEED, fill_random, job_seeds};
pub use checksum::VerifyKind;
pub use header::{HEADER_LEN, Header, MAGIC};
pub use offload::Offload;
pub use pattern::{Pattern, PatternError};
pub use state::{StateError, VerifyStateFile};
pub use verifier::{Checked, Expected, Mismatch, Verifier, VerifyConfig};
