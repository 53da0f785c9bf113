//! PTX as clang writes it for a CUDA C file (`spu-asm k.cu`): `.file` after the
//! `.loc`s that name it, debug labels after a function's last `ret`, `xor.pred`
//! with a constant, `or.b64` of a local address, and `.iu` (from the CUDA header's
//! `spu_is_iu()`), which in clang's PTX of a `.cu` file means that the Interface
//! Units run the kernel from its start, the checks following `%is_iu` branches.

fn assemble(name: &str, src: &str) -> Result<(spu_isa::format::Module, String), String> {
    match spu_asm::assemble_module(name, src) {
        Ok((m, w)) => Ok((m, w.render(name, src))),
        Err(d) => Err(d.render(name, src)),
    }
}

/// A kernel in clang's style around `body`, with `funcs` before it.
fn kernel(funcs: &str, body: &str, tail: &str) -> String {
    format!(
        ".version 3.2\n.target sm_35\n.address_size 64\n{funcs}\
.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\
\t.reg .pred \t%p<4>;\n\t.reg .b32 \t%r<16>;\n\t.reg .f32 \t%f<8>;\n\t.reg .b64 \t%rd<16>;\n\
{body}\tret;\n}}\n{tail}"
    )
}

#[test]
fn file_after_its_locs_gives_the_line_table() {
    let src = kernel(
        "",
        "\t.loc\t1 4 3\n\tmov.u32 \t%r1, %tid.x;\n",
        "\t.section\t.debug_loc\t{\t}\n\t.file\t1 \"./k.cu\"\n",
    );
    let (m, _) = assemble("k.cu.ptx", &src).unwrap();
    assert!(
        m.lines.files.iter().any(|f| f == "./k.cu"),
        "{:?}",
        m.lines.files
    );
    assert!(m.lines.locs.iter().any(|l| l.line == 4 && l.col == 3));
    // An index no `.file` declares anywhere is still an error.
    let bad = kernel(
        "",
        "\t.loc\t2 4 3\n\tmov.u32 \t%r1, %tid.x;\n",
        "\t.file\t1 \"./k.cu\"\n",
    );
    let e = assemble("k.ptx", &bad).unwrap_err();
    assert!(
        e.contains("`.loc` names file 2, which no `.file` declares"),
        "{e}"
    );
}

const FUNC: &str = ".func  (.param .b32 func_retval0) f(\n\t.param .b32 f_param_0\n)\n{\n\
\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<4>;\n\
\tld.param.u32 \t%r1, [f_param_0];\n\tsetp.eq.s32 \t%p1, %r1, 0;\n\t@%p1 bra \tTARGET;\n\
\tst.param.b32 \t[func_retval0+0], %r1;\n\tret;\nLtmp1:\nLfunc_end0:\n}\n";

const CALL: &str = "\tmov.u32 \t%r1, %tid.x;\n\t{ // callseq 0, 0\n\t.reg .b32 temp_param_reg;\n\
\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], %r1;\n\t.param .b32 retval0;\n\
\tcall.uni (retval0), \n\tf, \n\t(\n\tparam0\n\t);\n\tld.param.b32 \t%r2, [retval0+0];\n\
\t} // callseq 0\n";

#[test]
fn labels_after_a_functions_last_ret_are_allowed_unless_a_branch_targets_them() {
    // The branch targets a label inside: fine.
    let inside = FUNC
        .replace("TARGET;", "Lin;")
        .replace("\tst.param.b32", "Lin:\n\tst.param.b32");
    assemble("k.ptx", &kernel(&inside, CALL, "")).unwrap();
    // A branch to a label after the last `ret` runs past the end.
    let past = FUNC.replace("TARGET;", "Lfunc_end0;");
    let e = assemble("k.ptx", &kernel(&past, CALL, "")).unwrap_err();
    assert!(
        e.contains("device function `f` can run past its end"),
        "{e}"
    );
}

#[test]
fn xor_pred_with_a_constant_is_a_negation() {
    let body = "\tmov.u32 \t%r1, %tid.x;\n\tsetp.lt.u32 \t%p1, %r1, 3;\n\txor.pred \t%p2, %p1, -1;\n\
\tand.pred \t%p3, %p2, 1;\n\tselp.u32 \t%r2, 1, 0, %p3;\n";
    let (m, _) = assemble("k.ptx", &kernel("", body, "")).unwrap();
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    assert!(text.contains("not.pred"), "{text}");
    assert!(text.contains("mov.pred"), "{text}");
}

#[test]
fn or_of_a_local_address_is_an_offset() {
    let body = "\t.local .align 8 .b8 \t__local_depot0[16];\n\t.reg .b64 \t%SP;\n\t.reg .b64 \t%SPL;\n\
\tmov.u64 \t%SPL, __local_depot0;\n\tcvta.local.u64 \t%SP, %SPL;\n\tadd.u64 \t%rd1, %SP, 0;\n\
\tmov.f32 \t%f1, 0f3F800000;\n\tst.local.f32 \t[%rd1+4], %f1;\n\tor.b64 \t%rd2, %rd1, 4;\n\
\tld.f32 \t%f2, [%rd2];\n";
    let (m, _) = assemble("k.ptx", &kernel("", body, "")).unwrap();
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    assert!(text.contains("ld.local.f32"), "{text}");
}

/// A kernel whose IU branch (taken when `%is_iu` is 1) is integer code and whose
/// SM code uses the FPU.
fn iu_kernel() -> String {
    kernel(
        "",
        "\tld.param.u64 \t%rd1, [k_param_0];\n\tcvta.to.global.u64 \t%rd2, %rd1;\n\
\t// begin inline asm\n\t.iu;\n\tmov.u32 %r2, %is_iu;\n\t// end inline asm\n\
\tsetp.eq.s32 \t%p1, %r2, 0;\n\t@%p1 bra \tLBB0_2;\n\
\tmov.u32 \t%r3, %iudir;\n\tst.global.u32 \t[%rd2], %r3;\n\tret;\nLBB0_2:\n\
\tmov.u32 \t%r4, %tid.x;\n\tcvt.rn.f32.u32 \t%f1, %r4;\n\tadd.f32 \t%f2, %f1, %f1;\n\
\tst.global.f32 \t[%rd2+4], %f2;\n",
        "",
    )
}

#[test]
fn iu_in_clangs_ptx_starts_the_ius_at_the_kernels_start() {
    let (m, warnings) = assemble("k.cu.ptx", &iu_kernel()).unwrap();
    assert_eq!(m.iu_entry, Some(0));
    // The SM branch's FPU work is not the IUs': no warning.
    assert!(
        !warnings.contains("Interface Units may reach"),
        "{warnings}"
    );
    // Without the `%is_iu` test the IUs would reach the FPU code.
    let blind = iu_kernel().replace(
        "\t@%p1 bra \tLBB0_2;\n",
        "\t@%p1 bra \tLBB0_2;\n\tbra.uni \tLBB0_2;\n",
    );
    let (_, warnings) = assemble("k.cu.ptx", &blind).unwrap();
    assert!(
        warnings.contains("Interface Units may reach `cvt"),
        "{warnings}"
    );
    // In a hand-written PTX file `.iu` starts an IU section where it stands.
    let e = assemble("k.ptx", &iu_kernel()).map(|(m, _)| m.iu_entry);
    assert_ne!(e, Ok(Some(0)));
}
