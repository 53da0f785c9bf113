//! Spec parsing and planning through the library: every bad spec gets an error
//! naming the key and its line; plans follow the axes, zips, extras and exclusions;
//! run ids change exactly when something that determines the results changes.

use spu_sweep::Error;
use spu_sweep::diag::SpecError;
use spu_sweep::plan::{Plan, plan};
use spu_sweep::spec::Spec;
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples")
}

fn parse(text: &str) -> Result<Spec, SpecError> {
    Spec::parse("spec.toml", text, &samples(), "spec")
}

/// The problems of a spec that does not parse or plan: `(line, message)`.
fn problems(text: &str) -> Vec<(usize, String)> {
    let err = match parse(text) {
        Err(e) => e,
        Ok(spec) => match plan(&spec, &[]) {
            Err(Error::Spec(e)) => e,
            Err(other) => panic!("not a spec error: {other}"),
            Ok(p) => panic!("spec planned into {} runs:\n{text}", p.runs.len()),
        },
    };
    let rendered = err.rendered();
    err.problems
        .iter()
        .map(|p| {
            let line = p.span.as_ref().map_or(0, |s| err.line_of(s.start));
            if line > 0 {
                assert!(
                    rendered.contains(&format!("spec.toml:{line}:")),
                    "rendered errors lack line {line}:\n{rendered}"
                );
            }
            (line, p.message.clone())
        })
        .collect()
}

fn expect_problem(text: &str, line: usize, needle: &str) {
    let ps = problems(text);
    assert!(
        ps.iter().any(|(l, m)| *l == line && m.contains(needle)),
        "expected `{needle}` at line {line}, got {ps:?}"
    );
}

fn planned(text: &str, extras: &[&str]) -> Plan {
    let spec = parse(text).unwrap_or_else(|e| panic!("{}", e.rendered()));
    let extras: Vec<String> = extras.iter().map(|s| s.to_string()).collect();
    plan(&spec, &extras).unwrap_or_else(|e| match e {
        Error::Spec(s) => panic!("{}", s.rendered()),
        other => panic!("{other}"),
    })
}

