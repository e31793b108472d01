//! Where and how eagerly the calling thread runs: its CPUs
//! (`sched_setaffinity`), its nice value (`setpriority`), its I/O priority
//! (`ioprio_set`) and its memory's NUMA policy (`set_mempolicy`).

use std::io;

/// Pins the calling thread to `cpus` (CPU numbers).
pub(crate) fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set (CPU_ZERO's result).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below CPU_SETSIZE, the set's capacity (CPU_SET's
        // precondition).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let ret = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's nice value (-20 to 19).
pub(crate) fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: setpriority takes plain integers; on Linux, PRIO_PROCESS with
    // who 0 is the calling thread.
    let ret = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's I/O scheduling class (1 realtime, 2 best
/// effort, 3 idle), level (0 to 7) and hint (0 to 1023).
pub(crate) fn set_io_priority(class: u32, level: u32, hint: u32) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    const IOPRIO_CLASS_SHIFT: u32 = 13;
    const IOPRIO_HINT_SHIFT: u32 = 3;
    let value = (class << IOPRIO_CLASS_SHIFT) | (hint << IOPRIO_HINT_SHIFT) | level;
    // SAFETY: ioprio_set takes three integers and reads no memory; who 0 is
    // the calling thread.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(value as i32),
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's memory policy: `mode` (the kernel's MPOL_*)
/// over the NUMA `nodes` (empty for MPOL_DEFAULT and MPOL_LOCAL).
pub(crate) fn set_memory_policy(mode: i32, nodes: &[usize]) -> io::Result<()> {
    const BITS: usize = 1024;
    let mut mask = [0 as libc::c_ulong; BITS / libc::c_ulong::BITS as usize];
    let word = libc::c_ulong::BITS as usize;
    for &node in nodes {
        if node >= BITS {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        mask[node / word] |= 1 << (node % word);
    }
    let (mask_ptr, max_node) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), BITS as libc::c_ulong + 1)
    };
    // SAFETY: `mask_ptr` is null (no nodes) or points at `mask`, which holds
    // `max_node - 1` bits as set_mempolicy reads them.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            mode as libc::c_long,
            mask_ptr,
            max_node,
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
