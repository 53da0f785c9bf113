//! PTX forms that compilers write and that lower onto rows of the ISA table:
//! immediate predicates (`mov.pred %p, 0`), loads and stores through registers
//! wider than the access (PTX: a store takes the low bits, a load extends by the
//! instruction's type), an `.extern .shared` array the kernel does not use (no size
//! needed), another entry of the file with a form that is not supported (a warning,
//! not a refusal). Each runs on the SPU, on `gtx480` and in `--functional`, against
//! results computed here.

use spu_emu::cli::session::run_file;
use spu_emu::{LoadOptions, Machine, RunControl};
use std::path::Path;

/// Every buffer's words after a run, by name.
type Buffers = Vec<(String, Vec<u32>)>;

/// The buffers after a run on each of the three configurations.
fn run_everywhere(path: &Path) -> Vec<(&'static str, Buffers)> {
    let gtx = spu_emu::machine::preset("gtx480").unwrap();
    [
        ("spu", Machine::default(), false),
        ("gtx480", gtx, false),
        ("functional", Machine::default(), true),
    ]
    .into_iter()
    .map(|(name, machine, functional)| {
        let control = RunControl {
            functional,
            ..RunControl::default()
        };
        let run = run_file(path, &machine, &LoadOptions::default(), control)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let memory = &run.image.memory;
        let bufs = memory
            .regions()
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.clone(), memory.buffer(i).to_vec()))
            .collect();
        (name, bufs)
    })
    .collect()
}

fn words(bufs: &[(String, Vec<u32>)], name: &str) -> Vec<u32> {
    bufs.iter()
        .find(|(n, _)| n == name)
        .map(|(_, w)| w.clone())
        .unwrap_or_else(|| panic!("no buffer `{name}`"))
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// nvcc 8's immediate predicates, and a device function and a second entry with
/// constant memory (not supported) that the launch does not use.
const PREDICATES: &str = "\
.version 5.0
.target sm_52
.address_size 64

.extern .shared .align 16 .b8 unused_smem[];

.visible .entry flags(
\t.param .u64 flags_param_0
)
{
\t.reg .pred \t%p<5>;
\t.reg .b32 \t%r<6>;
\t.reg .b64 \t%rd<4>;
\tld.param.u64 \t%rd1, [flags_param_0];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmov.u32 \t%r1, %tid.x;
\tmov.pred \t%p1, 0;
\tmov.pred \t%p2, 1;
\tsetp.lt.u32 \t%p3, %r1, 5;
\t@%p3 mov.pred \t%p1, 1;
\t@%p3 mov.pred \t%p2, 0;
\tselp.u32 \t%r2, 100, 0, %p1;
\tselp.u32 \t%r3, 10, 0, %p2;
\tadd.s32 \t%r4, %r2, %r3;
\tmul.wide.u32 \t%rd3, %r1, 4;
\tadd.s64 \t%rd3, %rd2, %rd3;
\tst.global.u32 \t[%rd3], %r4;
\tret;
}

.func  (.param .b32 func_retval0) unused_helper(
\t.param .b32 unused_helper_param_0
)
{
\t.reg .b32 \t%r<2>;
\tld.param.u32 \t%r1, [unused_helper_param_0];
\tst.param.b32 \t[func_retval0+0], %r1;
\tret;
}

.visible .entry spills(
\t.param .u64 spills_param_0
)
{
\t.const .align 4 .b8 \ttable[16];
\tret;
}
";

#[test]
fn immediate_predicates_and_an_unchosen_entry_with_constant_memory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "flags.ptx", PREDICATES);
    let launch = write(
        dir.path(),
        "flags.spu",
        "#include \"flags.ptx\"\n.global .u32 O[32] = zeros;\n.launch grid(1) block(32);\n.bind flags(O);\n",
    );
    let want: Vec<u32> = (0..32).map(|t| if t < 5 { 100 } else { 10 }).collect();
    for (name, bufs) in run_everywhere(&launch) {
        assert_eq!(words(&bufs, "O"), want, "{name}");
    }
    // The other entry's `.const` is a warning naming the kernel it is in.
    let kernel = spu_emu::read_kernel(&launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        kernel
            .warnings
            .contains("constant memory (`.const`) is not supported")
            && kernel
                .warnings
                .contains("in kernel `spills`, which is not assembled")
            && kernel.warnings.contains("the launch chose `flags`"),
        "{}",
        kernel.warnings
    );
}

/// clang's loads and stores of 8 to 32 bits through 64-bit registers.
const WIDE: &str = "\
.version 7.5
.target sm_52
.address_size 64