#[test]
fn bad_specs_name_the_key_and_line() {
    let base = "[base]\nkernel = \"vecadd.spu\"\n";
    // Unknown keys, at the top, in [base], in an axis and in a plot.
    expect_problem(&format!("nmae = \"x\"\n{base}"), 1, "unknown key `nmae`");
    expect_problem(
        &format!("{base}machne = \"spu-4x4\"\n"),
        3,
        "unknown key `machne`",
    );
    expect_problem(
        &format!("{base}[[axis]]\nmachnie = [\"spu-4x4\"]\n"),
        4,
        "unknown key `machnie`",
    );
    expect_problem(
        &format!("{base}[[axis]]\nD.N = [1]\n[[plot]]\nx = \"N\"\ny = \"cycles\"\ncolour = 1\n"),
        8,
        "unknown key `colour`",
    );
    // Summary tables: unknown keys, missing parts, unknown columns, bad formats.
    let axis = "[[axis]]\nD.N = [1]\n";
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\ncolour = 1\n"
        ),
        10,
        "unknown key `colour`",
    );
    expect_problem(
        &format!("{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\ncolumns = \"N\"\n"),
        7,
        "need a `value`",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"machine\"\n"
        ),
        5,
        "`machine` is not a column",
    );
    // Values a table names are checked against the planned runs (before any run).
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\nrelative_to = \"7\"\nformat = \"ratio\"\n"
        ),
        5,
        "`relative_to = \"7\"` is not a value of `N`",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\nmean = [\"999\"]\n"
        ),
        5,
        "`mean` names row `999`",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = [[\"all\", \"cycles\"]]\ncolumns = \"N\"\nmean = [\"al\"]\n"
        ),
        5,
        "`mean` names row `al`",
    );
    // Metric names are checked against every key a run can report (before any run).
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"no.such.metric\"\ncolumns = \"N\"\n"
        ),
        5,
        "table `t`: `no.such.metric` is not a metric",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = [[\"all\", \"cycles\", \"offchip.lod_words\"]]\ncolumns = \"N\"\n"
        ),
        5,
        "`offchip.lod_words` is not a metric",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\nper = \"energy.totl_j\"\n"
        ),
        5,
        "`energy.totl_j` is not a metric",
    );
    expect_problem(
        &format!("{base}{axis}[[plot]]\nname = \"p\"\nx = \"zz\"\ny = \"cycles\"\n"),
        5,
        "plot `p`: `x = \"zz\"` is neither a column nor a metric (the columns are `N`)",
    );
    // A sweep without axes says it has no columns, not "a column ()".
    expect_problem(
        &format!("{base}[[plot]]\nname = \"p\"\nx = \"zz\"\ny = \"cycles\"\n"),
        3,
        "plot `p`: `x = \"zz\"` is neither a column nor a metric (this sweep has no axis columns)",
    );
    expect_problem(
        &format!("{base}{axis}[[plot]]\nname = \"p\"\nx = \"N\"\ny = \"counters.NOPE\"\n"),
        5,
        "plot `p`: `y = \"counters.NOPE\"` is not a metric",
    );
    expect_problem(
        &format!("metrics = [\"cycles\", \"cyles\"]\n{base}"),
        1,
        "`cyles` is not a metric",
    );
    expect_problem(
        &format!("metrics = [\"cache.*\"]\n{base}"),
        1,
        "metric pattern `cache.*` matches no metric",
    );
    let typo = problems(&format!("metrics = [\"offchip.lod_words\"]\n{base}"));
    let rendered = format!("{typo:?}");
    assert!(rendered.contains("offchip.lod_words"), "{rendered}");
    // Every kind of key that exists plans: stats, breakdown, counters, machine
    // keys, open energy components, patterns, and a plot whose x is a metric.
    planned(
        &format!(
            "metrics = [\"cycles\", \"caches.*\", \"caches.l1.hits\", \"occupancy.achieved\", \"counters.IDLE_COREP\", \"machine.cb.size_kib\", \"energy.components.DRAMP\", \"energy.components.*\", \"launch.grid.1\", \"offchip.words\"]\n{base}{axis}[[plot]]\nname = \"p\"\nx = \"offchip.words\"\ny = \"energy.total_j\"\n[[table]]\nname = \"t\"\nrows = [[\"all\", \"cycles\", \"blocksyncs.link\"]]\ncolumns = \"N\"\nper = \"energy.total_j\"\n"
        ),
        &[],
    );
    // A machine setting written as a string where the key takes a number.
    expect_problem(
        &format!("{base}[[axis]]\nset.\"cb.size_kib\" = [4, \"8\"]\n"),
        4,
        "machine setting `cb.size_kib` is given the string \"8\"",
    );
    expect_problem(
        &format!("{base}set.\"cb.size_kib\" = \"16\"\n"),
        3,
        "is given the string \"16\"",
    );
    planned(&format!("{base}set = [\"cb.size_kib=8\"]\n"), &[]);
    planned(
        &format!("{base}set.\"sm.scheduler_policy\" = \"gto\"\n"),
        &[],
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\nrelative_to = \"1\"\nformat = \"pct\"\n"
        ),
        11,
        "unknown table format `pct`",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\nformat = \"ratio\"\n"
        ),
        5,
        "needs `relative_to`",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"../t\"\nrows = \"N\"\nvalue = \"cycles\"\ncolumns = \"N\"\n"
        ),
        6,
        "plain file stem",
    );
    expect_problem(
        &format!(
            "{base}{axis}[[table]]\nname = \"t\"\nrows = [[\"only a label\"]]\ncolumns = \"N\"\n"
        ),
        7,
        "needs a label and at least one metric",
    );
    // Wrong types.
    expect_problem(
        &format!("timeout_s = \"soon\"\n{base}"),
        1,
        "`timeout_s` must be",
    );
    expect_problem(
        &format!("{base}[[axis]]\nD.N = 128\n"),
        4,
        "must be an array",
    );
    expect_problem(
        &format!("{base}[[axis]]\nD.N = [[1, 2]]\n"),
        4,
        "string, number or boolean",
    );
    // Zipped keys of different lengths.
    expect_problem(
        &format!("{base}[[axis]]\nD.N = [1, 2]\nD.K = [1, 2, 3]\n"),
        5,
        "has 3 values but `D.N` in the same axis has 2",
    );
    // Values checked against the machine table and the allowed choices.
    expect_problem(
        &format!("{base}[[axis]]\nset.\"cb.size_kb\" = [4]\n"),
        4,
        "unknown machine key",
    );
    expect_problem(
        &format!("{base}[[axis]]\nboundary = [\"iu\", \"dam\"]\n"),
        4,
        "`dam`",
    );
    expect_problem(
        &format!("{base}passes = \"both\"\n"),
        3,
        "`both` is not a valid `passes`",
    );
    expect_problem(
        "[base]\nset = [\"viu.spill\"]\nkernel = \"vecadd.spu\"\n",
        2,
        "not KEY=VALUE",
    );
    expect_problem(
        &format!("{base}label.sync = \"x\"\n"),
        3,
        "labels belong to axes",
    );
    expect_problem(&format!("name = \"a/b\"\n{base}"), 1, "cannot name a sweep");
    // Files and presets, found while planning.
    expect_problem("[base]\nkernel = \"missing.spu\"\n", 2, "missing.spu");
    expect_problem(
        &format!("{base}[[axis]]\nmachine = [\"spu-4x4\", \"spu-5x5\"]\n"),
        4,
        "unknown machine preset `spu-5x5`",
    );
    expect_problem(&format!("model = \"nonesuch\"\n{base}"), 1, "nonesuch");
    // Exclusions and plots name columns.
    expect_problem(
        &format!("{base}[[axis]]\nD.N = [1, 2]\n[[exclude]]\nM = 1\n"),
        6,
        "`M` is not a column",
    );
    expect_problem(
        &format!("{base}[[axis]]\nD.N = [1]\n[[axis]]\nD.N = [2]\n"),
        6,
        "column `N` is used twice",
    );
    expect_problem(
        &format!("{base}[[plot]]\nx = \"N\"\n"),
        3,
        "needs both `x` and `y`",
    );
    // A TOML syntax error.
    expect_problem("[base\nkernel = 1\n", 1, "");
}

