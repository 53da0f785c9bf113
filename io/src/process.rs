//! Limits on the calling process and the signal numbers its children die of, for
//! tools that run work in child processes (`spu-sweep`).

/// Limits the calling process: address space to `memory_mib` MiB and CPU time to
/// `cpu_s` seconds (the kernel then ends it with `SIGXCPU`).
pub fn limit_self(memory_mib: u64, cpu_s: u64) -> Result<(), String> {
    use nix::sys::resource::{Resource, setrlimit};
    let bytes = memory_mib.saturating_mul(1 << 20);
    setrlimit(Resource::RLIMIT_AS, bytes, bytes)
        .map_err(|e| format!("cannot limit memory to {memory_mib} MiB: {e}"))?;
    setrlimit(Resource::RLIMIT_CPU, cpu_s, cpu_s.saturating_add(5))
        .map_err(|e| format!("cannot limit CPU time to {cpu_s} s: {e}"))?;
    Ok(())
}

/// `SIGINT`, as `ExitStatus::signal` reports it.
pub const SIGINT: i32 = nix::sys::signal::Signal::SIGINT as i32;
/// `SIGXCPU` (the CPU-time limit of [`limit_self`]), as `ExitStatus::signal`
/// reports it.
pub const SIGXCPU: i32 = nix::sys::signal::Signal::SIGXCPU as i32;
