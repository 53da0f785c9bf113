//! By-value struct parameters end to end: `samples/cuda/structs_nvcc.spu` and
//! `structs_clang.spu` (a `cudaPitchedPtr` and a configuration struct bound field by
//! field, passed on to a device function as a `.param` array) against a reference
//! computed here, on the SPU, on `gtx480` and in functional mode, with `-D` on a
//! field; and the checks of a struct's binding.

use spu_emu::Machine;
use spu_tests::repo_path;

fn run(file: &str, machine: &Machine, functional: bool, defines: &[&str]) -> (Vec<f32>, Vec<u32>) {
    let ran = spu_tests::run_in_mode(&repo_path(file), machine, defines, &[], functional);
    (ran.in_f32("SRC"), ran.out_u32("OUT"))
}

#[test]
fn struct_parameter_samples_match_a_reference_everywhere() {
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    let (n, rows, pitch_words) = (300usize, 4usize, 320usize);
    for file in [
        "samples/cuda/structs_nvcc.spu",
        "samples/cuda/structs_clang.spu",
    ] {
        for (name, machine, functional) in [
            ("spu", Machine::default(), false),
            ("gtx480", gtx480.clone(), false),
            ("functional", Machine::default(), true),
        ] {
            for (defines, scale, negate) in [
                (&[][..], 1.5f32, true),
                (&["SCALE=2.0", "FLAGS=0"][..], 2.0, false),
            ] {
                let (src, out) = run(file, &machine, functional, defines);
                assert_eq!(out.len(), pitch_words * rows, "{file} {name}");
                for y in 0..rows {
                    for x in 0..pitch_words {
                        let want = if x < n {
                            let r = src[y * n + x].mul_add(scale, -0.25);
                            (if negate { -r } else { r }).to_bits()
                        } else {
                            0 // the padding of each pitched row
                        };
                        assert_eq!(
                            out[y * pitch_words + x],
                            want,
                            "{file} {name} {defines:?}: row {y}, column {x}"
                        );
                    }
                }
            }
        }
    }
}

/// The assembler's first error for the nvcc sample with `bind` as its `.bind`
/// arguments and `ptx` edited by `edit`.
fn refusal(bind: &str, edit: impl Fn(&str) -> String) -> String {
    let dir = tempfile::tempdir().unwrap();
    let ptx = std::fs::read_to_string(repo_path("samples/cuda/structs_nvcc.ptx")).unwrap();
    std::fs::write(dir.path().join("s.ptx"), edit(&ptx)).unwrap();
    let launch = format!(
        "#include \"s.ptx\"
.param .u32 N = 300;
.param .u64 PITCH = 1280;
.param .u64 ROWS = 4;
.global .f32 SRC[N * ROWS] = random(3, -2.0, 2.0);
.global .f32 OUT[PITCH / 4 * ROWS] = zeros;
.launch grid(cdiv(N, 128), ROWS) block(128);
.bind _Z7scale2d7Pitched3Cfg({bind});
"
    );
    let path = dir.path().join("s.spu");
    std::fs::write(&path, &launch).unwrap();
    match spu_asm::assemble_module(path.to_str().unwrap(), &launch) {
        Ok(_) => panic!("assembled: {bind}"),
        Err(d) => d.render("s.spu", &launch),
    }
}

