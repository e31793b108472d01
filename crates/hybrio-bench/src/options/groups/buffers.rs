//! A job's buffer-contents settings: what a job that does not verify writes.

/// A job's buffer-contents options, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferOptions {
    /// `buffer_pattern`'s bytes (empty: none).
    pub pattern: Vec<u8>,
    /// `zero_buffers`, and whether it was given.
    pub zero: bool,
    /// See `zero`.
    pub zero_given: bool,
    /// `refill_buffers`, when given (fio turns it on for compressible data).
    pub refill: Option<bool>,
    /// `scramble_buffers` (default on).
    pub scramble: bool,
    /// `buffer_compress_percentage`.
    pub compress_percentage: u32,
    /// `buffer_compress_chunk` (0: the smallest write).
    pub compress_chunk: u64,
    /// `dedupe_percentage`.
    pub dedupe_percentage: u32,
    /// `dedupe_mode=working_set`: a deduplicated write repeats one of a set
    /// of earlier buffers (else the one before).
    pub dedupe_working_set: bool,
    /// `dedupe_working_set_percentage`: that set, as a share of the job's size.
    pub dedupe_working_set_percentage: u32,
    /// `dedupe_global`: the set spread over every job of the run.
    pub dedupe_global: bool,
}

impl Default for BufferOptions {
    fn default() -> Self {
        BufferOptions {
            pattern: Vec::new(),
            zero: false,
            zero_given: false,
            refill: None,
            scramble: true,
            compress_percentage: 0,
            compress_chunk: 0,
            dedupe_percentage: 0,
            dedupe_working_set: false,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
        }
    }
}
