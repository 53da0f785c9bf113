//! CUDA C through clang: the samples of `samples/cuda/*.cu` against references
//! computed here, on the SPU, `gtx480` and in `--functional`; the producer-consumer
//! stencil in CUDA C against `stencil_pc.spu` (bit for bit, and its off-chip words);
//! the header's maths library against Rust's (double precision, rounded once) over
//! many arguments; and the tools' handling of clang (missing, failing, too slow,
//! its messages, nothing written beside the user's files). The tests that need
//! clang skip without it (see [`spu_tests::clang`]).

use spu_emu::Machine;
use spu_tests::{Ran, binary, repo_path, run_in_mode};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[test]
fn saxpy_matches_a_reference_everywhere() {
    if spu_tests::clang::skip("saxpy.cu") {
        return;
    }
    for (name, machine, functional) in spu_tests::every_mode() {
        let ran = run_in_mode(
            &repo_path("samples/cuda/saxpy.spu"),
            &machine,
            &[],
            &[],
            functional,
        );
        let (x, y0, y) = (ran.in_f32("X"), ran.in_f32("Y"), ran.out_f32("Y"));
        assert_eq!(y.len(), 1000);
        for i in 0..1000 {
            // clang fuses `a * x[i] + y[i]` into one fma, as nvcc does.
            let want = 2.5f32.mul_add(x[i], y0[i]);
            assert_eq!(y[i].to_bits(), want.to_bits(), "{name}: y[{i}]");
        }
    }
}

/// `wave3d.cu`'s value at one point, computed here in double precision.
fn wave(input: f32, z: usize, amplitude: f64, frequency: f32, harmonics: usize) -> f64 {
    let partial: Vec<f64> = (0..8)
        .map(|h| {
            let k = (2 * h + 1) as f32;
            f64::from(frequency * k * input).sin() / f64::from(k)
        })
        .collect();
    let s: f64 = (0..harmonics).map(|h| partial[(h + z) % 8]).sum();
    amplitude * s.clamp(-1.5, 1.5)
}

#[test]
fn wave3d_matches_a_reference_everywhere() {
    if spu_tests::clang::skip("wave3d.cu") {
        return;
    }
    let (nx, ny, nz) = (40, 6, 3);
    for (name, machine, functional) in spu_tests::every_mode() {
        for (defines, amplitude, harmonics) in
            [(&[][..], 2.0, 5), (&["AMP=-0.5", "HARM=8"][..], -0.5, 8)]
        {
            let ran = run_in_mode(
                &repo_path("samples/cuda/wave3d.spu"),
                &machine,
                defines,
                &[],
                functional,
            );
            let (input, out) = (ran.in_f32("IN"), ran.out_f32("OUT"));
            assert_eq!(out.len(), nx * ny * nz);
            for (i, (&x, &got)) in input.iter().zip(&out).enumerate() {
                let z = i / (nx * ny);
                let want = wave(x, z, amplitude, 3.0, harmonics);
                // sinf within 1 ulp, and f32 sums of up to 8 terms.
                assert!(
                    (f64::from(got) - want).abs() <= 4e-6,
                    "{name} {defines:?}: OUT[{i}] = {got}, want {want}"
                );
            }
        }
    }
}

/// The acceptance case of CUDA C support: `wave3d.cu` (device functions, a local
/// array, a struct by value, `sinf`, a 3-D grid) also prints one line per block,
/// in launch order (x fastest, then y, then z) whatever the machine, mode or
/// number of threads, with the values bound in the launch file.
#[test]
fn wave3d_prints_a_line_per_block_in_launch_order() {
    if spu_tests::clang::skip("wave3d.cu") {
        return;
    }
    let mut want = String::new();
    for z in 0..3 {
        for y in 0..2 {
            for x in 0..3 {
                want += &format!("block ({x}, {y}, {z}): 8 harmonics, amplitude -0.50\n");
            }
        }
    }
    let options = spu_emu::LoadOptions {
        defines: vec!["AMP=-0.5".into(), "HARM=8".into()],
        ..Default::default()
    };
    for (name, machine, functional) in spu_tests::every_mode() {
        for threads in [1, 2] {
            let control = spu_emu::RunControl {
                functional,
                threads,
                ..Default::default()
            };
            let s = spu_emu::cli::session::run_file(
                &repo_path("samples/cuda/wave3d.spu"),
                &machine,
                &options,
                control,
            )
            .unwrap_or_else(|e| panic!("{}\n{e}", e.details()));
            assert_eq!(
                String::from_utf8_lossy(&s.printed.text),
                want,
                "{name}, {threads} threads"
            );
        }
    }
}

