//! The replay page (`--html`): the same run gives the same bytes for any
//! `--threads` and leaves `--stats` as it is; and, in a headless Chromium, the page
//! opens from disk with no console errors and no network, shows each unit in the
//! state the run's own activity log gives at the slider's cycle, opens a clicked
//! unit's panel with the counters of `--stats`, and draws something at three
//! moments (screenshots kept in the target folder to be looked at). The browser
//! tests are skipped, with the reason printed, when no Chromium is found, unless
//! `SPU_REQUIRE_CHROMIUM=1` (CI) makes that a failure. Headless Firefox, when
//! found, is checked to draw the page too.

use serde_json::Value;
use spu_emu::observe::activity::Activity;
use spu_emu::observe::html::frames::activity_at;
use spu_tests::browser::{self, Browser};
use spu_tests::{binary, repo_path};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A stencil with 2x2 passes that runs in about a second.
const STENCIL: &[&str] = &[
    "samples/stencil2d/stencil_pc.spu",
    "-D",
    "N=256",
    "-D",
    "K=32",
];

fn tool(name: &str, args: &[&str]) -> String {
    let out = Command::new(binary(name))
        .args(args)
        .current_dir(repo_path("."))
        .output()
        .expect("tool runs");
    assert!(
        out.status.success(),
        "{name} {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|s| s.to_string()).collect()
}

fn run_tool(name: &str, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(name, &args)
}

#[test]
fn a_page_is_the_same_for_any_threads_and_leaves_the_statistics_alone() {
    let dir = tempfile::tempdir().unwrap();
    let f = |n: &str| arg(&dir.path().join(n));
    // Without and with --html, with and without samples asked for.
    run_tool(
        "spu-emu",
        &with(STENCIL, &["-q", "--stats", &f("plain.json")]),
    );
    run_tool(
        "spu-emu",
        &with(
            STENCIL,
            &[
                "-q",
                "--stats",
                &f("page.json"),
                "--html",
                &f("t1.html"),
                "--threads",
                "1",
            ],
        ),
    );
    run_tool(
        "spu-emu",
        &with(STENCIL, &["-q", "--html", &f("t2.html"), "--threads", "2"]),
    );
    let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
    assert!(
        read("plain.json") == read("page.json"),
        "--html changed --stats"
    );
    assert!(
        read("t1.html") == read("t2.html"),
        "--threads changed the page"
    );
    let sampled = ["--sample-interval", "700"];
    run_tool(
        "spu-emu",
        &with(
            STENCIL,
            &[&["-q", "--stats", &f("s1.json")][..], &sampled].concat(),
        ),
    );
    run_tool(
        "spu-emu",
        &with(
            STENCIL,
            &[
                &["-q", "--stats", &f("s2.json"), "--html", &f("s.html")][..],
                &sampled,
            ]
            .concat(),
        ),
    );
    assert!(
        read("s1.json") == read("s2.json"),
        "--html changed sampled --stats"
    );
    // The profiler's page carries energy and is as deterministic.
    run_tool(
        "spu-prof",
        &with(STENCIL, &["-q", "--html", &f("p1.html"), "--threads", "1"]),
    );
    run_tool(
        "spu-prof",
        &with(STENCIL, &["-q", "--html", &f("p2.html"), "--threads", "2"]),
    );
    assert!(
        read("p1.html") == read("p2.html"),
        "--threads changed the profiler's page"
    );
    let data = spu_emu::observe::html::read(&String::from_utf8(read("p1.html")).unwrap()).unwrap();
    assert!(data.runs[0].energy.is_some());
    // The SVG namespace is a name, not a place the page goes to.
    let text = String::from_utf8(read("p1.html"))
        .unwrap()
        .replace("http://www.w3.org/2000/svg", "");
    assert!(
        !text.contains("http://") && !text.contains("https://") && !text.contains(" src="),
        "the page refers to nothing outside itself"
    );
}

/// The run's own activity, unit by unit, as the emulator records it.
fn activity_log() -> (Vec<Vec<spu_emu::observe::activity::Segment>>, u64) {
    let path = repo_path(STENCIL[0]);
    let kernel = spu_emu::read_kernel(&path).unwrap();
    let machine = spu_emu::Machine::default();
    let options = spu_emu::LoadOptions {
        defines: vec!["N=256".into(), "K=32".into()],
        ..Default::default()
    };
    let mut image = spu_emu::load(kernel.module, &machine, &options).unwrap();
    let control = spu_emu::RunControl {
        activity: true,
        ..Default::default()
    };
    let result = spu_emu::simulate(&mut image, &machine, control, &mut |_| {}).unwrap();
    (result.activity.unwrap().units, result.cycles)
}

/// A browser, or the reason the browser tests are skipped.
fn browser() -> Option<Browser> {
    match browser::find_chromium() {
        Ok(exe) => Some(Browser::launch(&exe, 1400, 1000).unwrap_or_else(|e| panic!("{e}"))),
        Err(why) if browser::required() => panic!("SPU_REQUIRE_CHROMIUM=1 but {why}"),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

fn shots_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("page-shots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Moves the slider to `t` as a person dragging it would (an `input` event).
fn slide(b: &mut Browser, t: u64) {
    b.eval(&format!(
        "(() => {{ const s = document.getElementById('slider'); s.value = '{t}'; s.dispatchEvent(new Event('input')); }})()"
    ))
    .unwrap();
}

fn no_errors(b: &Browser, what: &str) {
    assert!(b.errors().is_empty(), "{what}: {:?}", b.errors());
    assert!(
        b.network_requests().is_empty(),
        "{what}: {:?}",
        b.network_requests()
    );
}

#[test]
fn the_page_replays_the_run_in_a_browser() {
    let Some(mut b) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("run.html");
    let stats = dir.path().join("run.json");
    run_tool(
        "spu-prof",
        &with(
            STENCIL,
            &["-q", "--html", &arg(&page), "--stats", &arg(&stats)],
        ),
    );
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let blank = b.screenshot().unwrap();
    b.open(&page).unwrap();
    no_errors(&b, "opening the page");

    // Unit states against the run's own log, at cycles through the run.
    let (log, cycles) = activity_log();
    assert_eq!(stats["cycles"].as_u64(), Some(cycles));
    let resolution = b
        .eval(
            "JSON.parse(document.getElementById('spu-data').textContent).runs[0].resolution_cycles",
        )
        .unwrap();
    assert_eq!(resolution, 1, "a short run is shown exactly");
    let mut seen = std::collections::BTreeSet::new();
    for k in 0..40u64 {
        let c = cycles * k / 40 + k * 13;
        slide(&mut b, c);
        let shown = b
            .eval("[...document.querySelectorAll('svg.machine rect.unit')].map((r) => [Number(r.dataset.unit), r.dataset.state])")
            .unwrap();
        let shown = shown.as_array().unwrap();
        assert_eq!(shown.len(), log.len());
        for s in shown {
            let u = s[0].as_u64().unwrap() as usize;
            let want = activity_at(&log[u], c);
            assert_eq!(s[1].as_str(), Some(want.name()), "unit {u} at cycle {c}");
            seen.insert(want.name());
        }
        let clock = b
            .eval("document.getElementById('clock').textContent")
            .unwrap();
        let grouped = c.to_string();
        assert!(
            clock
                .as_str()
                .unwrap()
                .replace('\u{202f}', "")
                .contains(&format!("cycle {grouped} of")),
            "{clock}"
        );
    }
    for a in [Activity::Compute, Activity::IuCode, Activity::Idle] {
        assert!(seen.contains(a.name()), "{} never seen: {seen:?}", a.name());
    }
    assert!(seen.iter().any(|s| s.starts_with("waiting")), "{seen:?}");

    // Stepping moves by one frame.
    slide(&mut b, 0);
    b.click("#fwd").unwrap();
    let t = b
        .eval("Number(document.getElementById('slider').value)")
        .unwrap();
    let step = b
        .eval("JSON.parse(document.getElementById('spu-data').textContent).runs[0].frame_cycles")
        .unwrap();
    assert_eq!(t, step);

    // A clicked unit's panel: its counters as --stats gives them.
    for u in [5usize, 0, 17] {
        b.click(&format!("svg.machine rect.unit[data-unit=\"{u}\"]"))
            .unwrap();
        let want = &stats["units"][u];
        let name = b
            .eval("document.getElementById('panel').dataset.unit")
            .unwrap();
        let kind = want["kind"].as_str().unwrap();
        assert!(
            name.as_str().unwrap().to_lowercase().contains(kind),
            "{name} for a unit of kind {kind}"
        );
        for key in ["work_items", "busy_cycles", "issued"] {
            let cell = b
                .eval(&format!(
                    "(() => {{ const r = document.querySelector('#panel tr[data-key=\"{key}\"] td.num'); return r ? r.textContent.replace(/\\u202f/g, '') : null; }})()"
                ))
                .unwrap();
            let n = want[key].as_u64().unwrap();
            if n == 0 && cell.is_null() {
                continue;
            }
            assert_eq!(
                cell.as_str(),
                Some(n.to_string().as_str()),
                "unit {u} {key}"
            );
        }
        let energy = b
            .eval("document.querySelector('#panel tr[data-key=\"dynamic\"]') !== null")
            .unwrap();
        assert_eq!(energy, true, "unit {u} shows its energy");
    }
    // A clicked source line outlines the units that ran it.
    b.click("#kernel tr.has-code").unwrap();
    let ran = b
        .eval("document.querySelectorAll('rect.unit.ran-line').length")
        .unwrap();
    assert!(ran.as_u64().unwrap() > 0, "no unit ran the first line");
    // ... and the strip under the slider shows when: frames that add up to the
    // line's warp instructions, drawn.
    let when = line_when(&mut b);
    assert!(when.frames > 0, "the first line ran in no frame: {when:?}");
    assert_eq!(when.counted, when.issued, "{when:?}");
    assert!(when.drawn > 0, "nothing drawn in the strip: {when:?}");
    assert!(when.text.contains("ran in"), "{when:?}");

    // Three moments, each drawn: far more than a blank page, and all different.
    let mut shots = Vec::new();
    b.eval("window.scrollTo(0, 0)").unwrap();
    for (name, k) in [("early", 1u64), ("middle", 5), ("late", 9)] {
        slide(&mut b, cycles * k / 10);
        let png = b.screenshot().unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
        assert!(
            png.len() > 4 * blank.len(),
            "{name}: {} bytes, a blank page {}",
            png.len(),
            blank.len()
        );
        std::fs::write(shots_dir().join(format!("stencil-{name}.png")), &png).unwrap();
        shots.push(png);
    }
    assert!(shots[0] != shots[1] && shots[1] != shots[2]);
    no_errors(&b, "after replaying");
}

/// What the page shows of when the chosen source line ran.
#[derive(Debug)]
struct LineWhen {
    /// Frames the strip says the line ran in (`data-frames`).
    frames: u64,
    /// The line's warp instructions in the page's line times, and in its counts.
    counted: u64,
    issued: u64,
    /// Strip pixels drawn in the line's colour (orange on white: green well above
    /// blue, unlike the grey rows and the red cursor).
    drawn: u64,
    /// The line's description under the kernel.
    text: String,
}

fn line_when(b: &mut Browser) -> LineWhen {
    let v = b
        .eval(
            "(() => {
              const strip = document.getElementById('line-strip');
              const i = Number(strip.dataset.line);
              const run = JSON.parse(document.getElementById('spu-data').textContent).runs[0];
              const counted = (run.line_times.lines[i] || []).reduce((s, g) => s + g.filter((_, k) => k % 2 === 1).reduce((a, n) => a + n, 0), 0);
              const d = strip.getContext('2d').getImageData(0, 0, strip.width, strip.height).data;
              let drawn = 0;
              for (let k = 0; k < d.length; k += 4) if (d[k] > 200 && d[k + 1] - d[k + 2] > 30) drawn++;
              return [Number(strip.dataset.frames), counted, run.lines[i].issued, drawn,
                      document.getElementById('line-info').textContent, document.getElementById('line-when').hidden];
            })()",
        )
        .unwrap();
    assert_eq!(v[5], false, "the strip is hidden: {v}");
    LineWhen {
        frames: v[0].as_u64().unwrap(),
        counted: v[1].as_u64().unwrap(),
        issued: v[2].as_u64().unwrap(),
        drawn: v[3].as_u64().unwrap(),
        text: v[4].as_str().unwrap().to_string(),
    }
}

/// A kernel with a line that never runs: every thread branches past it.
const DEAD_LINE: &str = "\
.launch grid(1) block(32);
.entry dead {
    .reg .u32 %r<2>;
    .reg .pred %p<1>;
    mov.u32 %r0, %tid.x;
    setp.lt.u32 %p0, %r0, 64;
    @%p0 bra DONE;
    add.u32 %r1, %r0, 1;
DONE:
    exit;
}
";

#[test]
fn a_clicked_line_shows_when_it_ran_and_nothing_when_it_never_did() {
    let Some(mut b) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("dead.spu");
    std::fs::write(&kernel, DEAD_LINE).unwrap();
    let page = dir.path().join("dead.html");
    tool("spu-emu", &[&arg(&kernel), "-q", "--html", &arg(&page)]);
    b.open(&page).unwrap();
    no_errors(&b, "opening the page");
    let index = |b: &mut Browser, issued_zero: bool| {
        b.eval(&format!(
            "JSON.parse(document.getElementById('spu-data').textContent).runs[0].lines.findIndex((l) => (l.issued === 0) === {issued_zero})"
        ))
        .unwrap()
        .as_i64()
        .unwrap()
    };
    let (ran, dead) = (index(&mut b, false), index(&mut b, true));
    assert!(ran >= 0 && dead >= 0, "lines {ran} and {dead}");
    b.click(&format!("#kernel tr[data-line=\"{ran}\"]"))
        .unwrap();
    let when = line_when(&mut b);
    assert!(when.frames > 0 && when.drawn > 0, "{when:?}");
    assert_eq!(when.counted, when.issued, "{when:?}");
    b.click(&format!("#kernel tr[data-line=\"{dead}\"]"))
        .unwrap();
    let when = line_when(&mut b);
    assert_eq!(
        (when.frames, when.counted, when.issued, when.drawn),
        (0, 0, 0, 0),
        "{when:?}"
    );
    assert!(when.text.ends_with("never ran"), "{when:?}");
    let units = b
        .eval("document.querySelectorAll('rect.unit.ran-line').length")
        .unwrap();
    assert_eq!(units, 0, "no unit ran the dead line");
    no_errors(&b, "after clicking");
}

#[test]
fn gpu_and_comparison_pages_open_in_a_browser() {
    let Some(mut b) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let f = |n: &str| dir.path().join(n);
    let gpu = [
        "samples/stencil2d/stencil_gpu.spu",
        "--machine",
        "gtx480",
        "-D",
        "N=128",
        "-D",
        "K=32",
    ];
    run_tool(
        "spu-prof",
        &with(&gpu, &["-q", "--html", &arg(&f("gpu.html"))]),
    );
    b.open(&f("gpu.html")).unwrap();
    no_errors(&b, "the GPU page");
    let parts = b
        .eval("[document.querySelectorAll('svg.machine rect.unit').length, document.querySelectorAll('[data-part]').length]")
        .unwrap();
    assert_eq!(parts, serde_json::json!([15, 2]), "15 SMs, L2 and DRAM");
    slide(&mut b, 1000);
    let busy = b
        .eval("[...document.querySelectorAll('svg.machine rect.unit')].filter((r) => r.dataset.state === 'computing').length")
        .unwrap();
    assert!(busy.as_u64().unwrap() > 0, "no SM computing at cycle 1000");

    // Overlapped against sequential passes, side by side.
    run_tool(
        "spu-prof",
        &with(STENCIL, &["-q", "--html", &arg(&f("a.html"))]),
    );
    run_tool(
        "spu-prof",
        &with(
            STENCIL,
            &["-q", "--passes", "sequential", "--html", &arg(&f("b.html"))],
        ),
    );
    let report = tool(
        "spu-prof",
        &[
            "--compare",
            &arg(&f("a.html")),
            &arg(&f("b.html")),
            "--html",
            &arg(&f("ab.html")),
        ],
    );
    assert!(report.contains("total"), "{report}");
    b.open(&f("ab.html")).unwrap();
    no_errors(&b, "the comparison page");
    let runs = b
        .eval("[document.querySelectorAll('.run').length, document.querySelectorAll('#energy table').length]")
        .unwrap();
    assert_eq!(
        runs,
        serde_json::json!([2, 4]),
        "two runs, each with two energy tables"
    );
    let sequential_longer = b
        .eval("(() => { const d = JSON.parse(document.getElementById('spu-data').textContent); return d.runs[1].cycles > d.runs[0].cycles; })()")
        .unwrap();
    assert_eq!(sequential_longer, true);
    slide(&mut b, 200_000);
    let png = b.screenshot().unwrap();
    std::fs::write(shots_dir().join("compare.png"), &png).unwrap();
    no_errors(&b, "after sliding the comparison");
}

/// Firefox opens the page from disk and draws it: its screenshot holds far more
/// than that of the same page whose script stops at once (what a script error
/// at the start would leave). Skipped, with the reason printed, without Firefox.
#[test]
fn the_page_opens_in_firefox() {
    let exe = match browser::find_firefox() {
        Ok(exe) => exe,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("run.html");
    run_tool("spu-prof", &with(STENCIL, &["-q", "--html", &arg(&page)]));
    let text = std::fs::read_to_string(&page).unwrap();
    let opening = "(function () {\n";
    assert!(text.contains(opening), "the script's opening changed");
    let stopped = dir.path().join("stopped.html");
    std::fs::write(
        &stopped,
        text.replacen(opening, "(function () { return;\n", 1),
    )
    .unwrap();
    let shot = |p: &Path| {
        browser::firefox_screenshot(&exe, p, 1400, 1000).unwrap_or_else(|e| panic!("{e}"))
    };
    let drawn = shot(&page);
    let bare = shot(&stopped);
    assert!(drawn.starts_with(b"\x89PNG") && bare.starts_with(b"\x89PNG"));
    std::fs::write(shots_dir().join("firefox.png"), &drawn).unwrap();
    assert!(
        drawn.len() > 3 * bare.len(),
        "Firefox drew {} bytes of PNG, a page whose script stops {}: see firefox.png",
        drawn.len(),
        bare.len()
    );
}

/// Size and opening time of the stencil at N = K = `n` (for BENCHMARKS.md):
/// `cargo test --release -p spu-tests --test page -- --ignored --nocapture`.
#[test]
#[ignore = "a long run; measures the page for BENCHMARKS.md"]
fn size_and_opening_time_of_the_big_stencil() {
    let Some(mut b) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    for n in ["256", "512"] {
        let page = dir.path().join(format!("s{n}.html"));
        let defines = [format!("N={n}"), format!("K={n}")];
        tool(
            "spu-prof",
            &[
                "samples/stencil2d/stencil_pc.spu",
                "-D",
                &defines[0],
                "-D",
                &defines[1],
                "-q",
                "--html",
                &arg(&page),
            ],
        );
        let size = std::fs::metadata(&page).unwrap().len();
        let mut times = Vec::new();
        for _ in 0..3 {
            b.open(&page).unwrap();
            let t = b
                .eval("performance.getEntriesByName('spu-ready')[0].startTime")
                .unwrap();
            times.push(t.as_f64().unwrap());
        }
        no_errors(&b, "the big page");
        println!("N = K = {n}: {size} bytes, ready after {times:?} ms");
    }
}
