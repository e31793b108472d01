//! The caller's files in the adaptive engine: the one descriptor of each,
//! which the engine owns, its aliases in the engines inside (the inline
//! engine's, a spare after it there, and two twins in the asynchronous
//! engine that takes it: no descriptor of their own, see
//! [`alias`](crate::engine::alias)), and the state of its classes.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use super::backend::{AsyncBackend, NO_TWIN, TwinOf};
use super::caching::{self, AutoCaching};
use super::priors::FileKind;
use super::readahead::ReadStream;
use super::state::{AdaptiveEngine, CLASSES, FileRoute, Lane};
use crate::Error;
use crate::engine::api::{Engine, EngineKind};
use crate::engine::inline::InlinePath;
use crate::file::{Caching, FileHandle};

/// Whether a file's twins have the caller's handle (untimed) and the one
/// after it (timed), the spare's: see `Backend::lockstep`.
fn in_step(handle: FileHandle, spare: FileHandle, twin: FileHandle, timed: FileHandle) -> bool {
    twin == handle
        && handle.0.is_multiple_of(2)
        && timed.0 == handle.0 + 1
        && spare.0 == handle.0 + 1
}

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
        let (backend, twin, timed_twin) = match self.add_twins(&file, &path, direct) {
            Ok(added) => added,
            // The twins, if any, are gone; the caller's file goes back.
            Err(reason) => return Err(Error::refusing(file, path, reason)),
        };
        // The inline engine's alias has the caller's handle, and a spare
        // alias follows it, so that its handles go in pairs, as the twins' do
        // (see `Backend::lockstep`).
        let inline = self
            .inline
            .add_alias(&file, &path, direct)
            .and_then(|handle| match self.inline.add_alias(&file, &path, direct) {
                Ok(spare) => Ok((handle, spare)),
                Err(error) => {
                    let _ = self.inline.remove_alias(handle);
                    Err(error)
                }
            });
        let (handle, spare) = match inline {
            Ok(handles) => handles,
            Err(reason) => {
                let engine = &mut self.backends[backend].engine;
                let _ = engine.remove_alias(twin);
                let _ = engine.remove_alias(timed_twin);
                return Err(Error::refusing(file, path, reason));
            }
        };
        let kind = kind.map(|kind| FileKind {
            backend: self.backends[backend].engine.kind(),
            ..kind
        });
        self.note_twins(backend, handle, spare, (twin, timed_twin));
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
            file,
            backend,
            handle: twin,
            timed_handle: timed_twin,
            spare,
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

    /// Moves the caller's file `handle`'s twins to asynchronous engine `to`;
    /// if either cannot go, both stay where they were.
    fn move_file(&mut self, handle: FileHandle, to: usize) {
        let Some(route) = self.route_of(handle) else {
            return;
        };
        let (from, twin, timed_twin) = (route.backend, route.handle, route.timed_handle);
        let (backend, twin, timed_twin) = match self.move_twin(handle, twin, from, to) {
            Err(twin) => (from, twin, timed_twin),
            Ok(moved) => match self.move_twin(handle, timed_twin, from, to) {
                Ok(timed_moved) => (to, moved, timed_moved),
                Err(timed_twin) => match self.move_twin(handle, moved, to, from) {
                    Ok(twin) => (from, twin, timed_twin),
                    // The untimed twin could not go back: the file is
                    // `to`'s, its timed requests failing (EBADF) rather
                    // than going astray.
                    Err(twin) => {
                        let _ = self.backends[from].engine.remove_alias(timed_twin);
                        self.set_twin(from, timed_twin, None);
                        (to, twin, NO_TWIN)
                    }
                },
            },
        };
        let Some(route) = self.routes[handle.index()].as_mut() else {
            return;
        };
        let spare = route.spare;
        route.backend = backend;
        route.handle = twin;
        route.timed_handle = timed_twin;
        if let Some(kind) = &mut route.kind {
            kind.backend = self.backends[backend].engine.kind();
        }
        for lane in &mut self.lanes[Self::lanes_of(handle)] {
            lane.backend = backend as u8;
            lane.twin = twin;
            lane.timed_twin = timed_twin;
        }
        self.note_twins(backend, handle, spare, (twin, timed_twin));
    }

    /// Notes in asynchronous engine `backend`'s table that `twins`
    /// (untimed, timed) are the caller's file `handle`'s (its spare in the
    /// inline engine `spare`), and whether they keep the engine in step.
    fn note_twins(
        &mut self,
        backend: usize,
        handle: FileHandle,
        spare: FileHandle,
        (twin, timed_twin): (FileHandle, FileHandle),
    ) {
        self.backends[backend].lockstep &= in_step(handle, spare, twin, timed_twin);
        let of = |timed| {
            Some(TwinOf {
                caller: handle,
                timed,
            })
        };
        self.set_twin(backend, twin, of(false));
        self.set_twin(backend, timed_twin, of(true));
    }

    /// Moves one twin of the caller's file `handle` from asynchronous
    /// engine `from` to `to`: its handle there, or, if it cannot go, its
    /// handle in `from` (put back, if need be, under another handle;
    /// [`NO_TWIN`] if even that failed).
    fn move_twin(
        &mut self,
        handle: FileHandle,
        twin: FileHandle,
        from: usize,
        to: usize,
    ) -> Result<FileHandle, FileHandle> {
        let Some(route) = self.routes.get(handle.index()).and_then(Option::as_ref) else {
            return Err(twin);
        };
        let backends = &mut self.backends;
        backends[from].engine.remove_alias(twin).map_err(|_| twin)?;
        let twins = &mut self.twins;
        let forget = |twins: &mut Vec<Vec<Option<TwinOf>>>| {
            if let Some(slot) = twins[from].get_mut(twin.index()) {
                *slot = None;
            }
        };
        forget(twins);
        match backends[to]
            .engine
            .add_alias(&route.file, &route.path, route.direct)
        {
            Ok(moved) => Ok(moved),
            Err(_) => Err(backends[from]
                .engine
                .add_alias(&route.file, &route.path, route.direct)
                .unwrap_or(NO_TWIN)),
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
        // Read ahead of by a descriptor of the helper's own; without one
        // (none was left), the kernel's readahead alone.
        let reads = match (&auto, self.auto_room) {
            (Some(_), Some(room)) => self
                .route_of(handle)
                .and_then(|route| route.file.try_clone().ok())
                .map(|file| ReadStream::new(file, room.read_ahead, self.depth)),
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
    /// inline engine's copy (its calls carry the flag inside this engine)
    /// and the asynchronous engine's twins, untimed and timed. The inline
    /// engine probes first and refuses what cannot take it (an emulated
    /// device's file).
    fn set_paths_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        let route = self.route_of(handle).ok_or(Error::BadHandle(handle.0))?;
        let (backend, twins) = (route.backend, [route.handle, route.timed_handle]);
        self.inline.set_caching_inside(handle, caching)?;
        let engine = &mut self.backends[backend].engine;
        let twins = twins.into_iter().filter(|&twin| twin != NO_TWIN);
        let set = twins
            .clone()
            .try_for_each(|twin| engine.set_caching(twin, caching));
        if let Err(error) = set {
            // Both paths or neither: the copies go back.
            for twin in twins {
                let _ = engine.set_caching(twin, Caching::Cached);
            }
            let _ = self.inline.set_caching_inside(handle, Caching::Cached);
            return Err(error);
        }
        Ok(())
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
        self.backends[backend].engine.remove_alias(twin)?;
        self.set_twin(backend, twin, None);
        // The timed twin goes too; if it cannot, the file is still removed
        // here: no request names that alias again.
        if self.backends[backend]
            .engine
            .remove_alias(timed_twin)
            .is_ok()
        {
            self.set_twin(backend, timed_twin, None);
        }
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
        let lanes = Self::lanes_of(handle);
        if self.explorer.is_some_and(|(lane, _)| lanes.contains(&lane)) {
            self.explorer = None;
        }
        for lane in &self.lanes[lanes.clone()] {
            lane.count_went(&mut self.counts);
        }
        self.lanes[lanes].fill(Lane::default());
        let _ = self.inline.remove_alias(spare);
        let _ = self.inline.remove_alias(handle);
        Ok(route.file)
    }

    pub(super) fn route_of(&self, handle: FileHandle) -> Option<&FileRoute> {
        self.routes.get(handle.index()).and_then(Option::as_ref)
    }
}
