//! The bad-input matrix: every kind of bad input `spu-emu` can meet, each with its
//! exact message and exit code (snapshots in `snapshots/matrix__*.snap`; temporary
//! paths are shown as `[TMP]`). Bless changes with `INSTA_UPDATE=always`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs spu-emu and renders exit code, stdout and stderr for a snapshot.
fn outcome(args: &[&str], tmp: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("spu-emu runs");
    let text = format!(
        "exit: {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.replace(&tmp.display().to_string(), "[TMP]")
}

fn assembled(src: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(root().join(src)).unwrap();
    spu_asm::assemble(src, &text).unwrap().0
}

/// A version 3 `.npy` file of 8 `<f4` zeros under `header` (the dictionary),
/// padded as NumPy pads it.
fn npy(header: &str) -> Vec<u8> {
    let mut header = header.to_string();
    while (12 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x03\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 32]);
    bytes
}

/// Trace filters that could only give an empty trace are refused before the run,
/// with a list of what exists.
#[test]
fn trace_filters_that_match_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let trace = |more: &[&str]| {
        let mut args = vec!["samples/pass_token.spu", "-q", "--trace", "-"];
        args.extend_from_slice(more);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("trace_unit_not_a_name", trace(&["--trace-unit", "foo"])),
        (
            "trace_unit_outside_the_grid",
            trace(&["--trace-unit", "sm:9,9"]),
        ),
        (
            "trace_iu_outside_the_grid",
            trace(&["--trace-unit", "iu:north:7"]),
        ),
        ("trace_warp_past_the_block", trace(&["--trace-warp", "3"])),
        (
            "trace_dma_on_an_iu_machine",
            trace(&["--trace-unit", "dma:north:0"]),
        ),
        (
            "trace_dma_engine",
            [
                "samples/stencil2d/stencil_pc.spu",
                "-q",
                "--trace",
                "-",
                "--set",
                "boundary.kind=dma",
                "--trace-unit",
                "dma:north:0",
            ]
            .map(String::from)
            .to_vec(),
        ),
        (
            "trace_idle_sm",
            trace(&["--trace-unit", "sm:3,3", "-D", "P=2", "-D", "Q=2"]),
        ),
        (
            "trace_warp_past_the_unit",
            trace(&["--trace-unit", "iu:west:0", "--trace-warp", "1"]),
        ),
    ];
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = outcome(&args, dir.path());
        assert!(text.starts_with("exit: 1\n"), "{name}:\n{text}");
        assert!(
            text.contains("--- stdout ---\n--- stderr ---"),
            "{name}: nothing traced:\n{text}"
        );
        insta::assert_snapshot!(name, text);
    }
    // The same filters that match something run.
    for more in [
        &["--trace-unit", "sm:3,3"][..],
        &["--trace-unit", " iu:north:3 "][..],
        &["--trace-warp", "0"][..],
    ] {
        let owned = trace(more);
        let args: Vec<&str> = owned.iter().map(String::as_str).collect();
        let text = outcome(&args, dir.path());
        assert!(text.starts_with("exit: 0\n"), "{more:?}:\n{text}");
        assert!(text.lines().count() > 5, "{more:?}: traced:\n{text}");
    }
}

