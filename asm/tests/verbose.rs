//! `spu-asm -v`: what one block of a kernel holds and the occupancy it allows on a
//! machine, for a few samples on the SPU and on the GTX 480 preset.

use std::path::Path;
use std::process::Command;

/// `spu-asm --check -v ARGS` on a sample: its exit, standard output and error.
fn run(sample: &str, args: &[&str]) -> (bool, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    check_verbose(&Path::new(root).join("samples").join(sample), args)
}

/// `spu-asm FILE --check -v ARGS`: its exit, standard output and error.
fn check_verbose(file: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .arg(file)
        .args(["--check", "-v"])
        .args(args)
        .output()
        .expect("spu-asm runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("UTF-8"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The summary of a launch spu-emu runs.
fn verbose(sample: &str, args: &[&str]) -> String {
    let (ok, out, err) = run(sample, args);
    assert!(ok, "{sample}: {err}");
    out
}

/// The summary and the error of a launch spu-emu refuses, which fails.
fn refused(sample: &str, args: &[&str]) -> (String, String) {
    let (ok, out, err) = run(sample, args);
    assert!(!ok, "{sample} {args:?} succeeded: {out}");
    (out, err)
}

#[test]
fn the_resource_summary_of_samples() {
    for (name, sample, args) in [
        ("vecadd", "vecadd.spu", &[][..]),
        ("stencil_pc", "stencil2d/stencil_pc.spu", &[][..]),
        (
            "stencil_gpu_gtx480",
            "stencil2d/stencil_gpu.spu",
            &["--machine", "gtx480"][..],
        ),
        ("matmul_gtx480", "matmul.spu", &["--machine", "gtx480"][..]),
        (
            "occupancy_shared_gtx480",
            "micro/occupancy.spu",
            &[
                "--machine",
                "gtx480",
                "-D",
                "THREADS=64",
                "-D",
                "SHARED=8720",
            ][..],
        ),
        (
            "occupancy_threads_gtx480_1cta",
            "micro/occupancy.spu",
            &["--machine", "gtx480-1cta", "-D", "THREADS=512"][..],
        ),
    ] {
        insta::assert_snapshot!(name, verbose(sample, args));
    }
}

#[test]
fn a_machine_file_is_read_like_a_preset() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.toml");
    std::fs::write(&file, "[machine]\nkind = \"gpu\"\n[sm]\nmax_blocks = 2\n").unwrap();
    let text = verbose("vecadd.spu", &["--machine", &file.display().to_string()]);
    assert!(
        text.contains("2 blocks per SM") && text.contains("limited by block slots"),
        "{text}"
    );
}

#[test]
fn a_parameter_set_twice_is_refused_naming_both() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .current_dir(root)
        .args([
            "samples/vecadd.spu",
            "--check",
            "-v",
            "-D",
            "N=64",
            "-D",
            "N=128",
        ])
        .output()
        .expect("spu-asm runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("`-D N=64` and `-D N=128` both set parameter `N`"),
        "{stderr}"
    );
}

#[test]
fn an_empty_grid_is_refused_for_its_size_not_for_occupancy() {
    let (out, err) = refused("vecadd.spu", &["-D", "N=0"]);
    assert!(
        out.contains("launch         refused: launch grid dimension x is 0"),
        "{out}"
    );
    assert!(!out.contains("occupancy"), "{out}");
    assert!(
        err.contains("spu-emu refuses this launch on `spu-4x4` with these -D values: launch grid dimension x is 0"),
        "{err}"
    );
}

