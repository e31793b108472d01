//! The options of fio's engines that do no I/O: `cpuio` (burns a share of
//! a CPU) and `exec` (runs a program beside the other jobs); and those of
//! `e4defrag` (which moves a file's extents instead of writing it).

/// fio's engines without I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PseudoEngine {
    /// `cpuio`.
    Cpu,
    /// `exec`.
    Exec,
}

impl PseudoEngine {
    /// The engine `ioengine=name` names, if it is one of these.
    pub fn named(name: &str) -> Option<PseudoEngine> {
        match name {
            "cpuio" => Some(PseudoEngine::Cpu),
            "exec" => Some(PseudoEngine::Exec),
            _ => None,
        }
    }
}

/// How `cpuio` burns its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuMode {
    /// Spin for `cpuchunks` microseconds.
    #[default]
    Noop,
    /// Sort 256 Ki integers four ways, as fio's `qsort` mode.
    Qsort,
}

/// `cpuio`'s and `exec`'s settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PseudoOptions {
    /// `cpuload`: percent of a CPU to use (0: not given).
    pub cpu_load: u32,
    /// `cpumode`.
    pub cpu_mode: CpuMode,
    /// `cpuchunks`: microseconds of each burn.
    pub cpu_chunk_us: u64,
    /// `program`: what `exec` runs.
    pub program: Option<String>,
    /// `arguments`: its arguments, split at spaces; `%r` is the runtime in
    /// seconds, `%n` the job's name.
    pub arguments: Option<String>,
    /// `grace_time`: seconds between SIGTERM and SIGKILL at the end.
    pub grace_s: u64,
    /// `std_redirect`: its output goes to `<job>.stdout` and `<job>.stderr`.
    pub redirect: bool,
    /// `donorname`: `e4defrag`'s donor file.
    pub donor: Option<String>,
    /// `inplace`: `e4defrag` allocates the donor's blocks for each move.
    pub inplace: bool,
}

impl Default for PseudoOptions {
    fn default() -> Self {
        PseudoOptions {
            cpu_load: 0,
            cpu_mode: CpuMode::Noop,
            cpu_chunk_us: 50_000,
            program: None,
            arguments: None,
            grace_s: 1,
            redirect: true,
            donor: None,
            inplace: false,
        }
    }
}