#[test]
fn bad_input_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let p = |name: &str| tmp.join(name).display().to_string();
    let vecadd = assembled("samples/vecadd.spu");
    std::fs::write(p("truncated.bin"), &vecadd[..vecadd.len() / 2]).unwrap();
    let mut corrupt = vecadd.clone();
    let at = corrupt.len() - 40;
    corrupt[at] ^= 0xff;
    std::fs::write(p("corrupted.bin"), &corrupt).unwrap();
    // The writer refuses invalid code, so patch the opcode byte of instruction 3
    // (the code section starts at byte 0x40).
    let mut opcode = vecadd.clone();
    opcode[0x40 + 3 * 8] = 0xee;
    std::fs::write(p("opcode.bin"), &opcode).unwrap();
    // A binary of the previous format version (e_flags holds the version).
    let mut v4 = vecadd.clone();
    v4[0x30..0x34].copy_from_slice(&4u32.to_le_bytes());
    std::fs::write(p("v4.bin"), &v4).unwrap();
    // A binary of a version this reader does not know yet.
    let mut v8 = vecadd.clone();
    v8[0x30..0x34].copy_from_slice(&8u32.to_le_bytes());
    std::fs::write(p("v8.bin"), &v8).unwrap();
    // A header claiming version 6 over a kernel section written as version 5.
    let mut v6 = vecadd.clone();
    v6[0x30..0x34].copy_from_slice(&6u32.to_le_bytes());
    std::fs::write(p("v6-over-v5.bin"), &v6).unwrap();
    // Preconditions travel in the binary (format version 6).
    std::fs::write(
        p("stencil.bin"),
        assembled("samples/stencil2d/stencil_pc.spu"),
    )
    .unwrap();
    std::fs::write(p("range.toml"), "[sm]\nschedulers = 99\n").unwrap();
    let words: Vec<u32> = (0..8).collect();
    spu_emu::load::npy::write(Path::new(&p("u32.npy")), spu_isa::Ty::U32, &[8], &words).unwrap();
    spu_emu::load::npy::write(
        Path::new(&p("shape.npy")),
        spu_isa::Ty::F32,
        &[2, 4],
        &words,
    )
    .unwrap();
    // The head of a host binary (a debug build can exceed the input size limit).
    let host = std::fs::read(env!("CARGO_BIN_EXE_spu-emu")).unwrap();
    std::fs::write(p("host.elf"), &host[..host.len().min(1 << 20)]).unwrap();
    std::fs::copy(root().join("samples/vecadd.spu"), p("k.spu")).unwrap();
    // A kernel of 5 000 instructions (each unit counts every instruction).
    std::fs::write(
        p("long_kernel.spu"),
        format!(
            ".global .u32 OUT[1] = zeros;\n.launch grid(64, 64) block(32);\n.entry k {{\n    .reg .u32 %r<1>;\n    mov.u32 %r0, 1;\n{}    exit;\n}}\n",
            "    add.u32 %r0, %r0, 1;\n".repeat(4999)
        ),
    )
    .unwrap();
    std::fs::write(
        p("long_key.toml"),
        format!("[sm]\n{} = 1\n", "k".repeat(2 << 20)),
    )
    .unwrap();
    let mut header = b"\x93NUMPY\x02\x00".to_vec();
    header.extend_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(p("header.npy"), &header).unwrap();
    let mut short = spu_emu::load::npy::encode(spu_isa::Ty::F32, &[8], &words).unwrap();
    short.truncate(short.len() - 5);
    std::fs::write(p("short.npy"), &short).unwrap();
    let mut long = spu_emu::load::npy::encode(spu_isa::Ty::F32, &[8], &words).unwrap();
    long.extend_from_slice(b"extra");
    std::fs::write(p("long.npy"), &long).unwrap();
    std::fs::write(
        p("long_line.toml"),
        format!("[sm]\nschedulers = {}\n", "k".repeat(1 << 19)),
    )
    .unwrap();
    std::fs::copy(root().join("samples/vecadd.spu"), p("body.inc")).unwrap();
    std::fs::write(p("inc.spu"), "#include \"body.inc\"\n").unwrap();
    short.truncate(20);
    std::fs::write(p("short_header.npy"), &short).unwrap();
    std::os::unix::fs::symlink("/nonexistent/file", p("dangling.json")).unwrap();
    let oob = std::fs::read_to_string(root().join("emu/tests/faults/oob_load.spu")).unwrap();
    std::fs::write(
        p("passwd.bin"),
        spu_asm::assemble("/etc/passwd", &oob).unwrap().0,
    )
    .unwrap();
    std::fs::write(
        p("dyn.spu"),
        ".param .s32 S = 16;\n.extern .shared .align 4 .b8 dyn[];\n.launch grid(1) block(32) shared(S);\n.entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r0, dyn;\n    st.shared.u32 [%r0], %r1;\n    exit;\n}\n",
    )
    .unwrap();
    let vecadd_text = std::fs::read_to_string(root().join("samples/vecadd.spu")).unwrap();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(vecadd_text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::fs::write(p("utf16.spu"), utf16).unwrap();
    // Headers nesting values deeper than any .npy needs: a shape 8 000 tuples deep
    // (it overflowed the stack) and an extra key 33 lists deep.
    let deep = |open: &str, close: &str, n: usize| format!("{}{}", open.repeat(n), close.repeat(n));
    std::fs::write(
        p("nested_shape.npy"),
        npy(&format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}",
            deep("(", ",)", 8000).replacen(",)", "8,)", 1)
        )),
    )
    .unwrap();
    std::fs::write(
        p("nested_key.npy"),
        npy(&format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': (8,), 'x': {}, }}",
            deep("[", "]", 33)
        )),
    )
    .unwrap();
    std::fs::write(
        p("many_dims.npy"),
        npy(&format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}",
            "1, ".repeat(5001)
        )),
    )
    .unwrap();
    for name in ["a1.npy", "a2.npy"] {
        spu_emu::load::npy::write(Path::new(&p(name)), spu_isa::Ty::F32, &[8], &words).unwrap();
    }
    std::fs::write(p("quoted_int.toml"), "[grid]\ncols = \"4\"\n").unwrap();
    std::fs::write(p("quoted_float.toml"), "[clock]\nfreq_mhz = \"700.5\"\n").unwrap();
    std::fs::write(p("quoted_power.toml"), "[cache]\nline_bytes = \"64\"\n").unwrap();
    std::fs::write(
        p("extends.toml"),
        "# a GPU, changed\nextends = \"gtx480\"\n",
    )
    .unwrap();
    std::fs::write(
        p("zero.toml"),
        "[grid]\ncols = 4\n\n[sm]\nmax_threads = 0\n",
    )
    .unwrap();
    std::fs::write(
        p("shbig.spu"),
        ".param .u32 S = 1024;\n.launch grid(1) block(32);\n.entry k {\n    .shared .u32 buf[S];\n    exit;\n}\n",
    )
    .unwrap();
    let load = |file: &str| -> Vec<String> {
        vec![
            "samples/vecadd.spu".into(),
            "-D".into(),
            "N=8".into(),
            "--load".into(),
            format!("A={file}"),
        ]
    };

    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "malformed_source",
            vec!["emu/tests/matrix/malformed.spu".into()],
        ),
        ("truncated_elf", vec![p("truncated.bin")]),
        ("corrupted_elf", vec![p("corrupted.bin")]),
        ("foreign_elf", vec![p("host.elf")]),
        ("unknown_opcode", vec![p("opcode.bin")]),
        ("older_format_version", vec![p("v4.bin")]),
        ("newer_format_version", vec![p("v8.bin")]),
        (
            "header_and_kernel_versions_disagree",
            vec![p("v6-over-v5.bin")],
        ),
        (
            "precondition_fails",
            vec![
                "samples/stencil2d/stencil_pc.spu".into(),
                "-D".into(),
                "N=100".into(),
            ],
        ),
        (
            "precondition_fails_in_a_binary",
            vec![p("stencil.bin"), "-D".into(), "K=48".into()],
        ),
        (
            "precondition_fails_in_a_ptx_launch_file",
            vec!["samples/ptx/matmul.spu".into(), "-D".into(), "N=40".into()],
        ),
        (
            "param_u64_out_of_range",
            vec![
                "samples/ptx/daxpy.spu".into(),
                "-D".into(),
                "N=18446744073709551616".into(),
            ],
        ),
        (
            "param_s64_out_of_range",
            vec![
                "tests/conformance/ld.param.64.spu".into(),
                "-D".into(),
                "S=-9223372036854775809".into(),
            ],
        ),
        (
            "param_f64_malformed",
            vec![
                "samples/ptx/daxpy.spu".into(),
                "-D".into(),
                "A=1.5.2".into(),
            ],
        ),
        (
            "param_f64_out_of_range",
            vec![
                "samples/ptx/daxpy.spu".into(),
                "-D".into(),
                "A=1e400".into(),
            ],
        ),
        (
            "param_u64_too_large_for_a_size",
            vec![
                "samples/ptx/daxpy.spu".into(),
                "-D".into(),
                "N=18446744073709551615".into(),
            ],
        ),
        (
            "ptx_pointer_parameter_without_a_value",
            vec!["samples/ptx/daxpy.ptx".into()],
        ),
        ("oob_global", vec!["emu/tests/faults/oob_load.spu".into()]),
        ("oob_shared", vec!["emu/tests/faults/shared_oob.spu".into()]),
        (
            "oob_shared_functional",
            vec![
                "emu/tests/faults/shared_oob.spu".into(),
                "--functional".into(),
            ],
        ),
        (
            "misaligned_shared_in_a_partial_warp_functional",
            vec![
                "emu/tests/faults/shared_partial.spu".into(),
                "--functional".into(),
            ],
        ),
        (
            "misaligned_shared_in_a_partial_warp",
            vec!["emu/tests/faults/shared_partial.spu".into()],
        ),
        ("oob_cb", vec!["emu/tests/matrix/cb_oob.spu".into()]),
        ("misaligned", vec!["emu/tests/faults/misaligned.spu".into()]),
        (
            "recursion_too_deep",
            vec!["emu/tests/faults/recursion_too_deep.spu".into()],
        ),
        ("oob_local", vec!["emu/tests/faults/local_oob.spu".into()]),
        (
            "negative_local_address",
            vec!["emu/tests/faults/local_negative.spu".into()],
        ),
        (
            "negative_local_address_through_64_bits",
            vec!["emu/tests/faults/local_negative_wide.spu".into()],
        ),
        (
            "division_by_zero_is_defined",
            vec![
                "emu/tests/matrix/div_zero.spu".into(),
                "-q".into(),
                "--dump".into(),
                format!("out={}", p("div.npy")),
            ],
        ),
        (
            "deadlock_mismatched_syncs",
            vec![
                "emu/tests/faults/mismatched_syncs.spu".into(),
                "--grid".into(),
                "2x1".into(),
            ],
        ),
        (
            "max_cycles_exceeded",
            vec![
                "emu/tests/faults/spin.spu".into(),
                "--max-cycles".into(),
                "5000".into(),
            ],
        ),
        (
            "unknown_machine_key",
            vec![
                "samples/vecadd.spu".into(),
                "--set".into(),
                "sm.warps=4".into(),
            ],
        ),
        (
            "out_of_range_machine_key",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("range.toml"),
            ],
        ),
        (
            "grid_0x0",
            vec!["samples/vecadd.spu".into(), "--grid".into(), "0x0".into()],
        ),
        (
            "npy_missing",
            vec![
                "samples/vecadd.spu".into(),
                "-D".into(),
                "N=8".into(),
                "--load".into(),
                format!("A={}", p("none.npy")),
            ],
        ),
        (
            "npy_wrong_dtype",
            vec![
                "samples/vecadd.spu".into(),
                "-D".into(),
                "N=8".into(),
                "--load".into(),
                format!("A={}", p("u32.npy")),
            ],
        ),
        (
            "npy_wrong_shape",
            vec![
                "samples/vecadd.spu".into(),
                "-D".into(),
                "N=8".into(),
                "--load".into(),
                format!("A={}", p("shape.npy")),
            ],
        ),
        (
            "overlapped_global_blocksync",
            vec!["emu/tests/faults/global_sync.spu".into()],
        ),
        (
            "iu_running_fp_code",
            vec!["emu/tests/faults/iu_fpu.spu".into(), "-q".into()],
        ),
        (
            "dma_boundary_without_descriptors",
            vec![
                "samples/pass_token.spu".into(),
                "--boundary".into(),
                "dma".into(),
            ],
        ),
        (
            "unwritable_output",
            vec![
                "samples/vecadd.spu".into(),
                "-q".into(),
                "--stats".into(),
                "/nonexistent/dir/s.json".into(),
            ],
        ),
        (
            "past_the_last_instruction",
            vec!["emu/tests/matrix/no_exit.spu".into()],
        ),
        ("absurd_buffer", vec!["emu/tests/matrix/absurd.spu".into()]),
        ("kernel_is_a_device", vec!["/dev/zero".into()]),
        (
            "machine_file_is_a_device",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                "/dev/zero".into(),
            ],
        ),
        ("npy_is_a_device", load("/dev/zero")),
        ("npy_header_too_large", load(&p("header.npy"))),
        ("npy_truncated", load(&p("short.npy"))),
        ("npy_header_truncated", load(&p("short_header.npy"))),
        ("npy_trailing_bytes", load(&p("long.npy"))),
        (
            "machine_file_syntax_on_a_long_line",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("long_line.toml"),
            ],
        ),
        (
            "output_is_an_included_file",
            vec![p("inc.spu"), "--stats".into(), p("body.inc")],
        ),
        (
            "set_integer_too_large",
            vec![
                "samples/vecadd.spu".into(),
                "--set".into(),
                "sm.registers=99999999999999999999".into(),
            ],
        ),
        (
            "output_overwrites_the_kernel",
            vec![p("k.spu"), "-q".into(), "--stats".into(), p("k.spu")],
        ),
        (
            "two_outputs_on_one_file",
            vec![
                p("k.spu"),
                "-q".into(),
                "--stats".into(),
                p("o.json"),
                "--dump".into(),
                format!("C={}", p("o.json")),
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
            "html_on_the_stats_file",
            vec![
                "samples/vecadd.spu".into(),
                "-q".into(),
                "--stats".into(),
                p("o.html"),
                "--html".into(),
                p("o.html"),
            ],
        ),
        (
            "html_overwrites_the_kernel",
            vec![p("k.spu"), "-q".into(), "--html".into(), p("k.spu")],
        ),
        (
            "two_outputs_on_standard_output",
            vec![
                p("k.spu"),
                "--stats".into(),
                "-".into(),
                "--trace".into(),
                "-".into(),
            ],
        ),
        (
            "output_is_a_directory",
            vec![p("k.spu"), "-q".into(), "--stats".into(), p("")],
        ),
        (
            "output_is_a_dangling_link",
            vec![
                p("k.spu"),
                "-q".into(),
                "--stats".into(),
                p("dangling.json"),
            ],
        ),
        (
            "trace_to_a_full_device",
            vec![
                p("k.spu"),
                "-q".into(),
                "--trace".into(),
                "/dev/full".into(),
            ],
        ),
        ("binary_names_etc_passwd", vec![p("passwd.bin")]),
        (
            "functional_endless_loop_max_cycles",
            vec![
                "emu/tests/faults/spin.spu".into(),
                "--functional".into(),
                "--max-cycles".into(),
                "1000".into(),
            ],
        ),
        (
            "functional_endless_loop_max_instructions",
            vec![
                "emu/tests/faults/spin.spu".into(),
                "--functional".into(),
                "--max-instructions".into(),
                "100000".into(),
            ],
        ),
        (
            "max_cycles_includes_the_dram_drain",
            vec![
                "samples/vecadd.spu".into(),
                "--max-cycles".into(),
                "2478".into(),
            ],
        ),
        (
            "machine_state_too_large",
            vec![
                "emu/tests/matrix/machine_state.spu".into(),
                "--grid".into(),
                "255x255".into(),
            ],
        ),
        (
            // 48 KiB of shared memory on each of 3 600 SMs fit; with the race
            // checker's record of each of its words they do not.
            "machine_state_with_race_check_too_large",
            vec![
                "emu/tests/matrix/shared_per_block.spu".into(),
                "-D".into(),
                "G=60".into(),
                "--grid".into(),
                "60x60".into(),
                "--race-check".into(),
            ],
        ),
        (
            // 5 000 instructions' counters on each of 4 352 units.
            "machine_state_of_a_long_kernel_too_large",
            vec![p("long_kernel.spu"), "--grid".into(), "64x64".into()],
        ),
        (
            "unknown_machine_key_of_two_megabytes",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("long_key.toml"),
            ],
        ),
        (
            "block_too_large",
            vec!["emu/tests/matrix/big_block.spu".into()],
        ),
        (
            "block_too_deep",
            vec!["emu/tests/matrix/deep_block.spu".into()],
        ),
        (
            "ramp_past_the_type",
            vec!["emu/tests/matrix/ramp_overflow.spu".into()],
        ),
        (
            "float_for_an_integer_key",
            vec![
                "samples/vecadd.spu".into(),
                "--set".into(),
                "sm.schedulers=4.0".into(),
            ],
        ),
        ("absurd_grid", vec!["emu/tests/matrix/huge_grid.spu".into()]),
        // Like a negative launch dimension, not a run on an empty shared space.
        (
            "dynamic_shared_size_negative",
            vec![p("dyn.spu"), "-D".into(), "S=-1".into()],
        ),
        // UTF-16 as PowerShell's `>` writes it: named, with the conversion.
        ("utf16_source", vec![p("utf16.spu")]),
        (
            "absurd_machine",
            vec![
                "samples/vecadd.spu".into(),
                "--grid".into(),
                "256x256".into(),
                "--set".into(),
                "cb.size_kib=1024".into(),
            ],
        ),
        ("npy_header_nested_8000_deep", load(&p("nested_shape.npy"))),
        // A shape of 5001 dimensions was echoed whole (15 KB on one line).
        ("npy_shape_of_5001_dimensions", load(&p("many_dims.npy"))),
        (
            "load_one_buffer_twice",
            [
                load(&p("a1.npy")),
                vec!["--load".into(), format!("A={}", p("a2.npy"))],
            ]
            .concat(),
        ),
        (
            "dump_one_buffer_twice",
            vec![
                "samples/vecadd.spu".into(),
                "--dump".into(),
                format!("C={}", p("c1.npy")),
                "--dump".into(),
                format!("C={}", p("c2.npy")),
            ],
        ),
        (
            "machine_file_quoted_integer",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("quoted_int.toml"),
            ],
        ),
        (
            "machine_file_quoted_number",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("quoted_float.toml"),
            ],
        ),
        (
            "machine_file_quoted_power_of_two",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("quoted_power.toml"),
            ],
        ),
        ("npy_header_nested_33_deep", load(&p("nested_key.npy"))),
        // Where a bad machine value was given: the file and line, or `--set` (H11).
        (
            "machine_file_with_extends",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("extends.toml"),
            ],
        ),
        (
            "machine_file_value_out_of_range",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                p("zero.toml"),
            ],
        ),
        (
            "set_value_out_of_range",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                "gtx480".into(),
                "--set".into(),
                "sm.max_threads=0".into(),
            ],
        ),
        // A limit names its key and a `--set` only a machine can have (H10).
        (
            "shared_memory_past_the_limit",
            vec![p("shbig.spu"), "-D".into(), "S=20000".into()],
        ),
        (
            "shared_memory_no_machine_has",
            vec![p("shbig.spu"), "-D".into(), "S=4000000000".into()],
        ),
        (
            "gpu_block_over_max_warps",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                "gtx480".into(),
                "--set".into(),
                "sm.max_warps=1".into(),
            ],
        ),
        (
            "gpu_block_over_max_resident_threads",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                "gtx480".into(),
                "--set".into(),
                "sm.max_resident_threads=32".into(),
            ],
        ),
        // Several blocks per SM (#29 item 2): a fold that does not fit, on a GPU,
        // zero, huge, and one whose partial pass puts IU code in a slot beside a block.
        (
            "fold_on_a_gpu",
            vec![
                "samples/vecadd.spu".into(),
                "--machine".into(),
                "gtx480".into(),
                "--set".into(),
                "sm.fold_x=2".into(),
            ],
        ),
        (
            "fold_zero",
            vec![
                "samples/pass_token.spu".into(),
                "--set".into(),
                "sm.fold_y=0".into(),
            ],
        ),
        (
            "fold_huge",
            vec![
                "samples/pass_token.spu".into(),
                "--set".into(),
                "sm.fold_x=1000000".into(),
            ],
        ),
        (
            "fold_over_shared_memory",
            vec![
                "samples/stencil2d/stencil_pc.spu".into(),
                "-D".into(),
                "N=256".into(),
                "--set".into(),
                "sm.fold_x=2".into(),
                "--set".into(),
                "sm.fold_y=2".into(),
            ],
        ),
        (
            "fold_over_block_slots",
            vec![
                "samples/pass_token.spu".into(),
                "-D".into(),
                "P=12".into(),
                "-D".into(),
                "Q=12".into(),
                "--grid".into(),
                "4x4".into(),
                "--set".into(),
                "sm.fold_x=3".into(),
                "--set".into(),
                "sm.fold_y=3".into(),
            ],
        ),
        (
            "fold_over_warps",
            vec![
                "samples/stencil2d/stencil_pc.spu".into(),
                "-D".into(),
                "N=256".into(),
                "--set".into(),
                "sm.fold_x=2".into(),
                "--set".into(),
                "sm.max_warps=3".into(),
            ],
        ),
        // Reports name the SM slot, and say when a link is an inner one.
        (
            "fold_deadlock_names_the_slot",
            vec![
                "emu/tests/matrix/fold_deadlock.spu".into(),
                "--grid".into(),
                "1x1".into(),
                "--set".into(),
                "sm.fold_x=2".into(),
            ],
        ),
        (
            "fold_cb_checker_names_the_slot",
            vec![
                "emu/tests/matrix/fold_stale.spu".into(),
                "--grid".into(),
                "1x1".into(),
                "--set".into(),
                "sm.fold_x=2".into(),
            ],
        ),
        (
            "fold_strands_a_partial_pass_boundary_role",
            vec![
                "samples/pass_token.spu".into(),
                "-D".into(),
                "P=3".into(),
                "--set".into(),
                "sm.fold_x=2".into(),
            ],
        ),
    ];
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = outcome(&args, tmp);
        assert!(
            !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
            "{name}:\n{text}"
        );
        insta::assert_snapshot!(name, text);
    }
    let out =
        spu_emu::load::npy::read(Path::new(&p("div.npy")), "out", spu_isa::Ty::U32, &[4]).unwrap();
    // u32 7 / 0 = all ones; u32 7 % 0 = 7; s32 -7 / 0 = 1 (negative dividend).
    assert_eq!(out, vec![u32::MAX, 7, 1, 0]);
}