/// A column of the spec's own may not take the name of a column every sweep
/// has or of a metric: it would replace it, or stand beside it under its name.
#[test]
fn columns_may_not_take_the_names_of_built_in_columns_or_metrics() {
    let base = "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\n";
    for (key, taken) in [
        ("label.kernel", "a column every sweep has"),
        ("label.machine", "a column every sweep has"),
        ("label.cycles", "a metric's name"),
        ("label.\"energy.total_j\"", "a metric's name"),
        ("D.ipc", "a metric's name"),
    ] {
        expect_problem(&format!("{base}{key} = [\"a\", \"b\"]\n"), 4, taken);
    }
    // A machine setting is a metric only under `machine.`.
    let p = planned(
        &format!("{base}set.\"cb.size_kib\" = [4, 8]\nlabel.case = [\"a\", \"b\"]\n"),
        &[],
    );
    assert_eq!(p.runs.len(), 2);
}

#[test]
fn every_problem_of_a_file_is_reported_at_once() {
    let ps = problems(
        "nmae = 1\n[base]\nkernel = \"vecadd.spu\"\nbondary = \"iu\"\n[[axis]]\npasses = [\"fast\"]\n",
    );
    let lines: Vec<usize> = ps.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec![1, 4, 6], "{ps:?}");
}

#[test]
fn a_spec_without_kernel_is_refused() {
    let ps = problems("[[axis]]\nD.N = [1]\n");
    assert!(ps.iter().any(|(_, m)| m.contains("no kernel")), "{ps:?}");
}

const SWEEP: &str = r#"
[base]
kernel = "vecadd.spu"
set = ["memory.bandwidth_gbs=100"]

[[axis]]
machine = ["spu-4x4", "spu-4x4-dma"]

[[axis]]
label.size = ["small", "large"]
D.N = [256, 1024]
[axis.extra.huge]
D.N = [4096]
label.size = ["huge"]

[[exclude]]
machine = "spu-4x4-dma"
size = ["large", "huge"]
"#;

#[test]
fn plans_follow_axes_zips_extras_and_exclusions() {
    let p = planned(SWEEP, &[]);
    assert_eq!(p.columns, ["machine", "size", "N"]);
    let rows: Vec<Vec<&str>> = p
        .runs
        .iter()
        .map(|r| r.values.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["spu-4x4", "small", "256"],
            vec!["spu-4x4", "large", "1024"],
            vec!["spu-4x4-dma", "small", "256"],
        ]
    );
    let huge = planned(SWEEP, &["huge"]);
    assert_eq!(huge.runs.len(), 4);
    assert_eq!(huge.runs[2].values, ["spu-4x4", "huge", "4096"]);
    // Runs of the smaller plan keep their ids in the larger one.
    for r in &p.runs {
        assert!(
            huge.runs
                .iter()
                .any(|h| h.id == r.id && h.values == r.values)
        );
    }
    // The machine is resolved: preset, then `[base]` settings.
    let m = |run: &spu_sweep::plan::Run, key: &str| {
        run.machine
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim_matches('"').to_string())
            .unwrap_or_else(|| panic!("no `{key}`"))
    };
    assert_eq!(m(&p.runs[0], "boundary.kind"), "iu");
    assert_eq!(m(&p.runs[2], "boundary.kind"), "dma");
    assert_eq!(m(&p.runs[0], "memory.bandwidth_gbs"), "100.0");
    assert_eq!(p.runs[1].defines, [("N".to_string(), "1024".to_string())]);
    assert!(p.runs[0].kernel.is_absolute());
}

#[test]
fn unknown_extras_are_refused() {
    let spec = parse(SWEEP).unwrap();
    let e = plan(&spec, &["giant".to_string()]).unwrap_err().to_string();
    assert!(e.contains("`giant`") && e.contains("`huge`"), "{e}");
}

#[test]
fn run_ids_change_exactly_when_results_can() {
    let id = |text: &str| planned(text, &[]).runs[0].id.clone();
    let base = "[base]\nkernel = \"vecadd.spu\"\nD.N = 256\n";
    let a = id(base);
    assert_eq!(a.len(), 16);
    assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    // Same run written differently: a label, key order, a preset spelled as its settings.
    assert_eq!(id(&format!("{base}[[axis]]\nlabel.what = [\"x\"]\n")), a);
    assert_eq!(id("[base]\nD.N = 256\nkernel = \"vecadd.spu\"\n"), a);
    assert_eq!(id(&format!("{base}machine = \"spu-4x4\"\n")), a);
    assert_eq!(id(&format!("{base}set = [\"cb.size_kib=4\"]\n")), a);
    // Anything that can change results changes the id.
    let changed = [
        "[base]\nkernel = \"vecadd.spu\"\nD.N = 512\n".to_string(),
        "[base]\nkernel = \"reduction.spu\"\nD.N = 256\n".to_string(),
        format!("{base}machine = \"spu-4x4-cb16k\"\n"),
        format!("{base}set = [\"sm.schedulers=1\"]\n"),
        format!("{base}functional = true\n"),
        format!("{base}max_cycles = 1000000\n"),
        format!("{base}spin_limit = 1000\n"),
        format!("model = \"cyclops64\"\n{base}"),
    ];
    let mut ids = vec![a];
    for text in &changed {
        let other = id(text);
        assert!(!ids.contains(&other), "{text} kept an earlier id");
        ids.push(other);
    }
}

