//! Between passes over the files, and around them: a new pass (each of
//! `loops`), the files made again (`unlink_each_loop`), the page cache
//! dropped (`invalidate`, `drop_cache_after`).

use super::state::IoLoop;
use crate::runner::errno::error_errno;
use crate::runner::files::add_to_engine;

impl IoLoop<'_> {
    /// fio starts every pass over the files (each of `loops`, and each repeat
    /// of a `time_based` job) afresh: what is in flight completes, the files'
    /// page cache is dropped (`invalidate=1`) and sequential I/O starts again
    /// at offset 0. Doing the same keeps the two tools' workloads identical.
    pub(super) fn start_new_pass(&mut self) {
        self.drain();
        if self.job.options.unlink_each_loop
            && self.job.options.ioengine != "null"
            && let Err(error) = self.remake_files()
        {
            self.fail(error_errno(&error), error.to_string());
            return;
        }
        if self.job.options.invalidate {
            self.drop_page_cache();
        }
        self.job.plan.restart();
        self.pass_issued = 0;
        if self.job.iolog.is_some() {
            // fio closes the files between passes and opens each again
            // when the next pass reaches it.
            let all: Vec<usize> = (0..self.job.files.len()).collect();
            self.log_closes(&all);
        }
    }

    /// `unlink_each_loop`: each of the job's files is taken from the engine,
    /// removed, made again as before the first loop (laid out with data for
    /// a job that reads, else created as `fallocate` says) and given back
    /// to the engine.
    #[cold]
    fn remake_files(&mut self) -> Result<(), hybrio::Error> {
        let options = &self.job.options;
        let opts = hybrio::file::OpenOptions {
            read: true,
            write: true,
            create: true,
            direct: options.direct,
            ..Default::default()
        };
        let reads = options.rw.reads() || options.rw.trims();
        for i in 0..self.job.files.len() {
            let (handle, path) = self.job.files[i].clone();
            let (start, size) = self.job.regions[i];
            if handle == crate::runner::files::NOT_OPEN {
                // openfiles: a file not open now is made again, and opened
                // when the job reaches it.
                let _ = std::fs::remove_file(&path);
                let plan = crate::layout::FilePlan {
                    path: path.clone(),
                    size,
                    start,
                };
                crate::layout::lay_out(&plan, reads, options.fallocate)?;
                continue;
            }
            drop(self.job.engine.remove_file(handle)?);
            if let Err(e) = std::fs::remove_file(&path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                return Err(hybrio::Error::io("unlink", &path, e));
            }
            let plan = crate::layout::FilePlan {
                path: path.clone(),
                size,
                start,
            };
            crate::layout::lay_out(&plan, reads, options.fallocate)?;
            let file = hybrio::file::open(&path, &opts)?;
            if let Some(cached) = self.job.cache_files.iter_mut().find(|(_, p)| *p == path) {
                cached.0 = file
                    .try_clone()
                    .map_err(|e| hybrio::Error::io("dup", &path, e))?;
            }
            let handle = add_to_engine(self.job.engine.as_mut(), file, path.clone(), options)?;
            self.job.files[i].0 = handle;
        }
        Ok(())
    }

    /// `drop_cache_after`: unlike a new pass, nothing is drained, so the
    /// requests in flight carry on and only the cache state changes under them.
    #[cold]
    pub(super) fn drop_cache_mid_run(&mut self) {
        // posix_fadvise(DONTNEED) leaves dirty pages alone, and a file just
        // laid out may still be dirty: writing it back first makes the drop
        // real for a job that only reads. A job that writes keeps its dirty
        // pages, which would otherwise be flushed here, inside its measurement.
        if !self.job.options.rw.writes() {
            for (file, path) in &self.job.cache_files {
                if let Err(error) = file.sync_data() {
                    let error = hybrio::Error::io("fdatasync", path, error);
                    self.fail(error_errno(&error), error.to_string());
                    return;
                }
            }
        }
        self.drop_page_cache();
        // The null engine has no files to drop: it records nothing.
        if !self.job.cache_files.is_empty() {
            self.cache_dropped_at = Some(self.clock.now());
        }
    }

    pub(super) fn drop_page_cache(&mut self) {
        let dropped: Result<(), hybrio::Error> = self
            .job
            .cache_files
            .iter()
            .try_for_each(|(file, path)| hybrio::file::drop_page_cache(file, path));
        if let Err(error) = dropped {
            self.fail(error_errno(&error), error.to_string());
        }
    }

    /// `openfiles`: opens the job's files at `indexes` for its engine.
    pub(super) fn open_files(&mut self, indexes: &[usize]) -> Result<(), hybrio::Error> {
        let null = self.job.options.ioengine == "null";
        let opts = if null {
            hybrio::file::OpenOptions::default()
        } else {
            crate::runner::files::open_options(&self.job.options)
        };
        for &i in indexes {
            let path = self.job.files[i].1.clone();
            // The null engine's files are /dev/null, as when the job started.
            let at = if null {
                std::path::PathBuf::from("/dev/null")
            } else {
                path.clone()
            };
            let file = hybrio::file::open(&at, &opts)?;
            let handle = add_to_engine(self.job.engine.as_mut(), file, path, &self.job.options)?;
            self.job.files[i].0 = handle;
        }
        Ok(())
    }

    /// `openfiles`: closes the files done for the pass (nothing is in flight).
    pub(super) fn close_files(&mut self) -> Result<(), hybrio::Error> {
        for i in std::mem::take(&mut self.to_close) {
            let handle = self.job.files[i].0;
            if handle != crate::runner::files::NOT_OPEN {
                drop(self.job.engine.remove_file(handle)?);
                self.job.files[i].0 = crate::runner::files::NOT_OPEN;
            }
        }
        Ok(())
    }
}
