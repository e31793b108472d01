//! The caller's files in the adaptive engine: each one's twins in the
//! asynchronous engine that takes it, its spare in the inline engine, and
//! the state of its classes.

use std::fs::File;
use std::path::PathBuf;

use super::asynchronous::{AsyncBackend, TwinOf};
use super::policy::ClassPolicy;
use super::priors::FileKind;
use super::{AdaptiveEngine, CLASSES, Lane};
use crate::Error;
use crate::engine::{Engine, EngineKind};
use crate::file::FileHandle;

/// The inline engine's spare file after each of the caller's (see `add_file`).
pub(super) const SPARE_PATH: &str = "/dev/null";

/// What the engine keeps per file: its handles in the asynchronous engine
/// and the decision state of each class of its requests.
#[derive(Debug)]
pub(super) struct FileRoute {
    /// Which asynchronous engine takes the file's requests, and its handles
    /// there: one for the requests that go untimed, one for the timed ones,
    /// so that a completion says by its file which it was.
    pub(super) backend: usize,
    pub(super) handle: FileHandle,
    pub(super) timed_handle: FileHandle,
    /// The spare file after it in the inline engine.
    pub(super) spare: FileHandle,
    /// What its requests run on, for the table of priors; `None` if the
    /// file could not say (its classes then start from nothing).
    pub(super) kind: Option<FileKind>,
    pub(super) classes: Vec<Option<Box<ClassPolicy>>>,
}

/// The device `file` is on, its filesystem's type, and whether it was
/// opened `O_DIRECT`: its kind, with the engine's. `None` if the kernel does
/// not say.
pub(super) fn file_kind(file: &File) -> Option<(u64, i64, bool)> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    let device = file.metadata().ok()?.dev();
    let filesystem = crate::sys::filesystem_type(file.as_raw_fd()).ok()?;
    let direct = crate::sys::is_direct(file.as_raw_fd()).ok()?;
    Some((device, filesystem, direct))
}

impl<I: Engine, B: AsyncBackend> AdaptiveEngine<I, B> {
    pub(super) fn add_caller_file(
        &mut self,
        file: File,
        path: PathBuf,
    ) -> Result<FileHandle, Error> {
        // A spare file follows the caller's in the inline engine, so that its
        // handles go in pairs, as the twins' do (see `Backend::lockstep`). It
        // is never read: /dev/null, which an emulated device reads into the
        // cache at once (a copy of the caller's file would be read again).
        let spare = match File::open(SPARE_PATH).or_else(|_| file.try_clone()) {
            Ok(spare) => spare,
            Err(e) => {
                let reason = Error::io("duplicate the descriptor of", &path, 0, e);
                return Err(Error::refusing(file, path, reason));
            }
        };
        let kind = file_kind(&file).map(|(device, filesystem, direct)| FileKind {
            device,
            filesystem,
            direct,
            emulated_ns: self.emulated_ns,
            backend: EngineKind::Adaptive,
            depth_class: FileKind::depth_class(self.depth),
        });
        let (backend, twin, timed_twin) = match self.add_twins(&file, &path) {
            Ok(added) => added,
            // The twins, if any, are closed; the caller's file goes back.
            Err(reason) => return Err(Error::refusing(file, path, reason)),
        };
        let remove_twins = |engine: &mut B| {
            let _ = engine.remove_file(twin);
            let _ = engine.remove_file(timed_twin);
        };
        let spare_path = PathBuf::from(SPARE_PATH);
        let path_again = path.clone();
        let handle = match self.inline.add_file(file, path) {
            Ok(handle) => handle,
            Err(error) => {
                remove_twins(&mut self.backends[backend].engine);
                return Err(error);
            }
        };
        let spare = match self.inline.add_file(spare, spare_path) {
            Ok(spare) => spare,
            Err(error) => {
                remove_twins(&mut self.backends[backend].engine);
                return Err(match self.inline.remove_file(handle) {
                    Ok(file) => Error::refusing(file, path_again, error),
                    Err(_) => error,
                });
            }
        };
        let kind = kind.map(|kind| FileKind {
            backend: self.backends[backend].engine.kind(),
            ..kind
        });
        let in_step = twin == handle
            && handle.0 % 2 == 0
            && timed_twin.0 == handle.0 + 1
            && spare.0 == handle.0 + 1;
        self.backends[backend].lockstep &= in_step;
        let of = |timed| {
            Some(TwinOf {
                caller: handle,
                timed,
            })
        };
        self.set_twin(backend, twin, of(false));
        self.set_twin(backend, timed_twin, of(true));
        if self.routes.len() <= handle.index() {
            self.routes.resize_with(handle.index() + 1, || None);
        }
        let lanes = Self::lanes_of(handle);
        if self.lanes.len() < lanes.end {
            self.lanes.resize(lanes.end, Lane::default());
        }
        self.lanes[lanes].fill(Lane {
            backend: backend as u8,
            twin,
            timed_twin,
            ..Lane::default()
        });
        self.routes[handle.index()] = Some(FileRoute {
            backend,
            handle: twin,
            timed_handle: timed_twin,
            spare,
            kind,
            classes: (0..CLASSES).map(|_| None).collect(),
        });
        Ok(handle)
    }

    pub(super) fn remove_caller_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        let route = self.route_of(handle).ok_or(Error::BadHandle(handle.0))?;
        let (backend, twin, timed_twin, spare) =
            (route.backend, route.handle, route.timed_handle, route.spare);
        // Asynchronous requests are not counted by file: while its engine
        // holds any, the file may be among them.
        let busy = self.ready.iter().any(|held| held.completion.file == handle)
            || self.backends[backend].in_flight() > 0;
        if busy {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight: self.in_flight(),
            });
        }
        self.backends[backend].engine.remove_file(twin)?;
        self.set_twin(backend, twin, None);
        // The timed twin goes too; if it cannot, the file is still removed
        // here, and that copy of the descriptor stays with the engine.
        if self.backends[backend]
            .engine
            .remove_file(timed_twin)
            .is_ok()
        {
            self.set_twin(backend, timed_twin, None);
        }
        if self.pending.is_some() {
            // Its class's policy goes with the file.
            self.end_inline_sample();
        }
        self.routes[handle.index()] = None;
        let lanes = Self::lanes_of(handle);
        if self.explorer.is_some_and(|(lane, _)| lanes.contains(&lane)) {
            self.explorer = None;
        }
        for lane in &self.lanes[lanes.clone()] {
            lane.count_went(&mut self.counts);
        }
        self.lanes[lanes].fill(Lane::default());
        let _ = self.inline.remove_file(spare);
        self.inline.remove_file(handle)
    }

    pub(super) fn route_of(&self, handle: FileHandle) -> Option<&FileRoute> {
        self.routes.get(handle.index()).and_then(Option::as_ref)
    }
}