/// A header nesting an extra key 32 lists deep (the limit) is read in linear
/// time (it took exponential time, 16 s at 22 levels) and then refused for the
/// key, which NumPy does not write.
#[test]
fn npy_header_nested_to_the_limit_is_read_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested.npy");
    std::fs::write(
        &file,
        npy(&format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': (8,), 'x': {}{}, }}",
            "[".repeat(32),
            "]".repeat(32)
        )),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args(["samples/vecadd.spu", "-q", "-D", "N=8", "--load"])
        .arg(format!("A={}", file.display()))
        .current_dir(root())
        .output()
        .expect("spu-emu runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("its header has the key `x`"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// A GPU has no CBs: a grid whose CBs would pass the 1024 MiB limit on an SPU
/// runs on one (it was refused for CB storage).
#[test]
fn a_gpu_grid_needs_no_cb_storage() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "samples/vecadd.spu",
        "--machine",
        "gtx480",
        "--grid",
        "16x16",
        "--set",
        "cb.size_kib=1024",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("spu-emu runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same grid of an SPU is refused for its CBs.
    let spu = outcome(
        &args[..1]
            .iter()
            .chain(&args[3..])
            .copied()
            .collect::<Vec<_>>(),
        dir.path(),
    );
    assert!(
        spu.contains("the CB storage of a 16x16 grid in MiB is 1088"),
        "{spu}"
    );
}

#[test]
fn ctrl_c_stops_a_functional_endless_loop_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args([
            "emu/tests/faults/spin.spu",
            "--functional",
            "-q",
            "--spin-limit",
            "0",
            // Functional mode skips the loop's turns: it reaches the default
            // bounds within a second.
            "--max-cycles",
            "18446744073709551615",
            "--max-instructions",
            "18446744073709551615",
            "--stats",
        ])
        .arg(&stats)
        .current_dir(root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spu-emu starts");
    std::thread::sleep(std::time::Duration::from_millis(1000));
    assert!(child.try_wait().unwrap().is_none(), "the loop is endless");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let sent = std::time::Instant::now();
    let out = child.wait_with_output().expect("spu-emu ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        sent.elapsed() < std::time::Duration::from_secs(1),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    // Stopped by the run itself (not by the fallback that ends stuck processes);
    // functional mode has no cycles, and names none.
    assert!(
        err.contains("error: interrupted with 0 of 1 blocks finished"),
        "{err}"
    );
    assert!(!stats.exists());
}

#[test]
fn ctrl_c_stops_the_run_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    let child = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args([
            "emu/tests/faults/spin.spu",
            "-q",
            "--spin-limit",
            "0",
            "--max-cycles",
            "1000000000000",
            "--stats",
        ])
        .arg(&stats)
        .current_dir(root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spu-emu starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("spu-emu ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("error: interrupted at cycle"), "{err}");
    assert!(!stats.exists(), "no statistics after an interrupted run");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no temporary files"
    );
}

/// A kernel whose `.assert` preconditions hold runs as if they were not there, from
/// source and from a binary; the binary carries them (format version 6), a kernel
/// without them stays at version 5.
#[test]
fn preconditions_that_hold_let_the_run_go() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("stencil.bin");
    let stencil = assembled("samples/stencil2d/stencil_pc.spu");
    assert_eq!(stencil[0x30..0x34], 6u32.to_le_bytes());
    assert_eq!(
        assembled("samples/vecadd.spu")[0x30..0x34],
        5u32.to_le_bytes()
    );
    std::fs::write(&bin, &stencil).unwrap();
    for kernel in ["samples/stencil2d/stencil_pc.spu", bin.to_str().unwrap()] {
        let text = outcome(&[kernel, "-D", "N=64", "-D", "K=96"], dir.path());
        assert!(text.starts_with("exit: 0"), "{text}");
    }
}

/// A machine file that is a named pipe nothing writes to is refused at once
/// instead of waited on; a pipe with a writer (as `<(...)` gives) is read
/// (#23 note N1).
#[test]
fn a_machine_pipe_without_a_writer_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("m.toml");
    if !spu_io::testing::make_fifo(&fifo) {
        return;
    }
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_spu-emu"))
            .args(["samples/vecadd.spu", "-q", "--stats", "-", "--machine"])
            .arg(&fifo)
            .current_dir(root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let finish = |mut child: std::process::Child| {
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("spu-emu waited on the pipe");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    };
    let out = finish(run());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("m.toml") && err.contains("it is a pipe or device that nothing writes to"),
        "{err}"
    );
    // With a writer the file is read (the writer counts as one from the moment
    // it waits in `open`, before the reader comes).
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, "[grid]\ncols = 2\n").unwrap())
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = finish(run());
    writer.join().unwrap();
    let stats = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stats.contains("\"grid.cols\": 2"), "{stats}");
}

