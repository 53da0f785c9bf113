//! Limits on the calling process and the signal numbers its children die of, for
//! tools that run work in child processes (`spu-sweep`).

use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit, setrlimit};

/// The most address space, in MiB, this process may give itself or its children:
/// the hard limit it inherited (`ulimit -v` in the shell that started it), or
/// `None` when there is none.
pub fn memory_ceiling_mib() -> Option<u64> {
    let (_, hard) = getrlimit(Resource::RLIMIT_AS).ok()?;
    (hard != RLIM_INFINITY).then_some(hard >> 20)
}

/// Limits the calling process: address space to `memory_mib` MiB and CPU time to
/// `cpu_s` seconds (the kernel then ends it with `SIGXCPU`). An inherited hard
/// limit that is lower stays (a process may not raise its hard limits): the
/// caller says so, see [`memory_ceiling_mib`].
pub fn limit_self(memory_mib: u64, cpu_s: u64) -> Result<(), String> {
    let below = |resource, wanted: u64| {
        getrlimit(resource).map_or(wanted, |(_, hard)| {
            if hard == RLIM_INFINITY {
                wanted
            } else {
                wanted.min(hard)
            }
        })
    };
    let bytes = below(Resource::RLIMIT_AS, memory_mib.saturating_mul(1 << 20));
    setrlimit(Resource::RLIMIT_AS, bytes, bytes)
        .map_err(|e| format!("cannot limit memory to {memory_mib} MiB: {e}"))?;
    let hard = below(Resource::RLIMIT_CPU, cpu_s.saturating_add(5));
    setrlimit(Resource::RLIMIT_CPU, cpu_s.min(hard), hard)
        .map_err(|e| format!("cannot limit CPU time to {cpu_s} s: {e}"))?;
    Ok(())
}

/// `SIGINT`, as `ExitStatus::signal` reports it.
pub const SIGINT: i32 = nix::sys::signal::Signal::SIGINT as i32;
/// `SIGXCPU` (the CPU-time limit of [`limit_self`]), as `ExitStatus::signal`
/// reports it.
pub const SIGXCPU: i32 = nix::sys::signal::Signal::SIGXCPU as i32;
