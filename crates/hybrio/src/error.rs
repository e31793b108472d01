use std::io;
use std::path::PathBuf;

/// Everything the library can fail with, each carrying what was being done.
///
/// A request's own error travels as a negative errno in
/// [`Completion::result`](crate::request::Completion::result);
/// [`Completion::outcome`](crate::request::Completion::outcome) makes it an
/// [`Error::Request`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A system call on a file failed.
    #[error("{op} {path}{}: {source}{}", at_offset(*.offset), limit_hint(.source))]
    Io {
        /// The operation, e.g. "open", "fsync", "register files".
        op: &'static str,
        /// The file it was done on.
        path: PathBuf,
        /// The byte offset, where the operation has one (a read, a
        /// write; not an open).
        offset: Option<u64>,
        /// What the kernel said.
        #[source]
        source: io::Error,
    },
    /// A request failed: its completion's error, as
    /// [`Completion::outcome`](crate::request::Completion::outcome) gives it,
    /// naming the operation, the file (by its handle: the engine's table
    /// maps it to the path the caller added) and the offset.
    #[error("{} file handle {}{}: {source}", .op.name(), .file.0, at_offset(*.offset))]
    Request {
        /// What the request did.
        op: crate::request::Op,
        /// The file (or socket) it was done on.
        file: crate::file::FileHandle,
        /// The byte offset, where the operation has one (not a sync, a
        /// send or a receive); a truncation's is the size it asked for.
        offset: Option<u64>,
        /// What the kernel said.
        #[source]
        source: io::Error,
    },
    /// No buffer of a pool is free, and waiting would not free one: the
    /// caller holds them all (in completions, or taken out of them).
    #[error(
        "no free buffer: the caller holds all {count} of the pool's buffers (dropping a completion or a buffer returns it)"
    )]
    NoBuffer {
        /// The pool's buffers.
        count: usize,
    },
    /// The kernel refuses an engine (missing syscall, disabled by sysctl or seccomp).
    #[error("ioengine {engine} is not available on this system: {reason}")]
    Unavailable {
        /// The engine's name.
        engine: &'static str,
        /// Why, in words a user can act on.
        reason: String,
    },
    /// An engine-level system call failed (ring setup, submission, buffer registration).
    #[error("ioengine {engine}: {op}: {source}{}", limit_hint(.source))]
    Engine {
        /// The engine's name.
        engine: &'static str,
        /// The operation that failed.
        op: &'static str,
        /// What the kernel said.
        #[source]
        source: io::Error,
    },
    /// The engine answered "busy" again and again, and waiting took none of
    /// its requests back: none of them can complete.
    #[error(
        "the engine is full and none of its {in_flight} requests in flight completes: nothing more can be submitted"
    )]
    Stalled {
        /// The engine's requests in flight.
        in_flight: usize,
    },
    /// A file handle that is not (or no longer) in the engine's file table.
    #[error("file handle {0} is not open in this engine")]
    BadHandle(u32),
    /// The file table is in use: requests on this file are still in flight.
    #[error("file handle {handle} still has {in_flight} requests in flight")]
    FileBusy {
        /// The handle.
        handle: u32,
        /// How many requests are still in flight on the engine.
        in_flight: usize,
    },
    /// An engine would not take a file: the file comes back, still open,
    /// with the reason ([`Error::into_refused_file`]).
    #[error("{reason}")]
    FileRefused {
        /// The file the caller offered.
        file: std::fs::File,
        /// Its path.
        path: PathBuf,
        /// Why the engine refused it.
        #[source]
        reason: Box<Error>,
    },
    /// A system-wide or per-process limit refused an engine its resources
    /// (Linux AIO's events, locked memory): the reason names the setting.
    #[error("ioengine {engine}: {reason}")]
    Limit {
        /// The engine's name.
        engine: &'static str,
        /// What ran out, how much is in use, and what raises it.
        reason: String,
    },
    /// An engine cannot pass uncached I/O's per-request flag.
    #[error(
        "ioengine {engine} cannot do uncached I/O (RWF_DONTCACHE): it has no per-request flags; pvsync2, io_uring, the pool and adaptive take it"
    )]
    CachingUnsupported {
        /// The engine's name.
        engine: &'static str,
    },
    /// The file's filesystem (or the kernel) refuses uncached I/O, or the
    /// file cannot take it (a socket, a file of the emulated device).
    #[error("uncached I/O (RWF_DONTCACHE) is refused on {path}: {reason}")]
    UncachedRefused {
        /// The file.
        path: PathBuf,
        /// Why: the filesystem and kernel that refuse it, or the kind of file.
        reason: String,
    },
    /// The file cannot take torn-write protected writes (`RWF_ATOMIC`): its
    /// filesystem or device offers none, it is not `O_DIRECT`, or it is a
    /// socket or a file of the emulated device.
    #[error("atomic writes (RWF_ATOMIC) are refused on {path}: {reason}")]
    AtomicRefused {
        /// The file.
        path: PathBuf,
        /// Why: the filesystem and kernel that offer none, the units it
        /// would take with `O_DIRECT`, or the kind of file.
        reason: String,
    },
    /// An engine cannot do I/O on this kind of file (Linux AIO on a socket).
    #[error("{what} cannot do I/O on {path}: {reason}")]
    Unsupported {
        /// What refuses it ("ioengine libaio").
        what: &'static str,
        /// The file (or the socket's name).
        path: PathBuf,
        /// Why, and what does take it.
        reason: &'static str,
    },
    /// An engine cannot do what its configuration asks (`nowait` of an
    /// engine without per-request flags, say).
    #[error("ioengine {engine} does not offer {what}: {reason}")]
    NotOffered {
        /// The engine's name.
        engine: &'static str,
        /// What was asked.
        what: &'static str,
        /// Why, and which engines do.
        reason: &'static str,
    },
    /// A buffer pool could not be made as asked.
    #[error("buffer pool of {count} x {size} bytes: {reason}")]
    BufPool {
        /// Buffers asked for.
        count: usize,
        /// Size of each buffer.
        size: usize,
        /// Why it failed.
        reason: String,
    },
}

