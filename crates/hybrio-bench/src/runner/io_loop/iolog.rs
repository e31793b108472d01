//! `write_iolog` from the loop: each I/O as it is issued, and each file the
//! job closes before its end (`openfiles`).

use hybrio::file::FileHandle;

use super::state::IoLoop;
use crate::iolog::Action;
use crate::offsets::Direction;
use crate::runner::errno::EIO;

impl IoLoop<'_> {
    /// Logs a read, write or trim of the job's file `file`.
    #[cold]
    pub(super) fn log_io(&mut self, file: usize, direction: Direction, offset: u64, len: u64) {
        let action = match direction {
            Direction::Read => Action::Read,
            Direction::Write => Action::Write,
            Direction::Trim => Action::Trim,
        };
        self.log(|log| log.io(file, action, offset, len));
    }

    /// Logs a sync of the file `handle`.
    #[cold]
    pub(super) fn log_sync(&mut self, handle: FileHandle, data_only: bool) {
        let action = if data_only {
            Action::Datasync
        } else {
            Action::Sync
        };
        if let Some(file) = self.job.files.iter().position(|(h, _)| *h == handle) {
            self.log(|log| log.io(file, action, 0, 0));
        }
    }

    /// Logs that the job closes `files` (indexes into its files).
    #[cold]
    pub(super) fn log_closes(&mut self, files: &[usize]) {
        for &file in files {
            self.log(|log| log.close(file));
        }
    }

    /// Logs the files still open as closed and writes the log out.
    pub(in crate::runner) fn finish_iolog(&mut self) {
        if let Some(log) = self.job.iolog.take()
            && let Err(error) = log.finish()
        {
            self.fail(EIO, error.to_string());
        }
    }

    fn log(
        &mut self,
        write: impl FnOnce(&mut crate::iolog::IologWriter) -> Result<(), crate::iolog::IologError>,
    ) {
        if let Some(log) = &mut self.job.iolog
            && let Err(error) = write(log)
        {
            // Nothing more is logged after a failure: the job ends with it.
            self.job.iolog = None;
            self.fail(EIO, error.to_string());
        }
    }
}
