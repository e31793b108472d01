//! Whether buffered writes take RWF_NOWAIT in DIR: 2,000 8 KiB pwritev2 calls to a new file.
use std::os::fd::AsRawFd;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: nowait_write DIR");
    let path = std::path::Path::new(&dir).join("tprobe-nowait-write.dat");
    let file = std::fs::File::create(&path).expect("create the test file");
    let buf = vec![1u8; 8192];
    let (mut ok, mut again, mut other, mut last) = (0, 0, 0, None);
    for i in 0..2000i64 {
        let iov = libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: `iov` points at `buf`, alive and unchanged for the call.
        let n = unsafe { libc::pwritev2(file.as_raw_fd(), &iov, 1, i * 8192, libc::RWF_NOWAIT) };
        if n >= 0 {
            ok += 1;
        } else {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EAGAIN) {
                again += 1;
            } else {
                other += 1;
                last = Some(err);
            }
        }
    }
    let _ = std::fs::remove_file(&path);
    println!("{dir}: written {ok}, EAGAIN {again}, other errors {other} ({last:?})");
}