#[test]
fn run_ids_follow_kernel_bytes_not_paths() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("k.spu");
    std::fs::copy(samples().join("vecadd.spu"), &kernel).unwrap();
    let spec = "[base]\nkernel = \"k.spu\"\n";
    let id = || {
        let s = Spec::parse("s.toml", spec, dir.path(), "s").unwrap();
        plan(&s, &[]).unwrap().runs[0].id.clone()
    };
    let original = planned("[base]\nkernel = \"vecadd.spu\"\n", &[]).runs[0]
        .id
        .clone();
    assert_eq!(id(), original, "a copy of a kernel is the same kernel");
    let mut text = std::fs::read_to_string(&kernel).unwrap();
    text.push_str("// edited\n");
    std::fs::write(&kernel, text).unwrap();
    assert_ne!(id(), original, "an edited kernel is another kernel");
}

/// The example spec of `sweep/README.md` plans into the runs the text says.
#[test]
fn the_readme_example_plans_as_documented() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme.find("```toml\n").unwrap() + "```toml\n".len();
    let text = &readme[start..start + readme[start..].find("```").unwrap()];
    let mut spec = Spec::parse(
        "README.md",
        text,
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "x",
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered()));
    // The example names a sample outside its folder, as the README says to allow.
    assert!(readme.contains("--allow samples"));
    spec.allowed = vec![samples()];
    assert!(readme.contains("5 runs; with\n`--extra huge` it makes 9 minus 2 = 7"));
    assert_eq!(plan(&spec, &[]).unwrap().runs.len(), 5);
    let huge = plan(&spec, &["huge".to_string()]).unwrap();
    assert_eq!(huge.runs.len(), 7);
    assert_eq!(huge.columns, ["cb.size_kib", "case", "N"]);
}

/// A platform comparison sets kernel, machine and energy model together in one axis.
#[test]
fn machine_kernel_and_model_can_vary_together() {
    let p = planned(
        r#"
[[axis]]
label.platform = ["iu", "dma"]
machine = ["spu-4x4", "spu-4x4-dma"]
kernel = ["vecadd.spu", "reduction.spu"]
model = ["default", "cyclops64"]
"#,
        &[],
    );
    assert_eq!(p.columns, ["platform", "machine", "kernel", "model"]);
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.runs[0].model, "default");
    assert_eq!(p.runs[1].model, "cyclops64");
    assert_ne!(p.runs[0].model_sha256, p.runs[1].model_sha256);
}

/// A machine file with a preset's settings is that preset: same runs, same ids.
#[test]
fn a_machine_file_and_the_same_preset_are_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let preset =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../machine/machines/spu-4x4-cb16k.toml");
    std::fs::copy(preset, dir.path().join("mine.toml")).unwrap();
    std::fs::copy(samples().join("vecadd.spu"), dir.path().join("vecadd.spu")).unwrap();
    let spec = "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nmachine = [\"mine.toml\", \"spu-4x4-cb16k\", \"spu-4x4\"]\n";
    let s = Spec::parse("s.toml", spec, dir.path(), "s").unwrap();
    let p = plan(&s, &[]).unwrap();
    assert_eq!(p.runs[0].id, p.runs[1].id);
    assert_ne!(p.runs[0].id, p.runs[2].id);
    assert_eq!(p.unique_ids().len(), 2);
}

/// The problems of `text` as a spec in `dir` (a folder with files): `(line,
/// message)`, and the rendered report.
fn problems_in(dir: &Path, text: &str) -> (Vec<(usize, String)>, String) {
    let spec = match Spec::parse("spec.toml", text, dir, "spec") {
        Ok(s) => s,
        Err(e) => return (lines(&e), e.rendered()),
    };
    match plan(&spec, &[]) {
        Err(Error::Spec(e)) => (lines(&e), e.rendered()),
        Err(other) => panic!("not a spec error: {other}"),
        Ok(p) => panic!("spec planned into {} runs:\n{text}", p.runs.len()),
    }
}

fn lines(e: &SpecError) -> Vec<(usize, String)> {
    e.problems
        .iter()
        .map(|p| {
            (
                p.span.as_ref().map_or(0, |s| e.line_of(s.start)),
                p.message.clone(),
            )
        })
        .collect()
}

