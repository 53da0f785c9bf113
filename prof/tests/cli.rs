//! `spu-prof` from the outside: the main job works with nothing but a kernel, every
//! output form is produced, and bad models and inputs give errors that name the
//! file, the key and the problem.

use std::path::Path;
use std::process::Command;

mod common;
use common::{prof, root, text};

fn ok(args: &[&str]) -> String {
    let out = prof(args);
    assert!(out.status.success(), "{args:?}:\n{}", text(&out.stderr));
    text(&out.stdout)
}

fn fails(args: &[&str], needles: &[&str]) {
    let out = prof(args);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(
        err.contains("error:") && !err.contains("panicked"),
        "{args:?}:\n{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected `{n}` in\n{err}");
    }
}

#[test]
fn the_main_job_needs_only_a_kernel() {
    for kernel in [
        "samples/stencil2d/stencil_pc.spu",
        "samples/stencil2d/stencil_global.spu",
    ] {
        let out = ok(&[kernel]);
        for part in [
            "static",
            "dynamic component",
            "leakage",
            "hottest source lines",
            "EDP",
        ] {
            assert!(out.contains(part), "{kernel}: no `{part}` in\n{out}");
        }
    }
}

#[test]
fn every_output_form_is_produced() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let k = "samples/stencil2d/stencil_pc.spu";
    let json: serde_json::Value =
        serde_json::from_str(&ok(&[k, "-D", "N=64", "-D", "K=32", "--format", "json"])).unwrap();
    for key in [
        "leakage_w",
        "static_j",
        "dynamic_j",
        "total_j",
        "cycles",
        "components",
        "lines",
        "legend",
    ] {
        assert!(json.get(key).is_some(), "json lacks {key}");
    }
    // Every component and pseudo-line present is explained.
    let legend = &json["legend"];
    for name in json["components"].as_object().unwrap().keys() {
        assert!(legend[name].is_string(), "no legend for {name}");
    }
    assert!(
        legend["CONST_DYNAMICP"]
            .as_str()
            .unwrap()
            .starts_with("per chip cycle, time-based:")
    );
    assert!(
        legend["IDLE_COREP"]
            .as_str()
            .unwrap()
            .starts_with("per unit-cycle, time-based:")
    );
    let csv = ok(&[k, "-D", "N=64", "-D", "K=32", "--format", "csv"]);
    assert!(csv.starts_with("section,name,value,unit,meaning\n") && csv.contains("energy,total,"));
    assert!(
        csv.contains(",J,per event: shared memory, per bank-conflict wave")
            || csv.contains(",J,\"per event: shared memory, per bank-conflict wave\""),
        "{csv}"
    );
    ok(&[
        k,
        "-D",
        "N=64",
        "-D",
        "K=32",
        "--power-trace",
        &p("power.svg"),
        "--stats",
        &p("iu.json"),
    ]);
    let svg = std::fs::read_to_string(p("power.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<polyline"));
    ok(&[
        k,
        "-D",
        "N=64",
        "-D",
        "K=32",
        "--boundary",
        "dma",
        "--format",
        "json",
        "-o",
        &p("dma.json"),
    ]);
    let by_line = ok(&[
        "--from-stats",
        &p("iu.json"),
        "--by-line",
        "--source",
        "samples/stencil2d/stencil_pc.spu",
    ]);
    assert!(by_line.contains("bar.blocksync.north"), "{by_line}");
    let cmp = ok(&["--compare", &p("iu.json"), &p("dma.json")]);
    assert!(
        cmp.contains("leakage power") && cmp.contains("0.845"),
        "{cmp}"
    );
    let models = ok(&["--list-models"]);
    assert!(models.contains("default") && models.contains("cyclops64") && models.contains("wires"));
}

#[test]
fn bad_models_name_the_file_key_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        path.display().to_string()
    };
    let base = include_str!("../models/default.toml");
    let unknown = write(
        "unknown.toml",
        &base.replace("CBP = 160.0", "CBP = 160.0\nFOOP = 1.0"),
    );
    let negative = write(
        "negative.toml",
        &base.replace("DRAMP = 8000.0", "DRAMP = -8000.0"),
    );
    let no_dma = write("nodma.toml", &base.replace("dma = 1.66875\n", ""));
    let missing = write("missing.toml", &base.replace("SFUP = 40.0\n", ""));
    let syntax = write("syntax.toml", "[model\nname = 1");
    let key = write(
        "key.toml",
        &base.replace("uncore = 0.0", "uncore = 0.0\nfpga = 1.0"),
    );
    let bytes_unknown = write(
        "bytes_unknown.toml",
        &base.replace("DRAMP = 32\n", "DRAMP = 32\nFOOP = 32\n"),
    );
    let bytes_zero = write(
        "bytes_zero.toml",
        &base.replace("NOCP = 32\n", "NOCP = 0\n"),
    );
    let bytes_text = write(
        "bytes_text.toml",
        &base.replace("MCP = 32\n", "MCP = \"line\"\n"),
    );
    let k = "samples/pass_token.spu";
    fails(
        &[k, "--model", &bytes_unknown],
        &[
            "bytes_unknown.toml",
            "event_bytes.FOOP",
            "unknown component",
        ],
    );
    fails(
        &[k, "--model", &bytes_zero],
        &["bytes_zero.toml", "event_bytes.NOCP", "is 0"],
    );
    fails(
        &[k, "--model", &bytes_text],
        &["bytes_text.toml", "event_bytes.MCP"],
    );
    fails(
        &[k, "--model", &unknown],
        &["unknown.toml", "event_pj.FOOP", "unknown name"],
    );
    fails(
        &[k, "--model", &negative],
        &["negative.toml", "event_pj.DRAMP", "must be >= 0"],
    );
    fails(
        &[
            "samples/stencil2d/stencil_pc.spu",
            "--model",
            &no_dma,
            "--boundary",
            "dma",
        ],
        &["nodma.toml", "leakage_w.dma", "DMA engines"],
    );
    fails(
        &[k, "--model", &missing],
        &["missing.toml", "event_pj.SFUP", "missing"],
    );
    fails(&[k, "--model", &syntax], &["syntax.toml"]);
    fails(
        &[k, "--model", &key],
        &["key.toml", "leakage_w.fpga", "unknown key"],
    );
    fails(
        &[k, "--model", "gpuwattch"],
        &["unknown model `gpuwattch`", "`default`"],
    );
    fails(&[k, "--model", "nothere.toml"], &["cannot read model file"]);
}

