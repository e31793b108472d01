//! The errno values a job reports a failure with where the failure has
//! none of its own, as fio reports them.

/// What a failure without an errno of its own is reported as.
pub(super) const EIO: i32 = 5;

/// What a network job whose peer never came fails with.
pub(super) const ETIMEDOUT: i32 = 110;
