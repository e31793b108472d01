//! What each of fio's engines that hybrio does not run needs: the hardware,
//! service or library it drives, so that a job file asking for one is
//! refused in one line that says what is missing; and why hybrio lacks an
//! option of one of fio's engines.

use std::borrow::Cow;

use super::fio_names::FIO_ENGINE_OPTIONS;

/// fio's engines hybrio does not run, with what they need.
const NEEDS: &[(&str, &str)] = &[
    (
        "cpp_null",
        "fio's C++ example engine, built out of fio's tree",
    ),
    (
        "dev-dax",
        "a persistent-memory device-DAX character device (/dev/daxN.M) and PMDK",
    ),
    ("dfs", "a DAOS storage system and its client library"),
    ("gfapi", "a GlusterFS volume and libgfapi"),
    ("gfapi_async", "a GlusterFS volume and libgfapi"),
    (
        "http",
        "an HTTP, WebDAV, S3 or Swift object store and libcurl",
    ),
    (
        "ime_aio",
        "a DDN Infinite Memory Engine and its client library",
    ),
    (
        "ime_psync",
        "a DDN Infinite Memory Engine and its client library",
    ),
    (
        "ime_psyncv",
        "a DDN Infinite Memory Engine and its client library",
    ),
    (
        "io_uring_cmd",
        "an NVMe character device (/dev/ngXnY) for io_uring passthrough commands",
    ),
    (
        "libblkio",
        "libblkio and a virtio-blk or vhost-user device it drives",
    ),
    ("libzbc", "a zoned SCSI or ATA disk (ZBC/ZAC) and libzbc"),
    ("libcufile", "an NVIDIA GPU with GPUDirect Storage (cuFile)"),
    ("libhdfs", "a Hadoop HDFS cluster and libhdfs"),
    ("libiscsi", "an iSCSI target and libiscsi"),
    (
        "libpmem",
        "persistent memory (a DAX file system) and PMDK's libpmem",
    ),
    (
        "librpma_apm_client",
        "RDMA hardware (InfiniBand or RoCE), persistent memory and librpma",
    ),
    (
        "librpma_apm_server",
        "RDMA hardware (InfiniBand or RoCE), persistent memory and librpma",
    ),
    (
        "librpma_gpspm_client",
        "RDMA hardware (InfiniBand or RoCE), persistent memory and librpma",
    ),
    (
        "librpma_gpspm_server",
        "RDMA hardware (InfiniBand or RoCE), persistent memory and librpma",
    ),
    (
        "mmap",
        "memory-mapped file I/O; not implemented by hybrio yet",
    ),
    ("mtd", "a raw flash (MTD) device and libmtd"),
    ("nbd", "a Network Block Device server and libnbd"),
    (
        "netsplice",
        "fio's splice-based network engine; not implemented by hybrio yet",
    ),
    ("nfs", "an NFS server and libnfs"),
    ("pmemblk", "persistent memory and PMDK's libpmemblk"),
    (
        "pvsync",
        "preadv/pwritev; not implemented by hybrio yet (pvsync2 is)",
    ),
    ("rados", "a Ceph cluster and librados"),
    ("rbd", "a Ceph cluster and librbd"),
    ("rdma", "RDMA hardware (InfiniBand or RoCE) and librdmacm"),
    (
        "sg",
        "a SCSI generic device (/dev/sgN) or a SCSI block device",
    ),
    ("solarisaio", "Solaris"),
    (
        "splice",
        "splice(2) through a pipe; not implemented by hybrio yet",
    ),
    ("vsync", "readv/writev; not implemented by hybrio yet"),
    ("windowsaio", "Windows"),
    ("xnvme", "an NVMe device driven through xNVMe"),
];

/// An NVMe passthrough option: fio's io_uring lists it only because it shares
/// io_uring_cmd's option table.
const PASSTHROUGH: &str = "an option of fio's io_uring_cmd engine (fio's io_uring lists it as they share their options), which hybrio does not run (an NVMe character device (/dev/ngXnY) for io_uring passthrough commands)";
/// End-to-end protection information, which fio sends through io_uring_cmd
/// and, since 3.42, io_uring's metadata buffers.
const PROTECTION: &str = "end-to-end protection information: needs a device formatted with it; hybrio's io_uring sends no metadata buffer (not implemented) and hybrio does not run io_uring_cmd";
/// FUA reads and writes, which fio issues as SCSI or NVMe commands.
const FUA: &str = "an option of fio's sg and io_uring_cmd engines (fio's io_uring lists it as it shares io_uring_cmd's options), which hybrio does not run (a SCSI generic device, or an NVMe character device for passthrough commands)";