/// A `.cu` kernel is planned as `spu-emu k.cu` runs it (clang compiles it, and
/// only where clang is missing does the run fail), confined to the spec's folder
/// as other kernels are.
#[test]
fn a_cu_kernel_is_planned_inside_the_spec_folder() {
    let dir = tempfile::tempdir().unwrap();
    let spec_dir = dir.path().join("study");
    std::fs::create_dir(&spec_dir).unwrap();
    let cu = "extern \"C\" __global__ void k() { }\n";
    std::fs::write(spec_dir.join("k.cu"), cu).unwrap();
    std::fs::write(dir.path().join("out.cu"), cu).unwrap();
    let spec = Spec::parse("spec.toml", "[base]\nkernel = \"k.cu\"\n", &spec_dir, "s")
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let p = plan(&spec, &[]).unwrap_or_else(|e| match e {
        Error::Spec(s) => panic!("{}", s.rendered()),
        other => panic!("{other}"),
    });
    assert_eq!(p.runs.len(), 1);
    assert!(
        p.inputs
            .contains(&spec_dir.join("k.cu").canonicalize().unwrap()),
        "{:?}",
        p.inputs
    );
    let (ps, _) = problems_in(&spec_dir, "[base]\nkernel = \"../out.cu\"\n");
    assert!(
        ps.iter()
            .any(|(l, m)| *l == 2 && m.contains("is outside the spec's folder")),
        "{ps:?}"
    );
}

#[test]
fn a_spec_reads_only_source_files_in_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let spec_dir = dir.path().join("study");
    std::fs::create_dir(&spec_dir).unwrap();
    std::fs::copy(samples().join("vecadd.spu"), spec_dir.join("vecadd.spu")).unwrap();
    // A private file beside the spec's folder, whose lines the assembler would quote.
    std::fs::write(dir.path().join("secret.txt"), "password hunter2\n").unwrap();
    std::fs::write(dir.path().join("secret.spu"), "password hunter2\n").unwrap();
    std::fs::write(spec_dir.join("notes.txt"), "password hunter2\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.spu"), spec_dir.join("link.spu")).unwrap();
    let base = "[base]\nkernel = \"vecadd.spu\"\n";
    for (text, line, needle) in [
        (
            "[base]\nkernel = \"../secret.txt\"\n".to_string(),
            2,
            "a kernel must be a .spu, .ptx, .cu or .bin file",
        ),
        (
            "[base]\nkernel = \"../secret.spu\"\n".to_string(),
            2,
            "is outside the spec's folder",
        ),
        (
            "[base]\nkernel = \"link.spu\"\n".to_string(),
            2,
            "is outside the spec's folder",
        ),
        (
            "[base]\nkernel = \"notes.txt\"\n".to_string(),
            2,
            "a kernel must be a .spu, .ptx, .cu or .bin file",
        ),
        (
            "[base]\nkernel = \"../../../../../etc/shadow\"\n".to_string(),
            2,
            "a kernel must be a",
        ),
        (
            format!("{base}machine = \"/etc/passwd\"\n"),
            3,
            "a machine file must be a .toml file",
        ),
        (
            format!("model = \"/etc/shadow\"\n{base}"),
            1,
            "an energy model file must be a .toml file",
        ),
        (
            format!("{base}machine = \"../x/../../etc/m.toml\"\n"),
            3,
            "cannot read",
        ),
    ] {
        let (ps, rendered) = problems_in(&spec_dir, &text);
        assert!(
            ps.iter().any(|(l, m)| *l == line && m.contains(needle)),
            "expected `{needle}` at line {line}, got {ps:?}"
        );
        for secret in ["hunter2", "root:"] {
            assert!(!rendered.contains(secret), "quoted a file:\n{rendered}");
        }
    }
    // Allowed on the command line: the kernel outside may be named.
    let mut spec = Spec::parse(
        "spec.toml",
        "[base]\nkernel = \"../secret.spu\"\n",
        &spec_dir,
        "s",
    )
    .unwrap();
    spec.allowed = vec![dir.path().join("secret.spu")];
    let p = plan(&spec, &[]).unwrap();
    assert_eq!(p.runs.len(), 1);
    // The plan lists every file it read, resolved.
    let p = planned(base, &[]);
    assert_eq!(
        p.inputs,
        [samples().join("vecadd.spu").canonicalize().unwrap()]
    );
}

#[test]
fn kernel_parameters_are_checked_when_planning() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(samples().join("vecadd.spu"), dir.path().join("vecadd.spu")).unwrap();
    std::fs::write(
        dir.path().join("needs.spu"),
        ".param .u32 M;\n.launch grid(1, 1) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let base = "[base]\nkernel = \"vecadd.spu\"\n";
    for (text, line, needle) in [
        (
            format!("{base}D = {{ NOPE = 1 }}\n"),
            3,
            "has no parameter `NOPE`",
        ),
        (
            format!("{base}D.N = true\n"),
            3,
            "kernel parameter `N` is .u32 and `true`",
        ),
        (
            format!("{base}D.N = 1.5\n"),
            3,
            "kernel parameter `N` is .u32 and `1.5`",
        ),
        (format!("{base}[[axis]]\nD.N = [64, -1]\n"), 4, "`-1`"),
        (
            "[base]\nkernel = \"needs.spu\"\n".to_string(),
            2,
            "needs a value for its parameter `M`",
        ),
    ] {
        let (ps, _) = problems_in(dir.path(), &text);
        assert!(
            ps.iter().any(|(l, m)| *l == line && m.contains(needle)),
            "expected `{needle}` at line {line}, got {ps:?}"
        );
    }
    // One problem shared by many runs is reported once.
    let (ps, _) = problems_in(
        dir.path(),
        &format!("{base}D.NOPE = 1\n[[axis]]\nD.N = [1, 2, 3]\n"),
    );
    assert_eq!(ps.len(), 1, "{ps:?}");
    // A kernel that does not assemble is not the spec's problem: its runs fail.
    std::fs::write(dir.path().join("bad.spu"), "nonsense;\n").unwrap();
    let s = Spec::parse(
        "s.toml",
        "[base]\nkernel = \"bad.spu\"\nD.N = 1\n",
        dir.path(),
        "s",
    )
    .unwrap();
    assert_eq!(plan(&s, &[]).unwrap().runs.len(), 1);
}

