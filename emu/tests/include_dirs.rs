//! `spu-emu -I DIR`: a launch file may include a kernel from a folder the user names.

use std::process::Command;

#[test]
fn a_launch_file_includes_a_kernel_from_a_dash_i_folder_only() {
    let root = tempfile::tempdir().unwrap();
    for d in ["run", "kernels"] {
        std::fs::create_dir(root.path().join(d)).unwrap();
    }
    std::fs::write(
        root.path().join("kernels/k.spu"),
        ".global .u32 OUT[1] = zeros;\n.launch grid(1) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.path().join("run/launch.spu"),
        "#include \"../kernels/k.spu\"\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_spu-emu"))
            .current_dir(root.path())
            .arg("run/launch.spu")
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("cannot include `../kernels/k.spu`"), "{err}");
    assert!(err.contains("add `-I "), "{err}");
    let out = run(&["-I", "kernels"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_dash_i_folder_that_does_not_exist_or_is_a_file_is_refused() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("k.spu"),
        ".launch grid(1) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    for (dir, reason) in [("nowhere", "no such folder"), ("k.spu", "not a folder")] {
        let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
            .current_dir(root.path())
            .args(["k.spu", "-I", dir])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(&format!("`-I {dir}`: {reason}")), "{err}");
    }
}
