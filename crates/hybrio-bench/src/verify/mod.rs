//! fio's `verify`, compatible on disk: every written block carries fio's
//! header and checksum, laid out byte for byte as the fio named by
//! `fio_compat` lays them out (3.42 unless told), so that a file written by
//! fio is checked by hybrio and the other way round.
//!
//! A block of `verify_interval` bytes (the block size unless set) starts
//! with a [`Header`] (magic, kind, length, the seed of the block's random
//! bytes, its offset, when and by which job it was written, a sequence
//! number, and a CRC-32C of those): 48 bytes with a version byte from fio
//! 3.41 on, 40 without before. Then comes the kind's checksum of the rest
//! of the block (SHA-512 as fio 3.39 finishes it, or as fio 3.38 and older
//! leave it). Blocks read back are checked in whichever layout they carry,
//! whatever `fio_compat` says. `verify_offset` moves the header inside the
//! block. `verify=pattern_hdr` (or `verify_pattern` alone) checks the bytes
//! after the header against `verify_pattern`, `verify=pattern` the whole
//! block; `meta` checks the header alone.

mod checksum;
mod header;
mod offload;
mod pattern;
mod state;
mod verifier;

pub use crate::fio_rand::{FioRand, VERIFY_SEED, fill_random, job_seeds};
pub use checksum::{Sha512, VerifyKind};
pub use header::{HEADER_VERSION, Header, Layout, MAGIC, UnknownVersion};
pub use offload::Offload;
pub use pattern::{Pattern, PatternError};
pub use state::{StateError, VerifyStateFile, Window};
pub use verifier::{Checked, Expected, Mismatch, Verifier, VerifyConfig};
