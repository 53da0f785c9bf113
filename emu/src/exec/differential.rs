//! The two execution paths agree: every arithmetic, logic, compare, select, move
//! and convert form the word-wide micro-ops execute gives the same registers and
//! predicates when the general path ([`crate::exec::ext`], which executes every
//! form lane by lane) executes it, for random valid forms of every row and operand
//! values that include the edge cases (zero, the extremes, NaN, infinities,
//! subnormals, negative zero).

use crate::exec::decode::decode_program;
use crate::exec::ext;
use crate::exec::lanes::Lanes;
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::{Kind, Reg, SymbolAddresses};
use crate::exec::scalar::Atomic;
use crate::exec::step::{self, Global, Local, guarded};
use crate::exec::warp::{Warp, WorkCtx};
use crate::machine::UnitLabel;
use spu_isa::{Operand, TABLE};

/// Global memory for forms that never touch it.
struct NoMemory(GlobalMemory);

impl Global for NoMemory {
    fn layout(&self) -> &GlobalMemory {
        &self.0
    }
    fn load(&mut self, _: &mut Warp, _: Reg, _: &Lanes, _: u32) {
        unreachable!("no memory form is compared")
    }
    fn store(&mut self, _: &Lanes, _: &Lanes, _: u32) {
        unreachable!("no memory form is compared")
    }
    fn load_narrow(&mut self, _: &mut Warp, _: Reg, _: spu_isa::Ty, _: &Lanes, _: u32) {
        unreachable!("no memory form is compared")
    }
    fn store_narrow(&mut self, _: spu_isa::Ty, _: &Lanes, _: &Lanes, _: u32) {
        unreachable!("no memory form is compared")
    }
    fn atomic(
        &mut self,
        _: &mut Warp,
        _: Atomic,
        _: Option<Reg>,
        _: &Lanes,
        _: &[u64; 32],
        _: &[u64; 32],
        _: u32,
    ) {
        unreachable!("no memory form is compared")
    }
}

/// Operand words with the edge cases of every type.
const EDGES: [u32; 16] = [
    0,
    1,
    2,
    0xffff_ffff,
    0x8000_0000,
    0x7fff_ffff,
    0x3f80_0000,
    0xbf80_0000,
    0x7fc0_0000,
    0xffc0_0001,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0001,
    0x8000_0001,
    0x4b80_0001,
    31,
];

#[test]
fn word_path_and_general_path_agree_on_every_form_the_word_path_executes() {
    let symbols = SymbolAddresses {
        buffers: &[],
        shared: &[],
    };
    let ctx = WorkCtx {
        ctaid: [0; 2],
        nctaid: [1; 2],
        ntid: [32, 1, 1],
        iu: None,
        entry: 0,
        shared_bytes: 0,
        sm_grid: [1, 1],
    };
    let label = UnitLabel::Sm { x: 0, y: 0 };
    let mut memory = NoMemory(GlobalMemory::layout(Vec::new(), 1 << 20).unwrap());
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut compared = std::collections::BTreeMap::new();
    for (row, spec) in TABLE.iter().enumerate() {
        for _ in 0..600 {
            let seeds: [u64; 8] = std::array::from_fn(|_| next());
            let instr = spu_isa::sample::instr_from_seeds(row, &seeds);
            let plain = instr.operands().iter().all(|o| {
                !matches!(
                    o,
                    Operand::Mem { .. }
                        | Operand::Target(_)
                        | Operand::Special(_)
                        | Operand::Symbol { .. }
                )
            });
            let Ok(word) = instr.encode() else { continue };
            let Ok(program) = decode_program(&[word], symbols, 128) else {
                continue;
            };
            let word_path = !matches!(
                program.ops[0].kind,
                Kind::Ext(_)
                    | Kind::Atomic(_)
                    | Kind::Ld(_)
                    | Kind::St(_)
                    | Kind::Bra { .. }
                    | Kind::Exit
                    | Kind::Nop
                    | Kind::BarSync
                    | Kind::BlockSync(_)
            );
            if !plain || !word_path {
                continue;
            }
            let general = ext::decode(&instr, symbols).expect("the general path takes every form");
            let mut w1 = Warp::new(0, 32, &program.layout, &ctx, label);
            for r in 0..128 {
                for l in 0..32 {
                    let x = next();
                    w1.regs[r][l] = if x & 3 == 0 {
                        (x >> 32) as u32
                    } else {
                        EDGES[(x >> 8) as usize % EDGES.len()]
                    };
                }
            }
            for p in &mut w1.preds {
                *p = next() as u32;
            }
            let mut w2 = w1.clone();
            let mut shared = [0u32; 1];
            let mut ports = [None, None, None, None];
            let mut local = Local {
                shared: &mut shared,
                shared_bytes: 0,
                params: &[],
                ports: &mut ports,
                is_iu: false,
            };
            let mut addrs = [0u32; 32];
            step::execute(&program, 0, &mut w1, &mut local, &mut memory, 0, &mut addrs)
                .expect("no fault");
            let exec = guarded(instr.guard, &w2.preds, u32::MAX);
            ext::execute(&general, &mut w2, &mut local, &mut memory, exec, &mut addrs)
                .expect("no fault");
            let text = spu_isa::disasm::full_mnemonic(&instr);
            for r in 0..128 {
                assert_eq!(w1.regs[r], w2.regs[r], "{instr:?} ({text}): register {r}");
            }
            assert_eq!(w1.preds, w2.preds, "{instr:?} ({text}): predicates");
            *compared.entry(spec.mnemonic).or_insert(0) += 1;
        }
    }
    for row in [
        "add", "mad", "fma", "div", "setp", "selp", "cvt", "shr", "min",
    ] {
        assert!(
            compared.get(row).copied().unwrap_or(0) >= 5,
            "{row}: {compared:?}"
        );
    }
}