#[test]
fn struct_bindings_are_checked_against_the_declaration() {
    let same = |p: &str| p.to_string();
    let cfg = "{.f32 SCALE = 1.5, .s32 N, .u64 SRC, .f32 BIAS = -0.25, [20] .u32 FLAGS = 1}";
    for (bind, want) in [
        (
            "{.u64 OUT}, 5".to_string(),
            "`_Z7scale2d7Pitched3Cfg_param_1` is a 24-byte struct passed by value",
        ),
        (
            format!("OUT, {cfg}"),
            "`_Z7scale2d7Pitched3Cfg_param_0` is a 32-byte struct passed by value",
        ),
        (
            format!("{{.u64 OUT, .u64 PITCH, .u64 X = 1, .u64 ROWS, .u32 M = 2}}, {cfg}"),
            "field `M` ends past `_Z7scale2d7Pitched3Cfg_param_0`",
        ),
        (
            format!("{{.u64 OUT, [4] .u64 PITCH}}, {cfg}"),
            "field `PITCH` is not aligned",
        ),
        (
            format!("{{.u64 OUT, [8] .u32 A = 1, [8] .u32 B = 2}}, {cfg}"),
            "field `B` overlaps an earlier field",
        ),
        (
            "{.u64 OUT}, {.f32 SCALE = 1.5, .s32 N, .f32 SRC}".to_string(),
            "`SRC` is a buffer, but `_Z7scale2d7Pitched3Cfg_param_1+8` is a .f32",
        ),
        (
            "{.u64 OUT}, {.f32 SCALE = 1.5, .s32 N, .u64 SRX}".to_string(),
            "`SRX` is not a buffer or parameter of the launch",
        ),
    ] {
        let text = refusal(&bind, same);
        assert!(text.contains(want), "{bind}: {text}");
    }
    // A field wider than the struct's alignment.
    let text = refusal(&format!("{{.u64 OUT}}, {cfg}"), |p| {
        p.replace(
            ".param .align 8 .b8 _Z7scale2d7Pitched3Cfg_param_1[24]",
            ".param .align 4 .b8 _Z7scale2d7Pitched3Cfg_param_1[24]",
        )
    });
    assert!(
        text.contains("field `SRC` needs a 8-byte alignment, but `_Z7scale2d7Pitched3Cfg_param_1` is `.align 4`"),
        "{text}"
    );
    // A read that straddles the fields.
    let text = refusal(&format!("{{.u64 OUT}}, {cfg}"), |p| {
        p.replace(
            "ld.param.v2.u32 \t{%r2, %r3}, [_Z7scale2d7Pitched3Cfg_param_1+16]",
            "ld.param.u64 \t%rd15, [_Z7scale2d7Pitched3Cfg_param_1+12]",
        )
    });
    assert!(
        text.contains("this read of `_Z7scale2d7Pitched3Cfg_param_1` does not match its fields"),
        "{text}"
    );
}

/// Without a launch file a struct parameter has no value: the message says how to
/// give one.
#[test]
fn a_struct_parameter_needs_a_launch_file() {
    let path = repo_path("samples/cuda/structs_nvcc.ptx");
    let src = std::fs::read_to_string(&path).unwrap();
    let text = spu_asm::assemble_module(path.to_str().unwrap(), &src)
        .unwrap_err()
        .render("structs_nvcc.ptx", &src);
    assert!(
        text.contains("`_Z7scale2d7Pitched3Cfg_param_0` is a 32-byte struct passed by value; it needs a launch file")
            && text.contains("the struct's fields in braces"),
        "{text}"
    );
}

/// A struct with `short` and `char` fields, laid out as C lays it out (each
/// field at a multiple of its own size): bound field by field, read back
/// whole, with `-D` on a small field; everywhere.
#[test]
fn a_struct_with_small_fields_runs_everywhere() {
    if spu_tests::clang::skip("a struct with small fields") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("small.cu"),
        "struct Cfg { float scale; short sh; signed char c; short d; };\n\
         extern \"C\" __global__ void small(Cfg cfg, float *out) {\n\
         \x20   out[threadIdx.x] = cfg.scale * threadIdx.x + cfg.sh + 10 * cfg.c + 100 * cfg.d;\n\
         }\n",
    )
    .unwrap();
    let launch = dir.path().join("small.spu");
    std::fs::write(
        &launch,
        "#include \"small.cu\"\n.global .f32 OUT[32] = zeros;\n.launch grid(1) block(32);\n\
         .bind small({.f32 SCALE = 1.5, .s16 SH = -3, .s8 C = -2, .s16 D = 7}, OUT);\n",
    )
    .unwrap();
    for (name, machine, functional) in spu_tests::every_mode() {
        for (defines, d) in [(&[][..], 7.0f32), (&["D=-300"][..], -300.0)] {
            let out =
                spu_tests::run_in_mode(&launch, &machine, defines, &[], functional).out_f32("OUT");
            for (i, v) in out.iter().enumerate() {
                let want = 1.5 * i as f32 - 3.0 - 20.0 + 100.0 * d;
                assert_eq!(*v, want, "{name} {defines:?}: OUT[{i}]");
            }
        }
    }
}

