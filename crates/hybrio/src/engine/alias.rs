//! The engines inside the adaptive engine share the caller's one descriptor
//! per file: each adds it as an alias at the caller's handle
//! ([`FileTable::insert_alias`]), which
//! requests name by its number and the engine never closes (on the
//! emulated device too: the adaptive engine makes the caller's file the
//! device's once, and tells the aliases whether it was `O_DIRECT`). The adaptive
//! engine keeps the caller's file open for as long as an alias of it is
//! there: it removes the aliases first, and drops the engines that hold
//! them before the one that owns the file.
//!
//! [`FileTable::insert_alias`]: crate::file::FileTable::insert_alias

use std::fs::File;
use std::path::Path;

use super::api::Engine;
use crate::Error;
use crate::file::FileHandle;

/// An engine inside another that can share its files' descriptors.
pub(crate) trait SharesFiles: Engine {
    /// Adds `file`'s descriptor as a file of this engine's at handle `at`
    /// (the outer engine's handle of it: a request goes in, and its
    /// completion comes out, naming the file as the caller does), with no
    /// descriptor of its own: the caller keeps `file` open while it is
    /// there. `direct`: whether the caller opened it `O_DIRECT` (on the
    /// emulated device, which the caller has made it a file of, the flag is
    /// cleared on the descriptor).
    ///
    /// The default, for an engine that holds its own (a test's), adds a
    /// duplicate through [`Engine::add_file`], which hands out handles of
    /// its own: placeholders (duplicates too, removed after) fill the
    /// handles below `at` until the file lands there.
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        let _ = direct;
        let mut placeholders = Vec::new();
        let landed = loop {
            let added = file
                .try_clone()
                .map_err(|e| Error::io("duplicate the descriptor of", path, e))
                .and_then(|copy| self.add_file(copy, path.to_owned()));
            match added {
                Ok(handle) if handle == at => break Ok(()),
                Ok(handle) if handle.0 > at.0 => {
                    let _ = self.remove_file(handle);
                    break Err(Error::BadHandle(at.0));
                }
                Ok(handle) => placeholders.push(handle),
                // The placeholders go all the same.
                Err(error) => break Err(error),
            }
        };
        for placeholder in placeholders {
            let _ = self.remove_file(placeholder);
        }
        landed
    }

    /// Removes a file [`add_alias`](Self::add_alias) added, leaving its
    /// descriptor open, unless requests are in flight.
    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        self.remove_file(handle).map(drop)
    }
}

/// The asynchronous engines of the adaptive engine's tests, boxed: each
/// holds a duplicate.
#[cfg(test)]
impl SharesFiles for Box<dyn Engine> {}
