//! The suite's atomic-write part: torn-write protected writes (`RWF_ATOMIC`)
//! through every engine that passes the flag, on XFS over a loop device
//! (whose writes out of place give them on any device, Linux 6.16); and the
//! one-line refusals of the engines and files that cannot.
//!
//! That the flag reaches the kernel is seen in what the kernel answers: a
//! direct write of three blocks lands as an ordinary write, and is refused
//! with `EINVAL` as an atomic one (its length is no power of two).

use std::path::Path;

use super::{Flavour, io_flavours};
use crate::Error;
use crate::buf::BufPool;
use crate::engine::EngineKind;
use crate::engine::testkit::{ScratchFs, add, pattern, run, take};
use crate::file::{self, AtomicWriteUnits, OpenOptions};
use crate::request::Request;

const LEN: usize = 1 << 20;
const BLOCK: usize = 64 << 10;

/// Whether this flavour passes a file's write flags to the kernel.
fn takes_atomic(flavour: &Flavour) -> bool {
    flavour.config.completion_latency.is_none()
        && matches!(
            flavour.kind,
            EngineKind::Pvsync2
                | EngineKind::IoUring
                | EngineKind::Libaio
                | EngineKind::Pool
                | EngineKind::Adaptive
        )
}

fn direct_read_write() -> OpenOptions {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .direct(true)
}

/// An XFS filesystem whose files take atomic writes of `BLOCK`, or `None`
/// (after saying why) where none can be made here.
fn xfs_with_atomic_writes() -> Option<(ScratchFs, AtomicWriteUnits)> {
    let fs = match ScratchFs::mount("xfs", 320 << 20) {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("skipping: no XFS filesystem can be made here ({why})");
            return None;
        }
    };
    let probe = fs.mount.join("probe");
    let file = file::open(&probe, &direct_read_write()).unwrap();
    match file::atomic_write_units(&file) {
        Ok(Some(units)) if units.fits(0, BLOCK as u64) => Some((fs, units)),
        other => {
            eprintln!("skipping: XFS here offers no atomic writes of {BLOCK} bytes: {other:?}");
            None
        }
    }
}

