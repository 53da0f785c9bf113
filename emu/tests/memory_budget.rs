//! A run's memory as a whole: its buffers (as laid out, written or not) and its
//! state are bounded together, so that a run stays under 2 GiB, and a memory
//! limit on the process (`ulimit -v`) is a clear error before the run, never an
//! abort or a panic halfway through.

use std::process::Command;

/// A kernel of `blocks` x `blocks` blocks of 1 024 threads with 32 registers
/// each, beside `buffer_mib` MiB of zeros, whose threads store to local memory
/// at byte `local` when it is given.
fn kernel(blocks: u32, buffer_mib: u64, local: Option<u32>) -> String {
    let local = local.map_or(String::new(), |at| {
        format!("    st.local.u32 [{at}], %r0;\n")
    });
    format!(
        ".global .u32 BIG[{}] = zeros;\n\
         .launch grid({blocks}, {blocks}) block(1024);\n\
         .entry k {{\n    .reg .u32 %r<32>;\n    mov.u32 %r0, %tid.x;\n{local}    exit;\n}}\n",
        buffer_mib << 18
    )
}

fn load(
    source: &str,
    machine: &spu_emu::Machine,
) -> Result<spu_emu::load::Image, spu_emu::load::LoadError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.spu");
    std::fs::write(&path, source).unwrap();
    let kernel = spu_emu::read_kernel(&path).expect("the kernel assembles");
    spu_emu::load(kernel.module, machine, &Default::default())
}

/// Runs `spu-emu ARGS` (from the repository) under `ulimit -v` of `mib` MiB;
/// true when it ran, false when it stopped with an error `says` one of, and a
/// failed test otherwise (an abort, a panic, another error).
fn under_limit(mib: u64, args: &[&str], says: &[&str]) -> bool {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {}; exec \"$@\"", mib << 10))
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_spu-emu"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("sh runs");
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => true,
        Some(1)
            if says.iter().any(|s| err.contains(s))
                && !err.contains("panicked")
                && !err.contains("memory allocation of") =>
        {
            false
        }
        code => panic!("under `ulimit -v` of {mib} MiB: exit {code:?}\n{err}"),
    }
}

/// 64 x 64 SMs holding blocks of 1 024 threads take about 0.8 GiB of state:
/// beside 0.5 GiB of buffers that runs, beside 1 GiB the two are refused
/// together with their breakdown, unless `memory.global_mib` is set above
/// both.
#[test]
fn buffers_and_state_are_bounded_together() {
    let mut machine = spu_emu::machine::preset("spu-4x4").unwrap();
    machine.grid_cols = 64;
    machine.grid_rows = 64;
    assert!(load(&kernel(64, 512, None), &machine).is_ok());
    let err = load(&kernel(64, 1024, None), &machine)
        .expect_err("1 GiB of buffers beside 0.8 GiB of state is refused")
        .to_string();
    assert!(
        err.starts_with("the buffers (1.0 GiB as laid out) and the machine's state for this run (")
            && err.contains("4096 busy SMs with")
            && err.contains("together; a run holds at most 1.75 GiB of both")
            && err.contains("use smaller buffers, or a smaller --grid"),
        "{err}"
    );
    machine.global_mib = 3000;
    assert!(load(&kernel(64, 1024, None), &machine).is_ok());
}

/// On `gtx480` (15 SMs, each holding one block of 1 024 threads), 1.5 GiB of
/// buffers leave the threads' local memory a share of what the budget has left,
/// not 64 KiB each.
#[test]
fn big_buffers_shrink_each_threads_local_memory() {
    let machine = spu_emu::machine::preset("gtx480").unwrap();
    let roomy = load(&kernel(16, 1, Some(0)), &machine).expect("it loads");
    assert_eq!(roomy.local_bytes, 64 << 10);
    let tight = load(&kernel(16, 1535, Some(0)), &machine).expect("it loads");
    let threads = 15 * 1024;
    assert!(
        tight.local_bytes < 32 << 10 && tight.local_bytes >= 8 << 10,
        "{} bytes of local memory a thread",
        tight.local_bytes
    );
    let total = tight.memory.bytes() + threads * u64::from(tight.local_bytes);
    assert!(total <= spu_emu::load::RUN_BYTES, "{total} bytes");
}