#[test]
fn bad_inputs_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"stats_version\": 2}").unwrap();
    let not_json = dir.path().join("x.json");
    std::fs::write(&not_json, "hello").unwrap();
    let stats = dir.path().join("s.json");
    ok(&["samples/pass_token.spu", "--stats", stats.to_str().unwrap()]);
    let svg = dir.path().join("p.svg").display().to_string();
    fails(
        &["--from-stats", junk.to_str().unwrap()],
        &["not a statistics file"],
    );
    fails(
        &["--from-stats", not_json.to_str().unwrap()],
        &["is not JSON"],
    );
    fails(
        &["--from-stats", "missing.json"],
        &["cannot read `missing.json`"],
    );
    fails(
        &[
            "--from-stats",
            stats.to_str().unwrap(),
            "--power-trace",
            &svg,
        ],
        &["no activity samples"],
    );
    fails(
        &[
            "--compare",
            not_json.to_str().unwrap(),
            stats.to_str().unwrap(),
        ],
        &["is not JSON"],
    );
    fails(&["missing.spu"], &["cannot read `missing.spu`"]);
    fails(
        &["emu/tests/faults/oob_load.spu"],
        &["outside every buffer", "stopped"],
    );
    fails(
        &["samples/pass_token.spu", "--format", "xml"],
        &["invalid value"],
    );
    assert!(!Path::new(&svg).exists());
}

/// A negative number given to a numeric run option is refused as that option's
/// value, not taken for an unknown option.
#[test]
fn negative_numbers_are_refused_as_values_of_their_options() {
    for (option, value) in [("--threads", "-2"), ("--max-cycles", "-1")] {
        fails(
            &["samples/vecadd.spu", option, value],
            &[&format!("invalid value '{value}' for '{option} <N>'")],
        );
    }
    let out = prof(&["samples/vecadd.spu", "--spin-limit", "-1"]);
    assert!(!text(&out.stderr).contains("unexpected argument"));
}