/// The buffers and off-chip traffic of a run.
fn stencil(file: &str, defines: &[&str], dma: bool) -> Ran {
    let mut m = Machine::default();
    if dma {
        m.set("boundary.kind=dma").unwrap();
    }
    run_in_mode(&repo_path(file), &m, defines, &[], false)
}

#[test]
fn stencil_in_cuda_c_matches_stencil_pc_bit_for_bit_with_the_same_traffic() {
    if spu_tests::clang::skip("stencil_pc.cu") {
        return;
    }
    for (defines, dma) in [
        (&["N=64", "K=64"][..], false),
        (&["N=128", "K=64"][..], false),
        (&["N=64", "K=96"][..], true),
    ] {
        let spu = stencil("samples/stencil2d/stencil_pc.spu", defines, dma);
        let cuda = stencil("samples/stencil2d/stencil_pc_cuda.spu", defines, dma);
        for buf in ["Hk", "Hi", "Hj"] {
            let (a, b) = (spu.out_u32(buf), cuda.out_u32(buf));
            assert!(
                !a.iter().all(|&w| w == 0),
                "{buf} {defines:?}: nothing written"
            );
            assert_eq!(a, b, "{buf} {defines:?} dma={dma}");
        }
        let (a, b) = (&spu.result.traffic, &cuda.result.traffic);
        assert_eq!(
            (a.load_words, a.store_words, a.spill_words, a.restore_words),
            (b.load_words, b.store_words, b.spill_words, b.restore_words),
            "off-chip words {defines:?} dma={dma}"
        );
        assert_eq!(
            (a.load_transactions, a.store_transactions),
            (b.load_transactions, b.store_transactions),
            "off-chip transactions {defines:?} dma={dma}"
        );
        let (a, b) = (&spu.result.cb, &cuda.result.cb);
        assert_eq!(
            (a.reads, a.writes, a.switches),
            (b.reads, b.writes, b.switches),
            "CB words {defines:?} dma={dma}"
        );
        assert_eq!(spu.result.link_syncs, cuda.result.link_syncs);
    }
}

/// Ordered integer of a float, so that adjacent floats differ by one.
fn ordered(x: f32) -> i64 {
    let b = i64::from(x.to_bits() as i32);
    if b < 0 { i64::from(i32::MIN) - b } else { b }
}

/// Distance in units in the last place; 0 for two NaNs, large for one.
fn ulps(a: f32, b: f32) -> i64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => (ordered(a) - ordered(b)).abs(),
        _ => i64::MAX,
    }
}

