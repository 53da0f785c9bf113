//! Every diagnostic kind, rendered as the user sees it, from one fixture each.

mod support;

use std::path::Path;

fn render(path: &Path) -> String {
    let src = std::fs::read_to_string(path).expect("fixture is readable");
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("fixture.spu");
    match spu_asm::assemble(name, &src) {
        Ok((_, warnings)) => format!("assembled with warnings:\n{}", warnings.render(name, &src)),
        Err(d) => format!("{} error(s):\n{}", d.error_count(), d.render(name, &src)),
    }
}

#[test]
fn diagnostics_render_with_spans_and_help() {
    support::each_fixture("diagnostics", "spu", |path| {
        let out = render(path);
        assert!(
            out.contains("--> "),
            "every diagnostic points into the file:\n{out}"
        );
        insta::assert_snapshot!(out);
    });
}

#[test]
fn ptx_diagnostics_render_with_spans_and_help() {
    support::each_fixture("diagnostics", "ptx", |path| {
        let out = render(path);
        assert!(
            out.contains("--> "),
            "every diagnostic points into the file:\n{out}"
        );
        insta::assert_snapshot!(out);
    });
}

#[test]
fn three_independent_errors_are_all_reported() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/diagnostics/25_three_independent_errors.spu");
    let src = std::fs::read_to_string(path).unwrap();
    let diags = spu_asm::assemble("three.spu", &src).unwrap_err();
    assert_eq!(
        diags.error_count(),
        3,
        "{}",
        diags.render("three.spu", &src)
    );
    let messages: Vec<_> = diags.items.iter().map(|d| d.message.as_str()).collect();
    assert!(messages[0].contains("unknown instruction `ad.u32`"));
    assert!(messages[1].contains("undeclared register `%r9`"));
    assert!(messages[2].contains("undefined label `NOWHERE`"));
}

#[test]
fn warnings_alone_do_not_fail_assembly() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/diagnostics/14_shared_maybe_in_iu_code.spu");
    let src = std::fs::read_to_string(path).unwrap();
    let (_, warnings) = spu_asm::assemble("w.spu", &src).expect("warnings only");
    assert!(!warnings.has_errors() && !warnings.is_empty());
}
