//! The register allocator on kernels with more virtual registers and predicates
//! than physical ones: values live across a loop and a divergent branch, chains of
//! short-lived values, vector loads into scattered registers, and a disassembly
//! that re-assembles to the same code. Results are checked against a reference
//! computed here.

use spu_emu::Machine;
use std::fmt::Write;

const THREADS: u32 = 64;

/// 200 chained values, 60 values live across a loop with a divergent branch, 20
/// short-lived predicates and four loads into registers declared apart (one `.v4`
/// load when `vector`: the allocator routes it through an aligned group).
fn kernel(vector: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, ".global .u32 in[{}] = ramp(0, 1);", 4 * THREADS);
    let _ = writeln!(s, ".global .u32 out[{THREADS}] = zeros;");
    let _ = writeln!(s, ".launch grid(1, 1) block({THREADS});");
    s.push_str(".entry pressure {\n");
    s.push_str(
        "    .reg .u32 %t, %acc, %k, %addr;\n    .reg .u32 %v<200>;\n    .reg .u32 %w<60>;\n",
    );
    s.push_str("    .reg .u32 %x3;\n    .reg .u32 %x1;\n    .reg .u32 %x0;\n    .reg .u32 %x2;\n");
    s.push_str("    .reg .pred %odd, %again;\n    .reg .pred %q<20>;\n");
    s.push_str("    mov.u32 %t, %tid.x;\n    mov.u32 %acc, 0;\n    mov.u32 %k, 0;\n");
    for i in 0..60 {
        let _ = writeln!(s, "    add.u32 %w{i}, %t, {i};");
    }
    s.push_str("    and.b32 %addr, %t, 1;\n    setp.ne.u32 %odd, %addr, 0;\nLOOP:\n");
    s.push_str("    add.u32 %v0, %t, %k;\n");
    for i in 1..200 {
        let _ = writeln!(s, "    add.u32 %v{i}, %v{}, {i};", i - 1);
    }
    s.push_str("    @%odd bra ODD;\n    add.u32 %acc, %acc, %v199;\n    bra.uni JOIN;\nODD:\n");
    s.push_str("    sub.u32 %acc, %acc, %v199;\nJOIN:\n");
    s.push_str("    add.u32 %k, %k, 1;\n    setp.lt.u32 %again, %k, 3;\n    @%again bra LOOP;\n");
    for i in 0..60 {
        let _ = writeln!(s, "    add.u32 %acc, %acc, %w{i};");
    }
    for i in 0..20 {
        let _ = writeln!(s, "    setp.eq.u32 %q{i}, %t, {i};");
        let _ = writeln!(s, "    @%q{i} add.u32 %acc, %acc, {i};");
    }
    s.push_str("    mov.u32 %addr, in;\n    shl.b32 %k, %t, 4;\n    add.u32 %addr, %addr, %k;\n");
    if vector {
        s.push_str("    ld.global.v4.u32 {%x3, %x1, %x0, %x2}, [%addr];\n");
    } else {
        s.push_str("    ld.global.u32 %x3, [%addr];\n    ld.global.u32 %x1, [%addr+4];\n");
        s.push_str("    ld.global.u32 %x0, [%addr+8];\n    ld.global.u32 %x2, [%addr+12];\n");
    }
    s.push_str("    add.u32 %acc, %acc, %x3;\n    add.u32 %acc, %acc, %x1;\n");
    s.push_str("    add.u32 %acc, %acc, %x0;\n    add.u32 %acc, %acc, %x2;\n");
    s.push_str("    mov.u32 %addr, out;\n    shl.b32 %k, %t, 2;\n    add.u32 %addr, %addr, %k;\n");
    s.push_str("    st.global.u32 [%addr], %acc;\n    exit;\n}\n");
    s
}

fn reference(t: u32) -> u32 {
    let mut acc = 0u32;
    for k in 0..3 {
        let v = t + k + 19_900;
        acc = if t % 2 == 1 {
            acc.wrapping_sub(v)
        } else {
            acc.wrapping_add(v)
        };
    }
    acc = acc.wrapping_add(60 * t + 1770);
    if t < 20 {
        acc = acc.wrapping_add(t);
    }
    acc.wrapping_add(16 * t + 6)
}

fn run(src: &str) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pressure.spu");
    std::fs::write(&path, src).unwrap();
    spu_tests::run_with(&path, &Machine::default(), &[]).out_u32("out")
}

#[test]
fn kernels_with_more_virtual_registers_than_physical_ones_run_correctly() {
    let src = kernel(false);
    let (module, _) = spu_asm::assemble_module("pressure.spu", &src)
        .unwrap_or_else(|d| panic!("{}", d.render("pressure.spu", &src)));
    assert!(module.general_reg_count() <= 128);
    assert!(module.pred_reg_count() <= 16);
    let out = run(&src);
    for t in 0..THREADS {
        assert_eq!(out[t as usize], reference(t), "thread {t}");
    }
}

#[test]
fn an_allocated_kernel_disassembles_to_source_that_assembles_identically() {
    let src = kernel(true);
    let (module, _) = spu_asm::assemble_module("pressure.spu", &src).unwrap();
    let text = spu_asm::disasm::disassemble(&module, Default::default());
    let (again, _) = spu_asm::assemble_module("again.spu", &text)
        .unwrap_or_else(|d| panic!("{}\n{text}", d.render("again.spu", &text)));
    assert_eq!(module.code, again.code);
    assert_eq!(module.regs, again.regs);
}

#[test]
fn immediates_the_machine_cannot_hold_are_materialised() {
    let src = "\
.global .u32 out[4] = zeros;
.launch grid(1, 1) block(1);
.entry wide {
    .reg .u32 %r<4>;
    .reg .f32 %f<4>;
    mov.u32 %r0, out;
    mov.u32 %r1, 5;
    add.u32 %r2, %r1, 100000;          // 17 bits: into a temporary
    st.global.u32 [%r0], %r2;
    mad.lo.u32 %r2, %r1, 3, 70000;     // c must be a register
    st.global.u32 [%r0+4], %r2;
    mov.f32 %f0, 2.0;
    fma.rn.f32 %f1, %f0, 3.0, 0.333;   // 0.333 has low pattern bits
    st.global.f32 [%r0+8], %f1;
    exit;
}
";
    let out = run(src);
    assert_eq!(out[0], 100_005);
    assert_eq!(out[1], 70_015);
    assert_eq!(out[2], 2.0f32.mul_add(3.0, 0.333).to_bits());
}

#[test]
fn symbol_plus_offset_addresses_and_ptx_barriers_run() {
    let src = "\
.global .u32 out[2] = zeros;
.launch grid(1, 1) block(2);
.entry symbols {
    .reg .u32 %r<4>;
    .reg .pred %p0;
    .shared .align 4 .b32 sh[2];
    mov.u32 %r0, %tid.x;
    add.u32 %r1, %r0, 40;
    setp.eq.u32 %p0, %r0, 0;
    @%p0 st.shared.u32 [sh], %r1;
    @!%p0 st.shared.u32 [sh+4], %r1;
    bar.sync 0;
    ld.shared.u32 %r2, [sh+4];
    ld.shared.u32 %r3, [sh];
    add.u32 %r2, %r2, %r3;
    @%p0 st.global.u32 [out], %r2;
    @!%p0 st.global.u32 [out+4], %r3;
    exit;
}
";
    let out = run(src);
    assert_eq!(out, [81, 40]);
}