#[test]
fn deep_expressions_do_not_overflow_the_stack() {
    // A sum of 200 000 ones; 11 650 terms used to end the process with exit 134.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("deep.spu");
    let sum = vec!["1"; 200_000].join("+");
    std::fs::write(
        &src,
        format!(".entry deep {{\n    .reg .u32 %r0;\n    mov.u32 %r0, {sum};\n    exit;\n}}\n"),
    )
    .unwrap();
    ok(&[src.to_str().unwrap(), "-q"]);
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[test]
fn a_statistics_file_cannot_make_by_line_print_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    ok(&[
        "samples/vecadd.spu",
        "-q",
        "--stats",
        stats.to_str().unwrap(),
        "-o",
        "/dev/null",
    ]);
    let text = std::fs::read_to_string(&stats).unwrap();
    for target in ["/etc/passwd", "/dev/zero", "../../../../../../etc/passwd"] {
        let hostile = text.replace("samples/vecadd.spu", target);
        std::fs::write(&stats, hostile).unwrap();
        let start = std::time::Instant::now();
        let out = ok(&["--from-stats", stats.to_str().unwrap(), "--by-line"]);
        assert!(!out.contains("root:"), "{target}: {out}");
        assert!(
            out.contains("source not quoted; name it with --source FILE"),
            "{out}"
        );
        // Its lines still get their totals, without text.
        assert!(
            out.lines()
                .any(|l| l.trim_end().ends_with(" |") && l.contains(" nJ ")),
            "{out}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }
}

#[test]
fn inputs_that_never_end_stop_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.toml");
    std::fs::write(&model, "[model]\nname = \"m\"\nextends = \"/etc/passwd\"\n").unwrap();
    let zero = dir.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for (args, needle) in [
        (
            vec!["--from-stats", "/dev/zero"],
            "`/dev/zero` is larger than 64 MiB, the limit for inputs",
        ),
        (
            vec!["--compare", "/dev/zero", "/dev/zero"],
            "`/dev/zero` is larger than 64 MiB, the limit for inputs",
        ),
        (
            vec!["samples/vecadd.spu", "--model", zero.to_str().unwrap()],
            "it is larger than 64 MiB, the limit for inputs",
        ),
        (
            // Not a `.toml` file: never read at all.
            vec!["samples/vecadd.spu", "--model", "/dev/zero"],
            "unknown model `/dev/zero`",
        ),
        (
            vec!["samples/vecadd.spu", "--model", model.to_str().unwrap()],
            "`/etc/passwd` is neither a built-in model nor a .toml file",
        ),
    ] {
        fails(&args, &[needle]);
    }
}

#[test]
fn outputs_may_not_overwrite_extended_models_or_included_files() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.toml");
    let base_text = include_str!("../models/default.toml");
    std::fs::write(&base, base_text).unwrap();
    let model = dir.path().join("m.toml");
    std::fs::write(&model, "[model]\nname = \"m\"\nextends = \"base.toml\"\n").unwrap();
    let inc = dir.path().join("body.inc");
    let src = std::fs::read_to_string(root().join("samples/vecadd.spu")).unwrap();
    std::fs::write(&inc, &src).unwrap();
    let k = dir.path().join("k.spu");
    std::fs::write(&k, "#include \"body.inc\"\n").unwrap();
    let (m, b, ks, i) = (
        model.to_str().unwrap(),
        base.to_str().unwrap(),
        k.to_str().unwrap(),
        inc.to_str().unwrap(),
    );
    for (args, needle) in [
        (
            vec!["samples/vecadd.spu", "-q", "--model", m, "-o", b],
            format!(
                "error: `-o {b}` would overwrite the input `{b}`, which the model extends; write it to another file"
            ),
        ),
        (
            vec![ks, "-q", "--stats", i],
            format!(
                "error: `--stats {i}` would overwrite the input `{i}`, which the kernel includes; write it to another file"
            ),
        ),
        (
            vec![ks, "-q", "-o", i],
            format!(
                "error: `-o {i}` would overwrite the input `{i}`, which the kernel includes; write it to another file"
            ),
        ),
    ] {
        let out = prof(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end(), needle, "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(&base).unwrap(), base_text);
    assert_eq!(std::fs::read_to_string(&inc).unwrap(), src);
}

#[test]
fn huge_model_keys_and_names_are_not_echoed_whole() {
    let dir = tempfile::tempdir().unwrap();
    // Under the 1 MiB a model may have.
    let long = "k".repeat(1_000_000);
    let key = dir.path().join("key.toml");
    std::fs::write(&key, format!("[model]\nname = \"x\"\n{long} = 1\n")).unwrap();
    let value = dir.path().join("value.toml");
    std::fs::write(
        &value,
        format!("[model]\nname = \"x\"\nextends = \"default\"\n[leakage_w]\nsm = \"{long}\"\n"),
    )
    .unwrap();
    // An argument is at most 128 KiB.
    let name = "m".repeat(100_000);
    let short = format!("{}... (100000 bytes)", "m".repeat(48));
    for (model, needle) in [
        (
            key.to_str().unwrap().to_string(),
            format!("key `model.{}... (1000006 bytes)`", "k".repeat(42)),
        ),
        (
            value.to_str().unwrap().to_string(),
            "key `leakage_w.sm`: `\"".to_string(),
        ),
        (name, format!("unknown model `{short}`")),
    ] {
        let out = prof(&["samples/vecadd.spu", "-q", "--model", &model]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            err.len() < 600,
            "{} bytes: {}",
            err.len(),
            &err[..600.min(err.len())]
        );
        assert!(err.contains(&needle), "expected `{needle}` in {err}");
    }
}

#[test]
fn outputs_are_safe_and_distinct() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let a = a.to_str().unwrap();
    fails(
        &["samples/vecadd.spu", "-q", "--stats", a, "-o", a],
        &["`-o ", "and `--stats ", "name the same file"],
    );
    fails(
        &["samples/vecadd.spu", "-q", "--stats", "-"],
        &["the report and `--stats -` both write to standard output"],
    );
    if !is_root() {
        eprintln!("skipped: making a device node needs root");
        return;
    }
    let null = dir.path().join("null");
    let made = Command::new("mknod")
        .args([null.to_str().unwrap(), "c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mknod as root");
    ok(&["samples/vecadd.spu", "-q", "-o", null.to_str().unwrap()]);
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    for args in [vec!["--list-models"], vec!["samples/vecadd.spu", "-q"]] {
        let Some(closed) = spu_io::testing::closed_pipe() else {
            return;
        };
        let out = Command::new(env!("CARGO_BIN_EXE_spu-prof"))
            .args(&args)
            .current_dir(root())
            .stdout(closed)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(141),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
}

/// `--compare`, `--from-stats` and `--list-models` refuse every option they would
/// not honour, and write nothing (#23 item H8).
#[test]
fn options_a_mode_does_not_honour_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let stats = edited_stats(tmp, "s.json", false, |_| {});
    let out = tmp.join("out.file").display().to_string();
    let dump = format!("C={out}");
    let not_for_compare: &[&[&str]] = &[
        &["--by-line"],
        &["--heatmap", &out],
        &["--heatmap", &out, "--heatmap-metric", "busy"],
        &["--power-trace", &out],
        &["--source", "samples/vecadd.spu"],
    ];
    let runs: &[&[&str]] = &[
        &["--machine", "gtx480"],
        &["--set", "clock.freq_mhz=900"],
        &["-D", "N=3"],
        &["-I", "samples"],
        &["--dump", &dump],
        &["--load", "A=samples/vecadd.spu"],
        &["--stats", &out],
        &["--functional"],
        &["--threads", "2"],
        &["--grid", "2x2"],
        &["--boundary", "dma"],
        &["--max-cycles", "5"],
        &["--sample-interval", "100"],
        &["--race-check"],
    ];
    let compare = ["--compare", stats.as_str(), stats.as_str()];
    let from_stats = ["--from-stats", stats.as_str()];
    let mut cases: Vec<(&[&str], &[&str], &str)> = Vec::new();
    for extra in not_for_compare.iter().chain(runs) {
        cases.push((&compare, extra, "--compare"));
    }
    for extra in runs {
        cases.push((&from_stats, extra, "--from-stats"));
    }
    let list: &[&str] = &["--list-models"];
    let list_extras: &[&[&str]] = &[&["-o", &out], &["--model", "wires"], &["--by-line"]];
    for extra in list_extras {
        cases.push((list, extra, "--list-models"));
    }
    for (mode, extra, named) in cases {
        let args: Vec<&str> = mode.iter().chain(extra.iter()).copied().collect();
        let option = match extra[0] {
            "-o" => "--output",
            o => o,
        };
        fails(&args, &[&format!("`{option}`"), named]);
        assert!(!Path::new(&out).exists(), "{args:?} wrote {out}");
    }
    fails(
        &["samples/vecadd.spu", "--by-line", "--format", "json"],
        &["`--by-line`", "`--format`"],
    );
    // A kernel is named as one, not quoted as if the user had typed `the kernel`.
    fails(
        &["--list-models", "samples/vecadd.spu"],
        &[
            "a kernel does not apply to `--list-models`",
            "drop the kernel",
        ],
    );
}

/// `--from-stats` of a pipe nothing writes to is refused after a bounded wait
/// (#23 note N1), and read when a writer comes within it.
#[test]
fn a_statistics_pipe_without_a_writer_is_refused_after_a_bounded_wait() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("s.json");
    if !spu_io::testing::make_fifo(&fifo) {
        return;
    }
    let fifo_s = fifo.display().to_string();
    let start = std::time::Instant::now();
    fails(
        &["--from-stats", &fifo_s],
        &["nothing wrote to it within 5 s", "note: waiting up to 5 s"],
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    let stats = edited_stats(dir.path(), "t.json", false, |_| {});
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        std::fs::write(fifo, std::fs::read(stats).unwrap()).unwrap();
    });
    let report = ok(&["--from-stats", &fifo_s]);
    writer.join().unwrap();
    assert!(report.contains("vecadd"), "{report}");
}

