//! What each of fio's engines that hybrio does not run needs: the hardware,
//! service or library it drives, so that a job file asking for one is
//! refused in one line that says what is missing.

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
        "posixaio",
        "POSIX AIO (glibc's threads); not implemented by hybrio yet (its pool engine does the same job)",
    ),
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
}
