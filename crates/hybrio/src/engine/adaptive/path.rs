//! The two paths a request can take, which the policy chooses between and
//! the priors remember: apart from both, which import each other's types.

/// The two paths a request can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// Done inside `queue`, in the caller's thread.
    Inline,
    /// Handed to the asynchronous engine.
    Async,
}

impl Path {
    pub(super) fn index(self) -> usize {
        match self {
            Path::Inline => 0,
            Path::Async => 1,
        }
    }

    pub(super) fn other(self) -> Path {
        match self {
            Path::Inline => Path::Async,
            Path::Async => Path::Inline,
        }
    }
}
