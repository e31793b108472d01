//! Which fio hybrio speaks as, where fio's versions differ in what ends up
//! on disk or in the order of offsets.
//!
//! hybrio behaves as the newest fio it knows ([`FioVersion::NEWEST`]) unless
//! a run asks for an older one (`--fio-compat=3.33`, or `fio_compat` in a
//! job). Users run whatever fio their distribution ships, from 3.33 to 3.42
//! today: a file written by either is checked by hybrio, and a run compared
//! I/O for I/O with either, by naming it.

use std::fmt;

/// A fio version from 3.33 to 3.42: only the minor number differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FioVersion {
    minor: u8,
}

/// A version hybrio cannot speak as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a fio version hybrio speaks as: 3.33 to 3.42 (e.g. 3.33)")]
pub struct UnknownVersion(pub String);

impl FioVersion {
    /// The oldest fio hybrio speaks as: Debian 12's.
    pub const OLDEST: FioVersion = FioVersion { minor: 33 };

    /// The newest fio hybrio speaks as, and its default.
    pub const NEWEST: FioVersion = FioVersion { minor: 42 };

    /// Reads `3.33`, `fio-3.33` or `3.33.0`.
    pub fn parse(text: &str) -> Result<FioVersion, UnknownVersion> {
        let unknown = || UnknownVersion(text.to_string());
        let bare = text.trim().strip_prefix("fio-").unwrap_or(text.trim());
        let mut parts = bare.split('.');
        let (Some("3"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(unknown());
        };
        if parts.any(|p| p.parse::<u32>().is_err()) {
            return Err(unknown());
        }
        let minor: u8 = minor.parse().map_err(|_| unknown())?;
        let version = FioVersion { minor };
        (FioVersion::OLDEST..=FioVersion::NEWEST)
            .contains(&version)
            .then_some(version)
            .ok_or_else(unknown)
    }

    /// fio 3.35 (commit 95282650) seeds random offsets from `randseed`
    /// like every other generator; before, `randrepeat` seeded them from
    /// `FIO_RANDSEED` times the job's number, whatever `randseed` said.
    pub fn offsets_from_randseed(self) -> bool {
        self.minor >= 35
    }

    /// fio 3.39 (commit 4a1f2a5b) writes a JSON string pair whose value is
    /// empty, such as a job option given bare (`time_based`); before, it
    /// left the pair out, and a reader of 3.33's JSON may take any value
    /// there for a number.
    pub fn empty_json_strings(self) -> bool {
        self.minor >= 39
    }

    /// fio 3.39 (commit 6f771553) writes a client run's `global options` with
    /// several servers as an array, one object per server with its
    /// `hostname` and `port`; before, as one object every server's options
    /// were added to, which a reader of 3.33's JSON indexes by name.
    pub fn global_options_per_server(self) -> bool {
        self.minor >= 39
    }

    /// fio 3.36 (commit 242c63db) says where a pattern goes wrong from the
    /// start of the block; before, from the end of its header.
    pub fn pattern_offset_in_block(self) -> bool {
        self.minor >= 36
    }

    /// fio 3.36 (commits 75cbc26d, bb08a260) prints each device's sectors
    /// read and written in its "Disk stats" line, and their slaves' mean.
    pub fn disk_sectors(self) -> bool {
        self.minor >= 36
    }

    /// fio before 3.42 (commit 7089300f) ends every write line of the
    /// normal report with "; 0 zone resets", zoned device or not.
    pub fn zone_resets_on_every_write_line(self) -> bool {
        self.minor < 42
    }

    /// fio 3.39 (commit 3ee53198) finishes its SHA-512; before, `sha512`
    /// stored what its block buffer held.
    pub fn sha512_finished(self) -> bool {
        self.minor >= 39
    }

    /// fio 3.41 writes versioned verify headers (a version byte carved from
    /// `verify_type`, `numberio` 64 bits wide and moved) and refuses
    /// unversioned ones.
    pub fn versioned_verify_header(self) -> bool {
        self.minor >= 41
    }

    /// The longest `buffer_pattern` or `verify_pattern` this fio keeps
    /// (`MAX_PATTERN_SIZE`): 512 bytes before 3.34 (commit 1dc47d6b),
    /// 128 MiB since.
    pub fn max_pattern_bytes(self) -> usize {
        if self.minor >= 34 { 128 << 20 } else { 512 }
    }

    /// The version of the verify state file (`verify_state_save`) this fio
    /// writes: 3 up to 3.38, 4 in 3.39 and 3.40, 5 from 3.41.
    pub fn verify_state_version(self) -> u64 {
        match self.minor {
            ..39 => 3,
            39..41 => 4,
            _ => 5,
        }
    }
}

impl Default for FioVersion {
    fn default() -> FioVersion {
        FioVersion::NEWEST
    }
}

impl fmt::Display for FioVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "3.{}", self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_fio_prints_them() {
        assert_eq!(FioVersion::parse("3.33"), Ok(FioVersion::OLDEST));
        assert_eq!(FioVersion::parse("fio-3.42"), Ok(FioVersion::NEWEST));
        assert_eq!(FioVersion::parse("3.36.0").unwrap().to_string(), "3.36");
        for bad in ["3.32", "3.43", "4.0", "3", "3.x", "", "3.33.a"] {
            let err = FioVersion::parse(bad).unwrap_err();
            assert!(err.to_string().contains("3.33 to 3.42"), "{bad}: {err}");
        }
    }

    #[test]
    fn each_difference_starts_where_fio_made_it() {
        let at = |minor| FioVersion { minor };
        assert!(!at(34).offsets_from_randseed() && at(35).offsets_from_randseed());
        assert!(!at(35).pattern_offset_in_block() && at(36).pattern_offset_in_block());
        assert!(!at(38).sha512_finished() && at(39).sha512_finished());
        assert!(!at(40).versioned_verify_header() && at(41).versioned_verify_header());
        let states: Vec<u64> = (33..=42).map(|m| at(m).verify_state_version()).collect();
        assert_eq!(states, [3, 3, 3, 3, 3, 3, 4, 4, 5, 5]);
    }
}