/// The maths kernel: for each function, the arguments it was given and its results.
const MATHS: &str = r#"
__device__ unsigned mix(unsigned i) {
    i ^= i >> 16; i *= 0x7feb352du; i ^= i >> 15; i *= 0x846ca68bu; i ^= i >> 16;
    return i;
}
// A float of magnitude 2^lo .. 2^hi, every exponent as likely, random sign if `sign`.
__device__ float spread(unsigned h, int lo, int hi, bool sign) {
    unsigned span = (unsigned)(hi - lo) << 23;
    float a = __uint_as_float((mix(h) % span) + ((unsigned)(127 + lo) << 23));
    return sign && (h & 1) ? -a : a;
}
__device__ float uniform(unsigned h, float lo, float hi) {
    return lo + (hi - lo) * (float)(mix(h) >> 8) * (1.0f / 16777216.0f);
}
extern "C" __global__ void maths(float *A, float *B, float *R, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = 2 * i + 1;
    float a[F], b[F], r[F];
    a[0] = uniform(h, -104.0f, 89.0f);       r[0] = expf(a[0]);
    a[1] = uniform(h, -150.0f, 128.0f);      r[1] = exp2f(a[1]);
    a[2] = uniform(h, -45.0f, 38.5f);        r[2] = exp10f(a[2]);
    a[3] = spread(h, -149, 127, false);      r[3] = logf(a[3]);
    a[4] = spread(h, -149, 127, false);      r[4] = log2f(a[4]);
    a[5] = spread(h, -149, 127, false);      r[5] = log10f(a[5]);
    a[6] = spread(h, -20, 28, true);         r[6] = sinf(a[6]);
    a[7] = spread(h, -20, 28, true);         r[7] = cosf(a[7]);
    a[8] = spread(h, -20, 28, true);         r[8] = tanf(a[8]);
    a[9] = spread(h, -20, 20, false);        b[9] = uniform(h + 7, -6.0f, 6.0f);
    r[9] = powf(a[9], b[9]);
    a[10] = spread(h, -30, 30, true);        r[10] = atanf(a[10]);
    a[11] = spread(h, -20, 20, true);        b[11] = spread(h + 5, -20, 20, true);
    r[11] = atan2f(a[11], b[11]);
    a[12] = uniform(h, -1.0f, 1.0f);         r[12] = asinf(a[12]);
    a[13] = uniform(h, -1.0f, 1.0f);         r[13] = acosf(a[13]);
    a[14] = uniform(h, -88.0f, 88.0f);       r[14] = sinhf(a[14]);
    a[15] = uniform(h, -88.0f, 88.0f);       r[15] = coshf(a[15]);
    a[16] = uniform(h, -12.0f, 12.0f);       r[16] = tanhf(a[16]);
    a[17] = spread(h, -120, 120, true);      r[17] = cbrtf(a[17]);
    a[18] = spread(h, -60, 60, true);        b[18] = spread(h + 3, -60, 60, true);
    r[18] = hypotf(a[18], b[18]);
    a[19] = uniform(h, -20.0f, 20.0f);       r[19] = expm1f(a[19]);
    a[20] = spread(h, -30, 30, false) - 0.999f; r[20] = log1pf(a[20]);
    a[21] = spread(h, -149, 127, false);     r[21] = sqrtf(a[21]);
    a[22] = spread(h, -10, 30, true);        r[22] = floorf(a[22]);
    a[23] = uniform(h, -0.2f, 0.2f);         r[23] = expm1f(a[23]);
    a[24] = spread(h, -40, 0, true);         r[24] = log1pf(a[24]);
    a[25] = spread(h, 28, 128, true);        r[25] = sinf(a[25]);
    a[26] = spread(h, 28, 128, true);        r[26] = cosf(a[26]);
    a[27] = spread(h, 28, 128, true);        r[27] = tanf(a[27]);
    for (int f = 0; f < F; f++) {
        A[f * n + i] = a[f];
        B[f * n + i] = (f == 9 || f == 11 || f == 18) ? b[f] : 0.0f;
        R[f * n + i] = r[f];
    }
}
"#;

/// The exact value of function `f` of `maths` at `(a, b)`, rounded once to f32.
fn exact(f: usize, a: f32, b: f32) -> f32 {
    let (x, y) = (f64::from(a), f64::from(b));
    let r = match f {
        0 => x.exp(),
        1 => x.exp2(),
        2 => 10f64.powf(x),
        3 => x.ln(),
        4 => x.log2(),
        5 => x.log10(),
        6 | 25 => x.sin(),
        7 | 26 => x.cos(),
        8 | 27 => x.tan(),
        9 => x.powf(y),
        10 => x.atan(),
        11 => x.atan2(y),
        12 => x.asin(),
        13 => x.acos(),
        14 => x.sinh(),
        15 => x.cosh(),
        16 => x.tanh(),
        17 => x.cbrt(),
        18 => x.hypot(y),
        19 | 23 => x.exp_m1(),
        20 | 24 => x.ln_1p(),
        21 => x.sqrt(),
        22 => x.floor(),
        _ => unreachable!(),
    };
    r as f32
}

const NAMES: [&str; 28] = [
    "expf",
    "exp2f",
    "exp10f",
    "logf",
    "log2f",
    "log10f",
    "sinf",
    "cosf",
    "tanf",
    "powf",
    "atanf",
    "atan2f",
    "asinf",
    "acosf",
    "sinhf",
    "coshf",
    "tanhf",
    "cbrtf",
    "hypotf",
    "expm1f",
    "log1pf",
    "sqrtf",
    "floorf",
    "expm1f (small)",
    "log1pf (small)",
    "sinf (2^28 and above)",
    "cosf (2^28 and above)",
    "tanf (2^28 and above)",
];

