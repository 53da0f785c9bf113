//! Text from the user reaches the terminal escaped, through every surface of
//! `spu-emu`: file names (kernel, machine file, `.npy` and outputs), source lines
//! quoted in fault reports, the trace's line column, machine keys and values,
//! `-D`, `--load`/`--dump` names, trace filters, a `.npy` dtype, names in a forged
//! binary and the statistics JSON. ESC, OSC, BEL, CR, a second byte order mark and
//! other control characters ([`spu_io::testing::HOSTILE`]) never come out raw, and
//! line breaks never forge a line (snapshots in `snapshots/escapes__*.snap`).

use spu_io::testing::{HOSTILE, quoted_string, terminal_hazards};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let p = |name: &str| tmp.join(name).display().to_string();
    // A source line cannot hold a bare CR or a line break.
    let one_line = HOSTILE.replace(['\n', '\r'], "");
    let vecadd = std::fs::read_to_string(root().join("samples/vecadd.spu")).unwrap();
    let kernel = p(&format!("k{HOSTILE}.spu"));
    std::fs::write(&kernel, &vecadd).unwrap();
    let oob = std::fs::read_to_string(root().join("emu/tests/faults/oob_load.spu")).unwrap();
    let faulty = p(&format!("oob{HOSTILE}.spu"));
    let load = "ld.global.f32 %f0, [%r1];";
    std::fs::write(&faulty, oob.replace(load, &format!("{load} // {one_line}"))).unwrap();
    std::fs::write(
        p("key.toml"),
        format!("[sm]\n{} = 1\n", quoted_string(HOSTILE)),
    )
    .unwrap();
    std::fs::write(
        p("value.toml"),
        format!("[sm]\nscheduler_policy = {}\n", quoted_string(HOSTILE)),
    )
    .unwrap();
    let header = format!("{{'descr': '{one_line}', 'fortran_order': False, 'shape': (8,), }}\n");
    let mut npy = b"\x93NUMPY\x03\x00".to_vec();
    npy.extend_from_slice(&(header.len() as u32).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    std::fs::write(p("dtype.npy"), npy).unwrap();
    // A binary whose buffer `OUTQ` is renamed to a colour sequence.
    let renamed = vecadd.replace(" C[", " OUTQ[").replace(", C;", ", OUTQ;");
    let (mut forged, _) = spu_asm::assemble("vecadd.spu", &renamed).unwrap();
    let name = b"\x04\0\0\0OUTQ";
    let at = forged.windows(8).position(|w| w == name).unwrap();
    forged[at + 4..at + 8].copy_from_slice(b"\x1b[1m");
    std::fs::write(p("forged.bin"), forged).unwrap();

    let with = |more: &[&str]| -> Vec<String> {
        std::iter::once(kernel.clone())
            .chain(more.iter().map(|s| s.to_string()))
            .collect()
    };
    let h = HOSTILE;
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("missing_kernel", vec![p(&format!("none{h}.spu"))]),
        ("fault_report", vec![faulty.clone()]),
        (
            "machine_file_missing",
            with(&["--machine", &p(&format!("m{h}.toml"))]),
        ),
        ("machine_file_key", with(&["--machine", &p("key.toml")])),
        ("machine_file_value", with(&["--machine", &p("value.toml")])),
        ("machine_preset", with(&["--machine", &format!("gtx{h}")])),
        ("set_key", with(&["--set", &format!("sm.{h}=1")])),
        ("set_value", with(&["--set", &format!("sm.schedulers={h}")])),
        ("set_syntax", with(&["--set", h])),
        ("grid", with(&["--grid", h])),
        ("define_name", with(&["-D", &format!("{h}=1")])),
        ("define_value", with(&["-D", &format!("N={h}")])),
        ("define_syntax", with(&["-D", h])),
        ("load_buffer", with(&["--load", &format!("{h}=a.npy")])),
        (
            "load_missing",
            with(&[
                "-D",
                "N=8",
                "--load",
                &format!("A={}", p(&format!("{h}.npy"))),
            ]),
        ),
        (
            "load_dtype",
            with(&["-D", "N=8", "--load", &format!("A={}", p("dtype.npy"))]),
        ),
        ("dump_buffer", with(&["--dump", &format!("{h}=a.npy")])),
        (
            "dump_unwritable",
            with(&["-q", "--dump", &format!("C=/nonexistent/{h}.npy")]),
        ),
        ("stats_over_the_kernel", with(&["-q", "--stats", &kernel])),
        ("trace_unit", with(&["--trace", "-", "--trace-unit", h])),
        (
            "trace_unit_outside",
            with(&["--trace", "-", "--trace-unit", "\nsm:9,9\n"]),
        ),
        ("trace_cycles", with(&["--trace", "-", "--trace-cycles", h])),
        ("forged_binary", vec![p("forged.bin")]),
    ];
    let run = |args: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_spu-emu"))
            .args(args)
            .current_dir(root())
            .output()
            .expect("spu-emu runs")
    };
    let clean = |name: &str, out: &std::process::Output| {
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let hazards = terminal_hazards(bytes);
            assert!(
                hazards.is_empty(),
                "{name}: {stream} carries {hazards:?}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
    };
    for (name, args) in &cases {
        let out = run(args);
        clean(name, &out);
        assert_eq!(out.status.code(), Some(1), "{name}");
        insta::assert_snapshot!(*name, spu_io::testing::outcome(&out, tmp));
    }
    // Runs that succeed: the summary, a trace naming the file, the statistics on
    // standard output (file names and source text in the JSON).
    for (name, args) in [
        ("summary", with(&[])),
        ("trace", with(&["-D", "N=32", "--trace", "-"])),
        ("stats", with(&["-q", "--stats", "-"])),
    ] {
        let out = run(&args);
        clean(name, &out);
        assert!(out.status.success(), "{name}");
        if name == "stats" {
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let file = json["pcs"][0]["file"].as_str().unwrap();
            assert_eq!(file, kernel, "the JSON keeps the name, escaped as JSON");
        }
    }
    let trace = run(&with(&["-D", "N=32", "--trace", "-"]));
    let line = String::from_utf8_lossy(&trace.stdout)
        .lines()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains("k\\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED\\r\\u{feff}"),
        "the line column names the file escaped: {line}"
    );
}
