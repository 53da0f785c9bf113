//! What `spu-prof` reads besides the kernel, from a hostile or damaged source: a
//! model's `extends` chain stays in the model's folder and each problem is blamed
//! on the file that has it; `--compare` reports and `--from-stats` statistics are
//! checked as strictly as a run's own, and huge numbers print in exponent form.

use std::path::Path;

mod common;
use common::{prof, text};

/// Runs `args`, expecting failure; returns standard error.
fn fails(args: &[&str]) -> String {
    let out = prof(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn write(path: &Path, body: &str) -> String {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(path, body).unwrap();
    path.display().to_string()
}

/// A model file whose first line is a secret, as a file of credentials would be.
const SECRET: &str =
    "aws_secret = hunter2-SECRET-LINE\n[model]\nname = \"secret\"\nextends = \"default\"\n";

#[test]
fn extends_stays_in_the_model_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("secret/creds.toml"), SECRET);
    let bad_secret = write(&d.join("secret/bad.toml"), "hunter2-SECRET-LINE =\n");
    let model = |name: &str, extends: &str| {
        write(
            &d.join("models").join(name),
            &format!("[model]\nname = \"m\"\nextends = \"{extends}\"\n"),
        )
    };
    std::fs::create_dir_all(d.join("models")).unwrap();
    std::os::unix::fs::symlink(d.join("secret/creds.toml"), d.join("models/link.toml")).unwrap();
    let cases = [
        (model("up.toml", "../secret/creds.toml"), "outside"),
        (model("syntax.toml", "../secret/bad.toml"), "outside"),
        (model("abs.toml", &bad_secret), "outside"),
        (model("link_to.toml", "link.toml"), "outside"),
        // A missing file outside the folder gets the same answer as an existing
        // one, so the message never tells whether a file exists there.
        (
            model("up_missing.toml", "../secret/missing.toml"),
            "outside",
        ),
        (model("abs_missing.toml", "/nonexistent/x.toml"), "outside"),
        (model("gone.toml", "gone/nothere.toml"), "cannot open"),
        (
            model("dev.toml", "/dev/zero"),
            "neither a built-in model nor a .toml file",
        ),
    ];
    for (m, needle) in cases {
        let err = fails(&["samples/vecadd.spu", "-q", "--model", &m]);
        assert!(err.contains(needle), "{m}: {err}");
        assert!(err.contains("model.extends"), "{m}: {err}");
        assert!(!err.contains("hunter2"), "{m} quoted the secret: {err}");
    }
    // Inside the folder, however deep, extending works.
    write(
        &d.join("models/base.toml"),
        "[model]\nname = \"base\"\nextends = \"sub/deeper.toml\"\n",
    );
    write(
        &d.join("models/sub/deeper.toml"),
        "[model]\nname = \"deeper\"\nextends = \"../leaf.toml\"\n",
    );
    write(
        &d.join("models/leaf.toml"),
        include_str!("../models/default.toml"),
    );
    let ok = prof(&[
        "samples/vecadd.spu",
        "-q",
        "--model",
        &model("top.toml", "base.toml"),
    ]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
}

#[test]
fn a_problem_in_an_extended_file_is_blamed_on_that_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = write(
        &d.join("base.toml"),
        &include_str!("../models/default.toml").replace("CBP = 160.0", "CBP = 160.0\nFOOP = 1.0"),
    );
    let top = write(
        &d.join("top.toml"),
        "[model]\nname = \"top\"\nextends = \"base.toml\"\n[event_pj]\nDRAMP = 1.0\n",
    );
    let err = fails(&["samples/vecadd.spu", "-q", "--model", &top]);
    assert!(
        err.contains(&format!("model `{base}`, key `event_pj.FOOP`")),
        "{err}"
    );
    // A problem the extending file has is still its own.
    let top_bad = write(
        &d.join("top_bad.toml"),
        "[model]\nname = \"top\"\nextends = \"default\"\n[event_pj]\nDRAMP = -1.0\n",
    );
    let err = fails(&["samples/vecadd.spu", "-q", "--model", &top_bad]);
    assert!(
        err.contains(&format!("model `{top_bad}`, key `event_pj.DRAMP`")),
        "{err}"
    );
}