.visible .entry wide(
\t.param .u64 wide_param_0,
\t.param .u64 wide_param_1,
\t.param .u64 wide_param_2,
\t.param .u64 wide_param_3
)
{
\t.reg .b32 \t%r<3>;
\t.reg .b64 \t%rd<16>;
\tld.param.u64 \t%rd1, [wide_param_0];
\tld.param.u64 \t%rd2, [wide_param_1];
\tld.param.u64 \t%rd3, [wide_param_2];
\tld.param.u64 \t%rd12, [wide_param_3];
\tcvta.to.global.u64 \t%rd4, %rd1;
\tcvta.to.global.u64 \t%rd5, %rd2;
\tcvta.to.global.u64 \t%rd6, %rd3;
\tcvta.to.global.u64 \t%rd13, %rd12;
\tmov.u32 \t%r1, %tid.x;
\tcvt.u64.u32 \t%rd7, %r1;
\tadd.s64 \t%rd8, %rd4, %rd7;
\tld.global.s8 \t%rd9, [%rd8];
\tld.global.u8 \t%rd10, [%rd8];
\tshl.b64 \t%rd11, %rd7, 3;
\tadd.s64 \t%rd8, %rd5, %rd11;
\tst.global.u64 \t[%rd8], %rd9;
\tadd.s64 \t%rd8, %rd6, %rd11;
\tst.global.u64 \t[%rd8], %rd10;
\tshl.b64 \t%rd14, %rd7, 1;
\tadd.s64 \t%rd14, %rd13, %rd14;
\tst.global.u16 \t[%rd14], %rd9;
\tld.global.s16 \t%rd15, [%rd14];
\tst.global.u32 \t[%rd8], %rd15;
\tret;
}
";

#[test]
fn registers_wider_than_the_access_store_low_bits_and_load_extended() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "wide.ptx", WIDE);
    let launch = write(
        dir.path(),
        "wide.spu",
        "#include \"wide.ptx\"\n.global .u8 IN[8] = ramp(124, 1);\n.global .s64 S[8] = zeros;\n.global .u64 U[8] = zeros;\n.global .s16 H[8] = zeros;\n.launch grid(1) block(8);\n.bind wide(IN, S, U, H);\n",
    );
    let bytes: Vec<u8> = (124..132).collect();
    let pairs = |v: Vec<u64>| -> Vec<u32> {
        v.into_iter()
            .flat_map(|x| [x as u32, (x >> 32) as u32])
            .collect()
    };
    // S: the byte sign-extended to 64 bits.
    let s = pairs(bytes.iter().map(|&b| i64::from(b as i8) as u64).collect());
    // U: the byte zero-extended, then its low word overwritten by the 16-bit value
    // of the signed byte, loaded back sign-extended to 64 bits (its low 32 bits).
    let u = pairs(
        bytes
            .iter()
            .map(|&b| u64::from(i32::from(b as i8) as u32))
            .collect(),
    );
    // H: the low 16 bits of the sign-extended byte, two per word.
    let h: Vec<u32> = bytes
        .chunks(2)
        .map(|c| {
            let lo = i16::from(c[0] as i8) as u16;
            let hi = i16::from(c[1] as i8) as u16;
            u32::from(lo) | (u32::from(hi) << 16)
        })
        .collect();
    for (name, bufs) in run_everywhere(&launch) {
        assert_eq!(words(&bufs, "S"), s, "{name}");
        assert_eq!(words(&bufs, "U"), u, "{name}");
        assert_eq!(words(&bufs, "H"), h, "{name}");
    }
}

#[test]
fn a_pointer_parameter_without_a_launch_file_says_to_write_one() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = write(dir.path(), "wide.ptx", WIDE);
    let err = match spu_emu::read_kernel(&ptx) {
        Err(spu_emu::load::kernel::KernelError::Assembly { rendered, .. }) => rendered,
        other => panic!("{:?}", other.map(|k| k.module.name)),
    };
    assert!(
        err.contains("a kernel with pointer parameters needs a launch file: `wide_param_0`, `wide_param_1`, `wide_param_2`, `wide_param_3` are pointers")
            && err.contains(".bind wide(BUF, BUF, BUF, BUF);"),
        "{err}"
    );
    // The assembler alone still assembles it (its parameters become kernel
    // parameters), as a binary may be run with values given later.
    assert!(spu_asm::assemble_module("wide.ptx", WIDE).is_ok());
}