/// `--compare --format json` and `csv` write the figures, not the table.
#[test]
fn compare_writes_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let stats = edited_stats(dir.path(), "s.json", false, |_| {});
    let json = ok(&["--compare", &stats, &stats, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["a"]["file"], stats.as_str());
    assert_eq!(v["b"]["kernel"], "vecadd");
    let figures = v["figures"].as_array().unwrap();
    let total = figures
        .iter()
        .find(|f| f["section"] == "energy" && f["name"] == "total")
        .unwrap();
    assert_eq!(total["unit"], "J");
    assert_eq!(total["a"], total["b"]);
    assert_eq!(total["b_over_a"], 1.0);
    assert!(figures.iter().any(|f| f["section"] == "component"));
    let csv = ok(&["--compare", &stats, &stats, "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("section,name,unit,a,b,b_over_a"));
    assert!(lines.any(|l| l.starts_with("run,cycles,cycles,") && l.ends_with(",1")));
    assert_eq!(csv.lines().count(), figures.len() + 1);
}

/// A stats file of vecadd (run through the library), edited by `edit`.
fn edited_stats(
    dir: &Path,
    name: &str,
    functional: bool,
    edit: impl Fn(&mut serde_json::Value),
) -> String {
    let machine = spu_emu::Machine::default();
    let control = spu_emu::RunControl {
        functional,
        sample_interval: Some(500),
        ..Default::default()
    };
    let s = spu_emu::cli::session::run_file(
        &root().join("samples/vecadd.spu"),
        &machine,
        &Default::default(),
        control,
    )
    .unwrap();
    let text = spu_emu::observe::stats::Stats::new(&s.result, &s.image, &s.machine).to_json_text();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn functional_runs_are_not_priced() {
    let dir = tempfile::tempdir().unwrap();
    let needle = "cannot price a --functional run: it models no cycles";
    fails(&["samples/vecadd.spu", "--functional"], &[needle]);
    let functional = edited_stats(dir.path(), "f.json", true, |_| {});
    let timed = edited_stats(dir.path(), "t.json", false, |_| {});
    fails(&["--from-stats", &functional], &[needle]);
    // Of the two files compared, the one at fault is named.
    let named = format!("`{functional}`: {needle}");
    fails(&["--compare", &timed, &functional], &[&named]);
    fails(&["--compare", &functional, &timed], &[&named]);
}

/// A statistics file or report that starts with a UTF-8 byte order mark (as some
/// editors save JSON) is read as without it.
#[test]
fn json_with_a_byte_order_mark_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let stats = edited_stats(dir.path(), "s.json", false, |_| {});
    let plain = ok(&["--from-stats", &stats]);
    let bom = dir.path().join("bom.json");
    let text = std::fs::read_to_string(&stats).unwrap();
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    assert_eq!(ok(&["--from-stats", bom.to_str().unwrap()]), plain);
    let compared = ok(&["--compare", &stats, bom.to_str().unwrap()]);
    assert!(compared.contains("A: vecadd"), "{compared}");
}

/// A chain of 8 `extends` (the limit) is read; the 9th is refused (a snapshot of
/// the bad-input matrix).
#[test]
fn a_chain_of_eight_extends_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..9 {
        let base = if i == 8 {
            "default".to_string()
        } else {
            format!("ch{}.toml", i + 1)
        };
        std::fs::write(
            dir.path().join(format!("ch{i}.toml")),
            format!("[model]\nname = \"ch{i}\"\nextends = \"{base}\"\n"),
        )
        .unwrap();
    }
    let top = dir.path().join("ch1.toml");
    let out = ok(&["samples/vecadd.spu", "-q", "--model", top.to_str().unwrap()]);
    assert!(out.contains("(model `ch1`)"), "{out}");
}

/// A model file without `model.name` is called by its path, not by the name its
/// `extends` base has (#23 item G3).
#[test]
fn an_unnamed_model_is_called_by_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine.toml");
    std::fs::write(
        &mine,
        "[model]\nextends = \"default\"\n[event_pj]\nDRAMP = 999999.0\n",
    )
    .unwrap();
    let mine = mine.to_str().unwrap();
    let out = ok(&["samples/vecadd.spu", "-q", "--model", mine]);
    assert!(out.contains(&format!("(model `{mine}`)")), "{out}");
    let json = ok(&["samples/vecadd.spu", "--format", "json", "--model", mine]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["model"], mine, "{json}");
    // A name of its own is kept.
    let named = dir.path().join("named.toml");
    std::fs::write(
        &named,
        "[model]\nname = \"costly\"\nextends = \"default\"\n[event_pj]\nDRAMP = 999999.0\n",
    )
    .unwrap();
    let out = ok(&[
        "samples/vecadd.spu",
        "-q",
        "--model",
        named.to_str().unwrap(),
    ]);
    assert!(out.contains("(model `costly`)"), "{out}");
}