/// An edit of a JSON document.
type Edit = Box<dyn Fn(&mut serde_json::Value)>;

/// A JSON report of vecadd, edited by `edit`.
fn report(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let out = prof(&["samples/vecadd.spu", "-q", "--format", "json"]);
    assert!(out.status.success());
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    edit(&mut v);
    write(&dir.join(name), &v.to_string())
}

#[test]
fn compare_refuses_reports_no_run_could_make() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = report(d, "good.json", |_| {});
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "negative.json",
            Box::new(|v| v["total_j"] = (-1.0).into()),
            "`total_j` is -1",
        ),
        (
            "huge.json",
            Box::new(|v| v["total_j"] = 1e308.into()),
            "`total_j` is 1e308",
        ),
        (
            "component.json",
            Box::new(|v| v["components"]["NOPE"] = 1.0.into()),
            "unknown component `NOPE`",
        ),
        (
            "clock.json",
            Box::new(|v| v["freq_mhz"] = 0.0.into()),
            "`freq_mhz` is 0",
        ),
        (
            "extra.json",
            Box::new(|v| v["surprise"] = 1.into()),
            "neither `spu-emu --stats` output nor",
        ),
        (
            "name.json",
            Box::new(|v| v["kernel"] = "k".repeat(100_000).into()),
            "longer than 4096 bytes",
        ),
    ];
    for (name, edit, needle) in cases {
        let bad = report(d, name, edit);
        let err = fails(&["--compare", &good, &bad]);
        assert!(err.contains(needle), "{name}: {err}");
        assert!(err.len() < 1000, "{name}: {} bytes", err.len());
    }
    let out = prof(&["--compare", &good, &good]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("1.000"));
}

