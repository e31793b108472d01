//! Opening a job's files: how, and how many at once (`openfiles`).

use std::path::Path;

use hybrio::file::FileHandle;

use crate::layout::JobFile;
use crate::options::JobOptions;

/// The handle of a job's file that is not open now (`openfiles`).
pub(crate) const NOT_OPEN: FileHandle = FileHandle(u32::MAX);

/// `openfiles`: how many of a job's `files` may be open at once, when
/// fewer than all of them.
pub fn open_limit(options: &JobOptions, files: usize) -> Option<usize> {
    options
        .openfiles
        .map(|n| (n as usize).max(1))
        .filter(|&n| n < files)
}

/// How a job opens its files (not the null engine's, which is /dev/null).
pub(crate) fn open_options(options: &JobOptions) -> hybrio::file::OpenOptions {
    let space_engine = crate::options::SpaceEngine::named(&options.ioengine).is_some();
    hybrio::file::OpenOptions {
        read: true,
        // fio's falloc engine opens its files to write whatever the job does.
        write: options.rw.writes() || space_engine,
        create: options.rw.writes() || space_engine,
        direct: options.direct,
        ..Default::default()
    }
}

/// Opens the job's files for the engine (after layout): all of them, or the
/// first `openfiles` (the others when the job reaches them).
pub fn open_files(
    options: &JobOptions,
    files: &[crate::layout::FilePlan],
) -> Result<Vec<JobFile>, hybrio::Error> {
    let limit = open_limit(options, files.len()).unwrap_or(files.len());
    files
        .iter()
        .enumerate()
        .map(|(i, plan)| {
            // The null engine does no I/O, so, as in fio, it needs no real file.
            let (path, opts) = if options.ioengine == "null" {
                (Path::new("/dev/null"), hybrio::file::OpenOptions::default())
            } else {
                (plan.path.as_path(), open_options(options))
            };
            let file = if i < limit {
                Some(hybrio::file::open(path, &opts)?)
            } else {
                None
            };
            Ok(JobFile {
                file,
                path: plan.path.clone(),
                size: plan.size,
                start: plan.start,
            })
        })
        .collect()
}

/// Adds one of the job's files to its engine with the modes that go with
/// each file: its caching (`uncached`) and torn-write protected writes
/// (`atomic`), probed now, so that a refusal is one line before any I/O.
pub(crate) fn add_to_engine(
    engine: &mut dyn hybrio::engine::Engine,
    file: std::fs::File,
    path: std::path::PathBuf,
    options: &JobOptions,
) -> Result<FileHandle, hybrio::Error> {
    let atomic = options.atomic && options.rw.writes();
    let units = if atomic {
        hybrio::file::atomic_write_units(&file)
            .map_err(|e| hybrio::Error::io("statx(STATX_WRITE_ATOMIC)", &path, e))?
    } else {
        None
    };
    let handle = engine.add_file(file, path.clone())?;
    if options.uncached != hybrio::file::Caching::Cached {
        engine.set_caching(handle, options.uncached)?;
    }
    if atomic {
        engine.set_atomic_writes(handle, true)?;
        if let Some(units) = units {
            atomic_sizes_fit(options, &units).map_err(|reason| hybrio::Error::AtomicRefused {
                path: path.clone(),
                reason,
            })?;
        }
    }
    Ok(handle)
}

/// Whether every write the job draws can be an atomic one of `units`: its
/// sizes (a power of two within the units) and where its offsets fall
/// (multiples of each size); why not if not.
fn atomic_sizes_fit(
    options: &JobOptions,
    units: &hybrio::file::AtomicWriteUnits,
) -> Result<(), String> {
    let sizing = crate::offsets::BlockSizing::of_job(options, 1);
    let sizes = sizing.sizes();
    if let Some(size) = sizes.iter().find(|&&size| !units.fits(0, size)) {
        return Err(format!(
            "the job writes {size} bytes at a time, which no atomic write is here: it takes powers of two from {units}"
        ));
    }
    // Sizes that differ put a longer write at an offset that is a multiple
    // of a shorter one only, which the kernel refuses for the longer.
    if let [shortest, .., longest] = sizes[..] {
        return Err(format!(
            "the job writes {shortest} to {longest} bytes at a time, and an atomic write must be at a multiple of its own length: give the writes one block size"
        ));
    }
    let (size, align) = (sizes[0], options.blockalign[1]);
    if align != 0 && !align.is_multiple_of(size) {
        return Err(format!(
            "blockalign={align} puts writes of {size} bytes at offsets that are not multiples of their length, which atomic writes must be at"
        ));
    }
    Ok(())
}
