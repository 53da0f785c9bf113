//! `printf` end to end: `samples/cuda/printf_nvcc.spu` and `printf_clang.spu` print
//! exactly what the same calls print through the system's C library (a C program
//! compiled here with `cc` is the independent reference), on the SPU, on `gtx480`
//! and in functional mode, with 1, 2 and 4 threads; a bad format stops the run
//! naming the thread and the line; the output bound keeps a prefix of the output;
//! `%s` sees what the thread stored just before.

use spu_emu::cli::session::{SessionError, run_file};
use spu_emu::exec::printlog::OUTPUT_LIMIT;
use spu_emu::{LoadOptions, Machine, RunControl};
use spu_tests::repo_path;
use std::path::Path;

/// The samples' kernel as host C, calling the C library's `printf`; the address of
/// `X` (what `%p` prints) comes from the command line. `r` is CUDA's result of the
/// first call, the number of its arguments (7), not C's count of characters.
const REFERENCE_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int n = 100, bdim = 32;
    unsigned long xaddr = strtoul(argv[1], 0, 0);
    float x[100];
    for (int i = 0; i < n; i++) x[i] = -3.25f + (float)i * 0.8125f;
    for (int b = 0; b * bdim < n; b++)
        for (int t = 0; t < bdim; t++) {
            int i = b * bdim + t;
            if (i >= n) continue;
            int r = 7;
            printf("block %d thread %2d: x=%+.3f hex=%#06x %s|%-6s|%c%%\n",
                   b, t, (double)x[i], i * 37, "ok", "pad", 'A' + i % 26);
            if (i == 0)
                printf("r=%d n=%u [%*d] [%-*.*f] %o %X %E %G %p %lu %llu %F %i %lld %e %g\n",
                       r, (unsigned)n, 6, n, 10, 2, (double)x[0], (unsigned)n, 48879,
                       (double)x[1], (double)x[2], (void *)xaddr, 3ul * n,
                       1000ull * n * n, (double)x[3], -n, -1000000007ll * n,
                       x[4] * 1e-7, x[5] * 1e9);
        }
    return 0;
}
"#;