/// Statistics of vecadd with power samples, edited by `edit`.
fn stats(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let path = dir.join(name);
    let out = prof(&[
        "samples/vecadd.spu",
        "-q",
        "--sample-interval",
        "100",
        "--stats",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut v);
    write(&path, &v.to_string())
}

#[test]
fn from_stats_refuses_statistics_no_run_could_make() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "counter.json",
            Box::new(|v| v["counters"]["NOPE"] = 1.into()),
            "unknown counter `NOPE`",
        ),
        (
            "missing.json",
            Box::new(|v| {
                v["counters"].as_object_mut().unwrap().remove("DRAMP");
            }),
            "lack `DRAMP`",
        ),
        (
            "kind.json",
            Box::new(|v| v["units"][0]["kind"] = "gpu".into()),
            "unknown unit kind `gpu`",
        ),
        (
            "side.json",
            Box::new(|v| v["units"][0]["side"] = "up".into()),
            "a `sm` unit needs",
        ),
        (
            "stall.json",
            Box::new(|v| v["pcs"][0]["stall_cycles"]["coffee"] = 1.into()),
            "unknown stall reason `coffee`",
        ),
        (
            "class.json",
            Box::new(|v| v["pcs"][0]["energy_class"] = "Magic".into()),
            "unknown energy class `Magic`",
        ),
        (
            "lengths.json",
            Box::new(|v| {
                v["samples"]["components"]["DRAMP"]
                    .as_array_mut()
                    .unwrap()
                    .push(1.into())
            }),
            "the sample series have different lengths",
        ),
        (
            "too_many.json",
            Box::new(|v| {
                for s in v["samples"]["components"]
                    .as_object_mut()
                    .unwrap()
                    .values_mut()
                {
                    let a = s.as_array_mut().unwrap();
                    a.extend(std::iter::repeat_n(serde_json::Value::from(0), 1000));
                }
            }),
            "cover more than the run's",
        ),
        (
            // Every series cut to its first 5 samples: a trace of 500 of the
            // run's cycles.
            "too_few.json",
            Box::new(|v| {
                for s in v["samples"]["components"]
                    .as_object_mut()
                    .unwrap()
                    .values_mut()
                {
                    s.as_array_mut().unwrap().truncate(5);
                }
            }),
            "5 samples of 100 cycles cover only 500 of the run's",
        ),
        (
            "sample_sum.json",
            Box::new(|v| {
                let total = v["counters"]["DRAMP"].as_u64().unwrap();
                v["samples"]["components"]["DRAMP"][0] = 1_000_000_000_000_000u64.into();
                let sum: u64 = v["samples"]["components"]["DRAMP"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .sum();
                assert_ne!(sum, total);
            }),
            "the `DRAMP` samples add up to 1000000000",
        ),
        (
            "time.json",
            Box::new(|v| v["time_s"] = (-1.0).into()),
            "`time_s` is -1",
        ),
        (
            // What a `--functional` run's stats look like with `functional`
            // turned off: a few rounds for many instructions.
            "issue.json",
            Box::new(|v| {
                let unit = v["units"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|u| u["kind"] == "sm" && u["issued"].as_u64().unwrap() > 2)
                    .expect("vecadd keeps an SM busy");
                unit["busy_cycles"] = 1.into();
            }),
            "more than its 2 schedulers (`sm.schedulers`) can issue in its 1 busy cycles",
        ),
    ];
    for (name, edit, needle) in cases {
        let bad = stats(d, name, edit);
        let err = fails(&["--from-stats", &bad]);
        assert!(
            err.contains("the statistics are damaged") && err.contains(needle),
            "{name}: {err}"
        );
    }
    let fine = stats(d, "fine.json", |_| {});
    let out = prof(&["--from-stats", &fine]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Statistics whose `machine` section is no valid machine are blamed on their
/// file, as every other problem of a statistics file is, and on the machine key
/// before any number computed from it (a clock of 1e308 MHz is out of range, not
/// a reason the run's time is wrong).
#[test]
fn an_invalid_machine_in_statistics_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, serde_json::Value, &str); 2] = [
        ("grid.cols", 0.into(), "grid.cols"),
        (
            "clock.freq_mhz",
            1e308.into(),
            "the number 1e308 is out of range: expected a number in 1..=10000",
        ),
    ];
    for (key, value, needle) in cases {
        let bad = stats(dir.path(), &format!("{key}.json"), |v| {
            v["machine"][key] = value.clone()
        });
        for args in [vec!["--from-stats", &bad], vec!["--compare", &bad, &bad]] {
            let err = fails(&args);
            assert!(
                err.contains(&format!("`{bad}`: the statistics name an invalid machine"))
                    && err.contains(key)
                    && err.contains(needle)
                    && !err.contains("time_s"),
                "{args:?}: {err}"
            );
            assert!(err.len() < 400, "{args:?}: {err}");
        }
    }
}