/// Data pipes (`--load`, `--dump`, `--stats`) with nothing at the other end are
/// refused after a bounded wait, with a note while waiting and an explanation
/// (#23 note N1); with the other end present they stream as before.
#[test]
fn data_pipes_without_the_other_end_are_refused_after_a_bounded_wait() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("p");
    if !spu_io::testing::make_fifo(&fifo) {
        return;
    }
    let fifo_s = fifo.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--load".into(), format!("A={fifo_s}")],
            "nothing wrote to it within 5 s",
        ),
        (
            vec!["--dump".into(), format!("C={fifo_s}")],
            "nothing read from it within 5 s",
        ),
        (
            vec!["--stats".into(), fifo_s.clone()],
            "nothing read from it within 5 s",
        ),
    ];
    // The cases wait side by side, each on its own pipe.
    let handles: Vec<_> = cases
        .into_iter()
        .enumerate()
        .map(|(i, (mut args, says))| {
            let own = dir.path().join(format!("p{i}"));
            assert!(spu_io::testing::make_fifo(&own));
            for a in &mut args {
                *a = a.replace(&fifo_s, &own.display().to_string());
            }
            std::thread::spawn(move || {
                let start = std::time::Instant::now();
                let mut child = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
                    .args(["samples/vecadd.spu", "-q"])
                    .args(&args)
                    .current_dir(root())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                while child.try_wait().unwrap().is_none() {
                    if start.elapsed() > std::time::Duration::from_secs(30) {
                        child.kill().unwrap();
                        panic!("{args:?}: spu-emu waited on the pipe");
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                let out = child.wait_with_output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr).into_owned();
                assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
                assert!(
                    err.contains("note: waiting up to 5 s") && err.contains(says),
                    "{args:?}: {err}"
                );
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // A reader that comes a little late gets the statistics.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            std::fs::read_to_string(fifo).unwrap()
        })
    };
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args(["samples/vecadd.spu", "-q", "--stats"])
        .arg(&fifo)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reader.join().unwrap().contains("\"stats_version\""));
}