/// Options of engines hybrio runs (io_uring, libaio, pvsync2) that hybrio
/// lacks, with why, sorted by name; an option only of engines hybrio does not
/// run needs no entry: its reason is its engine's.
const OPTIONS_LACKING: &[(&str, &str)] = &[
    ("apptag", PROTECTION),
    ("apptag_mask", PROTECTION),
    ("cmd_type", PASSTHROUGH),
    ("deac", PASSTHROUGH),
    (
        "force_async",
        "sending every N-th request to io_uring's workers (IOSQE_ASYNC): not implemented by hybrio yet; its io_uring tries each request inline first, fio's default (force_async=0)",
    ),
    (
        "hipri_percentage",
        "not implemented by hybrio yet: its pvsync2 sets RWF_HIPRI on every I/O with hipri, fio's default (100%)",
    ),
    (
        "libaio_vectored",
        "not implemented by hybrio yet: its libaio submits plain reads and writes (IOCB_CMD_PREAD/PWRITE), fio's default",
    ),
    ("md_per_io_size", PROTECTION),
    (
        "nonvectored",
        "not implemented by hybrio yet: its io_uring always issues non-vectored reads and writes (IORING_OP_READ/WRITE), as fio's default does where the kernel has them",
    ),
    ("pi_act", PROTECTION),
    ("pi_chk", PROTECTION),
    ("readfua", FUA),
    (
        "sqthread_poll_cpu",
        "not implemented by hybrio yet: with sqthread_poll the kernel's polling thread runs where the kernel puts it",
    ),
    (
        "userspace_reap",
        "reaping libaio's completions from its ring in user space: not implemented by hybrio yet; its libaio reaps with io_getevents(2), fio's default",
    ),
    ("verify_mode", PASSTHROUGH),
    ("write_mode", PASSTHROUGH),
    ("writefua", FUA),
];

/// Whether `name` is an option of one of fio's engines (`--enghelp=ENGINE`):
/// a general option's reason belongs in `lacking`, an engine option's here.
#[cfg(test)]
pub fn is_engine_option(name: &str) -> bool {
    engines_listing(name).is_some()
}

/// The engines that list option `name`, as "sg, io_uring_cmd".
fn engines_listing(name: &str) -> Option<&'static str> {
    FIO_ENGINE_OPTIONS
        .binary_search_by_key(&name, |(option, _)| option)
        .ok()
        .map(|at| FIO_ENGINE_OPTIONS[at].1)
}

/// Why hybrio lacks fio's engine option `name`: written for one of an engine
/// hybrio runs, else what its engines need. `None` when it is no engine
/// option, or one of an engine hybrio runs that nobody explained.
pub fn option_reason(name: &str) -> Option<Cow<'static, str>> {
    let listing = engines_listing(name)?;
    if let Ok(at) = OPTIONS_LACKING.binary_search_by_key(&name, |(option, _)| option) {
        return Some(Cow::Borrowed(OPTIONS_LACKING[at].1));
    }
    let engines: Vec<&str> = listing.split(", ").collect();
    let wants: Vec<&str> = engines.iter().map(|e| needs(e)).collect::<Option<_>>()?;
    let (named, noun) = match engines.split_last() {
        Some((last, [])) => (last.to_string(), "engine"),
        Some((last, rest)) => (format!("{} and {last}", rest.join(", ")), "engines"),
        None => return None,
    };
    let what = if wants.iter().all(|w| *w == wants[0]) {
        wants[0].to_string()
    } else {
        engines
            .iter()
            .zip(&wants)
            .map(|(engine, want)| format!("{engine}: {want}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    Some(Cow::Owned(format!(
        "an option of fio's {named} {noun}, which hybrio does not run ({what})"
    )))
}

/// fio's engines whose I/Os change a file's space instead of moving data:
/// hybrio runs them as `psync` does its reads and writes, one request at a
/// time in the job's thread, each I/O the space request it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceEngine {
    /// `falloc`: a read is `fallocate(KEEP_SIZE)`, a write `fallocate(0)`,
    /// a trim a hole punched.
    Falloc,
    /// `ftruncate`: a write sets the file's size to its offset.
    Ftruncate,
}

impl SpaceEngine {
    /// The space engine `ioengine=name` names, if it names one.
    pub fn named(name: &str) -> Option<SpaceEngine> {
        match name {
            "falloc" => Some(SpaceEngine::Falloc),
            "ftruncate" => Some(SpaceEngine::Ftruncate),
            _ => None,
        }
    }
}

/// `filestat`'s `stat_type`: which system call looks a file up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatType {
    /// `stat(2)`, fio's default.
    #[default]
    Stat,
    /// `lstat(2)`.
    Lstat,
    /// `statx(2)`, asking for every field.
    Statx,
}

/// fio's engines whose I/Os are operations on whole files (see
/// `runner::file_ops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// `filecreate`: `open(O_CREAT | O_RDWR)`.
    Create,
    /// `filestat`: a lookup, by `stat_type`.
    Stat(StatType),
    /// `filedelete`: `unlink(2)`.
    Delete,
    /// `dircreate` (fio 3.37): `mkdir(2)`.
    DirCreate,
    /// `dirstat` (fio 3.37): a directory's lookup, by `stat_type`.
    DirStat(StatType),
    /// `dirdelete` (fio 3.37): `rmdir(2)`.
    DirDelete,
}