impl Error {
    /// The file an [`Error::FileRefused`] hands back, with the reason;
    /// `None` for the other errors.
    pub fn into_refused_file(self) -> Option<(std::fs::File, Error)> {
        match self {
            Error::FileRefused { file, reason, .. } => Some((file, *reason)),
            _ => None,
        }
    }

    /// An [`Error::FileRefused`] handing `file` back for `reason` (the
    /// reason of `reason`, if that refused another file: a layer's copy of
    /// the caller's file is closed, the caller's comes back).
    pub fn refusing(file: std::fs::File, path: PathBuf, reason: Error) -> Error {
        let reason = match reason {
            Error::FileRefused { reason, .. } => reason,
            other => Box::new(other),
        };
        Error::FileRefused { file, path, reason }
    }

    /// The reason, for an [`Error::FileRefused`]; the error itself otherwise.
    pub fn reason(&self) -> &Error {
        match self {
            Error::FileRefused { reason, .. } => reason.reason(),
            other => other,
        }
    }

    /// An [`Error::Io`] for `op` on `path`, an operation without an offset
    /// (an open, a sync, a registration).
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            offset: None,
            source,
        }
    }

    /// An [`Error::Io`] for `op` on `path` at byte `offset`.
    pub fn io_at(
        op: &'static str,
        path: impl Into<PathBuf>,
        offset: u64,
        source: io::Error,
    ) -> Self {
        Error::Io {
            op,
            path: path.into(),
            offset: Some(offset),
            source,
        }
    }
}

/// " (offset N)" where the operation has an offset.
fn at_offset(offset: Option<u64>) -> String {
    offset.map_or_else(String::new, |o| format!(" (offset {o})"))
}

/// What a user can do about a system limit that `source` says was reached:
/// the limit and the setting that raises it, or nothing. 512 jobs with a
/// file and a ring each need over a thousand descriptors, and a shell's
/// default soft limit is 1,024.
fn limit_hint(source: &io::Error) -> String {
    match source.raw_os_error() {
        Some(libc::EMFILE) => match crate::sys::open_file_limit() {
            Ok((soft, hard)) if soft < hard => format!(
                " (the process's open-file limit, RLIMIT_NOFILE, is {soft}: raise it with `ulimit -n`, up to its hard limit {})",
                if hard == libc::RLIM_INFINITY {
                    "unlimited".to_owned()
                } else {
                    hard.to_string()
                }
            ),
            Ok((soft, _)) => format!(
                " (the process's open-file limit, RLIMIT_NOFILE, is {soft}, its hard limit too: raise both as root, `ulimit -Hn` or limits.conf)"
            ),
            Err(_) => " (the process's open-file limit, RLIMIT_NOFILE: raise it with `ulimit -n`)"
                .to_owned(),
        },
        Some(libc::ENFILE) => {
            " (the system's open-file limit: raise the fs.file-max sysctl)".to_owned()
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_descriptors_names_the_limit_and_how_to_raise_it() {
        let emfile = Error::io("open", "f", io::Error::from_raw_os_error(libc::EMFILE));
        let text = emfile.to_string();
        assert!(text.contains("RLIMIT_NOFILE"), "{text}");
        assert!(
            text.contains("ulimit -n") || text.contains("as root"),
            "{text}"
        );
        let enfile = Error::io("open", "f", io::Error::from_raw_os_error(libc::ENFILE));
        assert!(enfile.to_string().contains("fs.file-max"), "{enfile}");
        let other = Error::io("open", "f", io::Error::from_raw_os_error(libc::ENOENT));
        assert!(!other.to_string().contains("limit"), "{other}");
    }

    #[test]
    fn a_failed_request_names_its_operation_file_and_offset() {
        use crate::file::FileHandle;
        use crate::request::Op;
        let eio = || io::Error::from_raw_os_error(libc::EIO);
        let read = Error::Request {
            op: Op::Read,
            file: FileHandle(3),
            offset: Some(8192),
            source: eio(),
        };
        assert_eq!(
            read.to_string(),
            format!("read file handle 3 (offset 8192): {}", eio())
        );
        let sync = Error::Request {
            op: Op::Fsync,
            file: FileHandle(0),
            offset: None,
            source: eio(),
        };
        assert_eq!(sync.to_string(), format!("fsync file handle 0: {}", eio()));
    }

    #[test]
    fn an_offset_shows_only_where_the_operation_has_one() {
        let enoent = || io::Error::from_raw_os_error(libc::ENOENT);
        let open = Error::io("open", "/x/f", enoent()).to_string();
        assert!(
            open.starts_with("open /x/f: ") && !open.contains("offset"),
            "{open}"
        );
        let read = Error::io_at("read", "/x/f", 0, enoent()).to_string();
        assert!(read.starts_with("read /x/f (offset 0): "), "{read}");
    }
}