/// clang reads a by-value struct through a copy of its address after a branch
/// (`mov.b64 %rd4, k_param_1; mov.u64 %rd2, %rd4; ld.param.u32 %r4,
/// [%rd2+4];`), also plus a constant: each field reads its own bytes,
/// everywhere. A use of the address the assembler cannot follow (an index
/// known only at run time) is refused at its line, never run on other bytes.
#[test]
fn a_struct_read_through_a_copy_of_its_address_reads_its_fields() {
    if spu_tests::clang::skip("a struct read through a copy of its address") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("copy.cu"),
        "struct R { int a; int b; int c; int d; };\n\
         extern \"C\" __global__ void copy(int k, R q, int *o) {\n\
         \x20   if (threadIdx.x < q.a) o[threadIdx.x] = k + q.b * 100 + q.c * 10 + q.d;\n\
         }\n",
    )
    .unwrap();
    let launch = dir.path().join("copy.spu");
    std::fs::write(
        &launch,
        "#include \"copy.cu\"\n.global .s32 O[32] = zeros;\n.launch grid(1) block(32);\n\
         .bind copy(5000, {.s32 A = 4, .s32 B = 1, .s32 C = 2, .s32 D = 3}, O);\n",
    )
    .unwrap();
    for (name, machine, functional) in spu_tests::every_mode() {
        let out = spu_tests::run_in_mode(&launch, &machine, &[], &[], functional).out_u32("O");
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, if i < 4 { 5123 } else { 0 }, "{name}: O[{i}]");
        }
    }
    std::fs::write(
        dir.path().join("index.cu"),
        "struct W { float w[4]; };\n\
         extern \"C\" __global__ void index(float k, W c, float *o) {\n\
         \x20   o[threadIdx.x] = k + c.w[threadIdx.x & 3];\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("index.spu"),
        "#include \"index.cu\"\n.global .f32 O[32] = zeros;\n.launch grid(1) block(32);\n\
         .bind index(100.0, {.f32 A = 1.5, .f32 B = 2.5, .f32 C = 3.5, .f32 D = 4.5}, O);\n",
    )
    .unwrap();
    let o = std::process::Command::new(spu_tests::binary("spu-asm"))
        .arg(dir.path().join("index.spu"))
        .arg("--check")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("holds the address of the struct parameter `index_param_1`, which this instruction cannot use"),
        "{e}"
    );
}

/// A file-scope `__shared__` array and a `static __shared__` one in a device
/// function (clang declares both at module scope, `.visible .shared` and
/// `.shared`): each is the kernel's shared array, everywhere.
#[test]
fn module_scope_shared_arrays_are_the_kernels() {
    if spu_tests::clang::skip("module-scope shared arrays") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ms.cu"),
        "__shared__ int gs[64];\n\
         __device__ int part_sum(int v) {\n\
         \x20   static __shared__ int part[2];\n\
         \x20   if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;\n\
         \x20   __syncthreads();\n\
         \x20   return part[0] + part[1];\n\
         }\n\
         extern \"C\" __global__ void ms(int *o) {\n\
         \x20   gs[threadIdx.x] = threadIdx.x * 3;\n\
         \x20   __syncthreads();\n\
         \x20   o[threadIdx.x] = gs[63 - threadIdx.x] + part_sum(threadIdx.x);\n\
         }\n",
    )
    .unwrap();
    let launch = dir.path().join("ms.spu");
    std::fs::write(
        &launch,
        "#include \"ms.cu\"\n.global .s32 O[64] = zeros;\n.launch grid(1) block(64);\n.bind ms(O);\n",
    )
    .unwrap();
    for (name, machine, functional) in spu_tests::every_mode() {
        let out = spu_tests::run_in_mode(&launch, &machine, &[], &[], functional).out_u32("O");
        for (i, v) in out.iter().enumerate() {
            // Lanes 0 and 32 write 0 and 32 into `part`.
            assert_eq!(*v, (63 - i as u32) * 3 + 32, "{name}: O[{i}]");
        }
    }
}