/// What the C reference prints with `X` at `xaddr`.
fn reference(dir: &Path, xaddr: u32) -> Vec<u8> {
    let src = dir.join("ref.c");
    let exe = dir.join("ref");
    std::fs::write(&src, REFERENCE_C).unwrap();
    let cc = std::process::Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("these tests need a C compiler as `cc` on PATH");
    assert!(cc.success(), "cc failed on the reference");
    let out = std::process::Command::new(&exe)
        .arg(format!("{xaddr:#x}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

fn run(
    path: &Path,
    machine: &Machine,
    functional: bool,
    threads: usize,
) -> spu_emu::cli::session::Session {
    let control = RunControl {
        functional,
        threads,
        ..RunControl::default()
    };
    run_file(path, machine, &LoadOptions::default(), control)
        .unwrap_or_else(|e| panic!("{}\n{e}", e.details()))
}

#[test]
fn printf_samples_print_what_c_prints_everywhere_and_for_any_threads() {
    let dir = tempfile::tempdir().unwrap();
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    let mut expected = None;
    for file in [
        "samples/cuda/printf_nvcc.spu",
        "samples/cuda/printf_clang.spu",
    ] {
        for (name, machine, functional) in [
            ("spu", Machine::default(), false),
            ("gtx480", gtx480.clone(), false),
            ("functional", Machine::default(), true),
        ] {
            for threads in [1, 2, 4] {
                let s = run(&repo_path(file), &machine, functional, threads);
                let memory = &s.image.memory;
                let x = memory.regions().iter().find(|r| r.name == "X").unwrap();
                let want = expected.get_or_insert_with(|| reference(dir.path(), x.base));
                assert_eq!(
                    String::from_utf8_lossy(&s.printed.text),
                    String::from_utf8_lossy(want),
                    "{file} on {name} with {threads} threads"
                );
                assert_eq!((s.printed.calls, s.printed.dropped), (101, 0));
            }
        }
    }
}

/// What nvcc writes before a kernel that calls `printf`: the PTX header and
/// `vprintf`'s declaration.
macro_rules! vprintf_header {
    () => {
        ".version 7.0
.target sm_52
.address_size 64
.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
"
    };
}

/// A one-thread-per-line kernel printing `fmt` with `%d` of the thread index
/// first, in nvcc's form, as a launch file of `threads` threads.
fn kernel(dir: &Path, fmt: &str, threads: u32) -> std::path::PathBuf {
    let bytes: Vec<String> = fmt.bytes().chain([0]).map(|b| b.to_string()).collect();
    let src = format!(
        concat!(
            vprintf_header!(),
            ".global .align 1 .b8 $str[{}] = {{{}}};
.visible .entry k()
{{
\t.local .align 8 .b8 \t__local_depot0[8];
\t.reg .b64 \t%SP;
\t.reg .b64 \t%SPL;
\t.reg .b32 \t%r<3>;
\t.reg .b64 \t%rd<4>;
\tmov.u64 \t%SPL, __local_depot0;
\tcvta.local.u64 \t%SP, %SPL;
\tmov.u32 \t%r1, %tid.x;
\tadd.u64 \t%rd1, %SP, 0;
\tst.local.u32 \t[%SPL], %r1;
\tmov.u64 \t%rd2, $str;
\tcvta.global.u64 \t%rd3, %rd2;
\t{{ // callseq 0, 0
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd3;
\t.param .b64 param1;
\tst.param.b64 \t[param1+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0), vprintf, (param0, param1);
\tld.param.b32 \t%r2, [retval0+0];
\t}} // callseq 0
\tret;
}}
"
        ),
        bytes.len(),
        bytes.join(", ")
    );
    std::fs::write(dir.join("k.ptx"), src).unwrap();
    let launch = dir.join("k.spu");
    std::fs::write(
        &launch,
        format!("#include \"k.ptx\"\n.launch grid(1) block({threads});\n"),
    )
    .unwrap();
    launch
}

#[test]
fn a_bad_format_stops_the_run_naming_the_thread_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    for (fmt, what) in [
        ("%d %q\n", "`%q` is not a `printf` conversion"),
        ("%d 50%", "the format ends inside the conversion `%`"),
        ("%d %n\n", "`%n` writes to memory"),
        (
            "%d %ls\n",
            "the conversion `%ls` (wide characters, `wchar_t`) is not supported",
        ),
        ("%9999d\n", "the width 9999 of `%9999` is larger than 4096"),
        // Lane 0's argument is 0 (its `%tid.x`): a null pointer, or the generic
        // address of a shared or local array at offset 0, which it cannot tell
        // apart (a `__shared__` array passed to `%s` is one).
        (
            "%s\n",
            "the `%s` argument is address 0, which is not in global memory: a null pointer, or a shared or local array at offset 0",
        ),
    ] {
        let path = kernel(dir.path(), fmt, 4);
        let control = RunControl::default();
        let err = run_file(&path, &Machine::default(), &LoadOptions::default(), control)
            .map(|_| ())
            .unwrap_err();
        let SessionError::Stopped {
            rendered, printed, ..
        } = &err
        else {
            panic!("{err}");
        };
        assert!(rendered.contains(what), "{fmt:?}: {rendered}");
        // The thread (lane 0 of warp 0 of block (0, 0)) and the call's line.
        assert!(rendered.contains("k.ptx:31:2"), "{fmt:?}: {rendered}");
        assert!(
            rendered.contains("in block (0, 0) on SM (0, 0), thread (0, 0, 0) (warp 0, lane 0)"),
            "{rendered}"
        );
        assert!(printed.text.is_empty());
    }
}

#[test]
fn output_past_the_bound_is_dropped_last_first_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    // 1024 threads x 2049 bytes is about twice the bound.
    let path = kernel(dir.path(), "%2047d\n", 1024);
    let mut first = None;
    for threads in [1, 4] {
        let s = run(&path, &Machine::default(), false, threads);
        let p = &s.printed;
        let kept = OUTPUT_LIMIT / 2048;
        assert_eq!((p.calls, p.dropped), (1024, 1024 - kept as u64));
        let want: String = (0..kept).map(|t| format!("{t:2047}\n")).collect();
        assert!(p.text == want.as_bytes(), "threads {threads}");
        assert!(p.dropped_note().unwrap().contains("limited to 1 MiB"));
        assert_eq!(first.get_or_insert(p.clone()), p);
    }
}

/// The `printf` instructions are the calls' lines in per-instruction statistics
/// (what traces and `--by-line` show): nvcc's `call.uni (retval0),` lines.
#[test]
fn a_printf_is_attributed_to_its_call_line() {
    let machine = Machine::default();
    let s = run(
        &repo_path("samples/cuda/printf_nvcc.spu"),
        &machine,
        false,
        1,
    );
    let stats = spu_emu::observe::stats::Stats::new(&s.result, &s.image, &machine);
    let lines: Vec<(u32, u64)> = stats
        .pcs
        .iter()
        .filter(|p| p.text.as_deref().is_some_and(|t| t.starts_with("printf ")))
        .map(|p| (p.line.unwrap_or(0), p.threads))
        .collect();
    assert_eq!(lines, [(92, 100), (154, 1)]);
}

/// What a kernel prints is data: raw into a pipe or file, but on a terminal its
/// ESC and OSC sequences are escaped (line breaks kept), as all user text is, in
/// `spu-emu` (standard output) and `spu-prof` (standard error).
#[cfg(target_os = "linux")]
#[test]
fn printf_text_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let launch = kernel(dir.path(), "\u{1b}]0;pwned\u{7}\u{1b}[31mRED%d\n", 1);
    let emu = spu_tests::binary("spu-emu");
    let raw = std::process::Command::new(&emu)
        .arg(&launch)
        .arg("-q")
        .output()
        .unwrap();
    assert_eq!(raw.stdout, b"\x1b]0;pwned\x07\x1b[31mRED0\n");
    // `script` gives the tools a terminal; without it there is nothing to check.
    let Ok(status) = std::process::Command::new("script")
        .arg("--version")
        .output()
    else {
        eprintln!("skipped: no `script` to run the tools on a terminal");
        return;
    };
    assert!(status.status.success());
    for (tool, opts) in [("spu-emu", "-q"), ("spu-prof", "--format json")] {
        let command = format!(
            "{} {} {} > /dev/null",
            spu_tests::binary(tool).display(),
            launch.display(),
            opts
        );
        let command = if tool == "spu-emu" {
            command.replace(" > /dev/null", "")
        } else {
            command
        };
        let o = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{tool}: {shown}");
        assert!(!shown.contains('\u{1b}'), "{tool}: {shown:?}");
        assert!(
            shown.contains("\\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED0"),
            "{tool}: {shown:?}"
        );
    }
}

