//! The caller's files in the adaptive engine: the one descriptor of each,
//! which the engine owns, its aliases at the caller's handle in the engines
//! inside (the inline engine's and the asynchronous engine's that takes it:
//! no descriptor of their own, see [`alias`](crate::engine::alias)), and the
//! state of its classes.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use super::backend::AsyncBackend;
use super::caching::{self, AutoCaching};
use super::priors::FileKind;
use super::readahead::ReadStream;
use super::state::{AdaptiveEngine, CLASSES, FileRoute, Lane};
use crate::Error;
use crate::engine::api::{Engine, EngineKind};
use crate::engine::inline::InlinePath;
use crate::file::{Caching, FileHandle};

/// The device `file` is on and its filesystem's type: its kind, with its
/// flags and the engine's. `None` if the kernel does not say.
fn device_of(file: &File) -> Option<(u64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let device = file.metadata().ok()?.dev();
    let filesystem = crate::sys::filesystem_type(file.as_raw_fd()).ok()?;
    Some((device, filesystem))
}

impl<I: InlinePath, B: AsyncBackend> AdaptiveEngine<I, B> {
    pub(super) fn add_caller_file(
        &mut self,
        file: File,
        path: PathBuf,
    ) -> Result<FileHandle, Error> {
        // The flags are the caller's file's, before the emulated device
        // clears O_DIRECT.
        let direct = match crate::sys::is_direct(file.as_raw_fd()) {
            Ok(direct) => direct,
            Err(e) => {
                let reason = Error::io("read the flags of", &path, e);
                return Err(Error::refusing(file, path, reason));
            }
        };
        // On the emulated device the file is the device's once, here, and
        // the engines inside share it, told that it was O_DIRECT.
        if self.emulated_ns > 0
            && let Err(reason) = crate::device::EmulatedDevice::take_over(file.as_raw_fd(), &path)
        {
            return Err(Error::refusing(file, path, reason));
        }
        let kind = device_of(&file).map(|(device, filesystem)| FileKind {
            device,
            filesystem,
            direct,
            emulated_ns: self.emulated_ns,
            backend: EngineKind::Adaptive,
            depth_class: FileKind::depth_class(self.depth),
        });
        let socket = super::sockets::SocketRoute::of(&file);
        // The lowest free handle: the engines inside put their aliases at it.
        let handle = FileHandle(
            self.routes
                .iter()
                .position(Option::is_none)
                .unwrap_or(self.routes.len()) as u32,
        );
        let backend = match self.add_async_alias(handle, &file, &path, direct) {
            Ok(backend) => backend,
            Err(reason) => return Err(Error::refusing(file, path, reason)),
        };
        if let Err(reason) = self.inline.add_alias(handle, &file, &path, direct) {
            let _ = self.backends[backend].engine.remove_alias(handle);
            return Err(Error::refusing(file, path, reason));
        }
        let kind = kind.map(|kind| FileKind {
            backend: self.backends[backend].engine.kind(),
            ..kind
        });
        if self.routes.len() <= handle.index() {
            self.routes.resize_with(handle.index() + 1, || None);
        }
        let lanes = Self::lanes_of(handle);
        if self.lanes.len() < lanes.end {
            self.lanes.resize(lanes.end, Lane::default());
        }
        self.lanes[lanes].fill(Lane {
            backend: backend as u8,
            ..Lane::default()
        });
        self.routes[handle.index()] = Some(FileRoute {
            file,
            backend,
            direct,
            path,
            kind,
            classes: (0..CLASSES).map(|_| None).collect(),
            socket,
            auto: None,
            reads: None,
        });
        Ok(handle)
    }

    /// Moves the `O_DIRECT` files of asynchronous engine 0 (io_uring) to
    /// engine `to` (libaio, just made for a file written past its end), so
    /// that every `O_DIRECT` request is on the one engine a reap waits on.
    /// A 300 MiB `O_DIRECT` copy on XFS at depth 8, its reads on io_uring
    /// and its writes on libaio, ran at 0.89-0.93 of libaio's speed (8-12
    /// alternated rounds; reaping both engines without ever blocking made it
    /// no faster); all on libaio, at 0.99-1.05 (on ext4 0.99-1.01 against
    /// 1.01-1.03).
    /// Only while engine 0 holds no request (they are not counted by file):
    /// a file that cannot move stays where it is, which is correct, only
    /// slower.
    pub(super) fn gather_direct_files(&mut self, to: usize) {
        if self.backends[0].in_flight() > 0 {
            return;
        }
        for index in 0..self.routes.len() {
            let handle = FileHandle(index as u32);
            if self
                .route_of(handle)
                .is_some_and(|route| route.direct && route.backend != to)
            {
                self.move_file(handle, to);
            }
        }
    }

