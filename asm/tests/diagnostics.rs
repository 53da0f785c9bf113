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

/// A launch file whose `#include` of the kernel fails, in every way it can, reports
/// that cause alone: not also a `.bind` (or `--entry`) of a kernel that is not
/// there, which only follows from it. A kernel that is simply misnamed still is.
#[test]
fn a_failed_include_is_reported_without_the_missing_kernel_it_causes() {
    const KERNEL: &str = ".visible .entry k(.param .u64 k_param_0)\n{\n    exit;\n}\n";
    let launch = |kernel: &str| {
        format!(
            "#include \"k.ptx\"\n.global .u32 X[4] = 0;\n.launch grid(1) block(4);\n.bind {kernel}(X);\n"
        )
    };
    let broken_entry = KERNEL.replace(".entry", ".entryx");
    let cases: [(&str, Option<&str>, &str); 4] = [
        ("a missing file", None, "cannot include `k.ptx`"),
        (
            "an `#error`",
            Some("#error not ported\n"),
            "#error not ported",
        ),
        (
            "an `#include` that fails in it",
            Some("#include \"gone.ptx\"\n"),
            "cannot include `gone.ptx`",
        ),
        (
            "a kernel line that does not read",
            Some(&broken_entry),
            "unknown directive `.entryx`",
        ),
    ];
    for (what, included, cause) in cases {
        let mut read = |p: &Path| match included {
            Some(text) if p.ends_with("k.ptx") => Ok(text.to_string()),
            _ => Err("no such file".to_string()),
        };
        let src = launch("k");
        let diags = spu_asm::assemble_with("launch.spu", &src, &mut read).unwrap_err();
        let messages: Vec<_> = diags.items.iter().map(|d| d.message.as_str()).collect();
        assert!(
            messages.iter().any(|m| m.contains(cause)),
            "{what}: {messages:?}"
        );
        assert!(
            !messages.iter().any(|m| m.contains("no kernel")),
            "{what}: the cause alone, not its consequence: {messages:?}"
        );
        let options = spu_asm::Options {
            entry: Some("k".into()),
            ..spu_asm::Options::default()
        };
        let diags = spu_asm::assemble_with_options("launch.spu", &launch("k"), &mut read, &options)
            .unwrap_err();
        assert!(
            !diags.items.iter().any(|d| d.message.contains("no kernel")),
            "{what} with --entry: {:?}",
            diags.items
        );
    }
    // An include that works and a `.bind` of a kernel it does not define.
    let mut read = |_: &Path| Ok(KERNEL.to_string());
    let diags = spu_asm::assemble_with("launch.spu", &launch("kk"), &mut read).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{:?}", diags.items);
    assert!(
        diags.items[0]
            .message
            .contains("`.bind` names `kk`, but no kernel has that name"),
        "{:?}",
        diags.items
    );
}
