//! PTX syntax as nvcc writes it: header directives that end at the line end, a
//! linkage prefix, an entry signature whose parameters become kernel parameters,
//! `$` in labels and names, `.b32` registers and more virtual registers than exist.

const KERNEL: &str = "\
//
// Generated in the style of nvcc; written for this test.
//

.version 7.8
.target sm_52
.address_size 64

\t// .globl\tscale
.visible .entry scale(
\t.param .u32 scale_param_0,
\t.param .f32 scale_param_1
)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<200>;
\t.reg .f32 \t%f<4>;

\tld.param.u32 \t%r1, [scale_param_0];
\tld.param.f32 \t%f1, [scale_param_1];
\tmov.u32 \t%r2, %tid.x;
\tsetp.ge.u32 \t%p1, %r2, %r1;
\t@%p1 bra \t$L__BB0_2;
\tcvt.rn.f32.u32 \t%f2, %r2;
\tmul.f32 \t%f3, %f2, %f1;

$L__BB0_2:
\tret;

}
";

#[test]
fn nvcc_style_header_signature_and_labels_assemble() {
    let (module, warnings) = spu_asm::assemble_module("scale.ptx", KERNEL)
        .unwrap_or_else(|d| panic!("{}", d.render("scale.ptx", KERNEL)));
    assert!(
        warnings.is_empty(),
        "{}",
        warnings.render("scale.ptx", KERNEL)
    );
    assert_eq!(module.name, "scale");
    let params: Vec<&str> = module.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(params, ["scale_param_0", "scale_param_1"]);
    assert!(module.labels.iter().any(|l| l.name == "$L__BB0_2"));
    // 200 declared registers do not fit, so they were allocated.
    assert!(module.general_reg_count() < 16);
}

#[test]
fn an_unsupported_address_size_is_named() {
    let src = KERNEL.replace(".address_size 64", ".address_size 16");
    let d = spu_asm::assemble_module("scale.ptx", &src).unwrap_err();
    let text = d.render("scale.ptx", &src);
    assert!(
        text.contains("`.address_size 16` is not supported"),
        "{text}"
    );
}