    /// Moves the caller's file `handle` to asynchronous engine `to`; if it
    /// cannot go, it stays where it was (and if it cannot go back either,
    /// its asynchronous requests fail with `EBADF` rather than go astray).
    fn move_file(&mut self, handle: FileHandle, to: usize) {
        let Some(route) = self.routes.get(handle.index()).and_then(Option::as_ref) else {
            return;
        };
        let from = route.backend;
        let backends = &mut self.backends;
        if backends[from].engine.remove_alias(handle).is_err() {
            return;
        }
        let (file, path, direct) = (&route.file, route.path.as_path(), route.direct);
        let backend = match backends[to].engine.add_alias(handle, file, path, direct) {
            Ok(()) => to,
            Err(_) => {
                let _ = backends[from].engine.add_alias(handle, file, path, direct);
                from
            }
        };
        let kind = self.backends[backend].engine.kind();
        let Some(route) = self.routes[handle.index()].as_mut() else {
            return;
        };
        route.backend = backend;
        if let Some(file_kind) = &mut route.kind {
            file_kind.backend = kind;
        }
        for lane in &mut self.lanes[Self::lanes_of(handle)] {
            lane.backend = backend as u8;
        }
    }

    /// Sets the caching of the caller's file at `handle`. [`Caching::Auto`]
    /// leaves both paths cached and the choice to the file's write stream
    /// ([`caching`]), once the file is found to take uncached I/O; where it
    /// cannot, the file stays cached, as the caller allowed.
    pub(super) fn set_caller_caching(
        &mut self,
        handle: FileHandle,
        caching: Caching,
    ) -> Result<(), Error> {
        let route = self.route_of(handle).ok_or(Error::BadHandle(handle.0))?;
        let (direct, was_auto) = (route.direct, route.auto.is_some());
        let auto = if caching == Caching::Auto && !direct {
            match self.set_paths_caching(handle, Caching::Uncached) {
                Ok(()) => Some(AutoCaching::new(
                    *self.auto_room.get_or_insert_with(caching::Room::now),
                    self.depth,
                )),
                Err(Error::UncachedRefused { .. } | Error::CachingUnsupported { .. }) => None,
                Err(error) => return Err(error),
            }
        } else {
            None
        };
        // Read ahead of through the caller's own descriptor.
        let reads = match (&auto, self.auto_room) {
            (Some(_), Some(room)) => self
                .route_of(handle)
                .map(|route| ReadStream::new(route.file.as_raw_fd(), room.read_ahead, self.depth)),
            _ => None,
        };
        let paths = if caching == Caching::Auto {
            Caching::Cached
        } else {
            caching
        };
        self.set_paths_caching(handle, paths)?;
        self.auto_files = self.auto_files + usize::from(auto.is_some()) - usize::from(was_auto);
        if let Some(route) = self.routes.get_mut(handle.index()).and_then(Option::as_mut) {
            route.auto = auto;
            route.reads = reads;
        }
        Ok(())
    }

    /// Sets the caching of the caller's file at `handle` on both paths: the
    /// inline engine's alias (its calls carry the flag inside this engine)
    /// and the asynchronous engine's. The inline engine probes first and
    /// refuses what cannot take it (an emulated device's file).
    fn set_paths_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        let backend = self
            .route_of(handle)
            .ok_or(Error::BadHandle(handle.0))?
            .backend;
        self.inline.set_caching_inside(handle, caching)?;
        if let Err(error) = self.backends[backend].engine.set_caching(handle, caching) {
            // Both paths or neither.
            let _ = self.inline.set_caching_inside(handle, Caching::Cached);
            return Err(error);
        }
        Ok(())
    }

    /// Makes the writes of the caller's file at `handle` atomic, or not,
    /// on both paths: the inline engine's alias (its calls carry the flag
    /// inside this engine) and the asynchronous engine's. The inline engine
    /// checks first, and refuses what cannot take them.
    pub(super) fn set_caller_atomic_writes(
        &mut self,
        handle: FileHandle,
        atomic: bool,
    ) -> Result<(), Error> {
        let backend = self
            .route_of(handle)
            .ok_or(Error::BadHandle(handle.0))?
            .backend;
        self.inline.set_atomic_writes_inside(handle, atomic)?;
        if let Err(error) = self.backends[backend]
            .engine
            .set_atomic_writes(handle, atomic)
        {
            // Both paths or neither.
            let _ = self.inline.set_atomic_writes_inside(handle, false);
            return Err(error);
        }
        Ok(())
    }

    pub(super) fn remove_caller_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        let backend = self
            .route_of(handle)
            .ok_or(Error::BadHandle(handle.0))?
            .backend;
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
        self.backends[backend].engine.remove_alias(handle)?;
        if self.pending.is_some() {
            // Its class's policy goes with the file.
            self.end_inline_sample();
        }
        let Some(route) = self.routes[handle.index()].take() else {
            return Err(Error::BadHandle(handle.0));
        };
        if route.auto.is_some() {
            self.auto_files -= 1;
        }
        if route.reads.is_some() {
            // The caller may close the file at once: the helper is done
            // with its descriptor first.
            self.readahead.forget();
        }
        let lanes = Self::lanes_of(handle);
        if self.explorer.is_some_and(|(lane, _)| lanes.contains(&lane)) {
            self.explorer = None;
        }
        for lane in &self.lanes[lanes.clone()] {
            lane.count_went(&mut self.counts);
        }
        self.lanes[lanes].fill(Lane::default());
        let _ = self.inline.remove_alias(handle);
        Ok(route.file)
    }

    pub(super) fn route_of(&self, handle: FileHandle) -> Option<&FileRoute> {
        self.routes.get(handle.index()).and_then(Option::as_ref)
    }
}