/// A `.npy` file is read straight into its buffer: loading 512 MiB fits in 800
/// MiB of address space with the headroom a run on one host thread checks it
/// has (two copies needed over 1 GiB, #23 item G7).
#[test]
fn a_large_load_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let n: u64 = 1 << 29;
    let kernel = dir.path().join("half.spu");
    std::fs::write(
        &kernel,
        format!(".global .u8 A[{n}] = zeros;\n.launch grid(1) block(32);\n.entry k {{ exit; }}\n"),
    )
    .unwrap();
    let mut header = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    let npy = dir.path().join("half.npy");
    std::fs::write(&npy, &bytes).unwrap();
    // Sparse: the data reads as zeros without taking disk space.
    let file = std::fs::OpenOptions::new().write(true).open(&npy).unwrap();
    file.set_len(bytes.len() as u64 + n).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 819200 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(&kernel)
        .arg("--load")
        .arg(format!("A={}", npy.display()))
        .args(["-q", "--threads", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Global memory this process cannot allocate (under `ulimit -v`) is an error that
/// says so, not an abort with a backtrace.
#[test]
fn global_memory_past_a_memory_limit_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("big.spu");
    std::fs::write(
        &kernel,
        ".global .u32 big[1000000000] = zeros;\n.launch grid(1) block(32);\n.entry k { exit; }\n",
    )
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(&kernel)
        .args(["-q", "--set", "memory.global_mib=4000"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {err}", out.status);
    assert!(
        err.contains("buffers need 3815 MiB of global memory (`big` 3815 MiB), and this process could not allocate that much"),
        "{err}"
    );
    assert!(!err.contains("backtrace"), "{err}");
}

/// A machine file whose dotted key has thousands of parts gets a message that says
/// what nests too deeply, not the parser's bare "recursion limit".
#[test]
fn a_machine_key_nested_too_deeply_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let machine = dir.path().join("deep.toml");
    std::fs::write(&machine, format!("{} = 1\n", vec!["a"; 20_000].join("."))).unwrap();
    let out = outcome(
        &[
            "samples/vecadd.spu",
            "-q",
            "--machine",
            &machine.display().to_string(),
        ],
        dir.path(),
    );
    assert!(out.starts_with("exit: 1\n"), "{out}");
    assert!(
        out.contains("machine file `[TMP]/deep.toml`: keys nest too deeply"),
        "{out}"
    );
}

/// Arrays and inline tables nested thousands deep in a machine file get the same
/// explanation, at the parser's position, not its bare "cannot recurse further".
#[test]
fn a_machine_value_nested_too_deeply_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in [
        (
            "array",
            format!("{}1{}", "[".repeat(20_000), "]".repeat(20_000)),
        ),
        (
            "table",
            format!("{}1{}", "{a = ".repeat(5_000), "}".repeat(5_000)),
        ),
    ] {
        let machine = dir.path().join("deep.toml");
        std::fs::write(&machine, format!("x = {value}\n")).unwrap();
        let out = outcome(
            &[
                "samples/vecadd.spu",
                "-q",
                "--machine",
                &machine.display().to_string(),
            ],
            dir.path(),
        );
        assert!(out.starts_with("exit: 1\n"), "{name}: {out}");
        assert!(
            out.contains("values nest too deeply") && !out.contains("cannot recurse"),
            "{name}: {out}"
        );
    }
}

/// A shape dimension of thousands of digits is quoted shortened, as other long
/// text from a file is, not whole.
#[test]
fn a_huge_npy_dimension_is_shortened_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let digits = "9".repeat(30_000);
    let file = dir.path().join("big.npy");
    std::fs::write(
        &file,
        npy(&format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({digits},), }}"
        )),
    )
    .unwrap();
    let out = outcome(
        &[
            "samples/vecadd.spu",
            "-q",
            "--load",
            &format!("A={}", file.display()),
        ],
        dir.path(),
    );
    assert!(out.starts_with("exit: 1\n"), "{out}");
    assert!(out.contains("(30000 bytes), which is not a size"), "{out}");
    assert!(out.len() < 2000, "{} bytes: {}", out.len(), &out[..300]);
}

