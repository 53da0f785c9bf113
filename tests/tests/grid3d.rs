//! 3-D launch grids: every block sees its own (`%ctaid.x`, `%ctaid.y`, `%ctaid.z`) and
//! the grid's `%nctaid` on an SPU (where z stacks rows of y), on `gtx480` and in
//! `--functional`, and binaries keep the z extent.

use spu_emu::cli::session::run_file;
use spu_emu::{LoadOptions, Machine, RunControl};
use spu_tests::repo_path;

/// `OUT` after running `tests/grid3d/grid3.spu` with `defines`.
fn out(machine: &Machine, functional: bool, defines: &[&str]) -> Vec<u32> {
    let options = LoadOptions {
        defines: defines.iter().map(|d| d.to_string()).collect(),
        ..LoadOptions::default()
    };
    let control = RunControl {
        functional,
        ..RunControl::default()
    };
    let run = run_file(
        &repo_path("tests/grid3d/grid3.spu"),
        machine,
        &options,
        control,
    )
    .unwrap_or_else(|e| panic!("functional={functional}: {e}"));
    let memory = &run.image.memory;
    let i = memory
        .regions()
        .iter()
        .position(|r| r.name == "OUT")
        .expect("OUT");
    memory.buffer(i).to_vec()
}

/// What the kernel must write: for block (x, y, z) at `4 * ((z * Y + y) * X + x)`,
/// the words x, y, z and `X*100 + Y*10 + Z`.
fn expected([nx, ny, nz]: [u32; 3]) -> Vec<u32> {
    let mut v = Vec::new();
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                v.extend([x, y, z, nx * 100 + ny * 10 + nz]);
            }
        }
    }
    v
}

#[test]
fn every_block_reads_its_3d_coordinates_on_every_machine() {
    let gtx = spu_emu::machine::preset("gtx480").unwrap();
    for dims in [[3, 5, 7], [4, 4, 1], [1, 1, 9], [5, 1, 3]] {
        let d: Vec<String> = ["X", "Y", "Z"]
            .iter()
            .zip(dims)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let d: Vec<&str> = d.iter().map(String::as_str).collect();
        let want = expected(dims);
        for (what, machine, functional) in [
            ("spu-4x4", Machine::default(), false),
            ("gtx480", gtx.clone(), false),
            ("spu-4x4 --functional", Machine::default(), true),
        ] {
            assert_eq!(out(&machine, functional, &d), want, "{what} grid {dims:?}");
        }
    }
}

#[test]
fn z_over_65535_is_refused_with_the_limit() {
    let options = LoadOptions {
        defines: vec!["Z=65536".into(), "X=1".into(), "Y=1".into()],
        ..LoadOptions::default()
    };
    let Err(err) = run_file(
        &repo_path("tests/grid3d/grid3.spu"),
        &Machine::default(),
        &options,
        RunControl::default(),
    ) else {
        panic!("a grid z of 65536 must be refused");
    };
    let err = err.to_string();
    assert!(err.contains("launch grid dimension z"), "{err}");
    assert!(err.contains("65535"), "{err}");
}

#[test]
fn a_3d_launch_survives_the_binary_and_its_disassembly() {
    let src = std::fs::read_to_string(repo_path("tests/grid3d/grid3.spu")).unwrap();
    let (bin, _) = spu_asm::assemble("grid3.spu", &src).unwrap();
    let module = spu_isa::format::read_module(&bin).unwrap();
    assert_ne!(module.launch.grid[2], spu_isa::format::Expr::constant(1));
    let text = spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options::default());
    assert!(text.contains(".launch grid(X, Y, Z)"), "{text}");
    let (again, _) = spu_asm::assemble("grid3.spu", &text).unwrap();
    assert_eq!(again, bin);
}

#[test]
fn only_a_3d_grid_makes_a_version_7_binary() {
    // ELF64 `e_flags` sits at byte 48.
    let version = |bin: &[u8]| u32::from_le_bytes(bin[48..52].try_into().unwrap());
    let src = std::fs::read_to_string(repo_path("tests/grid3d/grid3.spu")).unwrap();
    let (bin, _) = spu_asm::assemble("grid3.spu", &src).unwrap();
    assert_eq!(version(&bin), 7);
    let flat = src.replace("grid(X, Y, Z)", "grid(X, Y)");
    let (bin, _) = spu_asm::assemble("grid2.spu", &flat).unwrap();
    assert_eq!(
        version(&bin),
        5,
        "2-D binaries stay readable by older tools"
    );
    let module = spu_isa::format::read_module(&bin).unwrap();
    assert_eq!(module.launch.grid[2], spu_isa::format::Expr::constant(1));
}

/// A fault in a block of a 3-D grid names the block `(x, y, z)`, not the folded
/// `(x, y*z)` it runs as, in every mode.
#[test]
fn a_fault_names_a_3d_block_by_its_three_coordinates() {
    let path = repo_path("tests/grid3d/fault3.spu");
    let kernel = spu_emu::read_kernel(&path).unwrap_or_else(|e| panic!("{e}"));
    for (name, machine, functional) in spu_tests::every_mode() {
        let mut image =
            spu_emu::load(kernel.module.clone(), &machine, &LoadOptions::default()).unwrap();
        let control = RunControl {
            functional,
            ..RunControl::default()
        };
        let stop = spu_emu::simulate(&mut image, &machine, control, &mut |_| {})
            .expect_err("block (2, 4, 6) loads from a misaligned address");
        let text = spu_emu::observe::stopped::render_stop(&stop, &kernel, &image);
        assert!(text.contains("in block (2, 4, 6) on SM"), "{name}: {text}");
    }
}

/// nvcc's form of a 3-D grid of 3-D blocks (`samples/cuda/grid3d_nvcc.ptx`): every
/// thread writes its block's coordinates and its index in the block where the
/// kernel says, on the SPU, on `gtx480` and in `--functional`.
#[test]
fn the_nvcc_3d_grid_sample_matches_a_reference_everywhere() {
    let (gx, gy, gz) = (3u32, 2u32, 4u32);
    let mut want = Vec::new();
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                want.extend((0..32u32).map(|t| x | (y << 8) | (z << 16) | (t << 24)));
            }
        }
    }
    for (name, machine, functional) in spu_tests::every_mode() {
        let ran = spu_tests::run_in_mode(
            &repo_path("samples/cuda/grid3d_nvcc.spu"),
            &machine,
            &[],
            &[],
            functional,
        );
        assert_eq!(ran.out_u32("OUT"), want, "{name}");
    }
}
