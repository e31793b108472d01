//! How a file is named inside an engine: apart from the file table, so that
//! the crate's error, which names a failed request's file, need not depend
//! on the table, which returns that error.

/// A small integer naming a file inside one engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileHandle(pub u32);

impl FileHandle {
    /// The table index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
