//! The activity timeline: well-formed SVG with one row per working unit, a legend
//! and pass marks, and pictures that tell the pass modes apart (sequential passes
//! leave every SM idle between passes; overlapped ones do not).

use spu_emu::observe::activity::Activity;
use spu_emu::{Machine, RunControl};
use std::path::Path;

fn run(mode: &str) -> (spu_emu::RunResult, Machine) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/stencil2d/stencil_pc.spu");
    let mut m = Machine::default();
    m.set_grid("2x2").unwrap();
    m.set(&format!("passes.mode={mode}")).unwrap();
    let options = spu_emu::LoadOptions {
        defines: vec!["N=128".into(), "K=32".into()],
        ..Default::default()
    };
    let control = RunControl {
        activity: true,
        ..RunControl::default()
    };
    let run = spu_emu::cli::session::run_file(&path, &m, &options, control).unwrap();
    (run.result, m)
}

/// Cycles SM 0 spends idle between its first and last work.
fn sm0_idle_gaps(r: &spu_emu::RunResult) -> u64 {
    let segs = &r.activity.as_ref().unwrap().units[0];
    segs.windows(2).map(|w| w[1].start - w[0].end).sum()
}

#[test]
fn timelines_show_the_pass_structure() {
    for mode in ["overlapped", "sequential"] {
        let (r, m) = run(mode);
        let log = r.activity.as_ref().unwrap();
        let labels: Vec<_> = r.units.iter().map(|u| u.label).collect();
        let svg = spu_emu::observe::timeline::svg(
            log,
            &labels,
            r.cycles,
            r.passes[0],
            &format!("stencil, {mode}"),
        );
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let rows = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("row"))
            .count();
        // 4 SMs + 8 boundary units, all working (2x2 passes on 2x2).
        assert_eq!(rows, 12, "{mode}");
        let labels = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("row-label"))
            .count();
        assert_eq!(labels, 12, "{mode}: one label per row at this size");
        let passes = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("pass-mark"))
            .count();
        assert_eq!(passes, 4, "{mode}: a mark per pass (2x2 passes)");
        let legend: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("legend-entry"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            legend.contains(&"computing") && legend.iter().any(|l| l.contains("spill")),
            "{legend:?}"
        );
        let waits = log
            .units
            .iter()
            .flatten()
            .filter(|s| matches!(s.activity, Activity::Wait(_)))
            .count();
        assert!(waits > 0, "{mode}: waits at blocksync are recorded");
        let ticks = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("item-start"))
            .count();
        assert!(ticks >= 16, "{mode}: a tick per work item");
        // Every unit's drawn time adds up to its busy cycles plus its waits for
        // spill streams, which are drawn as such and not counted busy.
        for (u, segs) in log.units.iter().enumerate() {
            let drawn: u64 = segs.iter().map(|s| s.end - s.start).sum();
            let waited: u64 = segs
                .iter()
                .filter(|s| s.activity == Activity::SpillWait)
                .map(|s| s.end - s.start)
                .sum();
            let t = &r.units[u];
            assert_eq!(waited, t.spill_wait_cycles, "{mode}: unit {u}");
            assert_eq!(
                drawn,
                t.busy_cycles + t.spill_wait_cycles,
                "{mode}: unit {u}"
            );
        }
        // Time axis: round ticks (a 1-2-5 step) whose labels stay in the picture.
        let ticks: Vec<(f64, u64)> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("tick"))
            .filter_map(|g| g.descendants().find(|n| n.has_tag_name("text")))
            .map(|t| {
                let x: f64 = t.attribute("x").unwrap().parse().unwrap();
                let v: u64 = t.text().unwrap().replace(' ', "").parse().unwrap();
                (x, v)
            })
            .collect();
        assert!(ticks.len() >= 4, "{mode}: {ticks:?}");
        let step = ticks[1].1;
        let power = 10u64.pow(step.ilog10());
        assert!(
            step % power == 0 && [1, 2, 5].contains(&(step / power)),
            "{mode}: step {step}"
        );
        for (k, (x, v)) in ticks.iter().enumerate() {
            assert_eq!(*v, k as u64 * step, "{mode}");
            let half = v.to_string().len() as f64 * 3.5;
            assert!(
                *x + half <= 1100.0,
                "{mode}: label {v} at {x} leaves the picture"
            );
        }
        let _ = m;
    }
    let (seq, _) = run("sequential");
    let (ovl, _) = run("overlapped");
    let waits =
        |r: &spu_emu::RunResult| -> u64 { r.units.iter().map(|u| u.spill_wait_cycles).sum() };
    assert!(
        waits(&ovl) > 0,
        "overlapped passes start restoring virtual IUs before their spills exist"
    );
    assert!(
        sm0_idle_gaps(&seq) > 0,
        "sequential passes leave SM (0,0) idle between passes"
    );
    assert_eq!(
        sm0_idle_gaps(&ovl),
        0,
        "overlapped passes keep SM (0,0) busy"
    );
}

/// A launch of 65 536 one-thread blocks (4 096 passes of the 4x4 grid) draws a
/// picture of bounded size: stretches and marks closer than half a pixel are one
/// bar or one line (it drew every block: 24 MB, and a 1 024 x 1 024 launch 388 MB
/// in 79 s).
#[test]
fn a_timeline_of_many_blocks_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("many.spu");
    std::fs::write(
        &kernel,
        ".launch grid(256, 256) block(1);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let control = RunControl {
        activity: true,
        ..RunControl::default()
    };
    let m = Machine::default();
    let run = spu_emu::cli::session::run_file(&kernel, &m, &Default::default(), control).unwrap();
    let r = run.result;
    let log = r.activity.as_ref().unwrap();
    let stretches: usize = log.units.iter().map(Vec::len).sum();
    assert!(stretches >= 65_536, "{stretches} stretches recorded");
    let labels: Vec<_> = r.units.iter().map(|u| u.label).collect();
    let svg = spu_emu::observe::timeline::svg(log, &labels, r.cycles, r.passes[0], "many");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
    // At most about two bars and one mark per pixel of each row (16 SMs, 16 IUs).
    let rows = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("row"))
        .count();
    assert!(rows <= 32, "{rows} rows");
    assert!(count("rect") < rows * 2 * 1100, "{} bars", count("rect"));
    assert!(svg.len() < 12 << 20, "{} bytes", svg.len());
    let marks = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("pass-mark"))
        .count();
    assert!((1..=2200).contains(&marks), "{marks} pass marks");
}
