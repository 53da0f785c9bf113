//! Conformance (riscv-arch-test style): every per-instruction source under
//! `tests/conformance/` runs, and the words its `// expect BUF[i] = 0x...` lines name
//! must hold those values afterwards.

use spu_tests::{run, sources};

/// `(buffer, index, value)` from the expect lines.
fn signature(src: &str) -> Vec<(String, usize, u32)> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("// expect "))
        .map(|l| {
            let (lhs, rhs) = l.split_once('=').expect("expect line has `=`");
            let (buf, idx) = lhs
                .trim()
                .trim_end_matches(']')
                .split_once('[')
                .expect("BUF[i]");
            let value =
                u32::from_str_radix(rhs.trim().trim_start_matches("0x"), 16).expect("hex value");
            (buf.to_string(), idx.parse().expect("index"), value)
        })
        .collect()
}

#[test]
fn every_conformance_source_produces_its_signature() {
    let files = sources("tests/conformance");
    assert!(
        files.len() >= spu_isa::TABLE.len() - spu_tests::PENDING_SEMANTICS.len(),
        "one source per executed ISA row"
    );
    let mut checked = 0;
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let expected = signature(&src);
        assert!(!expected.is_empty(), "{} has no signature", path.display());
        let rel = path
            .strip_prefix(spu_tests::repo_path(""))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let ran = run(&rel, &[]);
        for (buf, i, want) in expected {
            let got = ran.out_u32(&buf)[i];
            assert_eq!(
                got,
                want,
                "{}: {buf}[{i}] = {got:#010x}, expected {want:#010x}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} signature words checked");
}

#[test]
fn pending_rows_are_refused_at_load_with_their_name() {
    for spec in spu_isa::TABLE {
        if !spu_tests::PENDING_SEMANTICS.contains(&spec.mnemonic) {
            continue;
        }
        // The row's own example, with every register it may name declared.
        let src = format!(
            ".entry pending {{\n .reg .b64 %rd<16>;\n .reg .b32 %r<8>;\n .reg .f32 %f<8>;\n .reg .pred %p<4>;\n {}\n exit;\n}}\n",
            spec.example
        );
        let (module, _) = spu_asm::assemble_module("pending.spu", &src)
            .unwrap_or_else(|d| panic!("{}: {}", spec.mnemonic, d.render("pending.spu", &src)));
        let err = spu_emu::load(module, &spu_emu::Machine::default(), &Default::default())
            .expect_err(spec.mnemonic)
            .to_string();
        assert!(
            err.contains(spec.mnemonic.split('.').next().unwrap_or_default()),
            "{}: {err}",
            spec.mnemonic
        );
    }
}