/// A block deeper than every machine allows, and a block too large for an SM of
/// the machine, are errors with a non-zero exit, not only a line of the summary.
#[test]
fn a_refused_launch_is_an_error() {
    let (out, err) = refused(
        "micro/occupancy.spu",
        &["--machine", "gtx480", "-D", "THREADS=2048"],
    );
    assert!(out.contains("so the launch is refused"), "{out}");
    assert!(
        err.contains("error: spu-emu refuses this launch on `gtx480`"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.spu");
    std::fs::write(
        &file,
        ".param .u32 BZ = 1;\n.launch grid(1) block(1, 1, BZ);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .arg(&file)
        .args(["--check", "-v", "--machine", "gtx480", "-D", "BZ=65"])
        .output()
        .expect("spu-asm runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("block dimension z is 65"), "{err}");
}

/// `-D` and `--machine` without `-v` say what they are for and what to do.
#[test]
fn a_define_without_verbose_says_why_it_needs_it() {
    for args in [&["-D", "N=4"][..], &["--machine", "gtx480"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .args(["samples/vecadd.spu", "--check"])
            .args(args)
            .output()
            .expect("spu-asm runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("for the resource summary of -v only") && err.contains("add -v"),
            "{err}"
        );
    }
}

/// A machine file whose cache is smaller than one set is refused, as `spu-emu`
/// refuses it.
#[test]
fn a_machine_file_with_a_cache_smaller_than_one_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tiny.toml");
    std::fs::write(&file, "[machine]\nkind = \"gpu\"\n[cache]\nl2_kib = 1\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["samples/vecadd.spu", "--check", "-v", "--machine"])
        .arg(&file)
        .output()
        .expect("spu-asm runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("machine key `cache.l2_kib`: 1 KiB is smaller than one set")
            && stderr.contains("at least 12 "),
        "{stderr}"
    );
}

/// A grid beyond a launch's limits is refused by `-v` as `spu-emu` refuses it,
/// not given an occupancy.
#[test]
fn a_grid_beyond_the_z_limit_is_refused_as_spu_emu_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.spu");
    std::fs::write(
        &file,
        ".param .u32 Z = 65535;\n.launch grid(1, 1, Z) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let run = |z: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
            .arg(&file)
            .args(["--check", "-v", "-D", z])
            .output()
            .expect("spu-asm runs");
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let out = run("Z=65536");
    assert!(
        out.contains(
            "launch         refused: launch grid dimension z is 65536, but a launch grid has at most 65535 blocks along z"
        ),
        "{out}"
    );
    assert!(!out.contains("occupancy"), "{out}");
    assert!(run("Z=65535").contains("occupancy"));
}

/// `spu-asm --check -v` of `source` (written to a temporary file) with `args`.
fn run_source(source: &str, args: &[&str]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.spu");
    std::fs::write(&path, source).unwrap();
    check_verbose(&path, args)
}

/// The IU thread count and the number of blocks, which spu-emu refuses beyond
/// their limits, are refused by `-v` as well.
#[test]
fn iu_threads_and_launch_blocks_beyond_the_limits_are_refused() {
    let iu = ".param .u32 IT = 32;\n.launch grid(4, 4) block(32) iu(IT);\n\
              .entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r1, %tid.x;\n    exit;\n\
              .iu\n    mov.u32 %r1, %tid.x;\n    exit;\n}\n";
    let (ok, _, err) = run_source(iu, &[]);
    assert!(ok, "{err}");
    for (define, why) in [
        ("IT=2000", "an Interface Unit runs at most 1024 threads"),
        ("IT=0", "it must be positive"),
    ] {
        let (ok, out, err) = run_source(iu, &["-D", define]);
        assert!(!ok, "{define}: {out}");
        assert!(
            out.contains("launch         refused") && out.contains(why),
            "{out}"
        );
        assert!(
            err.contains("spu-emu refuses this launch") && err.contains(why),
            "{err}"
        );
    }
    let grid = ".param .u32 G = 4;\n.launch grid(G) block(32);\n\
                .entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r1, %tid.x;\n    exit;\n}\n";
    let (ok, out, err) = run_source(grid, &["-D", "G=5000000"]);
    assert!(!ok, "{out}");
    assert!(err.contains("a launch has at most 4194304 blocks"), "{err}");
}

/// The refusal blames the -D values only when the launch would run with the
/// parameters' defaults.
#[test]
fn a_refusal_names_the_d_values_only_when_they_cause_it() {
    let source = ".param .u32 B = 32;\n.param .u32 X = 1;\n.launch grid(4, 4) block(B);\n\
                  .entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r1, %tid.x;\n    exit;\n}\n";
    let (ok, _, err) = run_source(source, &["-D", "B=2048"]);
    assert!(!ok);
    assert!(
        err.contains("refuses this launch on `spu-4x4` with these -D values: "),
        "{err}"
    );
    let constant = source.replace("block(B)", "block(2048)");
    let (ok, _, err) = run_source(&constant, &["-D", "X=2"]);
    assert!(!ok);
    assert!(
        err.contains("refuses this launch on `spu-4x4`: ") && !err.contains("-D values"),
        "{err}"
    );
}

/// With the binary on standard output, the summary goes to standard error: the
/// binary is the one `-o FILE` writes.
#[test]
fn the_summary_stays_out_of_a_binary_on_standard_output() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.bin");
    let asm = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_spu-asm"))
            .current_dir(root)
            .arg("samples/vecadd.spu")
            .args(args)
            .output()
            .expect("spu-asm runs")
    };
    let piped = asm(&["-o", "-", "-v"]);
    assert!(piped.status.success());
    assert!(asm(&["-o", file.to_str().unwrap()]).status.success());
    assert_eq!(piped.stdout, std::fs::read(&file).unwrap());
    assert!(String::from_utf8_lossy(&piped.stderr).contains("kernel `vecadd`"));
}