/// `D.NAME = ""` sets nothing in that run, so one axis zips kernels with different
/// parameters; a parameter without a default still needs a value.
#[test]
fn an_empty_parameter_value_leaves_the_parameter_unset() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(samples().join("vecadd.spu"), dir.path().join("vecadd.spu")).unwrap();
    std::fs::write(
        dir.path().join("needs.spu"),
        ".param .u32 M;\n.launch grid(1, 1) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let text =
        "[[axis]]\nkernel = [\"vecadd.spu\", \"needs.spu\"]\nD.N = [64, \"\"]\nD.M = [\"\", 3]\n";
    let s = Spec::parse("s.toml", text, dir.path(), "s").unwrap();
    let p = plan(&s, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.columns, ["kernel", "N", "M"]);
    let got: Vec<_> = p
        .runs
        .iter()
        .map(|r| (r.values.clone(), r.defines.clone()))
        .collect();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        got,
        [
            (
                owned(&["vecadd.spu", "64", ""]),
                vec![("N".to_string(), "64".to_string())]
            ),
            (
                owned(&["needs.spu", "", "3"]),
                vec![("M".to_string(), "3".to_string())]
            ),
        ]
    );
    // An empty value is no value: the same run as leaving the key out.
    let without = Spec::parse(
        "s.toml",
        "[base]\nkernel = \"vecadd.spu\"\nD.N = 64\n",
        dir.path(),
        "s",
    )
    .unwrap();
    assert_eq!(plan(&without, &[]).unwrap().runs[0].id, p.runs[0].id);
    let (ps, _) = problems_in(
        dir.path(),
        "[base]\nkernel = \"needs.spu\"\n[[axis]]\nD.M = [\"\", 3]\n",
    );
    assert!(
        ps.iter()
            .any(|(l, m)| *l == 2 && m.contains("needs a value for its parameter `M`")),
        "{ps:?}"
    );
}

#[test]
fn long_names_are_refused_and_never_echoed_whole() {
    let long = "n".repeat(5 << 20);
    let base = "[base]\nkernel = \"vecadd.spu\"\n";
    for (text, needle) in [
        (format!("name = \"{long}\"\n{base}"), "the sweep name `nnn"),
        (
            format!("{base}[[axis]]\nlabel.{long} = [1]\n"),
            "the column `nnn",
        ),
        (format!("{base}D.{long} = 1\n"), "the kernel parameter `nnn"),
        (
            format!("{base}[[plot]]\nname = \"{long}\"\nx = \"N\"\ny = \"cycles\"\n"),
            "the plot name `nnn",
        ),
        (
            format!("{base}boundary = \"{long}\"\n"),
            "is not a valid `boundary`",
        ),
        (format!("{base}{long} = 1\n"), "unknown key `nnn"),
    ] {
        let err = match parse(&text) {
            Err(e) => e,
            Ok(spec) => match plan(&spec, &[]) {
                Err(Error::Spec(e)) => e,
                other => panic!("{needle}: {other:?}"),
            },
        };
        let rendered = err.rendered();
        assert!(
            rendered.contains(needle),
            "{needle}: {}",
            &rendered[..rendered.len().min(600)]
        );
        assert!(rendered.len() < 2000, "{needle}: {} bytes", rendered.len());
    }
    // A file name that cannot name a sweep needs a `name`.
    let e = Spec::parse("x.toml", base, &samples(), "inj\ntouch PWNED\n#").unwrap_err();
    assert!(
        e.problems[0].message.contains("cannot name a sweep"),
        "{e:?}"
    );
    assert!(
        Spec::parse(
            "x.toml",
            &format!("name = \"ok\"\n{base}"),
            &samples(),
            "inj\nx"
        )
        .is_ok()
    );
}

#[test]
fn bounds_are_checked_not_wrapped() {
    let base = "[base]\nkernel = \"vecadd.spu\"\n";
    expect_problem(
        &format!("timeout_s = 18446744073709551615\n{base}"),
        1,
        "from 1 to 31536000 seconds",
    );
    expect_problem(
        &format!("memory_mib = 18446744073709551615\n{base}"),
        1,
        "from 16 to 1073741824 MiB",
    );
    expect_problem(&format!("memory_mib = 8\n{base}"), 1, "from 16");
    // An integer out of range is not "not an integer" (#23 item G6).
    for (text, needle) in [
        (
            format!("timeout_s = 0\n{base}"),
            "`timeout_s` is 0, out of range: it must be an integer from 1 to 31536000 seconds",
        ),
        (
            format!("memory_mib = 15\n{base}"),
            "`memory_mib` is 15, out of range: it must be an integer from 16 to 1073741824 MiB",
        ),
        (
            format!("memory_mib = -3\n{base}"),
            "`memory_mib` is -3, out of range",
        ),
    ] {
        let ps = problems(&text);
        assert!(
            ps.iter().any(|(l, m)| *l == 1 && m.contains(needle))
                && ps.iter().all(|(_, m)| !m.contains("not an integer")),
            "{ps:?}"
        );
    }
    expect_problem(
        &format!("timeout_s = \"x\"\n{base}"),
        1,
        "must be an integer from 1 to 31536000 seconds, not a string",
    );
}