#[test]
fn damaged_statistics_are_refused_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let zero = edited_stats(dir.path(), "zero.json", false, |v| {
        v["samples"]["interval_cycles"] = 0.into();
    });
    fails(
        &[
            "--from-stats",
            &zero,
            "--power-trace",
            dir.path().join("p.svg").to_str().unwrap(),
        ],
        &["the statistics are damaged: `samples.interval_cycles` is 0"],
    );
    let old = edited_stats(dir.path(), "old.json", false, |v| {
        v["stats_version"] = 1.into();
    });
    fails(
        &["--from-stats", &old],
        &["has stats_version 1, but this spu-prof reads version"],
    );
    let none = edited_stats(dir.path(), "none.json", false, |v| {
        v["stats_version"] = "two".into();
    });
    fails(
        &["--from-stats", &none],
        &["has no numeric `stats_version`"],
    );
}

#[test]
fn a_model_whose_energies_overflow_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("huge.toml");
    std::fs::write(
        &model,
        "[model]\nname = \"huge\"\nextends = \"default\"\n[event_pj]\nFPUP = 1e308\n",
    )
    .unwrap();
    let stats = edited_stats(dir.path(), "s.json", false, |_| {});
    for args in [
        vec![
            "samples/vecadd.spu",
            "-q",
            "--model",
            model.to_str().unwrap(),
        ],
        vec![
            "--from-stats",
            &stats,
            "--model",
            model.to_str().unwrap(),
            "--format",
            "json",
        ],
    ] {
        fails(&args, &["model `huge` makes", "key `event_pj.FPUP`"]);
    }
    std::fs::write(
        &model,
        "[model]\nname = \"inf\"\nextends = \"default\"\n[event_pj]\nFPUP = inf\n",
    )
    .unwrap();
    fails(
        &["samples/vecadd.spu", "--model", model.to_str().unwrap()],
        &[
            "event_pj.FPUP",
            "`inf` is not a finite number; give an energy or power >= 0",
        ],
    );
    // A component priced per byte: a tiny `event_bytes` is as likely the cause as
    // `event_pj` (only `event_pj` was named, which the file did not even set).
    std::fs::write(
        &model,
        "[model]\nname = \"tiny\"\nextends = \"default\"\n[event_bytes]\nDRAMP = 1e-300\n",
    )
    .unwrap();
    // Each key is named with the file that sets it: `event_pj.DRAMP` comes from
    // the built-in model the file extends.
    fails(
        &["samples/vecadd.spu", "--model", model.to_str().unwrap()],
        &[
            "model `tiny` makes the energy of `DRAMP` inf",
            &format!(
                "(key `event_pj.DRAMP` in `default` (built in) and key `event_bytes.DRAMP` in `{}`)",
                model.display()
            ),
        ],
    );
}

