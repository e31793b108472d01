//! The hybrio benchmark: fio's options, job files and output, running on the
//! hybrio engine library.
//!
//! # Brief overview
//!
//! A run flows through one module per step: [`jobfile`] reads job files and
//! the command line into sections and, through the single option table in
//! [`options`], into typed jobs; [`layout`] names and lays out each job's
//! files; [`runner`] runs each job on its own thread (I/O offsets from
//! [`offsets`]) and hands back its [`outcome`]; [`stats`] measures as fio does and [`logs`] writes fio's per-I/O logs; [`output`] prints fio's text
//! and JSON; [`run`] ties them together and [`compare`] runs the same jobs
//! on each engine side by side. With the `mpi` feature, `across_ranks` runs
//! them once across the ranks of `mpirun` (`cluster` is the ranks) and
//! merges every rank's statistics at rank 0.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "mpi")]
pub mod across_ranks;
pub mod cli;
#[cfg(feature = "mpi")]
pub mod cluster;
pub mod compare;
pub mod diskstats;
pub mod fio_rand;
pub mod fio_version;
pub mod hist_log;
pub mod iolog;
pub mod jobfile;
pub mod layout;
pub mod logs;
pub mod net;
pub mod offsets;
pub mod options;
pub mod outcome;
pub mod output;
pub mod progress;
pub mod run;
pub mod runner;
pub mod stats;
pub mod units;
pub mod verify;
