//! The errno values a job reports a failure with where the failure has
//! none of its own, as fio reports them.

/// What a failure without an errno of its own is reported as.
pub(super) const EIO: i32 = 5;

/// What a network job whose peer never came fails with.
pub(super) const ETIMEDOUT: i32 = 110;

pub(super) fn error_errno(error: &hybrio::Error) -> i32 {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(errno) = cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::raw_os_error)
        {
            return errno;
        }
        source = cause.source();
    }
    EIO
}
