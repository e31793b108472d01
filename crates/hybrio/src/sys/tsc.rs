//! The CPU's time-stamp counter.

/// Reads the time-stamp counter, or `None` on CPUs without one we use.
#[inline]
pub fn read() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86_64 CPU (it is part of the baseline
        // instruction set the target guarantees), reads a register and touches
        // no memory. (A process that forbade it with prctl(PR_SET_TSC) gets
        // SIGSEGV: a crash, not undefined behaviour. The clock only reads it
        // where the kernel's own clocksource is the TSC.)
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}