/// A statistics file's launch is held to the limits spu-emu keeps when it loads a
/// kernel, as a page's is, by `--from-stats` and `--compare` alike: a block no
/// machine runs, one beyond the machine's `sm.max_threads`, more IU threads than
/// `iu.max_threads`, passes the launch does not take on the machine, and a pass
/// mode other than the machine's.
#[test]
fn statistics_whose_launch_no_run_could_make_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "block.json",
            Box::new(|v| v["launch"]["block"] = serde_json::json!([100_000, 1, 1])),
            "`launch.grid` and `launch.block` make a grid of 16x1 blocks of 100000x1x1 \
             threads, but a block has at most 4096 threads along x",
        ),
        (
            "threads.json",
            Box::new(|v| v["launch"]["block"] = serde_json::json!([64, 32, 1])),
            "blocks of 64x32x1 threads, 2048 threads per block, but the `machine` section's \
             SMs run at most 1024 (`sm.max_threads`)",
        ),
        (
            "iu.json",
            Box::new(|v| v["launch"]["iu_threads"] = 5000.into()),
            "`launch.iu_threads` is 5000, but an Interface Unit runs at most 1024 threads",
        ),
        (
            "passes.json",
            Box::new(|v| v["passes"]["x"] = 9.into()),
            "`passes` is 9x1, but a launch of 16x1 blocks (`launch.grid`) on the `machine` \
             section's 4x4 SMs takes 4x1",
        ),
        (
            "mode.json",
            Box::new(|v| v["passes"]["mode"] = "sequential".into()),
            "`passes.mode` is `sequential`, but the `machine` section's `passes.mode` is \
             `overlapped`",
        ),
    ];
    for (name, edit, needle) in cases {
        let bad = stats(dir.path(), name, edit);
        for args in [vec!["--from-stats", &bad], vec!["--compare", &bad, &bad]] {
            let err = fails(&args);
            assert!(
                err.contains(&format!("`{bad}`: the statistics are damaged"))
                    && err.contains(needle)
                    // A run's option is no fix for a file.
                    && !err.contains("--set"),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn huge_energies_print_in_exponent_form() {
    use spu_prof::report::{fixed, joules};
    assert_eq!(joules(1e308), "1.0000e308 J");
    assert_eq!(joules(2.5), "2.5000 J");
    assert_eq!(fixed(1e300, 2), "1.00e300");
    assert_eq!(fixed(-3.25, 1), "-3.2");
    // A model that prices a run at about 1e300 J: every report stays short.
    let dir = tempfile::tempdir().unwrap();
    let model = write(
        &dir.path().join("huge.toml"),
        "[model]\nname = \"huge\"\nextends = \"default\"\n[event_pj]\nFPUP = 1e290\n",
    );
    let json = dir.path().join("huge.json");
    let out = prof(&[
        "samples/vecadd.spu",
        "-q",
        "--model",
        &model,
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let j = json.to_str().unwrap();
    for args in [
        vec!["samples/vecadd.spu", "-q", "--model", &model],
        vec![
            "samples/vecadd.spu",
            "-q",
            "--model",
            &model,
            "--format",
            "csv",
        ],
        vec!["--compare", j, j],
    ] {
        let out = prof(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let longest = text(&out.stdout).lines().map(str::len).max().unwrap_or(0);
        assert!(longest < 300, "{args:?}: a line of {longest} bytes");
    }
}

/// A JSON bomb: an array of small objects, which as a generic tree would cost
/// about a hundred times its text.
fn bomb(n: usize) -> String {
    format!("[{}]", vec![r#"{"a":0}"#; n].join(","))
}

/// JSON is checked as it is read, before anything is built from it: a document
/// that is not an object is refused at its first byte, an unknown key where it
/// is met (the message says where), and a page's data block that is damaged is
/// called damaged, with its place in the page.
#[test]
fn json_is_refused_where_it_goes_wrong_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = report(d, "good.json", |_| {});
    let array = write(&d.join("array.json"), &bomb(400_000));
    for args in [
        vec!["--from-stats", &array],
        vec!["--compare", &good, &array],
    ] {
        let err = fails(&args);
        assert!(
            err.contains("top level is an array, not an object (line 1, column 1)"),
            "{err}"
        );
    }
    let junk = stats(d, "junk.json", |v| {
        v["junk"] = serde_json::from_str(&bomb(1000)).unwrap();
    });
    for args in [vec!["--from-stats", &junk], vec!["--compare", &junk, &good]] {
        let err = fails(&args);
        assert!(
            err.contains("unknown field `junk`") && err.contains(" at line 1 column "),
            "{err}"
        );
    }
    let machine = stats(d, "machine.json", |v| {
        v["machine"]["sm.schedulers"] = serde_json::from_str(&bomb(1000)).unwrap();
    });
    let err = fails(&["--from-stats", &machine]);
    assert!(
        err.contains("invalid type: sequence, expected a number or a word"),
        "{err}"
    );
    let page = write(
        &d.join("bomb.html"),
        &format!(
            "<html>\n<script type=\"application/json\" id=\"spu-data\">{}</script>\n",
            bomb(400_000)
        ),
    );
    let err = fails(&["--compare", &page, &good]);
    assert!(
        err.contains("has a damaged data block (line 2, column 47: it is an array, not an object)"),
        "{err}"
    );
    let unclosed = write(
        &d.join("unclosed.html"),
        "<html>\n<script type=\"application/json\" id=\"spu-data\">{\"format\": \"spu-page\",\n\"version\": 1, \"runs\": [</script>",
    );
    let err = fails(&["--compare", &unclosed, &good]);
    assert!(err.contains("(line 3, column 23: "), "{err}");
}

/// The 1-based line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

#[test]
fn a_page_with_unknown_keys_or_two_data_blocks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = report(d, "good.json", |_| {});
    let priced = d.join("priced.html").display().to_string();
    let out = prof(&["samples/vecadd.spu", "-q", "--html", &priced]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(&priced).unwrap();
    // The page as written reads back.
    let out = prof(&["-q", "--compare", &priced, &good]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let open = "id=\"spu-data\">";
    let data = page.find(open).unwrap() + open.len();
    let edited = |name: &str, from: &str, to: &str| {
        assert!(page.contains(from), "{from}");
        write(&d.join(name), &page.replacen(from, to, 1))
    };
    for (path, key) in [
        (
            edited("top.html", "{\"format\"", "{\"junk\":1,\"format\""),
            "junk",
        ),
        (
            edited("run.html", "\"runs\":[{", "\"runs\":[{\"zzz\":5,"),
            "zzz",
        ),
        (
            edited("machine.html", "\"machine\":{", "\"machine\":{\"zz\":[],"),
            "zz",
        ),
    ] {
        let err = fails(&["--compare", &path, &good]);
        assert!(
            err.contains(&format!(
                "has a damaged data block (line {}, column ",
                line_of(&page, data)
            )) && err.contains(&format!("unknown field `{key}`")),
            "{err}"
        );
    }
    // The energy spu-prof adds is as strict.
    for (path, key) in [
        (
            edited("energy.html", "\"energy\":{", "\"energy\":{\"zzz\":5,"),
            "zzz",
        ),
        (
            edited(
                "breakdown.html",
                "\"breakdown\":{",
                "\"breakdown\":{\"qq\":5,",
            ),
            "qq",
        ),
    ] {
        let err = fails(&["--compare", &path, &good]);
        assert!(
            err.contains("the page's energy is damaged: unknown field")
                && err.contains(&format!("`{key}`")),
            "{err}"
        );
    }
    // A second block (pages joined by hand) is refused, not ignored.
    let start = page.find("<script type=\"application/json\"").unwrap();
    let end = data + page[data..].find("</script>").unwrap() + "</script>".len();
    let block = &page[start..end];
    let twice = page.replacen(block, &format!("{block}\n{block}"), 1);
    let path = write(&d.join("twice.html"), &twice);
    let err = fails(&["--compare", &path, &good]);
    let first = line_of(&page, data);
    let second = line_of(&twice, end + 1 + (data - start));
    assert!(
        err.contains(&format!(
            "has two data blocks (from line {first} and from line {second})"
        )),
        "{err}"
    );
}

/// Power samples of a run of many cycles at `--sample-interval 1` stay bounded:
/// the grid's 32 units keep at most 32 768 snapshots each (1 048 576 together),
/// doubling the interval as needed, so the stats are readable again (a 654 000-cycle
/// run kept every cycle: 3.2 GiB, and a 138 MB stats file `--from-stats` refused).
#[test]
fn samples_at_every_cycle_stay_within_what_the_profiler_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let out = prof(&[
        "samples/stencil2d/stencil_pc.spu",
        "-D",
        "N=64",
        "-D",
        "K=64",
        "-q",
        "--sample-interval",
        "1",
        "--stats",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let cycles = v["cycles"].as_u64().unwrap();
    let interval = v["samples"]["interval_cycles"].as_u64().unwrap();
    assert!(cycles > 32_768, "a run of {cycles} cycles");
    assert!(
        interval > 1 && cycles.div_ceil(interval) <= 32_768,
        "{interval}"
    );
    let out = prof(&["--from-stats", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
