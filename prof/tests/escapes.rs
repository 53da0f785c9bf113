//! Text from the user reaches the terminal and the reports escaped, through every
//! surface of `spu-prof`: a statistics file's kernel name, file names and source
//! text (`--from-stats` as table, by-line, CSV, JSON and `--compare`), model files
//! and their names, the kernel's own file name, and the SVG charts. ESC, OSC, BEL,
//! CR, a second byte order mark and other control characters
//! ([`spu_io::testing::HOSTILE`]) never come out raw and never forge a line.

use spu_io::testing::{HOSTILE, quoted_string, terminal_hazards};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn prof(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-prof"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("spu-prof runs")
}

fn clean(name: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let hazards = terminal_hazards(bytes);
        assert!(
            hazards.is_empty(),
            "{name}: {stream} carries {hazards:?}:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

/// Statistics of vecadd whose kernel, file names and source text are [`HOSTILE`],
/// with the source file saved beside them under that name.
fn hostile_stats(dir: &Path) -> String {
    let vecadd = root().join("samples/vecadd.spu");
    let s = spu_emu::cli::session::run_file(
        &vecadd,
        &spu_emu::Machine::default(),
        &Default::default(),
        spu_emu::RunControl {
            sample_interval: Some(500),
            ..Default::default()
        },
    )
    .unwrap();
    let text = spu_emu::observe::stats::Stats::new(&s.result, &s.image, &s.machine).to_json_text();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let source = dir.join(format!("k{HOSTILE}.spu"));
    std::fs::copy(&vecadd, &source).unwrap();
    v["kernel"] = HOSTILE.into();
    for pc in v["pcs"].as_array_mut().unwrap() {
        pc["file"] = source.display().to_string().into();
        pc["text"] = HOSTILE.into();
    }
    let path = dir.join("hostile.json");
    std::fs::write(&path, v.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let p = |name: &str| tmp.join(name).display().to_string();
    let stats = hostile_stats(tmp);
    let kernel = p(&format!("k{HOSTILE}.spu"));
    std::fs::write(
        p("named.toml"),
        format!(
            "[model]\nname = {}\nextends = \"default\"\n",
            quoted_string(HOSTILE)
        ),
    )
    .unwrap();
    std::fs::write(
        p("key.toml"),
        format!(
            "[model]\nextends = \"default\"\n[event_pj]\n{} = 1.0\n",
            quoted_string(HOSTILE)
        ),
    )
    .unwrap();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let h = HOSTILE;
    let succeed = [
        ("table", s(&["--from-stats", &stats])),
        ("by_line", s(&["--from-stats", &stats, "--by-line"])),
        ("csv", s(&["--from-stats", &stats, "--format", "csv"])),
        ("json", s(&["--from-stats", &stats, "--format", "json"])),
        ("compare", s(&["--compare", &stats, &stats])),
        (
            "model_name",
            s(&["--from-stats", &stats, "--model", &p("named.toml")]),
        ),
        ("kernel", s(&[&kernel, "--by-line"])),
        (
            "charts",
            s(&[
                "--from-stats",
                &stats,
                "--heatmap",
                &p("map.svg"),
                "--power-trace",
                &p("power.svg"),
            ]),
        ),
    ];
    for (name, args) in &succeed {
        let out = prof(args);
        clean(name, &out);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The kernel name is in the reports, escaped.
    let table = prof(&succeed[0].1);
    let first = String::from_utf8_lossy(&table.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        first.starts_with("\\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED\\r\\u{feff}\\u{202e}\\u{7f}\\u{9b}\\u{b}\\n\\nerror: fake on "),
        "{first}"
    );
    // JSON keeps the name: escaped as JSON, it reads back the same.
    let json: serde_json::Value = serde_json::from_slice(&prof(&succeed[3].1).stdout).unwrap();
    assert_eq!(json["kernel"], HOSTILE);
    // The charts are XML a browser reads, without control characters.
    for chart in ["map.svg", "power.svg"] {
        let svg = std::fs::read_to_string(p(chart)).unwrap();
        assert!(terminal_hazards(svg.as_bytes()).is_empty(), "{chart}");
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let title = doc.descendants().find(|n| n.has_tag_name("text")).unwrap();
        assert!(
            title
                .text()
                .unwrap_or_default()
                .trim_start_matches("Power over time: ")
                .starts_with("\\u{1b}]0;pwned"),
            "{chart}: {:?}",
            title.text()
        );
    }
    let fail = [
        (
            "missing_stats",
            s(&["--from-stats", &p(&format!("none{h}.json"))]),
        ),
        (
            "missing_model",
            s(&["--from-stats", &stats, "--model", &p(&format!("m{h}.toml"))]),
        ),
        ("unknown_model", s(&["--from-stats", &stats, "--model", h])),
        (
            "model_key",
            s(&["--from-stats", &stats, "--model", &p("key.toml")]),
        ),
        ("missing_kernel", s(&[&p(&format!("none{h}.spu"))])),
    ];
    for (name, args) in &fail {
        let out = prof(args);
        clean(name, &out);
        assert_eq!(out.status.code(), Some(1), "{name}");
        insta::assert_snapshot!(*name, spu_io::testing::outcome(&out, tmp));
    }
}