/// The bad-input matrix: one case per kind of bad input, each with its exact
/// message and exit code (snapshots `cli__matrix_*.snap`). Bless changes with
/// `INSTA_UPDATE=always`.
#[test]
fn bad_input_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let p = |name: &str| tmp.join(name).display().to_string();
    let file = |name: &str, body: &str| {
        std::fs::write(tmp.join(name), body).unwrap();
        p(name)
    };
    let base = include_str!("../models/default.toml");
    let timed = edited_stats(tmp, "t.json", false, |_| {});
    let report = p("report.json");
    ok(&[
        "samples/vecadd.spu",
        "-q",
        "--format",
        "json",
        "-o",
        &report,
    ]);
    // Pages: one priced, the same without energy (as spu-emu writes it), and a
    // comparison of two.
    let priced = p("priced.html");
    ok(&[
        "samples/vecadd.spu",
        "-o",
        &p("priced.txt"),
        "--html",
        &priced,
    ]);
    let mut data =
        spu_emu::observe::html::read(&std::fs::read_to_string(&priced).unwrap()).unwrap();
    data.runs[0].energy = None;
    let page = file("emu.html", &spu_emu::observe::html::page(&data));
    let pair = p("pair.html");
    ok(&[
        "--compare",
        &priced,
        &priced,
        "-o",
        &p("pair.txt"),
        "--html",
        &pair,
    ]);
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("nothing_to_price", vec![]),
        ("missing_kernel", vec![p("none.spu")]),
        ("stats_missing", vec!["--from-stats".into(), p("none.json")]),
        (
            "stats_not_json",
            vec!["--from-stats".into(), file("bad.json", "{ not json")],
        ),
        (
            "stats_endless_device",
            vec!["--from-stats".into(), "/dev/zero".into()],
        ),
        // A machine or counters the run could not have had (#23 item G2).
        (
            "stats_machine_of_another_grid",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "grid.json", false, |v| {
                    v["machine"]["grid.cols"] = 8.into();
                }),
            ],
        ),
        // A quoted number is text, as in a machine file (#23 note N11).
        (
            "stats_machine_value_quoted",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "quoted.json", false, |v| {
                    v["machine"]["cb.size_kib"] = "4".into();
                }),
            ],
        ),
        // Units placed off the grid or on one another (#23 item H9).
        (
            "stats_unit_outside_the_grid",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "x99.json", false, |v| {
                    v["units"][0]["x"] = 99.into();
                }),
            ],
        ),
        (
            "stats_boundary_unit_past_its_side",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "west4.json", false, |v| {
                    let units = v["units"].as_array_mut().unwrap();
                    let west = units.iter_mut().rfind(|u| u["side"] == "west").unwrap();
                    west["x"] = 4.into();
                }),
            ],
        ),
        (
            "stats_two_units_in_one_place",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "same_place.json", false, |v| {
                    v["units"][1]["x"] = 0.into();
                }),
            ],
        ),
        (
            "stats_machine_of_another_boundary",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "boundary.json", false, |v| {
                    v["machine"]["boundary.kind"] = "dma".into();
                }),
            ],
        ),
        (
            "stats_machine_of_a_gpu",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "gpu.json", false, |v| {
                    v["machine"]["machine.kind"] = "gpu".into();
                }),
            ],
        ),
        (
            "stats_dram_beyond_the_words_moved",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "dram.json", false, |v| {
                    let units = v["units"].as_array_mut().unwrap();
                    let n = units[0]["counters"]["DRAMP"].as_u64().unwrap();
                    units[0]["counters"]["DRAMP"] = (n + 1_000_000_000_000_000).into();
                    let total = v["counters"]["DRAMP"].as_u64().unwrap();
                    v["counters"]["DRAMP"] = (total + 1_000_000_000_000_000).into();
                }),
            ],
        ),
        (
            "stats_units_do_not_add_up",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "sum.json", false, |v| {
                    v["counters"]["DRAMP"] = 1_000_000_000_000_000u64.into();
                }),
            ],
        ),
        (
            "stats_more_issue_events_than_instructions",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "ibp.json", false, |v| {
                    let n = v["units"][0]["counters"]["IBP"].as_u64().unwrap();
                    v["units"][0]["counters"]["IBP"] = (n + 5).into();
                    let t = v["counters"]["IBP"].as_u64().unwrap();
                    v["counters"]["IBP"] = (t + 5).into();
                }),
            ],
        ),
        (
            "stats_zero_interval",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "zero.json", false, |v| {
                    v["samples"]["interval_cycles"] = 0.into();
                }),
            ],
        ),
        (
            "stats_wrong_version",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "old.json", false, |v| v["stats_version"] = 1.into()),
            ],
        ),
        (
            "stats_of_a_functional_run",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "f.json", true, |_| {}),
            ],
        ),
        (
            "kernel_run_functional",
            vec!["samples/vecadd.spu".into(), "--functional".into()],
        ),
        (
            "model_unknown",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                "gpuwattch".into(),
            ],
        ),
        (
            "model_endless_device",
            vec!["samples/vecadd.spu".into(), "--model".into(), {
                std::os::unix::fs::symlink("/dev/zero", tmp.join("zero.toml")).unwrap();
                p("zero.toml")
            }],
        ),
        (
            "model_not_a_toml_file",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                "/etc/shadow".into(),
            ],
        ),
        (
            "model_syntax",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file("syntax.toml", "[model\nname = 1"),
            ],
        ),
        (
            "model_syntax_on_a_long_line",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "longline.toml",
                    &format!("[model]\nname = {}\n", "k".repeat(1 << 19)),
                ),
            ],
        ),
        (
            "model_unknown_key",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "key.toml",
                    &base.replace("uncore = 0.0", "uncore = 0.0\nfpga = 1.0"),
                ),
            ],
        ),
        (
            "model_key_of_two_megabytes",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "long.toml",
                    &format!("[model]\nname = \"x\"\n{} = 1\n", "k".repeat(2 << 20)),
                ),
            ],
        ),
        (
            "model_negative_energy",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "neg.toml",
                    &base.replace("DRAMP = 8000.0", "DRAMP = -8000.0"),
                ),
            ],
        ),
        (
            "model_overflowing_energy",
            vec![
                "--from-stats".into(),
                timed.clone(),
                "--model".into(),
                file(
                    "huge.toml",
                    "[model]\nname = \"huge\"\nextends = \"default\"\n[event_pj]\nFPUP = 1e308\n",
                ),
            ],
        ),
        (
            "model_extends_a_system_file",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "etc.toml",
                    "[model]\nname = \"m\"\nextends = \"/etc/passwd\"\n",
                ),
            ],
        ),
        (
            "output_is_the_stats_input",
            vec![
                "--from-stats".into(),
                timed.clone(),
                "-o".into(),
                timed.clone(),
            ],
        ),
        (
            "output_is_an_extended_model",
            vec![
                "--from-stats".into(),
                timed.clone(),
                "--model".into(),
                file(
                    "ext.toml",
                    "[model]\nname = \"m\"\nextends = \"base.toml\"\n",
                ),
                "-o".into(),
                file("base.toml", base),
            ],
        ),
        (
            "two_outputs_on_one_file",
            vec![
                "samples/vecadd.spu".into(),
                "-q".into(),
                "--stats".into(),
                p("a.json"),
                "-o".into(),
                p("a.json"),
            ],
        ),
        (
            "two_outputs_on_standard_output",
            vec![
                "samples/vecadd.spu".into(),
                "-q".into(),
                "--stats".into(),
                "-".into(),
            ],
        ),
        (
            "compare_with_a_missing_file",
            vec!["--compare".into(), timed.clone(), p("none.json")],
        ),
        (
            "model_extends_outside_its_folder",
            vec!["samples/vecadd.spu".into(), "--model".into(), {
                std::fs::create_dir_all(tmp.join("secret")).unwrap();
                file("secret/creds.toml", "token = hunter2\n[model\n");
                std::fs::create_dir_all(tmp.join("models")).unwrap();
                file(
                    "models/up.toml",
                    "[model]\nname = \"m\"\nextends = \"../secret/creds.toml\"\n",
                )
            }],
        ),
        (
            "model_extends_an_absolute_path",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "models/abs.toml",
                    &format!(
                        "[model]\nname = \"m\"\nextends = \"{}\"\n",
                        p("secret/creds.toml")
                    ),
                ),
            ],
        ),
        (
            "model_error_in_an_extended_file",
            vec!["samples/vecadd.spu".into(), "--model".into(), {
                file(
                    "models/base.toml",
                    &base.replace("CBP = 160.0", "CBP = 160.0\nFOOP = 1.0"),
                );
                file(
                    "models/top.toml",
                    "[model]\nname = \"top\"\nextends = \"base.toml\"\n",
                )
            }],
        ),
        (
            "compare_report_with_negative_energy",
            vec!["--compare".into(), report.clone(), {
                let mut v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
                v["total_j"] = (-1.0).into();
                file("negative.json", &v.to_string())
            }],
        ),
        // A power the report's energy and time do not give (#23 note N6).
        (
            "compare_report_with_a_tripled_power",
            vec!["--compare".into(), report.clone(), {
                let mut v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
                v["avg_power_w"] = (v["avg_power_w"].as_f64().unwrap() * 3.0).into();
                file("power.json", &v.to_string())
            }],
        ),
        (
            "compare_report_with_a_huge_energy",
            vec!["--compare".into(), report.clone(), {
                let mut v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
                v["total_j"] = 1e308.into();
                file("huge.json", &v.to_string())
            }],
        ),
        (
            "stats_with_an_unknown_counter",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "counter.json", false, |v| {
                    v["counters"]["NOPE"] = 1.into();
                }),
            ],
        ),
        (
            "stats_with_an_unknown_unit_kind",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "kind.json", false, |v| {
                    v["units"][0]["kind"] = "gpu".into();
                }),
            ],
        ),
        (
            "stats_with_sample_series_of_different_lengths",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "series.json", false, |v| {
                    v["samples"]["components"]["DRAMP"]
                        .as_array_mut()
                        .unwrap()
                        .push(1.into());
                }),
            ],
        ),
        (
            "stats_with_zero_cycles",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "c0.json", false, |v| v["cycles"] = 0.into()),
            ],
        ),
        (
            "stats_whose_units_do_not_add_up",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "units.json", false, |v| {
                    v["units"][0]["issued"] = 1_000_000.into();
                }),
            ],
        ),
        (
            "stats_with_more_threads_than_warps_hold",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "threads.json", false, |v| {
                    let warp = v["instructions"]["warp"].as_u64().unwrap();
                    v["instructions"]["thread"] = (33 * warp).into();
                }),
            ],
        ),
        (
            "stats_with_a_unit_busy_longer_than_the_run",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "busy.json", false, |v| {
                    v["units"][0]["busy_cycles"] = 1_000_000_000.into();
                }),
            ],
        ),
        (
            "stats_whose_time_disagrees_with_the_cycles",
            vec![
                "--from-stats".into(),
                edited_stats(tmp, "time.json", false, |v| v["time_s"] = 1.0.into()),
            ],
        ),
        (
            "stats_with_a_key_twice",
            vec!["--from-stats".into(), {
                let text = std::fs::read_to_string(&timed).unwrap();
                file("twice.json", &text.replacen("{", "{\"cycles\": 5, ", 1))
            }],
        ),
        (
            "compare_report_with_a_key_twice",
            vec!["--compare".into(), timed.clone(), {
                let text = std::fs::read_to_string(&report).unwrap();
                file(
                    "twice_report.json",
                    &text.replacen("\"total_j\":", "\"total_j\": 0, \"total_j\":", 1),
                )
            }],
        ),
        (
            "model_extends_a_model_of_another_kind",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "classes.toml",
                    "[model]\nname = \"k\"\nkind = \"instruction-classes\"\nextends = \"default\"\n",
                ),
            ],
        ),
        (
            "model_extends_itself",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "models/self.toml",
                    "[model]\nname = \"s\"\nextends = \"self.toml\"\n",
                ),
            ],
        ),
        (
            "model_extends_in_a_cycle_of_two",
            vec!["samples/vecadd.spu".into(), "--model".into(), {
                file(
                    "models/two.toml",
                    "[model]\nname = \"two\"\nextends = \"one.toml\"\n",
                );
                file(
                    "models/one.toml",
                    "[model]\nname = \"one\"\nextends = \"two.toml\"\n",
                )
            }],
        ),
        (
            "model_extends_chain_too_long",
            vec!["samples/vecadd.spu".into(), "--model".into(), {
                for i in 0..9 {
                    file(
                        &format!("models/ch{i}.toml"),
                        &format!(
                            "[model]\nname = \"ch{i}\"\nextends = \"{}\"\n",
                            if i == 8 {
                                "default".to_string()
                            } else {
                                format!("ch{}.toml", i + 1)
                            }
                        ),
                    );
                }
                p("models/ch0.toml")
            }],
        ),
        (
            "model_quoted_number",
            vec![
                "samples/vecadd.spu".into(),
                "--model".into(),
                file(
                    "quoted.toml",
                    "[model]\nname = \"q\"\nextends = \"default\"\n[event_pj]\nIBP = \"5\"\n",
                ),
            ],
        ),
        (
            "html_from_stats",
            vec![
                "--from-stats".into(),
                timed.clone(),
                "--html".into(),
                p("s.html"),
            ],
        ),
        (
            "html_of_a_functional_run",
            vec![
                "samples/vecadd.spu".into(),
                "--functional".into(),
                "--html".into(),
                p("f.html"),
            ],
        ),
        (
            "html_on_the_report",
            vec![
                "samples/vecadd.spu".into(),
                "-o".into(),
                p("r.html"),
                "--html".into(),
                p("r.html"),
            ],
        ),
        (
            "compare_html_of_statistics",
            vec![
                "--compare".into(),
                timed.clone(),
                report.clone(),
                "--html".into(),
                p("c.html"),
            ],
        ),
        (
            "compare_a_page_with_no_data",
            vec![
                "--compare".into(),
                file("plain.html", "<!DOCTYPE html>\n<p>hello</p>\n"),
                report.clone(),
            ],
        ),
        (
            "compare_a_damaged_page",
            vec![
                "--compare".into(),
                file(
                    "damaged.html",
                    "<html><script type=\"application/json\" id=\"spu-data\">{\"format\": \"spu-page\", \"version\": 1, \"runs\": [</script>",
                ),
                report.clone(),
            ],
        ),
        (
            "compare_a_page_of_another_version",
            vec![
                "--compare".into(),
                file(
                    "v99.html",
                    "<html><script type=\"application/json\" id=\"spu-data\">{\"format\": \"spu-page\", \"version\": 99}</script>",
                ),
                report.clone(),
            ],
        ),
        (
            "compare_html_of_a_page_without_energy",
            vec![
                "--compare".into(),
                page.clone(),
                page.clone(),
                "--html".into(),
                p("ee.html"),
            ],
        ),
        (
            "compare_html_of_a_comparison",
            vec![
                "--compare".into(),
                pair.clone(),
                priced.clone(),
                "--html".into(),
                p("cc.html"),
            ],
        ),
    ];
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = spu_io::testing::outcome(&prof(&args), tmp);
        assert!(
            !text.contains("panicked") && !text.contains("root:"),
            "{name}:\n{text}"
        );
        insta::assert_snapshot!(format!("matrix_{name}"), text);
    }
}