/// Each thread stores its own string into a global buffer (16 bytes with
/// `st.global.u8` in a loop, 4 with `atom.exch`, the terminating zero with
/// `st.global.u32`) and prints it with `%s` at once: in program order the stores
/// come first, so `printf` sees the whole string, in timing mode (where the
/// stores wait for the end of their window) and functional mode (where they reach
/// memory at the end of a window), on the SPU and `gtx480`, for any `--threads`.
const STORED_STRING_PTX: &str = concat!(
    vprintf_header!(),
    ".global .align 1 .b8 $str[4] = {37, 115, 10, 0};
.global .align 4 .b8 buf[4096];
.visible .entry k()
{
\t.local .align 8 .b8 \t__local_depot0[8];
\t.reg .b64 \t%SP;
\t.reg .b64 \t%SPL;
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<8>;
\t.reg .b64 \t%rd<8>;
\tmov.u64 \t%SPL, __local_depot0;
\tcvta.local.u64 \t%SP, %SPL;
\tmov.u32 \t%r1, %tid.x;
\tmov.u64 \t%rd4, buf;
\tcvta.global.u64 \t%rd4, %rd4;
\tmul.wide.u32 \t%rd5, %r1, 32;
\tadd.s64 \t%rd4, %rd4, %rd5;
\tmov.u32 \t%r2, 0;
$L_loop:
\tadd.u32 \t%r3, %r2, 97;
\tadd.u32 \t%r3, %r3, %r1;
\tcvt.u64.u32 \t%rd6, %r2;
\tadd.s64 \t%rd7, %rd4, %rd6;
\tst.global.u8 \t[%rd7], %r3;
\tadd.u32 \t%r2, %r2, 1;
\tsetp.lt.u32 \t%p1, %r2, 16;
\t@%p1 bra \t$L_loop;
\tmov.u32 \t%r5, 0x5a595857;
\tatom.global.exch.b32 \t%r6, [%rd4+16], %r5;
\tmov.u32 \t%r5, 0;
\tst.global.u32 \t[%rd4+20], %r5;
\tadd.u64 \t%rd1, %SP, 0;
\tst.local.u64 \t[%SPL], %rd4;
\tmov.u64 \t%rd2, $str;
\tcvta.global.u64 \t%rd3, %rd2;
\t{ // callseq 0, 0
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd3;
\t.param .b64 param1;
\tst.param.b64 \t[param1+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0), vprintf, (param0, param1);
\tld.param.b32 \t%r4, [retval0+0];
\t}
\tret;
}
",
);

