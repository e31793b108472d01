//! RWF_NOWAIT on pages not cached: what the EAGAIN costs, and whether it starts readahead.
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

const READS: usize = 20_000;

/// The same random block-aligned offsets in each pass.
fn offsets(blocks: u64) -> Vec<u64> {
    let mut seed = 88_172_645_463_325_252u64;
    (0..READS)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % blocks) * 4096
        })
        .collect()
}

/// One 4 KiB `preadv2(RWF_NOWAIT)` into `buf`: whether it found the page cached.
fn try_cached(fd: RawFd, buf: &mut [u8], off: u64) -> bool {
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: `iov` points at `buf`, alive and unshared for the call.
    unsafe { libc::preadv2(fd, &iov, 1, off as i64, libc::RWF_NOWAIT) >= 0 }
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: cold FILE");
    let file = std::fs::File::open(&path).expect("open FILE");
    let fd = file.as_raw_fd();
    let offsets = offsets(file.metadata().expect("stat FILE").len() / 4096);
    let mut buf = vec![0u8; 4096];
    for pass in 0..2 {
        // SAFETY: no memory is passed.
        unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
        let (mut again, mut hit, mut again_ns) = (0u64, 0u64, 0u128);
        for &off in &offsets {
            let started = Instant::now();
            if try_cached(fd, &mut buf, off) {
                hit += 1;
            } else {
                again += 1;
                again_ns += started.elapsed().as_nanos();
            }
        }
        // Half a second on: how many of the same offsets the EAGAINs' readahead brought in.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let later = offsets
            .iter()
            .filter(|&&off| try_cached(fd, &mut buf, off))
            .count();
        println!(
            "pass {pass}: EAGAIN {again} ({:.2} us each), hits {hit}; 0.5 s later {later} of {READS} cached",
            again_ns as f64 / again.max(1) as f64 / 1000.0
        );
    }
}