/// Every `--option` the help names is one of spu-prof's (an option of another
/// tool is named with that tool, `spu-emu --list-params`).
#[test]
fn the_help_names_only_its_own_options() {
    let help = ok(&["--help"]);
    let own: Vec<&str> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| l.split([' ', ',', '=', '<', '[']))
        .filter(|w| w.starts_with("--"))
        .collect();
    assert!(own.contains(&"--machine"), "no options found in\n{help}");
    let words: Vec<&str> = help.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let name: String = w
            .trim_start_matches(['(', '`', '['])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.starts_with("--") || name.len() < 3 {
            continue;
        }
        let tool = i
            .checked_sub(1)
            .map(|j| words[j].trim_start_matches(['(', '`']));
        if tool.is_some_and(|t| t.starts_with("spu-") && t != "spu-prof") {
            continue;
        }
        assert!(
            own.contains(&name.as_str()),
            "the help names `{name}`, which spu-prof does not take:\n{help}"
        );
    }
}

/// A model file that is a named pipe nothing writes to is refused at once
/// instead of waited on (#23 note N1).
#[test]
fn a_model_pipe_without_a_writer_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("m.toml");
    if !spu_io::testing::make_fifo(&fifo) {
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_spu-prof"))
        .args(["samples/vecadd.spu", "-q", "--model"])
        .arg(&fifo)
        .current_dir(root())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("spu-prof waited on the pipe");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("it is a pipe or device that nothing writes to"),
        "{err}"
    );
}