#[test]
fn the_headers_maths_library_is_within_one_ulp() {
    if spu_tests::clang::skip("the header's maths") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let n = 4096;
    std::fs::write(
        dir.path().join("maths.cu"),
        format!("#define F {}\n{MATHS}", NAMES.len()),
    )
    .unwrap();
    let launch = dir.path().join("maths.spu");
    std::fs::write(
        &launch,
        format!(
            "#include \"maths.cu\"
.param .s32 N = {n};
.global .f32 A[{f} * N] = zeros;
.global .f32 B[{f} * N] = zeros;
.global .f32 R[{f} * N] = zeros;
.launch grid(cdiv(N, 128)) block(128);
.bind maths(A, B, R, N);
",
            f = NAMES.len()
        ),
    )
    .unwrap();
    let ran = run_in_mode(&launch, &Machine::default(), &[], &[], true);
    let (a, b, r) = (ran.out_f32("A"), ran.out_f32("B"), ran.out_f32("R"));
    for (f, name) in NAMES.iter().enumerate() {
        let mut worst = (0, 0usize);
        for i in f * n..(f + 1) * n {
            let d = ulps(r[i], exact(f, a[i], b[i]));
            if d > worst.0 {
                worst = (d, i);
            }
        }
        let i = worst.1;
        // floorf and sqrtf are one correctly rounded instruction each.
        let bound = if matches!(f, 21 | 22) { 0 } else { 1 };
        assert!(
            worst.0 <= bound,
            "{name}({}, {}) = {} is {} ulp from {}",
            a[i],
            b[i],
            r[i],
            worst.0,
            exact(f, a[i], b[i])
        );
    }
}

fn tool(name: &str, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(binary(name));
    c.args(args).current_dir(dir).env_remove("SPU_CLANG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_missing_clang_says_how_to_install_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo_path("samples/cuda/saxpy.cu"),
        dir.path().join("saxpy.cu"),
    )
    .unwrap();
    std::fs::copy(
        repo_path("samples/cuda/saxpy.spu"),
        dir.path().join("saxpy.spu"),
    )
    .unwrap();
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().to_str().unwrap();
    for (tool_name, file) in [
        ("spu-emu", "saxpy.spu"),
        ("spu-asm", "saxpy.cu"),
        ("spu-prof", "saxpy.cu"),
    ] {
        let o = tool(tool_name, &[file], dir.path(), &[("PATH", path)]);
        let e = stderr(&o);
        assert!(!o.status.success(), "{tool_name}: {e}");
        assert!(
            e.contains("no `clang` is on PATH")
                && e.contains("apt-get install clang")
                && e.contains("--clang PATH"),
            "{tool_name}: {e}"
        );
        // Included from a .spu file, the help speaks of clang, not of paths.
        if file == "saxpy.spu" {
            assert!(
                e.contains("compiled to PTX with clang") && !e.contains("paths are relative"),
                "{tool_name}: {e}"
            );
        }
    }
    let o = tool(
        "spu-asm",
        &["saxpy.cu", "--clang", "/nonexistent/clang"],
        dir.path(),
        &[],
    );
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("clang `/nonexistent/clang` does not exist"),
        "{e}"
    );
    // Nothing was written beside the user's files.
    let left = names_in(dir.path());
    assert_eq!(left, ["saxpy.cu", "saxpy.spu"]);
}

/// The names of the files in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A stand-in for clang in `dir`: an executable shell script `name` with `script`
/// as its text, beside an empty `k.cu` to compile.
#[cfg(unix)]
fn fake_clang(dir: &Path, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let fake = dir.join(name);
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("k.cu"), "").unwrap();
    fake
}

/// clang's diagnostics reach the terminal escaped: a `.cu` file named with
/// terminal escapes cannot set the title or the colours through them.
#[cfg(unix)]
#[test]
fn clangs_diagnostics_are_relayed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_clang(
        dir.path(),
        "loud-clang",
        "#!/bin/sh\nprintf 'k\\033]0;pwn\\007.cu:1:1: error: bad\\n' >&2\nexit 1\n",
    );
    let o = tool(
        "spu-asm",
        &["k.cu"],
        dir.path(),
        &[("SPU_CLANG", fake.to_str().unwrap())],
    );
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("k\\u{1b}]0;pwn\\u{7}.cu:1:1: error: bad") && !e.contains('\u{1b}'),
        "{e:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_clang_that_hangs_is_stopped_at_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_clang(dir.path(), "slow-clang", "#!/bin/sh\nexec sleep 60\n");
    let start = std::time::Instant::now();
    let o = tool(
        "spu-asm",
        &["k.cu"],
        dir.path(),
        &[
            ("SPU_CLANG", fake.to_str().unwrap()),
            ("SPU_CLANG_TIMEOUT", "1"),
        ],
    );
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("did not finish compiling `k.cu` within 1 s"),
        "{e}"
    );
    assert!(start.elapsed().as_secs() < 30, "not stopped");
}

#[test]
fn clangs_messages_name_the_users_file_and_line() {
    if spu_tests::clang::skip("clang's messages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.cu"),
        "extern \"C\" __global__ void k(float *y) {\n    y[0] = undeclared;\n}\n",
    )
    .unwrap();
    let o = tool("spu-asm", &["bad.cu"], dir.path(), &[]);
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(
        e.contains("bad.cu:2:12: error: use of undeclared identifier"),
        "{e}"
    );
    assert!(
        e.contains("clang could not compile `bad.cu` (exit status 1"),
        "{e}"
    );
    assert!(!dir.path().join("bad.bin").exists());
}