/// Module-scope arrays with initialiser lists, as nvcc writes its tables
/// (`__cudart_i2opi_f[24] = {...}` for `sinf`): each of type, name, list, element
/// count, bytes per element and the register that carries an element.
const LISTS: [(&str, &str, &str, u32, u32, &str); 6] = [
    (
        "b8",
        "i2opi",
        "65, 144, 67, 60, 153, 149, 98, 219",
        8,
        1,
        "%rs1",
    ),
    ("s32", "ts32", "-1, 2, -2147483648, 2147483647", 5, 4, "%r5"),
    (
        "f32",
        "tf32",
        "0f3F800000, 0fBFC00000, 0f7F7FFFFF, 0f7F800000, 0fFF800000, 0f7FC00001",
        6,
        4,
        "%f1",
    ),
    (
        "f64",
        "tf64",
        "0d3FF0000000000000, 0dC000000000000000, 0dFFF0000000000000",
        3,
        8,
        "%fd1",
    ),
    (
        "u64",
        "tu64",
        "18446744073709551615, 9007199254740993",
        3,
        8,
        "%rd10",
    ),
    ("s16", "ts16", "-32768, 32767, -1", 4, 2, "%rs2"),
];

/// A kernel that copies element `tid` of each table (while in range) to the
/// buffer of its parameter.
fn lists_ptx() -> String {
    let mut s = String::from(".version 7.5\n.target sm_52\n.address_size 64\n\n");
    for (ty, name, list, n, size, _) in LISTS {
        s += &format!(".global .align {size} .{ty} {name}[{n}] = {{{list}}};\n");
    }
    let params: Vec<String> = (0..LISTS.len())
        .map(|i| format!("\t.param .u64 lists_param_{i}"))
        .collect();
    s += &format!(
        "\n.visible .entry lists(\n{}\n)\n{{\n\t.reg .pred \t%p<2>;\n\t.reg .b16 \t%rs<3>;\n\t.reg .b32 \t%r<6>;\n\t.reg .f32 \t%f<2>;\n\t.reg .f64 \t%fd<2>;\n\t.reg .b64 \t%rd<11>;\n\tmov.u32 \t%r1, %tid.x;\n",
        params.join(",\n")
    );
    for (i, (ty, name, _, n, size, reg)) in LISTS.iter().enumerate() {
        // `.b8` elements move through a 16-bit register as `.u8`.
        let ty = if *ty == "b8" { "u8" } else { ty };
        s += &format!(
            "\tsetp.lt.u32 \t%p1, %r1, {n};\n\tmov.u64 \t%rd2, {name};\n\tmul.wide.u32 \t%rd3, %r1, {size};\n\tadd.s64 \t%rd4, %rd2, %rd3;\n\tld.param.u64 \t%rd5, [lists_param_{i}];\n\tcvta.to.global.u64 \t%rd6, %rd5;\n\tadd.s64 \t%rd7, %rd6, %rd3;\n\t@%p1 ld.global.{ty} \t{reg}, [%rd4];\n\t@%p1 st.global.{ty} \t[%rd7], {reg};\n"
        );
    }
    s + "\tret;\n}\n"
}

