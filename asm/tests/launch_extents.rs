//! `.launch iu(T)` and `.launch shared(BYTES)` known at assembly time are held to
//! the limits no machine exceeds (the machine table's, which spu-emu applies too),
//! and an out-of-range literal there is reported once.

use spu_asm::{Severity, assemble};
use spu_machine::occupancy::{MAX_IU_THREADS, MAX_SHARED_KIB};

const IU_KERNEL: &str = ".global .u32 out[64] = zeros;\n.entry k {\n    .reg .u32 %r<4>;\n    exit;\n.iu\n    mov.u32 %r1, %tid.x;\n    mov.u32 %r2, out;\n    red.global.add.u32 [%r2], %r1;\n    exit;\n}\n";

const DYN_SHARED_KERNEL: &str = ".entry k {\n    .reg .u32 %r<4>;\n    .extern .shared .u32 dyn[];\n    mov.u32 %r1, dyn;\n    exit;\n}\n";

/// The errors' messages and the source text each one's span covers.
fn errors(src: &str) -> Vec<(String, String)> {
    match assemble("t.spu", src) {
        Ok(_) => Vec::new(),
        Err(diags) => diags
            .items
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| {
                let text = src.get(d.span.clone()).unwrap_or_default();
                (d.message.clone(), text.to_string())
            })
            .collect(),
    }
}

#[test]
fn iu_threads_no_machine_runs_are_refused_at_the_launch_line() {
    for (iu, message) in [
        ("0", "the IU thread count is 0"),
        ("-3", "the IU thread count is -3"),
        ("4097", "the IU thread count is 4097"),
        ("100000", "the IU thread count is 100000"),
    ] {
        let src = format!(".launch grid(1) block(32) iu({iu});\n{IU_KERNEL}");
        assert_eq!(
            errors(&src),
            vec![(message.to_string(), iu.to_string())],
            "iu({iu})"
        );
    }
    let most = format!(".launch grid(1) block(32) iu({MAX_IU_THREADS});\n{IU_KERNEL}");
    assert_eq!(errors(&most), vec![]);
    // Without IU code the count is unused, as spu-emu leaves it.
    let no_iu = ".launch grid(1) block(32) iu(0);\n.entry k {\n    exit;\n}\n";
    assert_eq!(errors(no_iu), vec![]);
}

#[test]
fn shared_bytes_no_machine_has_are_refused_at_the_launch_line() {
    let most = MAX_SHARED_KIB * 1024;
    let src = format!(
        ".launch grid(1) block(32) shared({});\n{DYN_SHARED_KERNEL}",
        most + 1
    );
    assert_eq!(
        errors(&src),
        vec![(
            format!("the dynamic shared size is {} bytes", most + 1),
            (most + 1).to_string()
        )]
    );
    let src = format!(".launch grid(1) block(32) shared(4294967296);\n{DYN_SHARED_KERNEL}");
    assert_eq!(errors(&src).len(), 1);
    let src = format!(".launch grid(1) block(32) shared({most});\n{DYN_SHARED_KERNEL}");
    assert_eq!(errors(&src), vec![]);
}

#[test]
fn an_out_of_range_launch_literal_is_reported_once() {
    for part in [
        "shared(100000000000000000000)",
        "iu(100000000000000000000) shared(64)",
        "shared(64) iu(100000000000000000000)",
        "grid(100000000000000000000) shared(64)",
    ] {
        let src = format!(".launch block(32) {part};\n{DYN_SHARED_KERNEL}");
        let errs = errors(&src);
        assert_eq!(errs.len(), 1, "{part}: {errs:?}");
        assert_eq!(errs[0].0, "integer literal is out of range", "{part}");
    }
}
