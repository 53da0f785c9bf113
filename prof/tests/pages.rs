//! Pages read back by `--compare A.html B.html`: pages as `--html` writes them (SPU
//! and GPU, one or several blocks per SM, sampled at a chosen interval) compare,
//! and their comparison page plays in a browser; a page whose data contradict
//! themselves (an index past what it points into, a machine its units do not fit,
//! frames and series that do not cover the run) is refused, saying what is wrong
//! and where, and no comparison page is written.

use spu_emu::observe::html::{self, PageData, PageRun};
use std::path::Path;
use std::process::Command;

mod common;
use common::{prof, text};

/// A page of `kernel` run with `args`, written into `dir` as `name`.
fn page(dir: &Path, name: &str, kernel: &str, args: &[&str]) -> String {
    let path = dir.join(name).display().to_string();
    let mut all = vec![kernel, "-q", "-o", "/dev/null", "--html", &path];
    all.extend_from_slice(args);
    let out = prof(&all);
    assert!(out.status.success(), "{all:?}: {}", text(&out.stderr));
    path
}

fn data(path: &str) -> PageData {
    html::read(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Errors a browser's console reports while the page at `path` loads, or `None`
/// when no headless Chromium is installed.
fn browser_errors(path: &str) -> Option<Vec<String>> {
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })?;
    let out = Command::new("timeout")
        .args([
            "120",
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
            "--dump-dom",
            path,
        ])
        .output()
        .expect("the browser runs");
    assert!(
        out.status.success(),
        "the browser failed on {path}: {}",
        text(&out.stderr)
    );
    Some(
        text(&out.stderr)
            .lines()
            .filter(|l| l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("Error")))
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn pages_as_written_compare_and_their_comparison_plays() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pages = [
        page(d, "spu.html", "samples/vecadd.spu", &[]),
        page(d, "dma.html", "samples/vecadd.spu", &["--boundary", "dma"]),
        page(
            d,
            "fold.html",
            "samples/vecadd.spu",
            &["--set", "sm.fold_x=2"],
        ),
        page(
            d,
            "gpu.html",
            "samples/vecadd.spu",
            &["--machine", "gtx480"],
        ),
        page(
            d,
            "interval.html",
            "samples/reduction.spu",
            &["--sample-interval", "7"],
        ),
        // More sampled intervals than a page has frames: its power trace keeps
        // them all, the page merges them.
        page(
            d,
            "merged.html",
            "samples/matmul.spu",
            &["--sample-interval", "1", "--set", "memory.bandwidth_gbs=1"],
        ),
    ];
    // A run drawn at frames of 512 cycles (one with more stretches than a page
    // holds exactly) ends its last stretch at the end of the last whole frame.
    let mut coarse = data(&pages[0]);
    let run = &mut coarse.runs[0];
    run.resolution_cycles = 512;
    let last = run.cycles.div_ceil(512) * 512;
    let stretches = &mut run.units[0].stretches;
    let end = stretches.len() - 3;
    stretches[end] = last;
    let coarse_path = d.join("coarse.html");
    std::fs::write(&coarse_path, html::page(&coarse)).unwrap();
    // The page does not say `sm.max_threads`: a block of as many threads as the
    // machine table lets an SM run (raised from the 1024 of CUDA) compares.
    let mut raised = data(&pages[0]);
    raised.runs[0].block = [64, 64, 1];
    let raised_path = d.join("raised.html");
    std::fs::write(&raised_path, html::page(&raised)).unwrap();
    let mut pages = pages.to_vec();
    pages.push(coarse_path.display().to_string());
    pages.push(raised_path.display().to_string());
    let ab = d.join("ab.html").display().to_string();
    for p in &pages {
        let out = prof(&["--compare", p, &pages[0], "-o", "/dev/null", "--html", &ab]);
        assert!(out.status.success(), "{p}: {}", text(&out.stderr));
    }
    match browser_errors(&ab) {
        Some(errors) => assert!(errors.is_empty(), "{errors:?}"),
        None => println!("skipped loading the comparison page: no headless Chromium installed"),
    }
}