/// Under every address-space limit from 256 MiB to 1.5 GiB in steps of 2 MiB,
/// a run with 577 MiB of buffers on four host threads either runs or says what
/// it could not allocate: never an abort (a failed allocation of the buffers'
/// page table, of the run's state, of a thread) or a panic.
#[test]
fn a_memory_limit_is_an_error_at_any_size() {
    if Command::new("sh")
        .arg("-c")
        .arg("ulimit -v")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `sh` to set a memory limit with");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.spu");
    std::fs::write(&path, kernel(1, 577, None).replace("1024", "32")).unwrap();
    let (mut ran, mut refused) = (0, 0);
    let path = path.to_str().unwrap();
    for mib in (256..1536).step_by(2) {
        match under_limit(
            mib,
            &[path, "--threads", "4", "-q"],
            &["could not allocate"],
        ) {
            true => ran += 1,
            false => refused += 1,
        }
    }
    // The range covers both outcomes.
    assert!(ran > 0 && refused > 0, "{ran} ran, {refused} refused");
}

/// Millions of passes on one SM: the units' work queues count in the state, so
/// 2 048 x 1 024 blocks of one warp on a 1 x 1 grid are refused before anything
/// is allocated (they took about 0.55 GiB, past the estimate), and a quarter of
/// them run.
#[test]
fn the_work_queues_of_millions_of_passes_count_in_the_state() {
    let mut machine = spu_emu::machine::preset("spu-4x4").unwrap();
    machine.grid_cols = 1;
    machine.grid_rows = 1;
    let source =
        |gx: u32| format!(".launch grid({gx}, 1024) block(32);\n.entry k {{\n    exit;\n}}\n");
    let err = load(&source(2048), &machine)
        .expect_err("2 million passes are refused")
        .to_string();
    assert!(
        err.contains("for the work queues of the launch's passes"),
        "{err}"
    );
    assert!(load(&source(512), &machine).is_ok());
}

/// Each unit's L1 keeps state per line: on a 64 x 64 GPU with 1 MiB L1s that is
/// about 1 GiB, which the estimate counts and names (it was left out, and the
/// run aborted under a memory limit the check before it had passed).
#[test]
fn the_caches_count_in_the_state() {
    let mut machine = spu_emu::machine::preset("gtx480").unwrap();
    machine.grid_cols = 64;
    machine.grid_rows = 64;
    machine.l1_kib = 1024;
    let err = load(&kernel(64, 1, None), &machine)
        .expect_err("1 GiB of cache lines is refused")
        .to_string();
    assert!(err.contains("GiB for the caches' lines"), "{err}");
    machine.l1_kib = 16;
    assert!(load(&kernel(64, 1, None), &machine).is_ok());
}

/// The statistics write each instruction's source file name beside it, so a
/// line table that names a long file for many instructions is refused before
/// the run, naming the file and the fix, rather than growing the statistics
/// (and the reports built from them) past the memory limit. Just below the
/// limit the kernel loads.
#[test]
fn file_names_repeated_per_instruction_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("/{}.cu", "d".repeat(59_996));
    let machine = spu_emu::machine::preset("spu-4x4").unwrap();
    for (count, refused) in [(2_000, false), (2_300, true)] {
        let mut ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.file 1 \"{name}\"\n\
             .visible .entry k()\n{{\n.reg .b32 %r<4>;\n"
        );
        for i in 1..=count {
            ptx += &format!(".loc 1 {i} 1\nmov.u32 %r1, %tid.x;\n");
        }
        ptx += "ret;\n}\n";
        std::fs::write(dir.path().join("k.ptx"), ptx).unwrap();
        let launch = dir.path().join("k.spu");
        std::fs::write(&launch, "#include \"k.ptx\"\n.launch grid(1) block(32);\n").unwrap();
        let kernel = spu_emu::read_kernel(&launch).expect("the kernel assembles");
        let loaded = spu_emu::load(kernel.module, &machine, &Default::default());
        match loaded {
            Ok(_) => assert!(!refused, "{count} instructions load"),
            Err(e) => {
                let msg = e.to_string();
                assert!(refused, "{count} instructions are refused: {msg}");
                // `ret` takes the last `.loc` too.
                assert!(msg.contains("for 2 301 instructions"), "{msg}");
                assert!(msg.contains("(60000 bytes)"), "{msg}");
                assert!(msg.contains("past the 128 MiB"), "{msg}");
                assert!(msg.contains("shorter path"), "{msg}");
            }
        }
    }
}