#[test]
fn a_string_the_thread_has_just_stored_is_printed_whole_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ptx"), STORED_STRING_PTX).unwrap();
    let launch = dir.path().join("k.spu");
    std::fs::write(&launch, "#include \"k.ptx\"\n.launch grid(4) block(32);\n").unwrap();
    // Thread t's bytes are 'a' + t + i (up to 0x8f), then "WXYZ".
    let want: Vec<u8> = (0..4)
        .flat_map(|_| 0..32u8)
        .flat_map(|t| (0..16).map(move |i| b'a' + t + i).chain(*b"WXYZ\n"))
        .collect();
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    for (name, machine, functional) in [
        ("spu", Machine::default(), false),
        ("gtx480", gtx480.clone(), false),
        ("functional", Machine::default(), true),
        ("gtx480 functional", gtx480, true),
    ] {
        for threads in [1, 4] {
            let s = run(&launch, &machine, functional, threads);
            assert!(
                s.printed.text == want,
                "{name} with {threads} threads: {}",
                String::from_utf8_lossy(&s.printed.text)
            );
        }
    }
}

/// Thread 0 fills two global buffers, of 4 and 70 000 bytes, with `A` (no
/// terminating zero in either) and prints 4 bytes of each with `%.4s`: as in C,
/// a precision reads at most that many bytes and needs no terminator, however
/// long the buffer, or however exactly it ends at the buffer's end.
const PRECISION_STRING_PTX: &str = concat!(
    vprintf_header!(),
    ".global .align 1 .b8 $str[8] = {91, 37, 46, 52, 115, 93, 10, 0};
.global .align 4 .b8 small[4];
.global .align 4 .b8 big[70000];
.visible .entry k()
{
\t.local .align 8 .b8 \t__local_depot0[8];
\t.reg .b64 \t%SP;
\t.reg .b64 \t%SPL;
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<8>;
\t.reg .b64 \t%rd<12>;
\tmov.u64 \t%SPL, __local_depot0;
\tcvta.local.u64 \t%SP, %SPL;
\tmov.u32 \t%r1, %tid.x;
\tsetp.ne.u32 \t%p2, %r1, 0;
\t@%p2 bra \t$L_end;
\tmov.u64 \t%rd4, small;
\tcvta.global.u64 \t%rd4, %rd4;
\tmov.u64 \t%rd8, big;
\tcvta.global.u64 \t%rd8, %rd8;
\tmov.u32 \t%r5, 0x41414141;
\tmov.u32 \t%r2, 0;
$L_small:
\tcvt.u64.u32 \t%rd6, %r2;
\tadd.s64 \t%rd7, %rd4, %rd6;
\tst.global.u32 \t[%rd7], %r5;
\tadd.u32 \t%r2, %r2, 4;
\tsetp.lt.u32 \t%p1, %r2, 4;
\t@%p1 bra \t$L_small;
\tmov.u32 \t%r2, 0;
$L_big:
\tcvt.u64.u32 \t%rd6, %r2;
\tadd.s64 \t%rd7, %rd8, %rd6;
\tst.global.u32 \t[%rd7], %r5;
\tadd.u32 \t%r2, %r2, 4;
\tsetp.lt.u32 \t%p1, %r2, 70000;
\t@%p1 bra \t$L_big;
\tadd.u64 \t%rd1, %SP, 0;
\tmov.u64 \t%rd2, $str;
\tcvta.global.u64 \t%rd3, %rd2;
\tst.local.u64 \t[%SPL], %rd4;
\t{ // callseq 0, 0
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd3;
\t.param .b64 param1;
\tst.param.b64 \t[param1+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0), vprintf, (param0, param1);
\tld.param.b32 \t%r4, [retval0+0];
\t}
\tst.local.u64 \t[%SPL], %rd8;
\t{ // callseq 1, 0
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd3;
\t.param .b64 param1;
\tst.param.b64 \t[param1+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0), vprintf, (param0, param1);
\tld.param.b32 \t%r4, [retval0+0];
\t}
$L_end:
\tret;
}
",
);

#[test]
fn a_precision_reads_at_most_that_many_bytes_of_a_string_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ptx"), PRECISION_STRING_PTX).unwrap();
    let launch = dir.path().join("k.spu");
    std::fs::write(&launch, "#include \"k.ptx\"\n.launch grid(1) block(32);\n").unwrap();
    for functional in [false, true] {
        let s = run(&launch, &Machine::default(), functional, 1);
        assert_eq!(
            String::from_utf8_lossy(&s.printed.text),
            "[AAAA]\n[AAAA]\n",
            "functional: {functional}"
        );
    }
}
