//! Specs whose runs could not give what they ask for are refused when planning,
//! at the spec line: metrics a functional run does not report, and axis values
//! given twice (two runs that would be one).

use spu_sweep::Error;
use spu_sweep::plan::plan;
use spu_sweep::spec::Spec;
use std::path::Path;

/// The rendered problems of a spec that does not parse or plan.
fn refused(text: &str) -> String {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let err = match Spec::parse("spec.toml", text, &samples, "spec") {
        Err(e) => e,
        Ok(spec) => match plan(&spec, &[]) {
            Err(Error::Spec(e)) => e,
            Err(other) => panic!("not a spec error: {other}"),
            Ok(p) => panic!("spec planned into {} runs:\n{text}", p.runs.len()),
        },
    };
    err.rendered()
}

fn plans(text: &str) -> usize {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let spec = Spec::parse("spec.toml", text, &samples, "spec")
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    match plan(&spec, &[]) {
        Ok(p) => p.runs.len(),
        Err(Error::Spec(e)) => panic!("{}", e.rendered()),
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn functional_runs_refuse_metrics_only_timing_reports() {
    let base = "[base]\nkernel = \"vecadd.spu\"\nfunctional = true\n[[axis]]\nD.N = [256]\n";
    let r = refused(&format!(
        "metrics = [\"offchip.words\", \"energy.total_j\"]\n{base}"
    ));
    assert!(
        r.contains("spec.toml:1:")
            && r.contains("metric `energy.total_j`: functional runs do not report it"),
        "{r}"
    );
    assert!(!r.contains("`offchip.words`"), "{r}");
    let r = refused(&format!("metrics = [\"cycles\", \"energy.*\"]\n{base}"));
    assert!(
        r.contains("metric `cycles`") && r.contains("metric `energy.*`"),
        "{r}"
    );
    let plot = "[[plot]]\nname = \"p\"\nx = \"N\"\ny = \"energy.total_j\"\n";
    let r = refused(&format!("{base}{plot}"));
    assert!(
        r.contains("spec.toml:6:") && r.contains("plot `p` `energy.total_j`"),
        "{r}"
    );
    // Timing runs report them, and so do the timing runs of a mixed sweep.
    assert_eq!(
        plans(&format!(
            "metrics = [\"energy.total_j\"]\n{}",
            base.replace("functional = true\n", "")
        )),
        1
    );
    let mixed = "metrics = [\"energy.total_j\"]\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nfunctional = [true, false]\n";
    assert_eq!(plans(mixed), 2);
    assert_eq!(plans(&format!("metrics = [\"offchip.words\"]\n{base}")), 1);
}

#[test]
fn axis_values_given_twice_are_refused() {
    let base = "[base]\nkernel = \"vecadd.spu\"\n";
    let r = refused(&format!(
        "{base}[[axis]]\nlabel.case = [\"same\", \"same\"]\n"
    ));
    assert!(
        r.contains("spec.toml:4:") && r.contains("`label.case = same` twice"),
        "{r}"
    );
    let r = refused(&format!("{base}[[axis]]\nD.N = [64, 128,\n  64]\n"));
    assert!(
        r.contains("spec.toml:5:") && r.contains("`D.N = 64` twice"),
        "{r}"
    );
    // Zipped keys: a point is every key's value together.
    assert_eq!(
        plans(&format!(
            "{base}[[axis]]\nD.N = [64, 64]\nlabel.case = [\"a\", \"b\"]\n"
        )),
        2
    );
    let r = refused(&format!(
        "{base}[[axis]]\nD.N = [64, 64]\nlabel.case = [\"a\", \"a\"]\n"
    ));
    assert!(r.contains("`D.N = 64`, `label.case = a` twice"), "{r}");
    // Extra values, which join the axis's when enabled, must differ from them.
    let r = refused(&format!(
        "{base}[[axis]]\nD.N = [64, 128]\n[axis.extra.large]\nD.N = [4096, 128]\n"
    ));
    assert!(
        r.contains("spec.toml:6:") && r.contains("`D.N = 128` twice"),
        "{r}"
    );
    // One file named two ways is one value.
    let r = refused("[[axis]]\nkernel = [\"vecadd.spu\", \"./vecadd.spu\"]\n");
    assert!(
        r.contains("spec.toml:2:") && r.contains("`kernel = vecadd.spu` twice"),
        "{r}"
    );
}