#[test]
fn atomic_writes_land_whole_and_writes_that_cannot_be_atomic_are_refused() {
    let Some((fs, units)) = xfs_with_atomic_writes() else {
        return;
    };
    // A write past the longest unit, where a buffer that long is cheap.
    let too_long = (units.unit_max as usize * 2).min(LEN * 4);
    for (number, flavour) in io_flavours().into_iter().enumerate() {
        // Injected faults cut writes short, which an atomic write never is:
        // the rest sent again would be a second, refused, atomic write.
        if flavour.config.inject.is_some() {
            continue;
        }
        let pool = BufPool::new(LEN / BLOCK + 4, too_long.max(LEN)).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let path = fs.mount.join(format!("atomic-{number}"));
        let file = add(engine.as_mut(), &path, &direct_read_write());
        match engine.set_atomic_writes(file, true) {
            Ok(()) => assert!(takes_atomic(&flavour), "{name} took atomic writes"),
            Err(Error::NotOffered { engine, what, .. }) => {
                assert!(!takes_atomic(&flavour), "{name} refused them: {engine}");
                assert!(what.contains("RWF_ATOMIC"), "{name}: {what}");
                assert!(matches!(
                    flavour.kind,
                    EngineKind::Sync | EngineKind::Psync | EngineKind::Posixaio
                ));
                continue;
            }
            Err(Error::AtomicRefused { reason, .. }) => {
                assert!(
                    flavour.config.completion_latency.is_some(),
                    "{name}: {reason}"
                );
                assert!(reason.contains("emulated device"), "{name}: {reason}");
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        }
        let mut data = vec![0u8; LEN];
        pattern(number as u64 + 1, &mut data);
        let write = |at: usize, len: usize, tag: u64| {
            let mut buf = take(&pool, len);
            buf.as_mut_slice().copy_from_slice(&data[at..at + len]);
            Request::write(file, at as u64, buf, tag)
        };
        let writes = (0..LEN / BLOCK).map(|i| write(i * BLOCK, BLOCK, i as u64));
        for done in run(engine.as_mut(), writes) {
            assert_eq!(done.result, BLOCK as i64, "{name}: atomic write {done:?}");
        }
        assert_eq!(read_back(engine.as_mut(), &pool, file), data, "{name}");
        // Three blocks, and twice the longest: direct writes the kernel takes
        // as ordinary ones, and refuses as atomic ones.
        let mut refused = vec![write(0, 3 * 4096, 100)];
        if too_long > units.unit_max as usize {
            refused.push(Request::write(file, 0, take(&pool, too_long), 101));
        }
        for done in run(engine.as_mut(), refused) {
            assert_eq!(
                done.result,
                -i64::from(libc::EINVAL),
                "{name}: a write of {} bytes went through as atomic ({units:?})",
                done.buf.len()
            );
        }
        // Reads carry no write flag: three blocks read.
        let read = Request::read(file, 0, take(&pool, 3 * 4096), 102);
        assert_eq!(run(engine.as_mut(), [read])[0].result, 3 * 4096, "{name}");
        // Ordinary again: the three blocks are written.
        engine.set_atomic_writes(file, false).unwrap();
        let done = run(engine.as_mut(), [write(0, 3 * 4096, 103)]);
        assert_eq!(done[0].result, 3 * 4096, "{name}: an ordinary write");
        drop(engine.remove_file(file).unwrap());
    }
}

/// The whole of the `LEN`-byte file at `handle`, read through `engine`.
fn read_back(
    engine: &mut dyn crate::engine::Engine,
    pool: &BufPool,
    handle: file::FileHandle,
) -> Vec<u8> {
    let done = run(engine, [Request::read(handle, 0, take(pool, LEN), 0)]);
    assert_eq!(done[0].result, LEN as i64);
    done[0].buf.as_slice().to_vec()
}

#[test]
fn a_file_that_cannot_take_atomic_writes_is_refused_naming_why() {
    let refusal = |path: &Path, options: &OpenOptions| {
        let mut engine = super::super::open(
            EngineKind::Pvsync2,
            &crate::engine::EngineConfig::with_depth(1),
            None,
        )
        .unwrap();
        let file = add(engine.as_mut(), path, options);
        match engine.set_atomic_writes(file, true) {
            Err(Error::AtomicRefused { reason, .. }) => {
                // Still ordinary, and it can be asked to stay so.
                assert!(engine.set_atomic_writes(file, false).is_ok());
                reason
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    };
    // tmpfs offers none, and says which filesystem and kernel.
    let shm = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
    let buffered = OpenOptions::new().read(true).write(true);
    let reason = refusal(shm.path(), &buffered);
    assert!(reason.contains("tmpfs on Linux"), "{reason}");
    // On XFS they are O_DIRECT's: a buffered file is told so, with its units.
    if let Some((fs, units)) = xfs_with_atomic_writes() {
        let path = fs.mount.join("buffered");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let reason = refusal(&path, &buffered);
        assert!(
            reason.contains("O_DIRECT") && reason.contains(&units.to_string()),
            "{reason}"
        );
    }
}

#[test]
fn units_fit_powers_of_two_within_them_at_multiples_of_themselves() {
    let units = AtomicWriteUnits {
        unit_min: 4096,
        unit_max: 65536,
        segments_max: 1,
    };
    assert!(units.fits(0, 4096) && units.fits(8192, 8192) && units.fits(1 << 20, 65536));
    assert!(!units.fits(0, 12288), "no power of two");
    assert!(!units.fits(4096, 8192), "not at a multiple of itself");
    assert!(
        !units.fits(0, 2048) && !units.fits(0, 131072),
        "outside the units"
    );
    assert_eq!(units.to_string(), "4096 to 65536 bytes");
}
