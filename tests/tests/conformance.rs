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
        files.len() >= spu_isa::TABLE.len(),
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

/// `(buffer, word)` of every word where two runs' buffers differ.
fn differences(a: &[(String, Vec<u32>)], b: &[(String, Vec<u32>)]) -> Vec<(String, usize)> {
    assert_eq!(a.len(), b.len(), "same buffers");
    let mut out = Vec::new();
    for ((name, x), (other, y)) in a.iter().zip(b) {
        assert_eq!((name, x.len()), (other, y.len()), "same buffers");
        for (i, (p, q)) in x.iter().zip(y).enumerate() {
            if p != q {
                out.push((name.clone(), i));
            }
        }
    }
    out
}

/// Every buffer of a run's image, by name.
fn all_buffers(image: &spu_emu::Image) -> Vec<(String, Vec<u32>)> {
    image
        .memory
        .regions()
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.clone(), image.memory.buffer(i).to_vec()))
        .collect()
}

#[test]
fn every_conformance_source_gives_the_same_buffers_functionally_and_on_gtx480() {
    // The signature test runs the timing model on the default machine; functional
    // mode and another machine must leave every buffer (not only the signature
    // words) bit for bit the same.
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    let mut on_gpu = 0;
    for path in sources("tests/conformance") {
        let reference = spu_tests::run_with(&path, &spu_emu::Machine::default(), &[]);
        let want = all_buffers(&reference.after);
        let functional = spu_emu::cli::session::run_file(
            &path,
            &spu_emu::Machine::default(),
            &Default::default(),
            spu_emu::RunControl {
                functional: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(functional.result.functional);
        let differ = differences(&all_buffers(&functional.image), &want);
        assert!(
            differ.is_empty(),
            "{}: words where functional mode differs from timing mode: {differ:?}",
            path.display()
        );
        // Sources of the SPU's own features (CBs, IUs, blocksync) are refused by a
        // GPU machine at load, with a message saying so.
        let kernel = spu_emu::read_kernel(&path).unwrap();
        if let Err(spu_emu::load::LoadError::Machine(_)) =
            spu_emu::load(kernel.module, &gtx480, &Default::default())
        {
            continue;
        }
        let other = spu_tests::run_with(&path, &gtx480, &[]);
        assert_eq!(
            all_buffers(&other.after),
            want,
            "{}: gtx480",
            path.display()
        );
        on_gpu += 1;
    }
    assert!(on_gpu >= 60, "only {on_gpu} sources ran on gtx480");
}

#[test]
fn wide_global_accesses_count_every_word_they_move() {
    // 32 lanes load one .u64 and store one .v2.u32 each: 64 words each way.
    let src = "
.global .u32 src[64] = ramp(0, 1);
.global .u32 out[64] = zeros;
.launch grid(1, 1) block(32) iu(1);
.entry wide {
    .reg .u32 %r<8>;
    .reg .u64 %rd<2>;
    mov.u32 %r0, %tid.x;
    shl.b32 %r1, %r0, 3;
    mov.u32 %r2, src;
    add.u32 %r2, %r2, %r1;
    ld.global.u64 %rd1, [%r2];
    mov.u32 %r3, out;
    add.u32 %r3, %r3, %r1;
    st.global.v2.u32 [%r3], {%rd1.lo, %rd1.hi};
    exit;
}
";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.spu");
    std::fs::write(&path, src).unwrap();
    let ran = spu_tests::run_with(&path, &spu_emu::Machine::default(), &[]);
    assert_eq!(ran.out_u32("out"), (0..64).collect::<Vec<u32>>());
    assert_eq!(ran.result.traffic.load_words, 64);
    assert_eq!(ran.result.traffic.store_words, 64);
}

#[test]
fn every_valid_form_of_every_row_is_executed() {
    // Random valid forms of each row (every type and modifier the table's rules
    // allow, register or immediate operands, 32- or 64-bit addresses): the
    // emulator executes every one, so none may be refused at load.
    let mut refused = std::collections::BTreeMap::new();
    for (row, spec) in spu_isa::TABLE.iter().enumerate() {
        for k in 0..96u64 {
            let seeds: [u64; 8] = std::array::from_fn(|i| {
                (row as u64 * 97 + k * 8 + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
            });
            let instr = spu_isa::sample::instr_from_seeds(row, &seeds);
            let (module, _) = spu_tests::module_of(vec![instr]);
            let Err(e) = spu_emu::load(module, &spu_emu::Machine::default(), &Default::default())
            else {
                continue;
            };
            let e = e.to_string();
            if e.contains("not executed") {
                let form = spu_isa::disasm::full_mnemonic(&instr);
                refused.entry(form).or_insert((spec.mnemonic, e));
            }
        }
    }
    assert!(refused.is_empty(), "{refused:#?}");
}

#[test]
fn every_type_of_every_row_is_in_a_conformance_source() {
    use spu_isa::table::ModKind;
    let mut used = std::collections::BTreeSet::new();
    for path in sources("tests/conformance") {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.to_string_lossy().into_owned();
        let (module, _) = spu_asm::assemble_module(&name, &src)
            .unwrap_or_else(|d| panic!("{}", d.render(&name, &src)));
        for &w in &module.code {
            let i = spu_isa::Instr::decode(w).unwrap();
            used.insert((i.opcode.spec().mnemonic, i.mods.ty.map(|t| t.name())));
        }
    }
    let mut missing = Vec::new();
    for spec in spu_isa::TABLE.iter() {
        let types: Vec<Option<&str>> = spec
            .modifiers()
            .find(|(k, _, _)| *k == ModKind::Type)
            .map(|(_, allowed, optional)| {
                let mut t: Vec<Option<&str>> =
                    spu_isa::table::allowed_names(ModKind::Type, allowed)
                        .into_iter()
                        .map(Some)
                        .collect();
                if optional {
                    t.push(None);
                }
                t
            })
            .unwrap_or(vec![None]);
        for t in types {
            if !used.contains(&(spec.mnemonic, t)) {
                missing.push(format!("{}.{}", spec.mnemonic, t.unwrap_or("-")));
            }
        }
    }
    assert!(missing.is_empty(), "{} missing: {missing:?}", missing.len());
}
