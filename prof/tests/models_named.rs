//! Which model priced what, and which key of which file is to blame: `--compare`
//! never applies `--model` silently to a file priced already, and says so when it
//! compares runs priced with different models; an overflow names the keys the
//! model really has, each with the file (or built-in model) that sets it; and a
//! `-0.0` in a model is the 0 it means everywhere.

use std::path::Path;

mod common;
use common::{prof, text};

/// Runs `args`, expecting success; returns standard output and standard error.
fn ok(args: &[&str]) -> (String, String) {
    let out = prof(args);
    assert!(out.status.success(), "{args:?}:\n{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

/// Runs `args`, expecting exit 1; returns standard error.
fn fails(args: &[&str]) -> String {
    let out = prof(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

#[test]
fn compare_refuses_a_model_it_cannot_apply_and_says_when_models_differ() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |name: &str| d.join(name).display().to_string();
    let (stats, page, report, c64) = (p("s.json"), p("p.html"), p("r.json"), p("c64.json"));
    ok(&[
        "samples/vecadd.spu",
        "-q",
        "--stats",
        &stats,
        "--html",
        &page,
        "--format",
        "json",
        "-o",
        &report,
    ]);
    ok(&[
        "--from-stats",
        &stats,
        "--model",
        "cyclops64",
        "--format",
        "json",
        "-o",
        &c64,
    ]);
    // Files priced with `default` cannot take `--model cyclops64`: each is named,
    // with the model it was priced with.
    for args in [
        vec!["--compare", &page, &page],
        vec!["--compare", &report, &report],
        vec!["--compare", &report, &stats],
        vec!["--compare", &stats, &page],
    ] {
        let mut args = args.clone();
        args.extend(["--model", "cyclops64"]);
        let err = fails(&args);
        let priced = if args[1] == stats { &args[2] } else { &args[1] };
        assert!(
            err.contains(&format!(
                "`{priced}` is already priced with model `default`, so `--model cyclops64` \
                 cannot apply to it"
            )),
            "{args:?}: {err}"
        );
    }
    // Statistics take the model; a file priced with the model given agrees with it.
    for args in [
        ["--compare", &stats, &stats, "--model", "cyclops64"],
        ["--compare", &c64, &stats, "--model", "cyclops64"],
        ["--compare", &report, &stats, "--model", "default"],
    ] {
        let (out, err) = ok(&args);
        assert!(!err.contains("warning"), "{args:?}: {err}");
        let model = args[4];
        assert_eq!(
            out.matches(&format!("(model `{model}`)")).count(),
            2,
            "{args:?}: {out}"
        );
    }
    // Runs priced with different models are compared with a warning saying so.
    for format in ["table", "json", "csv"] {
        let (_, err) = ok(&["--compare", &c64, &stats, "--format", format]);
        assert!(
            err.contains(&format!(
                "warning: A (`{c64}`) is priced with model `cyclops64` (as the file was priced) \
                 and B (`{stats}`) with model `default` (the default, as no `--model` was \
                 given): the ratios B / A compare the models as well as the runs"
            )),
            "{err}"
        );
    }
}

#[test]
fn an_overflow_names_the_real_keys_and_the_file_that_sets_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let engines = write(
        d,
        "engines.toml",
        "[model]\nkind = \"instruction-classes\"\nextends = \"cyclops64\"\n\
         [engine_pj]\nload = 1e308\nstore = 1e308\n",
    );
    let err = fails(&[
        "samples/stencil2d/stencil_pc.spu",
        "-q",
        "-D",
        "N=64",
        "-D",
        "K=64",
        "--boundary",
        "dma",
        "--model",
        &engines,
    ]);
    assert!(
        err.contains(&format!(
            "(keys `engine_pj.load` and `engine_pj.store` in `{engines}`)"
        )),
        "{err}"
    );
    assert!(!err.contains("engine_load_pj"), "{err}");
    // `cb_link_mm` comes from the built-in `wires`, not from the file.
    let wires = write(
        d,
        "wires.toml",
        "[model]\nextends = \"wires\"\n[wires]\npj_per_bit_mm = 1e308\n",
    );
    let err = fails(&["samples/vecadd.spu", "-q", "--model", &wires]);
    assert!(
        err.contains(&format!(
            "key `wires.pj_per_bit_mm` in `{wires}` and key `wires."
        )) && err.contains("in `wires` (built in))"),
        "{err}"
    );
}

#[test]
fn a_negative_zero_in_a_model_is_zero() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let classes = write(
        d,
        "classes.toml",
        "[model]\nkind = \"instruction-classes\"\nextends = \"cyclops64\"\n\
         [static_w]\nchip = -0.0\n",
    );
    let components = write(
        d,
        "components.toml",
        "[model]\nextends = \"default\"\n[leakage_w]\nsm = -0.0\niu = -0.0\ncb_per_kib = -0.0\n\
         uncore = -0.0\n[event_pj]\nFPUP = -0.0\n",
    );
    for model in [&classes, &components] {
        for format in ["table", "json", "csv"] {
            let (out, _) = ok(&[
                "samples/vecadd.spu",
                "-q",
                "--model",
                model,
                "--format",
                format,
            ]);
            assert!(!out.contains("-0"), "{model} {format}:\n{out}");
        }
    }
    let (out, _) = ok(&["samples/vecadd.spu", "-q", "--model", &classes]);
    assert!(
        out.contains("leakage 0.00 W") && out.contains("(0.0%)"),
        "{out}"
    );
}