impl FileOp {
    /// The file operation `ioengine=name` names, if it names one.
    pub fn named(name: &str, stat_type: StatType) -> Option<FileOp> {
        match name {
            "filecreate" => Some(FileOp::Create),
            "filestat" => Some(FileOp::Stat(stat_type)),
            "filedelete" => Some(FileOp::Delete),
            "dircreate" => Some(FileOp::DirCreate),
            "dirstat" => Some(FileOp::DirStat(stat_type)),
            "dirdelete" => Some(FileOp::DirDelete),
            _ => None,
        }
    }

    /// The engine's name.
    pub fn engine(self) -> &'static str {
        match self {
            FileOp::Create => "filecreate",
            FileOp::Stat(_) => "filestat",
            FileOp::Delete => "filedelete",
            FileOp::DirCreate => "dircreate",
            FileOp::DirStat(_) => "dirstat",
            FileOp::DirDelete => "dirdelete",
        }
    }

    /// Whether its files are directories.
    pub fn on_directories(self) -> bool {
        matches!(
            self,
            FileOp::DirCreate | FileOp::DirStat(_) | FileOp::DirDelete
        )
    }

    /// Whether it makes its files (nothing to lay out first).
    pub fn creates(self) -> bool {
        matches!(self, FileOp::Create | FileOp::DirCreate)
    }

    /// The operation, in an error message.
    pub fn name(self) -> &'static str {
        match self {
            FileOp::Create => "create",
            FileOp::Stat(StatType::Stat) | FileOp::DirStat(StatType::Stat) => "stat",
            FileOp::Stat(StatType::Lstat) | FileOp::DirStat(StatType::Lstat) => "lstat",
            FileOp::Stat(StatType::Statx) | FileOp::DirStat(StatType::Statx) => "statx",
            FileOp::Delete => "delete",
            FileOp::DirCreate => "mkdir",
            FileOp::DirDelete => "rmdir",
        }
    }
}

/// Whether an engine drives hardware, a service or a library this machine
/// cannot stand in for (not one hybrio merely lacks yet).
pub fn needs_hardware(name: &str) -> bool {
    needs(name).is_some_and(|what| !what.contains("not implemented by hybrio yet"))
}

/// What fio's engine `name` needs, if hybrio does not run it and knows.
pub fn needs(name: &str) -> Option<&'static str> {
    NEEDS
        .iter()
        .find(|(engine, _)| *engine == name)
        .map(|(_, what)| *what)
}

/// Whether fio (3.33 or 3.42) has an engine of this name (`--enghelp`), or loads
/// one (`external:`, fio's example `cpp_null`).
pub fn is_fio_engine(name: &str) -> bool {
    super::fio_names::FIO_ENGINES.binary_search(&name).is_ok()
        || is_external(name)
        || needs(name).is_some()
}

/// External engines fio loads from a shared object (`external:path.so`).
pub fn is_external(name: &str) -> bool {
    name.starts_with("external:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fio_engine_hybrio_lacks_says_what_it_needs() {
        // The engines the ioengine option takes (its one list).
        let Some(super::super::Kind::Choice(runs)) = super::super::find("ioengine").map(|o| o.kind)
        else {
            panic!("ioengine is a choice");
        };
        for engine in super::super::fio_names::FIO_ENGINES {
            if !runs.contains(engine) {
                assert!(needs(engine).is_some(), "{engine}");
            }
        }
    }

    #[test]
    fn engine_options_hybrio_lacks_say_why() {
        assert!(
            FIO_ENGINE_OPTIONS.windows(2).all(|p| p[0].0 < p[1].0),
            "fio_names.rs's engine options must be sorted, each once"
        );
        assert!(OPTIONS_LACKING.windows(2).all(|p| p[0].0 < p[1].0));
        for (name, _) in OPTIONS_LACKING {
            assert!(super::super::find(name).is_none(), "hybrio has {name}");
            // Written only where deriving it from the engines would not do.
            let listing = engines_listing(name).expect("an engine option");
            assert!(
                listing.split(", ").any(|e| needs(e).is_none()),
                "{name}: its engines' needs say why"
            );
        }
        assert_eq!(
            option_reason("uri").unwrap(),
            "an option of fio's nbd engine, which hybrio does not run \
             (a Network Block Device server and libnbd)"
        );
        assert_eq!(
            option_reason("brick").unwrap(),
            "an option of fio's gfapi and gfapi_async engines, which hybrio does not run \
             (a GlusterFS volume and libgfapi)"
        );
        assert_eq!(
            option_reason("busy_poll").unwrap(),
            "an option of fio's rados and rbd engines, which hybrio does not run \
             (rados: a Ceph cluster and librados; rbd: a Ceph cluster and librbd)"
        );
    }
}