/// A message of ours is shown whole, however long; only the user's text in it is
/// shortened (#23 item G1).
#[test]
fn long_messages_are_shown_whole() {
    let dir = tempfile::tempdir().unwrap();
    let spec_dir = dir.path().join("sw");
    std::fs::create_dir(&spec_dir).unwrap();
    std::fs::copy(samples().join("vecadd.spu"), dir.path().join("vecadd.spu")).unwrap();
    std::fs::copy(samples().join("vecadd.spu"), spec_dir.join("vecadd.spu")).unwrap();
    let (_, rendered) = problems_in(&spec_dir, "[base]\nkernel = \"../vecadd.spu\"\n");
    assert!(
        rendered.contains("or below it, or under a path given with `--allow`\n"),
        "{rendered}"
    );
    let (_, rendered) = problems_in(
        &spec_dir,
        "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nmachine = [\"spu-4x4\", \"nope\"]\n",
    );
    assert!(
        rendered.contains("`gtx480-sm2`, or give a .toml file") && !rendered.contains("bytes)"),
        "{rendered}"
    );
    // The user's text inside stays shortened.
    let long = "d/".repeat(5000);
    let (_, rendered) = problems_in(&spec_dir, &format!("[base]\nkernel = \"../{long}x.spu\"\n"));
    assert!(rendered.len() < 2000, "{} bytes", rendered.len());
}

/// Two plots or tables of one name would write one file: refused at the second,
/// naming both lines (#23 item G4).
#[test]
fn plots_and_tables_of_one_name_are_refused() {
    let base = "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [256]\n";
    let plot = "[[plot]]\nname = \"p\"\nx = \"N\"\ny = \"cycles\"\n";
    expect_problem(
        &format!("{base}{plot}{plot}"),
        9,
        "two `[[plot]]`s are named `p` (lines 5 and 9); both would write `plots/p.svg`",
    );
    // The default names (the spec's, then NAME-2) count too.
    expect_problem(
        &format!(
            "{base}[[plot]]\nx = \"N\"\ny = \"cycles\"\n[[plot]]\nname = \"spec\"\nx = \"N\"\ny = \"cycles\"\n"
        ),
        8,
        "two `[[plot]]`s are named `spec`",
    );
    let table =
        "[[table]]\nname = \"t\"\ncolumns = \"machine\"\nrows = \"N\"\nvalue = \"cycles\"\n";
    let ps = problems(&format!("{base}{table}{table}"));
    assert!(
        ps.iter().any(|(l, m)| *l == 10
            && m.contains(
                "two `[[table]]`s are named `t` (lines 5 and 10); both would write `tables/t.md`"
            )),
        "{ps:?}"
    );
    // Distinct names plan.
    planned(
        &format!("{base}{plot}{}", plot.replace("\"p\"", "\"q\"")),
        &[],
    );
}

/// A number quoted where a number is expected says to remove the quotes (TOML
/// reads `"60"` as a string).
#[test]
fn a_quoted_number_says_to_remove_the_quotes() {
    let err = parse(
        "name = \"q\"\ntimeout_s = \"60\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [256]\n",
    )
    .unwrap_err();
    let rendered = err.rendered();
    assert!(
        rendered.contains("spec.toml:2:")
            && rendered.contains("remove the quotes: write `60`, not `\"60\"`"),
        "{rendered}"
    );
}

/// A bad machine value in `[base]` is shown at its line, as one in an axis is,
/// and a spec without axes names no run.
#[test]
fn bad_machine_values_in_base_are_shown_at_their_line() {
    let ps =
        problems("name = \"s12\"\n[base]\nkernel = \"vecadd.spu\"\ngrid = \"99999999999x1\"\n");
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!(ps[0].0, 4, "{ps:?}");
    assert!(
        ps[0].1.contains("machine key `grid.cols`") && !ps[0].1.contains("in the run"),
        "{ps:?}"
    );
    // In `[base]` beside an axis: the line of the base value, the runs counted.
    let ps = problems(
        "[base]\nkernel = \"vecadd.spu\"\ngrid = \"99999999999x1\"\n[[axis]]\nD.N = [256, 512]\n",
    );
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!(ps[0].0, 3, "{ps:?}");
    assert!(ps[0].1.contains("(in 2 runs, the first N=256)"), "{ps:?}");
    // The failing one of several settings, wherever it is.
    expect_problem(
        "[base]\nkernel = \"vecadd.spu\"\ngrid = \"99999999999x1\"\n[[axis]]\nset.\"clock.freq_mhz\" = [100, 200]\n",
        3,
        "grid.cols",
    );
}