/// Threads that fill their local memory up to the run's allowance: the warps'
/// local memory grows store by store during the run, and a memory limit that
/// leaves too little for that growth stops the run with an error that says so,
/// at any limit, never an abort.
#[test]
fn local_memory_growing_under_a_memory_limit_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.spu");
    std::fs::write(
        &path,
        ".global .u32 OUT[30720] = zeros;\n.launch grid(120) block(256);\n\
         .entry k {\n    .local .align 16 .b8 frame[4080];\n    .reg .u32 %r<6>;\n\
         .reg .u64 %rd<4>;\n    .reg .pred %p;\n    mov.u32 %r1, 0;\n    mov.u64 %rd1, frame;\n\
         STEP:\n    cvt.u64.u32 %rd2, %r1;\n    add.u64 %rd3, %rd1, %rd2;\n\
         st.local.u32 [%rd3], %r1;\n    add.u32 %r1, %r1, 512;\n\
         setp.lt.u32 %p, %r1, 45000;\n    @%p bra STEP;\n    exit;\n}\n",
    )
    .unwrap();
    let (mut ran, mut stopped) = (0, 0);
    let path = path.to_str().unwrap();
    // Refused before the run, stopped as the headroom ran out, or a fault where
    // a warp's local memory could not grow.
    let says = ["could not allocate", "could no longer allocate"];
    for mib in (1300..=1550).step_by(50) {
        let args = [path, "--machine", "gtx480", "--threads", "2", "-q"];
        match under_limit(mib, &args, &says) {
            true => ran += 1,
            false => stopped += 1,
        }
    }
    // The range covers both outcomes.
    assert!(ran > 0 && stopped > 0, "{ran} ran, {stopped} stopped");
}

/// What grows during a run (here spilled CB tiles: a launch of many passes on
/// a grid with large CBs) under a memory limit the pre-run check accepts: the
/// run stops with an error that names the memory limit, at every limit in the
/// range, never an abort.
#[test]
fn what_grows_during_a_run_stops_it_with_an_error_under_a_memory_limit() {
    let (mut ran, mut stopped) = (0, 0);
    let args = [
        "samples/pass_token.spu",
        "-D",
        "P=256",
        "-D",
        "Q=8",
        "--set",
        "cb.size_kib=1024",
        "--threads",
        "1",
        "-q",
    ];
    for mib in [300, 600, 2000] {
        match under_limit(
            mib,
            &args,
            &["could no longer allocate the 64 MiB a run keeps free"],
        ) {
            true => ran += 1,
            false => stopped += 1,
        }
    }
    assert!(ran > 0 && stopped > 0, "{ran} ran, {stopped} stopped");
}

/// The recordings a run is asked for (samples, the activity a page draws) grow
/// with its length, up to their bounds: those bounds count in the memory checked
/// before the run, so a limit that leaves them no room is an error before the
/// run, not an abort while the recordings or their outputs are built.
#[test]
fn recordings_count_in_the_memory_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.spu");
    std::fs::write(
        &path,
        ".global .u32 OUT[4096] = zeros;\n.launch grid(4096) block(32);\n\
         .entry k {\n    .reg .u32 %r<6>;\n    .reg .pred %p;\n    mov.u32 %r1, 0;\n\
         STEP:\n    add.u32 %r1, %r1, 1;\n    setp.lt.u32 %p, %r1, 50;\n    @%p bra STEP;\n\
         exit;\n}\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let html = dir.path().join("page.html");
    let plain = [path, "-q", "--grid", "64x64", "--threads", "1"];
    assert!(under_limit(400, &plain, &[]), "the plain run fits");
    let says = ["could not allocate that much"];
    let sampled = [&plain[..], &["--sample-interval", "1"]].concat();
    assert!(!under_limit(400, &sampled, &says), "samples are refused");
    let page = [&plain[..], &["--html", html.to_str().unwrap()]].concat();
    assert!(!under_limit(400, &page, &says), "a page is refused");
    assert!(!html.exists());
}