#[test]
fn pages_whose_data_contradict_themselves_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = page(d, "good.html", "samples/vecadd.spu", &[]);
    let base = data(&good);
    type Edit = fn(&mut PageRun);
    let cases: &[(&str, Edit, &str)] = &[
        (
            "state_past_the_states",
            |r| r.units[0].stretches[2] = r.states.len() as u64,
            "unit 0 (`SM (0,0)`): stretch 0 names state 13, but the page has 13 states (0 to 12)",
        ),
        (
            "state_99",
            |r| r.units[0].stretches = vec![0, 10, 99, 0],
            "stretch 0 names state 99",
        ),
        (
            "no_states",
            |r| r.states.clear(),
            "`states` lists 0 states, but a page of this version has 13",
        ),
        (
            "partner_9999",
            |r| r.units[0].ports[0].partner = 9999,
            "unit 0 (`SM (0,0)`): port 0 links to unit 9999, but the page has 32 units",
        ),
        (
            "line_in_source_7",
            |r| r.lines[0].file = Some(7),
            "is in source file 7, but the page has 1 source file",
        ),
        (
            "unit_kind_gpu",
            |r| r.units[0].kind = "gpu".into(),
            "unit 0: unknown unit kind `gpu`; expected sm, iu or dma",
        ),
        (
            "series_of_one",
            |r| r.series.busy = vec![1],
            "`series.busy` has 1 value, but the run's 2479 cycles in frames of 2",
        ),
        (
            "odd_stretches",
            |r| r.units[0].stretches.truncate(3),
            "`stretches` has 3 numbers, but it lists stretches of four",
        ),
        (
            "launch_of_9x9",
            |r| r.grid = [9, 9],
            "`passes` is 4x1, but a launch of 9x9 blocks (`grid`) on the page's 4x4 SMs takes 3x3",
        ),
        (
            "no_units",
            |r| r.units.clear(),
            "say 4x4 = 16 SMs, but the file has 0 SM units",
        ),
        (
            "frame_of_0",
            |r| r.frame_cycles = 0,
            "`frame_cycles` is 0; it must be 1 or more",
        ),
        (
            "stretch_past_the_run",
            |r| r.units[0].stretches = vec![0, 999_999_999, 1, 0],
            "stretch 0 ends at cycle 999999999, past the run's 2479 cycles",
        ),
        (
            "series_of_3_million",
            |r| r.series.busy = vec![0; 3_000_000],
            "`series.busy` has 3000000 values",
        ),
        (
            "line_past_the_lines",
            |r| r.units[0].lines[0] = 5000,
            "`lines` names line 5000",
        ),
        (
            "energy_of_other_units",
            |r| {
                let e = r.energy.as_mut().unwrap();
                e["units"].as_array_mut().unwrap().pop();
            },
            "the page's energy is damaged: it prices 31 units, but the page has 32",
        ),
        (
            "cb_of_0_kib",
            |r| r.machine.cb_kib = 0,
            "`machine.cb_kib` is `0`, not a machine the machine table allows (machine key \
             `cb.size_kib`: the integer 0 is out of range: expected an integer in 1..=1024)",
        ),
        (
            "cb_of_5000000_kib",
            |r| r.machine.cb_kib = 5_000_000,
            "`machine.cb_kib` is `5000000`, not a machine the machine table allows",
        ),
        (
            "l1_of_99999999_kib",
            |r| r.machine.l1_kib = 99_999_999,
            "`machine.l1_kib` is `99999999`, not a machine the machine table allows",
        ),
        (
            "l2_of_99999999_kib",
            |r| r.machine.l2_kib = 99_999_999,
            "`machine.l2_kib` is `99999999`, not a machine the machine table allows",
        ),
        (
            "block_of_100000",
            |r| r.block = [100_000, 1, 1],
            "the launch is a grid of 16x1 blocks of 100000x1x1 threads, but a block has at \
             most 4096 threads along x",
        ),
        (
            "block_z_of_65",
            |r| r.block = [1, 1, 65],
            "a block has at most 64 threads along z",
        ),
        (
            "grid_of_2_to_the_25",
            |r| r.grid = [1 << 25, 1],
            "a launch grid has at most 16777216 blocks along x and along y",
        ),
        (
            "block_of_8192_threads",
            |r| r.block = [64, 64, 2],
            "blocks of 64x64x2 threads, 8192 threads per block, but the page's SMs run at \
             most 4096 (`sm.max_threads`)",
        ),
        (
            "grid_of_4096x4096",
            |r| r.grid = [4096, 4096],
            "the launch is a grid of 4096x4096 blocks of 256x1x1 threads, but a launch has at \
             most 4194304 blocks",
        ),
        (
            "power_trace_of_5",
            |r| {
                let e = r.energy.as_mut().unwrap();
                let sample = serde_json::json!({"t_s": 0.0, "dynamic_w": 0.0});
                e["breakdown"]["power_trace"] = serde_json::json!(vec![sample; 5]);
            },
            "the page's energy is damaged: its power trace has 5 values, but the page's run \
             has 1240 frames of 2 cycles",
        ),
        (
            "energy_of_another_machine",
            |r| {
                let e = r.energy.as_mut().unwrap();
                e["breakdown"]["machine"] = "GPU, 15 SMs".into();
            },
            "the page's energy is damaged: it prices a run at 700 MHz on `GPU, 15 SMs`, but \
             the page's run is at 700 MHz on `4x4 SMs, iu boundary",
        ),
    ];
    let ab = d.join("ab.html");
    for (name, edit, needle) in cases {
        let mut bad = base.clone();
        edit(&mut bad.runs[0]);
        let path = d.join(format!("{name}.html"));
        std::fs::write(&path, html::page(&bad)).unwrap();
        let path = path.display().to_string();
        for html_out in [false, true] {
            let mut args = vec!["--compare", &path, &good];
            let ab = ab.display().to_string();
            if html_out {
                args.extend(["--html", &ab]);
            }
            let out = prof(&args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name}: {err}");
            assert!(
                err.contains(&format!("`{path}`: the page's")) && err.contains(needle),
                "{name}: expected `{needle}` in\n{err}"
            );
            assert!(!err.contains("panicked"), "{err}");
            assert!(
                !ab.is_empty() && !Path::new(&ab).exists(),
                "{name}: wrote {ab}"
            );
        }
    }
}

/// `--compare A B --html` with statistics instead of pages is refused before
/// anything is written: no table on standard output, no page.
#[test]
fn a_comparison_page_of_statistics_is_refused_before_the_table_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("a.json").display().to_string();
    let run = prof(&[
        "samples/vecadd.spu",
        "-q",
        "-o",
        "/dev/null",
        "--stats",
        &stats,
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let out_page = dir.path().join("ab.html");
    let out = prof(&[
        "--compare",
        &stats,
        &stats,
        "--html",
        out_page.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("is not a page written by `--html`"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "printed: {}", text(&out.stdout));
    assert!(!out_page.exists());
}