/// Local memory on a GPU machine is DRAM traffic through the caches: statistics
/// whose `DRAMP` and `MCP` come from local words alone (a kernel with no global
/// access) read back and price as the run did.
#[test]
fn local_memory_statistics_of_a_gpu_run_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("strided.ptx");
    std::fs::write(
        &kernel,
        ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n\t.local .align 4 .b8 __local_depot0[128];\n\t.reg .b64 %SPL;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\tmov.u64 %SPL, __local_depot0;\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd1, %r1, 4;\n\tadd.s64 %rd2, %SPL, %rd1;\n\tst.local.u32 [%rd2], %r1;\n\tld.local.u32 %r2, [%rd2];\n\tret;\n}\n",
    )
    .unwrap();
    let kernel = kernel.display().to_string();
    let stats = dir.path().join("local.json").display().to_string();
    let direct = ok(&[&kernel, "--machine", "gtx480", "--stats", &stats]);
    let read = ok(&["--from-stats", &stats]);
    let line = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("| DRAMP"))
            .unwrap_or_else(|| panic!("no DRAMP line in\n{t}"))
            .to_string()
    };
    assert_eq!(line(&direct), line(&read));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(json["offchip"]["load_words"], 0, "{json}");
    assert_eq!(json["local"]["store_transactions"], 32, "{json}");
    assert!(json["counters"]["DRAMP"].as_u64().unwrap() > 0, "{json}");
}

/// A model whose dotted key has thousands of parts gets a message that says what
/// nests too deeply, not the parser's bare "recursion limit".
#[test]
fn a_model_key_nested_too_deeply_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("deep.toml");
    std::fs::write(&model, format!("{} = 1\n", vec!["a"; 20_000].join("."))).unwrap();
    fails(
        &[
            "samples/vecadd.spu",
            "--model",
            &model.display().to_string(),
        ],
        &["deep.toml", "keys nest too deeply"],
    );
}

#[test]
fn a_dash_i_folder_that_does_not_exist_or_is_a_file_is_refused() {
    fails(
        &["samples/vecadd.spu", "-I", "samples/nowhere"],
        &["`-I samples/nowhere`: no such folder"],
    );
    fails(
        &["samples/vecadd.spu", "-I", "samples/vecadd.spu"],
        &["`-I samples/vecadd.spu`: not a folder"],
    );
}

#[test]
fn a_parameter_set_twice_is_refused_naming_both() {
    fails(
        &["samples/vecadd.spu", "-D", "N=64", "-D", "N=128"],
        &["`-D N=64` and `-D N=128` both set parameter `N`"],
    );
}

/// A usage error (an unknown option, a bad option value, a wrong count of files)
/// exits with status 2, as the documentation says.
#[test]
fn usage_errors_exit_with_status_2() {
    for (args, needle) in [
        (
            &["samples/vecadd.spu", "--bogus"][..],
            "unexpected argument",
        ),
        (&["samples/vecadd.spu", "--format", "xml"], "invalid value"),
        (
            &["--compare", "a.json", "b.json", "c.json"],
            "`--compare` takes exactly two files, A and B, but 3 were given",
        ),
        (
            &["--compare", "a.json"],
            "`--compare` takes exactly two files, A and B, but only one was given",
        ),
    ] {
        let out = prof(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}:\n{err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected `{needle}` in\n{err}"
        );
    }
}
