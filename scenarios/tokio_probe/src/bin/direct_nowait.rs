//! Whether RWF_NOWAIT keeps an O_DIRECT read from waiting on the device:
//! 2,000 random 4 KiB preadv2(RWF_NOWAIT) reads of FILE opened O_DIRECT.
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: direct_nowait FILE");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .expect("open FILE with O_DIRECT");
    let blocks = file.metadata().expect("stat FILE").len() / 4096;
    let layout = std::alloc::Layout::from_size_align(4096, 4096).expect("a page");
    // SAFETY: a layout of non-zero size.
    let buf = unsafe { std::alloc::alloc(layout) };
    assert!(!buf.is_null());
    let (mut read, mut again, mut other, mut read_ns) = (0u64, 0u64, 0u64, 0u128);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..2000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let offset = (seed % blocks) * 4096;
        let iov = libc::iovec {
            iov_base: buf.cast(),
            iov_len: 4096,
        };
        let started = Instant::now();
        // SAFETY: `iov` names the 4096 bytes allocated above, used by nothing else.
        let n =
            unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, offset as i64, libc::RWF_NOWAIT) };
        if n >= 0 {
            read += 1;
            read_ns += started.elapsed().as_nanos();
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
            again += 1;
        } else {
            other += 1;
        }
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(buf, layout) };
    println!(
        "O_DIRECT with RWF_NOWAIT: {read} read ({:.1} us each), EAGAIN {again}, other errors {other}",
        read_ns as f64 / read.max(1) as f64 / 1000.0
    );
}
