//! A run's identity covers the files its kernel includes: an `#include`d `.spu`
//! body, the `.cu` file of a launch file and the headers clang reads for it. Editing
//! one runs the kernel's runs again, and a run whose included file changed after
//! planning is refused, not recorded under the old id.

use std::path::Path;

mod common;
use common::{sweep, text};
use spu_sweep::plan::plan;
use spu_sweep::spec::Spec;

/// A kernel body that stores one value per thread, with `extra` before `exit`.
fn body(extra: &str) -> String {
    format!(
        ".entry k {{\n    .reg .u32 %r<8>;\n    mov.u32 %r2, %tid.x;\n    shl.u32 %r5, %r2, 2;\n    \
         mov.u32 %r6, C;\n    add.u32 %r6, %r6, %r5;\n    st.global.u32 [%r6], %r2;\n{extra}    exit;\n}}\n"
    )
}

const LAUNCH: &str =
    ".global .u32 C[256] = zeros;\n.launch grid(1, 1) block(256);\n#include \"body.spu\"\n";

/// A folder with `k.spu` including `body.spu`, and a spec of one run of it.
fn setup() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.spu"), LAUNCH).unwrap();
    std::fs::write(dir.path().join("body.spu"), body("")).unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "name = \"inc\"\nmetrics = [\"instructions.warp\"]\n[base]\nkernel = \"k.spu\"\n",
    )
    .unwrap();
    let out = dir.path().join("out").display().to_string();
    (dir, spec.display().to_string(), out)
}

/// `(id, instructions.warp)` of the only row of `results.csv`.
fn result(out: &str) -> (String, String) {
    let csv = std::fs::read_to_string(Path::new(out).join("results.csv")).unwrap();
    let row: Vec<String> = csv
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    (row[0].clone(), row[2].clone())
}

#[test]
fn editing_an_included_file_simulates_the_run_again() {
    let (d, spec, out) = setup();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (first_id, first) = result(&out);
    assert_eq!(first, "48");
    // Two more instructions per warp in the included file only.
    let more = "    add.u32 %r6, %r6, 4;\n    add.u32 %r6, %r6, 4;\n";
    std::fs::write(d.path().join("body.spu"), body(more)).unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("1 to run"), "{err}");
    let (id, now) = result(&out);
    assert_ne!(id, first_id);
    assert_eq!(now, "64");
    // The include as it was: the first result is the run's again.
    std::fs::write(d.path().join("body.spu"), body("")).unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("nothing to simulate"), "{err}");
    assert_eq!(result(&out), (first_id, "48".to_string()));
}

#[test]
fn an_included_file_changed_after_planning_is_not_recorded_under_the_old_id() {
    let (d, spec, out) = setup();
    let o = sweep(&["run", &spec, "--out", &out, "--slurm", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(
        d.path().join("body.spu"),
        body("    add.u32 %r6, %r6, 4;\n"),
    )
    .unwrap();
    // The task as the job script runs it.
    let log = common::run_first_task(Path::new(&out));
    assert!(log.contains("changed since the sweep was planned"), "{log}");
    assert!(log.contains("k.spu"), "{log}");
}

/// The id of the one run a spec in `dir` plans.
fn planned_id(dir: &Path, spec: &str) -> String {
    let spec = Spec::parse("s.toml", spec, dir, "s").unwrap_or_else(|e| panic!("{}", e.rendered()));
    let p = plan(&spec, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.runs.len(), 1);
    p.runs[0].id.clone()
}

#[test]
fn a_cuda_files_headers_and_a_launch_files_cu_file_enter_the_identity() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cu = "#include \"h.cuh\"\n\
              extern \"C\" __global__ void k() { __shared__ unsigned s[32]; s[threadIdx.x] = V; }\n";
    std::fs::write(d.join("k.cu"), cu).unwrap();
    std::fs::write(d.join("h.cuh"), "#define V 1u\n").unwrap();
    std::fs::write(
        d.join("l.spu"),
        "#include \"k.cu\"\n.launch grid(1) block(32);\n.bind k();\n",
    )
    .unwrap();
    for kernel in ["k.cu", "l.spu"] {
        let spec = format!("[base]\nkernel = \"{kernel}\"\n");
        std::fs::write(d.join("h.cuh"), "#define V 1u\n").unwrap();
        let first = planned_id(d, &spec);
        assert_eq!(planned_id(d, &spec), first, "{kernel}: ids are stable");
        std::fs::write(d.join("h.cuh"), "#define V 2u\n").unwrap();
        let header = planned_id(d, &spec);
        assert_ne!(header, first, "{kernel}: the header changed");
        if kernel == "l.spu" {
            std::fs::write(d.join("k.cu"), format!("{cu}// edited\n")).unwrap();
            assert_ne!(planned_id(d, &spec), header, "the .cu file changed");
            std::fs::write(d.join("k.cu"), cu).unwrap();
        }
    }
}