#[test]
fn assembler_errors_in_clangs_ptx_point_at_the_cuda_line() {
    if spu_tests::clang::skip("errors in clang's PTX") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("odd.cu"),
        "extern \"C\" __global__ void k(float *y) {\n    y[0] = 1.0f;\n    asm volatile(\"frobnicate.u32 %0;\" :: \"r\"(1));\n}\n",
    )
    .unwrap();
    let o = tool("spu-asm", &["odd.cu", "--check"], dir.path(), &[]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("--> odd.cu.ptx:"), "{e}");
    assert!(e.contains("from `odd.cu:3:5`"), "{e}");
    assert!(e.contains("of the PTX clang wrote for `odd.cu`"), "{e}");
}

#[test]
fn a_bare_cuda_file_runs_with_its_parameters_from_d() {
    if spu_tests::clang::skip("a bare .cu file") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fill.cu"),
        "__device__ float table[32];\nextern \"C\" __global__ void fill(float a) { table[threadIdx.x] = a * threadIdx.x; }\n",
    )
    .unwrap();
    let o = tool(
        "spu-emu",
        &["fill.cu", "-D", "fill_param_0=2.5", "--stats", "s.json"],
        dir.path(),
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The launch it runs is said, and how to choose another.
    let e = stderr(&o);
    assert!(
        e.contains("`fill` runs as one block of 32 threads") && e.contains(".launch grid(X, Y, Z)"),
        "{e}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(s["offchip"]["store_words"], 32, "{s}");
    // A kernel with pointers needs a launch file, and says so.
    let o = tool(
        "spu-emu",
        &[repo_path("samples/cuda/saxpy.cu").to_str().unwrap()],
        dir.path(),
        &[],
    );
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("a kernel with pointer parameters needs a launch file"),
        "{e}"
    );
    // Only what was asked for is in the folder: the statistics.
    let left = names_in(dir.path());
    assert_eq!(left, ["fill.cu", "s.json"]);
}

