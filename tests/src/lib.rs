//! Helpers for the cross-crate tests in `tests/`: finding sources in the repository,
//! running a kernel on a machine, reading its buffers back, a headless browser for
//! the replay pages ([`browser`]), and whether clang is there for CUDA C ([`clang`]).

pub mod browser;
pub mod clang;
pub mod console;
pub mod fuzz;
pub mod semcheck;

use spu_emu::{Image, Machine, RunResult};
use spu_isa::format::{
    BufferDecl, Expr, Init, Label, Launch, LineTable, Module, ParamDecl, RegDecl, RegTy,
    SharedDecl, SourceLoc,
};
use spu_isa::{Guard, Instr, Opcode, Operand, SymbolRef, Ty};
use std::path::{Path, PathBuf};

/// A path relative to the repository root.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// Every `.spu` file under a repository directory, sorted (without those that
/// include CUDA C when there is no clang to compile it).
pub fn sources(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![repo_path(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            // Test support: an unreadable repository entry should fail the test.
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "spu") {
                // Launch files of CUDA C need clang (see [`clang::skip`]).
                if !(clang::needs_clang(&p) && clang::skip(&p.display().to_string())) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// A finished run: the image after the run (buffers hold the results), the initial
/// image (inputs), and the measurements.
#[derive(Debug)]
pub struct Ran {
    pub before: Image,
    pub after: Image,
    pub result: RunResult,
}

impl Ran {
    /// Index of buffer `name` in the image.
    fn region(image: &Image, name: &str) -> usize {
        image
            .memory
            .regions()
            .iter()
            .position(|r| r.name == name)
            .unwrap_or_else(|| panic!("no buffer `{name}`"))
    }

    fn words(image: &Image, name: &str) -> Vec<u32> {
        let i = Self::region(image, name);
        image.memory.buffer(i).to_vec()
    }

    /// A buffer's elements (of its declared type, any width) as bit patterns.
    fn elements(image: &Image, name: &str) -> Vec<u64> {
        let i = Self::region(image, name);
        let r = &image.memory.regions()[i];
        let words = image.memory.buffer(i);
        (0..r.len as usize)
            .map(|e| spu_emu::load::init::element(words, r.ty, e))
            .collect()
    }

    /// A buffer's elements after the run, as bit patterns (low bits).
    pub fn out_bits(&self, name: &str) -> Vec<u64> {
        Self::elements(&self.after, name)
    }

    /// A buffer's initial elements, as bit patterns (low bits).
    pub fn in_bits(&self, name: &str) -> Vec<u64> {
        Self::elements(&self.before, name)
    }

    /// A `.f64` buffer's values after the run.
    pub fn out_f64(&self, name: &str) -> Vec<f64> {
        self.out_bits(name)
            .into_iter()
            .map(f64::from_bits)
            .collect()
    }

    /// A `.f64` buffer's initial values.
    pub fn in_f64(&self, name: &str) -> Vec<f64> {
        self.in_bits(name).into_iter().map(f64::from_bits).collect()
    }

    /// A buffer's words after the run.
    pub fn out_u32(&self, name: &str) -> Vec<u32> {
        Self::words(&self.after, name)
    }

    /// A buffer's values after the run, as f32.
    pub fn out_f32(&self, name: &str) -> Vec<f32> {
        self.out_u32(name).into_iter().map(f32::from_bits).collect()
    }

    /// A buffer's initial values, as f32.
    pub fn in_f32(&self, name: &str) -> Vec<f32> {
        Self::words(&self.before, name)
            .into_iter()
            .map(f32::from_bits)
            .collect()
    }

    /// A buffer's initial words.
    pub fn in_u32(&self, name: &str) -> Vec<u32> {
        Self::words(&self.before, name)
    }
}

/// Assembles (or reads) a kernel and runs it; panics with the rendered error on
/// any failure.
pub fn run_with(path: &Path, machine: &Machine, defines: &[&str]) -> Ran {
    run_loaded(path, machine, defines, &[])
}

/// [`run_with`] with `--load BUF=file.npy` arguments.
pub fn run_loaded(path: &Path, machine: &Machine, defines: &[&str], loads: &[String]) -> Ran {
    run_in_mode(path, machine, defines, loads, false)
}

/// [`run_loaded`] in timing mode or, with `functional`, in `--functional`.
pub fn run_in_mode(
    path: &Path,
    machine: &Machine,
    defines: &[&str],
    loads: &[String],
    functional: bool,
) -> Ran {
    let kernel = spu_emu::read_kernel(path).unwrap_or_else(|e| match e {
        spu_emu::load::kernel::KernelError::Assembly { rendered, .. } => panic!("{rendered}"),
        other => panic!("{other}"),
    });
    let options = spu_emu::LoadOptions {
        defines: defines.iter().map(|d| d.to_string()).collect(),
        loads: loads.to_vec(),
        ..Default::default()
    };
    let before = spu_emu::load(kernel.module.clone(), machine, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut after = before.clone();
    let control = spu_emu::RunControl {
        functional,
        ..Default::default()
    };
    let result =
        spu_emu::simulate(&mut after, machine, control, &mut |_| {}).unwrap_or_else(|stop| {
            panic!(
                "{}",
                spu_emu::observe::stopped::render_stop(&stop, &kernel, &after)
            )
        });
    Ran {
        before,
        after,
        result,
    }
}

/// The machines and modes results must agree on: the SPU (timing), `gtx480`
/// and `--functional`, with their names.
pub fn every_mode() -> [(&'static str, Machine, bool); 3] {
    [
        ("spu", Machine::default(), false),
        ("gtx480", spu_emu::machine::preset("gtx480").unwrap(), false),
        ("functional", Machine::default(), true),
    ]
}

/// Runs a repository kernel on the default machine.
pub fn run(rel: &str, defines: &[&str]) -> Ran {
    run_with(&repo_path(rel), &Machine::default(), defines)
}

/// Asserts `got` matches `want` to a relative tolerance.
pub fn assert_close(got: &[f32], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(*g) - w).abs() / w.abs().max(1.0);
        assert!(
            err <= rel,
            "{what}[{i}]: got {g}, want {w} (relative error {err:e})"
        );
    }
}

/// The tool binaries of this build (`cargo test --workspace` builds them; a
/// narrower run builds them into a side directory first).
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile dir");
    let path = dir.join(name);
    if path.exists() {
        return path;
    }
    let side = repo_path("target/tutorial-tools");
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "build",
            "-q",
            "--bins",
            "-p",
            "spu-asm",
            "-p",
            "spu-emu",
            "-p",
            "spu-prof",
            "-p",
            "spu-sweep",
        ])
        .env("CARGO_TARGET_DIR", &side)
        .current_dir(repo_path(""))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the tools failed");
    side.join("debug").join(name)
}