/// Runs `kernel` (source text) with `args` under a 20 s wall-time bound and a
/// 1.5 GB address-space limit: (exit code, stderr, seconds taken).
fn bounded_run(kernel: &str, args: &[&str]) -> (Option<i32>, String, f64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.spu");
    std::fs::write(&path, kernel).unwrap();
    let started = std::time::Instant::now();
    let out = Command::new("timeout")
        .arg("20")
        .arg("sh")
        .arg("-c")
        .arg("ulimit -v 1500000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        started.elapsed().as_secs_f64(),
    )
}

/// In functional mode a warp that waits at an atomic's window lets the rounds run
/// ahead of its instructions: `--max-cycles` still stops the run (it ran on for
/// ever, every unit held at the cycle limit).
#[test]
fn functional_max_cycles_stops_a_warp_looping_on_an_atomic() {
    let (code, err, secs) = bounded_run(
        ".global .u32 flag[4] = zeros;\n.launch grid(1) block(32);\n.entry spin {\n .reg .u32 %r<4>;\n mov.u32 %r0, flag;\nL:\n atom.global.add.u32 %r1, [%r0], 1;\n bra L;\n}\n",
        &[
            "-q",
            "--functional",
            "--max-cycles",
            "2000",
            "--threads",
            "2",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("the run exceeded --max-cycles 2 000"), "{err}");
    assert!(secs < 15.0, "{secs} s");
}

/// A kernel storing in an endless loop on every warp of an 8x8 grid keeps its
/// functional store log bounded (it reached gigabytes in one window and aborted).
#[test]
fn functional_store_log_stays_bounded() {
    let (code, err, _) = bounded_run(
        ".global .u32 flag[4] = zeros;\n.launch grid(64) block(1024);\n.entry spin {\n .reg .u32 %r<4>;\n mov.u32 %r0, flag;\nL:\n ld.global.u32 %r1, [%r0];\n add.u32 %r1, %r1, 1;\n st.global.u32 [%r0], %r1;\n bra L;\n}\n",
        &[
            "-q",
            "--functional",
            "--machine",
            "spu-8x8",
            "--max-cycles",
            "100000",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the run exceeded --max-cycles 100 000"),
        "{err}"
    );
}