/// A `.cu` file's own `#include`s stay in its folder (or under `-I DIR`), as a
/// launch file's do: clang is not asked to read, let alone quote, a file elsewhere,
/// whether named by a path that leaves the folder, an absolute path, or an angle
/// include that climbs out of clang's system folders.
#[test]
fn a_cu_file_includes_only_files_in_its_folder() {
    if spu_tests::clang::skip("includes of a .cu file") {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.h");
    std::fs::write(&secret, "TOPSECRET password=hunter2\n").unwrap();
    // A line the preprocessor complains about, quoting it.
    let noisy = outside.path().join("noisy.h");
    std::fs::write(&noisy, "# TOPSECRET directive\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kernel = "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = 1; }\n";
    let up = format!("{}", secret.display());
    let relative = format!(
        "{}{}",
        "../".repeat(dir.path().components().count()),
        up.trim_start_matches('/')
    );
    // Each case: the file, its includes, and whether the refusal names the file
    // outside (a preprocessing error of the kernel's own stops the run first).
    for (name, include, names_it) in [
        ("rel.cu", format!("#include \"{relative}\"\n"), true),
        ("abs.cu", format!("#include \"{up}\"\n"), true),
        // Only the compilation's options define `__OPTIMIZE__`.
        (
            "optimised.cu",
            format!("#ifdef __OPTIMIZE__\n#include \"{up}\"\n#endif\n"),
            true,
        ),
        // A preprocessing error before the include: never compiled unconfined.
        (
            "error.cu",
            format!("#error stop\n#include \"{up}\"\n"),
            false,
        ),
        (
            "noisy.cu",
            format!("#error stop\n#include \"{}\"\n", noisy.display()),
            true,
        ),
        (
            "angle.cu",
            format!(
                "#include <{}{}>\n",
                "../".repeat(12),
                up.trim_start_matches('/')
            ),
            true,
        ),
    ] {
        std::fs::write(dir.path().join(name), format!("{include}{kernel}")).unwrap();
        let launch = format!(
            "#include \"{name}\"\n.global .s32 P[32] = zeros;\n.launch grid(1) block(32);\n.bind k(P);\n"
        );
        std::fs::write(dir.path().join("l.spu"), launch).unwrap();
        for (tool_name, file) in [("spu-asm", name), ("spu-emu", "l.spu")] {
            let o = tool(tool_name, &[file], dir.path(), &[]);
            let e = stderr(&o);
            assert!(!o.status.success(), "{tool_name} {name}: {e}");
            assert!(!e.contains("TOPSECRET"), "{tool_name} {name}: {e}");
            assert_eq!(
                e.contains("outside") && e.contains("-I "),
                names_it,
                "{tool_name} {name}: {e}"
            );
        }
    }
    // Writes a `.cu` file and checks it: whether it assembled, and its messages.
    let check = |name: &str, text: String| {
        std::fs::write(dir.path().join(name), text).unwrap();
        let o = tool("spu-asm", &[name, "--check"], dir.path(), &[]);
        (o.status.success(), stderr(&o))
    };
    // A folder named `a:1:` beside the kernel cannot hide the file a failed
    // listing's message names.
    std::fs::create_dir(dir.path().join("a:1:")).unwrap();
    let hidden = format!(
        "a:1:/{}{}",
        "../".repeat(dir.path().components().count()),
        noisy.display().to_string().trim_start_matches('/')
    );
    let (ok, e) = check("colon.cu", format!("#include \"{hidden}\"\n{kernel}"));
    assert!(
        !ok && !e.contains("TOPSECRET") && e.contains("outside"),
        "{e}"
    );
    // The listing's own file is not where the compilation searches: both see
    // the same files, so an include under `__has_include` of it stays out.
    let (ok, e) = check(
        "probe.cu",
        format!("#if __has_include(\"kernel.d\")\n#include \"{up}\"\n#endif\n{kernel}"),
    );
    assert!(ok && !e.contains("TOPSECRET"), "{e}");
    // A header whose name clang cannot list unambiguously (a tab) cannot be
    // checked: refused, not skipped.
    std::fs::create_dir(dir.path().join("t\tb")).unwrap();
    std::fs::write(dir.path().join("t\tb/h.h"), "#define SCALE 3\n").unwrap();
    let (ok, e) = check("tab.cu", format!("#include \"t\tb/h.h\"\n{kernel}"));
    assert!(!ok && e.contains("no file that can be checked"), "{e}");
    // clang's compiler proper reads a name starting with `@` as a file of
    // options, whatever folder it is in: refused before clang runs.
    std::fs::write(dir.path().join("k.cu"), "-fsyntax-only\n").unwrap();
    for file in ["@k.cu", "./@k.cu"] {
        let (ok, e) = check(file, kernel.to_string());
        assert!(!ok && e.contains("starting with `@`"), "{e}");
    }
    // The same header under `-I` is allowed.
    std::fs::write(outside.path().join("ok.h"), "#define SCALE 3\n").unwrap();
    std::fs::write(
        dir.path().join("inc.cu"),
        format!(
            "#include \"{}\"\nextern \"C\" __global__ void k(int *p) {{ p[threadIdx.x] = SCALE; }}\n",
            outside.path().join("ok.h").display()
        ),
    )
    .unwrap();
    let o = tool(
        "spu-asm",
        &["inc.cu", "--check", "-I", outside.path().to_str().unwrap()],
        dir.path(),
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The headers clang reads for a `.cu` file are inputs: no output overwrites one.
#[test]
fn no_output_overwrites_a_header_of_a_cu_file() {
    if spu_tests::clang::skip("headers of a .cu file") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let header = "#pragma once\n#define SCALE 3\n";
    // In a folder whose name has a no-break space, which clang lists as it is.
    std::fs::create_dir(dir.path().join("my\u{a0}h")).unwrap();
    std::fs::write(dir.path().join("my\u{a0}h/h.cuh"), header).unwrap();
    std::fs::write(
        dir.path().join("hk.cu"),
        "#include \"my\u{a0}h/h.cuh\"\nextern \"C\" __global__ void k(int *p) { p[threadIdx.x] = SCALE; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("hk.spu"),
        "#include \"hk.cu\"\n.global .s32 P[32] = zeros;\n.launch grid(1) block(32);\n.bind k(P);\n",
    )
    .unwrap();
    let h = "my\u{a0}h/h.cuh";
    let dump = format!("P={h}");
    for (tool_name, args) in [
        ("spu-emu", vec!["hk.spu", "-q", "--stats", h]),
        ("spu-emu", vec!["hk.spu", "-q", "--dump", &dump]),
        ("spu-prof", vec!["hk.spu", "--heatmap", h]),
        ("spu-asm", vec!["hk.cu", "-o", h]),
        ("spu-asm", vec!["hk.spu", "-o", h]),
    ] {
        let o = tool(tool_name, &args, dir.path(), &[]);
        let e = stderr(&o);
        assert!(!o.status.success(), "{tool_name} {args:?}: {e}");
        assert!(
            e.contains("would overwrite the input"),
            "{tool_name} {args:?}: {e}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(h)).unwrap(),
            header,
            "{tool_name} {args:?}"
        );
    }
}

/// A clang that keeps growing (macros that double, eight levels of them) is stopped
/// at the memory limit with a message that says so.
#[cfg(target_os = "linux")]
#[test]
fn a_clang_that_grows_without_end_is_stopped_at_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Holds 256 MiB (written, so resident) for as long as it is let run.
    let fake = fake_clang(
        dir.path(),
        "big-clang",
        "#!/bin/sh\nexec python3 -c 'import time\nb = b\"x\" * (256 << 20)\ntime.sleep(60)'\n",
    );
    let start = std::time::Instant::now();
    let o = tool(
        "spu-asm",
        &["k.cu"],
        dir.path(),
        &[
            ("SPU_CLANG", fake.to_str().unwrap()),
            ("SPU_CLANG_MEMORY_MIB", "64"),
        ],
    );
    let e = stderr(&o);
    assert!(
        !o.status.success()
            && e.contains("clang used more than 64 MiB of memory compiling `k.cu`")
            && e.contains("SPU_CLANG_MEMORY_MIB"),
        "{e}"
    );
    assert!(start.elapsed().as_secs() < 30, "not stopped");
}

/// clang works in a folder only the user can enter (it holds the PTX of the
/// user's file, and the PTX of a private file is private too).
#[cfg(unix)]
#[test]
fn clangs_temporary_folder_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mode.txt");
    let fake = fake_clang(
        dir.path(),
        "stat-clang",
        &format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\nstat -c %a \"$(dirname \"$out\")\" > '{}'\nexit 1\n",
            record.display()
        ),
    );
    let o = tool(
        "spu-asm",
        &["k.cu"],
        dir.path(),
        &[("SPU_CLANG", fake.to_str().unwrap())],
    );
    assert!(!o.status.success());
    assert_eq!(std::fs::read_to_string(&record).unwrap().trim(), "700");
}

