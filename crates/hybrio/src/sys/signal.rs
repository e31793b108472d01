//! `sigaction` for SIGINT and SIGTERM: the handler only sets a flag.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the handler; read by [`crate::interrupt::requested`].
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    // An atomic store is async-signal-safe: no lock, no allocation.
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Installs the flag-setting handler for `signal`, once: `SA_RESETHAND`
/// restores the default action after the first delivery, so a second
/// Ctrl-C ends the process at once.
pub(crate) fn catch(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: an all-zero `sigaction` is a valid value of the C struct (empty
    // mask, no flags, null handler), which is then filled in below.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
    // SAFETY: `action` is a valid, initialised `sigaction` whose handler only
    // performs an atomic store (async-signal-safe); a null old-action pointer
    // is allowed.
    let ret = unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