/// A module holding `instrs` (then `exit`), with every register, predicate, symbol
/// and label they may name declared.
pub fn module_of(mut instrs: Vec<Instr>) -> (Module, Vec<Instr>) {
    let exit = Opcode::Exit;
    let n = instrs.len() as u32 + 1;
    for i in &mut instrs {
        i.reconv = None;
        for op in i.operands_mut() {
            match op {
                Operand::Target(t) => *t %= n,
                Operand::Symbol { sym, .. } => {
                    *sym = match *sym {
                        SymbolRef::Buffer(k) => SymbolRef::Buffer(k % 2),
                        SymbolRef::Shared(k) => SymbolRef::Shared(k % 2),
                    }
                }
                _ => {}
            }
        }
    }
    instrs.push(Instr::new(exit, Guard::Always, Default::default(), &[]).unwrap());
    let labels = (0..n)
        .map(|pc| Label {
            name: format!("L{pc}"),
            pc,
        })
        .collect();
    let one = || vec![Expr::constant(4)];
    let m = Module {
        name: "roundtrip".into(),
        code: instrs
            .iter()
            .map(|i| i.encode().expect("encodes"))
            .collect(),
        iu_entry: None,
        regs: vec![
            RegDecl {
                name: "rd".into(),
                ty: RegTy::Val(Ty::B64),
                count: Some(64),
            },
            RegDecl {
                name: "p".into(),
                ty: RegTy::Pred,
                count: Some(16),
            },
        ],
        params: vec![ParamDecl {
            name: "P0".into(),
            ty: Ty::U32,
            default: Some(1),
        }],
        shared: (0..2)
            .map(|k| SharedDecl {
                name: format!("sh{k}"),
                ty: Ty::U32,
                align: 16 * k,
                dims: one(),
            })
            .collect(),
        buffers: (0..2)
            .map(|k| BufferDecl {
                name: format!("buf{k}"),
                ty: Ty::U32,
                dims: one(),
                init: Init::Zeros,
            })
            .collect(),
        launch: Launch::default(),
        dma: Vec::new(),
        lines: LineTable {
            files: vec!["roundtrip.spu".into()],
            locs: vec![
                SourceLoc {
                    file: 0,
                    line: 1,
                    col: 1
                };
                instrs.len()
            ],
        },
        labels,
        preconditions: vec![spu_isa::format::Precondition {
            lhs: Expr::param(0),
            op: spu_isa::format::CmpOp::Ge,
            rhs: Expr::constant(1),
            message: "P0 must be positive".into(),
        }],
        debug: Default::default(),
    };
    (m, instrs)
}