/// A limit that is not a positive whole number is refused with the variable's
/// name and what it takes, before clang runs (never silently the default).
#[cfg(unix)]
#[test]
fn a_clang_limit_that_is_not_a_number_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let fake = fake_clang(
        dir.path(),
        "fake-clang",
        &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", ran.display()),
    );
    for (var, value, unit) in [
        ("SPU_CLANG_TIMEOUT", "abc", "seconds"),
        ("SPU_CLANG_TIMEOUT", "0", "seconds"),
        ("SPU_CLANG_MEMORY_MIB", "2g", "MiB"),
        ("SPU_CLANG_MEMORY_MIB", "-5", "MiB"),
    ] {
        for bin in ["spu-asm", "spu-emu"] {
            let o = tool(
                bin,
                &["k.cu"],
                dir.path(),
                &[("SPU_CLANG", fake.to_str().unwrap()), (var, value)],
            );
            let e = stderr(&o);
            assert!(
                !o.status.success()
                    && e.contains(&format!(
                        "the environment variable {var} is `{value}`, but it takes a whole number of {unit}, 1 or more"
                    )),
                "{bin} {var}={value}: {e}"
            );
            assert!(!ran.exists(), "{bin} {var}={value}: clang ran");
        }
    }
}

/// A tool ended by SIGTERM, SIGINT or SIGHUP while clang runs stops clang,
/// removes clang's temporary folder (SIGKILL cannot be caught, and leaves it)
/// and says it was interrupted (not that clang failed).
#[cfg(unix)]
#[test]
fn a_signal_while_clang_runs_leaves_no_temporary_folder() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("clang.pid");
    let fake = fake_clang(
        dir.path(),
        "slow-clang",
        &format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 60\n",
            pid_file.display()
        ),
    );
    let leftovers = |tmp: &Path| -> Vec<String> {
        names_in(tmp)
            .into_iter()
            .filter(|n| n.starts_with("spu-cuda-"))
            .collect()
    };
    for (bin, signal) in [
        ("spu-asm", "TERM"),
        ("spu-asm", "INT"),
        ("spu-emu", "HUP"),
        ("spu-emu", "TERM"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let _ = std::fs::remove_file(&pid_file);
        let mut child = Command::new(binary(bin))
            .arg("k.cu")
            .current_dir(dir.path())
            .env("SPU_CLANG", &fake)
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Until clang runs in its folder.
        let start = std::time::Instant::now();
        while !pid_file.exists() || leftovers(tmp.path()).is_empty() {
            assert!(start.elapsed().as_secs() < 30, "{bin}: clang never started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let clang = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_string();
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success());
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed().as_secs() < 30,
                "{bin} SIG{signal}: not ended"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(!status.success(), "{bin} SIG{signal}");
        // The tool was interrupted; clang did not fail.
        let mut said = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
        assert!(
            said.contains("interrupted while compiling `k.cu`")
                && !said.contains("could not compile")
                && !said.contains("cannot include"),
            "{bin} SIG{signal}: {said}"
        );
        assert_eq!(
            leftovers(tmp.path()),
            Vec::<String>::new(),
            "{bin} SIG{signal}: the folder was left"
        );
        // clang is stopped too (gone, or a zombie waiting for init).
        let state = std::fs::read_to_string(format!("/proc/{clang}/stat")).unwrap_or_default();
        assert!(
            state.is_empty() || state.contains(") Z "),
            "{bin} SIG{signal}: clang still runs: {state}"
        );
    }
}

/// Ctrl-C while clang runs stops clang and what it started (clang runs in a process
/// group of its own), and the tool exits 130 as after any Ctrl-C.
#[cfg(unix)]
#[test]
fn ctrl_c_while_clang_runs_stops_what_clang_started() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let fake = fake_clang(
        dir.path(),
        "clang-with-a-child",
        &format!(
            "#!/bin/bash\nsleep 300 &\necho $! >> '{}'\nwait\n",
            pids.display()
        ),
    );
    let ended = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.rfind(')').is_some_and(|i| s[i + 2..].starts_with('Z'))
        })
    };
    for (tool_name, args) in [
        ("spu-asm", &["k.cu", "--check"][..]),
        ("spu-emu", &["k.cu", "-q"][..]),
        ("spu-prof", &["k.cu"][..]),
    ] {
        let _ = std::fs::remove_file(&pids);
        let mut child = Command::new(binary(tool_name))
            .args(args)
            .current_dir(dir.path())
            .env("SPU_CLANG", &fake)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let sleeper = loop {
            if let Ok(t) = std::fs::read_to_string(&pids)
                && let Some(line) = t.lines().next()
            {
                break line.to_string();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{tool_name}: clang did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let kill = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ended(&sleeper) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let survived = !ended(&sleeper);
        if survived {
            let _ = Command::new("kill").args(["-9", &sleeper]).status();
        }
        assert!(!survived, "{tool_name}: what clang started outlived it");
        assert_eq!(status.code(), Some(130), "{tool_name}: {status:?}");
    }
}

/// An `#include` of a named pipe, directly or through a header, or of a folder is
/// refused at once, naming it, before clang would wait on it.
#[test]
fn a_cu_file_including_a_pipe_or_folder_is_refused_at_once() {
    if spu_tests::clang::skip("includes of special files") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.path().join("f.h"))
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: no `mkfifo` to make a named pipe with");
        return;
    }
    std::fs::create_dir(dir.path().join("d.h")).unwrap();
    std::fs::write(dir.path().join("via.h"), "#pragma once\n#include \"f.h\"\n").unwrap();
    let kernel = "extern \"C\" __global__ void k(int *p) { p[0] = 1; }\n";
    for (name, include, named) in [
        ("pipe.cu", "#include \"f.h\"\n", "f.h"),
        ("via.cu", "#include \"via.h\"\n", "f.h"),
        ("folder.cu", "#  include <d.h>\n", "./d.h"),
    ] {
        std::fs::write(dir.path().join(name), format!("{include}{kernel}")).unwrap();
        let args = [name, "--check", "-I", "."];
        let o = tool("spu-asm", &args, dir.path(), &[("SPU_CLANG_TIMEOUT", "20")]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {e}");
        assert!(
            e.contains(&format!("names `{named}`, which is not a regular file")),
            "{name}: {e}"
        );
    }
    // Spellings the check before clang does not read (a macro, `#import`, a
    // comment inside the directive): clang is stopped as soon as it waits on
    // the pipe, long before its time limit.
    for (name, include) in [
        ("macro.cu", "#define F \"f.h\"\n#include F\n"),
        ("import.cu", "#import \"f.h\"\n"),
        ("comment.cu", "#/**/include \"f.h\"\n"),
    ] {
        std::fs::write(dir.path().join(name), format!("{include}{kernel}")).unwrap();
        let o = tool(
            "spu-asm",
            &[name, "--check"],
            dir.path(),
            &[("SPU_CLANG_TIMEOUT", "600")],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {e}");
        assert!(e.contains("clang waits on a named pipe"), "{name}: {e}");
    }
}