/// A spec in UTF-16 (as Windows PowerShell writes it) is named as such, with the
/// command that converts it.
#[test]
fn a_utf16_spec_names_its_encoding_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s19.toml");
    let mut bytes = vec![0xFF, 0xFE];
    for unit in "name = \"s19\"\n[base]\nkernel = \"vecadd.spu\"\n".encode_utf16() {
        bytes.extend(unit.to_le_bytes());
    }
    std::fs::write(&path, bytes).unwrap();
    let e = Spec::read(&path).unwrap_err().to_string();
    assert!(
        e.contains("is UTF-16 text, not UTF-8; convert it with `iconv -f UTF-16 -t UTF-8"),
        "{e}"
    );
}

/// A dotted key of thousands of parts says what nests too deeply, not the parser's
/// bare "recursion limit".
#[test]
fn a_key_nested_too_deeply_is_explained() {
    let text = format!(
        "{} = 1\n[base]\nkernel = \"vecadd.spu\"\n",
        vec!["a"; 20_000].join(".")
    );
    let ps = problems(&text);
    assert!(
        ps.iter()
            .any(|(_, m)| m.starts_with("keys nest too deeply")),
        "{ps:?}"
    );
}

/// A table whose `name` is there but unusable gets that one problem, not also
/// "a table needs a `name`".
#[test]
fn a_bad_table_name_is_reported_once() {
    let text = "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [256, 512]\n[[table]]\nname = \"../escape\"\nrows = \"N\"\ncolumns = \"N\"\nvalue = \"cycles\"\n";
    let ps = problems(text);
    assert!(
        ps.iter()
            .any(|(l, m)| *l == 6 && m.contains("must be a plain file stem")),
        "{ps:?}"
    );
    assert!(
        !ps.iter().any(|(_, m)| m.contains("needs a `name`")),
        "{ps:?}"
    );
}

/// A key given twice in a `set` list is refused at its second value (the last
/// won without a word; two `--set`s of one key are refused too).
#[test]
fn a_key_set_twice_in_a_set_list_is_refused() {
    expect_problem(
        "[base]\nkernel = \"vecadd.spu\"\nset = [\"sm.schedulers=2\", \"sm.schedulers = 4\"]\n",
        3,
        "`sm.schedulers` is set twice in `set` (to 2 and to 4)",
    );
}

/// An axis whose keys have different numbers of values, with extra values, is
/// refused for that (the extras' check for repeated points indexed the axis's
/// shorter key past its end and panicked).
#[test]
fn extras_of_an_axis_whose_keys_differ_in_length_are_not_compared() {
    expect_problem(
        "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nlabel.case = [\"a\", \"b\", \"c\"]\nD.N = [32, 64]\n[axis.extra.huge]\nlabel.case = [\"d\"]\nD.N = [256]\n",
        5,
        "`D.N` has 2 values but `label.case` in the same axis has 3",
    );
}

/// A spec larger than 4 MiB is refused before it is parsed (60 MiB of short keys
/// took 6.5 GB and a minute), and a spec with many problems shows the first 50.
#[test]
fn a_huge_spec_is_refused_and_many_problems_are_shown_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.toml");
    let keys: String = (0..600_000).map(|i| format!("x{i} = 1\n")).collect();
    std::fs::write(&big, format!("[base]\nkernel = \"k.spu\"\n{keys}")).unwrap();
    let e = match Spec::read(&big) {
        Err(Error::Spec(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(
        e.rendered()
            .contains("but a spec is at most 4 194 304 bytes"),
        "{}",
        e.rendered()
    );
    let keys: String = (0..60).map(|i| format!("x{i} = 1\n")).collect();
    let e = parse(&format!("[base]\nkernel = \"k.spu\"\n{keys}")).unwrap_err();
    assert_eq!(e.problems.len(), 60);
    let text = e.rendered();
    assert_eq!(text.matches("error: unknown key").count(), 50, "{text}");
    assert!(text.contains("unknown key `x49`") && !text.contains("unknown key `x50`"));
    assert!(
        text.contains("note: 10 more problems are not shown; fix these first"),
        "{text}"
    );
}

/// Axes whose product passes the limit say how many runs they make, and of
/// which axes.
#[test]
fn too_many_runs_are_counted() {
    let values = |n: usize| {
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "[base]\nkernel = \"k.spu\"\n[[axis]]\nD.N = [{}]\n[[axis]]\nD.K = [{}]\n",
        values(400),
        values(300)
    );
    let e = parse(&text).map(|_| ()).err();
    let rendered = match e {
        Some(e) => e.rendered(),
        None => {
            let dir = tempfile::tempdir().unwrap();
            std::fs::copy(samples().join("vecadd.spu"), dir.path().join("k.spu")).unwrap();
            let path = dir.path().join("spec.toml");
            std::fs::write(&path, &text).unwrap();
            let spec = Spec::read(&path).unwrap();
            match plan(&spec, &[]) {
                Err(Error::Spec(e)) => e.rendered(),
                other => panic!("{other:?}"),
            }
        }
    };
    assert!(
        rendered.contains(
            "the axes make 120000 runs (400 x 300), more than the 100000 a sweep may have"
        ),
        "{rendered}"
    );
}
