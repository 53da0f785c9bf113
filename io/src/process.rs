//! Limits on the calling process and the signal numbers its children die of, for
//! tools that run work in child processes (`spu-sweep`); termination requests
//! (SIGTERM, SIGHUP) handled as a stop, and children that end with their parent.

use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit, setrlimit};

/// The most address space, in MiB, this process may give itself or its children:
/// the hard limit it inherited (`ulimit -v` in the shell that started it), or
/// `None` when there is none.
pub fn memory_ceiling_mib() -> Option<u64> {
    let (_, hard) = getrlimit(Resource::RLIMIT_AS).ok()?;
    (hard != RLIM_INFINITY).then_some(hard >> 20)
}

/// The address space, in bytes, this process may use at most (its soft limit,
/// `ulimit -v`), or `None` when there is no limit.
pub fn memory_limit() -> Option<u64> {
    let (soft, _) = getrlimit(Resource::RLIMIT_AS).ok()?;
    (soft != RLIM_INFINITY).then_some(soft)
}

/// True when this process can still take `bytes` of memory: a probe that reserves
/// them and gives them back at once, touching no page. For work whose memory
/// grows with its input, to refuse an input that cannot fit with a clear message
/// before an allocation deep inside fails (which ends the process with an abort).
pub fn can_reserve(bytes: usize) -> bool {
    Vec::<u8>::new().try_reserve_exact(bytes).is_ok()
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

/// `SIGXCPU` (the CPU-time limit of [`limit_self`]), as `ExitStatus::signal`
/// reports it.
pub const SIGXCPU: i32 = nix::sys::signal::Signal::SIGXCPU as i32;

/// True for the signals that ask a process to stop (SIGINT, SIGTERM, SIGHUP): a
/// child that dies of one was most likely stopped along with its parent (a
/// Ctrl-C or a `kill` reaches the whole process group), not by its own fault.
pub fn is_stop_request(signal: i32) -> bool {
    use nix::sys::signal::Signal;
    matches!(
        Signal::try_from(signal),
        Ok(Signal::SIGINT | Signal::SIGTERM | Signal::SIGHUP)
    )
}

/// A signal as messages name it: `signal 15 (SIGTERM)`, or `signal 99` for a
/// number this system does not know.
pub fn describe_signal(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(s) => format!("signal {signal} ({})", s.as_str()),
        Err(_) => format!("signal {signal}"),
    }
}

/// The termination requests [`catch_termination`] handles: SIGTERM (`kill`,
/// `timeout`, systemd, batch systems) and SIGHUP (a closed terminal).
fn termination() -> nix::sys::signal::SigSet {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGHUP);
    set
}

/// Calls `on_signal` (with the signal's number) on a thread of its own for every
/// SIGTERM and SIGHUP, instead of ending the process. Call it first, before any
/// thread starts: the signals are blocked in the calling thread, and the threads
/// it starts inherit that. Children inherit it too: a child that should end on
/// SIGTERM calls [`unblock_termination`]. False when the signals cannot be caught.
pub fn catch_termination(on_signal: impl Fn(i32) + Send + 'static) -> bool {
    let set = termination();
    if set.thread_block().is_err() {
        return false;
    }
    // The caller waits until the thread runs: a thread's start takes its own
    // allocator arena (64 MiB of address space with glibc), which must not come
    // between a later fallible reservation and the allocation it vouched for.
    let (started, running) = std::sync::mpsc::sync_channel(1);
    let waiter = std::thread::Builder::new().spawn(move || {
        let _ = started.send(());
        while let Ok(signal) = set.wait() {
            on_signal(signal as i32);
        }
    });
    if waiter.is_ok() {
        let _ = running.recv();
    } else {
        // No thread can start (too little memory): the signals end the process
        // as they would without the handler.
        let _ = set.thread_unblock();
        return false;
    }
    true
}

/// Reads up to `max` bytes of `pipe` (a child's output) on a thread of its own,
/// so a full pipe never stops the child while the caller waits for it. `None`
/// when no thread can start (too little memory): the pipe is then closed and what
/// the child writes to it is lost.
pub fn read_on_thread(
    pipe: impl std::io::Read + Send + 'static,
    max: u64,
) -> Option<std::thread::JoinHandle<Vec<u8>>> {
    std::thread::Builder::new()
        .spawn(move || {
            let mut buf = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::Read::take(pipe, max), &mut buf);
            buf
        })
        .ok()
}

/// Lets SIGTERM and SIGHUP end this process again (undoes the blocking a parent
/// that called [`catch_termination`] passed on).
pub fn unblock_termination() {
    let _ = termination().thread_unblock();
}

/// Ends this process (exit code 129, as for SIGHUP) within half a second of its
/// parent `parent` ending, even by SIGKILL: a child whose parent bounds its time
/// must not outlive it.
pub fn end_with_parent(parent: u32) {
    if std::os::unix::process::parent_id() != parent {
        std::process::exit(129);
    }
    let watcher = std::thread::Builder::new().spawn(move || {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            // Re-parented (to init or a subreaper): the parent is gone.
            if std::os::unix::process::parent_id() != parent {
                std::process::exit(129);
            }
        }
    });
    if watcher.is_err() {
        // Nothing could watch the parent (too little memory): end rather than
        // run unwatched.
        crate::reportln!("error: out of memory while starting: cannot watch the parent process");
        std::process::exit(1);
    }
}

/// Kills (SIGKILL) a child and, if it leads a process group of its own (started
/// with `CommandExt::process_group(0)`), every process of that group: what a
/// child such as clang started would otherwise outlive it. A child in our group
/// is killed alone (no group has its id).
pub fn kill_group(pid: u32) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let Ok(pid) = i32::try_from(pid) else {
        return;
    };
    let _ = kill(Pid::from_raw(-pid), Signal::SIGKILL);
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}