#[test]
fn initialiser_lists_fill_module_arrays_of_every_type() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lists.ptx", &lists_ptx());
    let mut launch = String::from("#include \"lists.ptx\"\n");
    for (k, (ty, _, _, n, _, _)) in LISTS.iter().enumerate() {
        let ty = if *ty == "b8" { "u8" } else { ty };
        launch += &format!(".global .{ty} O{k}[{n}] = const(7);\n");
    }
    launch += ".launch grid(1) block(32);\n.bind lists(O0, O1, O2, O3, O4, O5);\n";
    let launch = write(dir.path(), "lists.spu", &launch);
    // The lists' values as little-endian words, the elements past a list zero.
    let pack = |bytes: Vec<u8>| -> Vec<u32> {
        bytes
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect()
    };
    let want: Vec<Vec<u32>> = vec![
        pack(vec![65, 144, 67, 60, 153, 149, 98, 219]),
        pack(
            [-1i32, 2, i32::MIN, i32::MAX, 0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        // Infinities and NaNs as nvcc writes `INFINITY` and `NAN`, bit for bit.
        pack(
            [
                1.0f32.to_bits(),
                (-1.5f32).to_bits(),
                f32::MAX.to_bits(),
                0x7F80_0000,
                0xFF80_0000,
                0x7FC0_0001,
            ]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        ),
        pack(
            [1.0f64, -2.0, f64::NEG_INFINITY]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        pack(
            [u64::MAX, (1u64 << 53) + 1, 0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        pack(
            [i16::MIN, i16::MAX, -1, 0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
    ];
    for (name, bufs) in run_everywhere(&launch) {
        for (k, w) in want.iter().enumerate() {
            assert_eq!(&words(&bufs, &format!("O{k}")), w, "{name}: O{k}");
        }
    }
}

/// A `.ptx` file run on its own runs one block of 32 threads, and says so with how
/// to choose another launch; through a launch file it says nothing of the kind.
#[test]
fn a_bare_ptx_run_warns_that_it_runs_one_block_of_32_threads() {
    let dir = tempfile::tempdir().unwrap();
    let bare = ".version 7.5\n.target sm_52\n.address_size 64\n\n.visible .entry one(\n\t.param .u32 one_param_0\n)\n{\n\tret;\n}\n";
    let ptx = write(dir.path(), "one.ptx", bare);
    let kernel = spu_emu::read_kernel(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let w = &kernel.warnings;
    assert!(
        w.contains("`one` runs as one block of 32 threads: a `.ptx` or `.cu` file run on its own has no launch")
            && w.contains("launched as `grid(1) block(32)`")
            && w.contains("`.launch grid(X, Y, Z) block(X, Y, Z);`")
            && w.contains("one.ptx:5:1"),
        "{w}"
    );
    assert_eq!(
        kernel.module.launch.block,
        [32, 1, 1].map(spu_isa::format::Expr::constant)
    );
    let launch = write(
        dir.path(),
        "one.spu",
        "#include \"one.ptx\"\n.launch grid(2) block(64);\n.bind one(3);\n",
    );
    let kernel = spu_emu::read_kernel(&launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !kernel.warnings.contains("runs as one block"),
        "{}",
        kernel.warnings
    );
    // The assembler on its own (no run) does not warn.
    let (_, warnings) =
        spu_asm::assemble_module_with("one.ptx", bare, &spu_asm::Options::default()).unwrap();
    assert_eq!(warnings.error_count(), 0);
    assert!(
        !warnings
            .render("one.ptx", bare)
            .contains("runs as one block")
    );
}

/// A scalar `__shared__ int s;`, as clang and nvcc write it (`.shared .align 4 .u32
/// name;`, no dimension): an array of one, shared by the block.
const SCALAR_SHARED: &str = "\
.version 7.0
.target sm_52
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.reg .pred %p<2>;
	// __shared__ int s; one thread stores, all read after the barrier.
	.shared .align 4 .u32 _ZZ1kE1s;
	mov.u32 %r1, %tid.x;
	setp.ne.s32 %p1, %r1, 0;
	@%p1 bra WAIT;
	mov.u32 %r2, 1234;
	st.shared.u32 [_ZZ1kE1s], %r2;
WAIT:
	bar.sync 0;
	ld.shared.u32 %r3, [_ZZ1kE1s];
	add.s32 %r3, %r3, %r1;
	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd2, %rd2, %rd3;
	st.global.u32 [%rd2], %r3;
	ret;
}
";

#[test]
fn a_scalar_shared_variable_is_an_array_of_one() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "scalar.ptx", SCALAR_SHARED);
    let launch = write(
        dir.path(),
        "scalar.spu",
        "#include \"scalar.ptx\"\n.global .u32 OUT[64] = zeros;\n.launch grid(1) block(64);\n.bind k(OUT);\n",
    );
    let want: Vec<u32> = (0..64).map(|t| 1234 + t).collect();
    for (name, bufs) in run_everywhere(&launch) {
        assert_eq!(words(&bufs, "OUT"), want, "{name}");
    }
}

/// A scalar module variable holds an infinity or a NaN bit for bit
/// (`__device__ float m = -INFINITY;` in nvcc's PTX).
#[test]
fn a_scalar_module_variable_holds_an_infinity_or_nan_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.ptx",
        ".version 7.0
.target sm_52
.address_size 64
.global .align 4 .f32 ninf = 0fFF800000;
.global .align 8 .f64 dnan = 0d7FF8000000000001;
.visible .entry s(.param .u64 s_param_0, .param .u64 s_param_1)
{
\t.reg .f32 \t%f<2>;
\t.reg .f64 \t%fd<2>;
\t.reg .b64 \t%rd<6>;
\tld.param.u64 \t%rd1, [s_param_0];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tld.global.f32 \t%f1, [ninf];
\tst.global.f32 \t[%rd2], %f1;
\tld.param.u64 \t%rd3, [s_param_1];
\tcvta.to.global.u64 \t%rd4, %rd3;
\tld.global.f64 \t%fd1, [dnan];
\tst.global.f64 \t[%rd4], %fd1;
\tret;
}
",
    );
    let launch = write(
        dir.path(),
        "s.spu",
        "#include \"s.ptx\"\n.global .f32 A[1] = zeros;\n.global .f64 B[1] = zeros;\n.launch grid(1) block(32);\n.bind s(A, B);\n",
    );
    for (name, bufs) in run_everywhere(&launch) {
        assert_eq!(words(&bufs, "A"), [0xFF80_0000], "{name}");
        assert_eq!(words(&bufs, "B"), [1, 0x7FF8_0000], "{name}");
    }
}
