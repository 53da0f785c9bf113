//! Memory forms: `ld` (global, shared, local and parameter space), `ldu`, `st`,
//! every type, `.v2`/`.v4`, cache operators and `.volatile`/`.nc`, 32- and 64-bit
//! address registers; `atom.global`, `atom.shared`, their `.cas` and `red.global`,
//! every operation and type. Every access stays in the thread's own scratch (or
//! reads a parameter), so the result does not depend on the order of the lanes.

use super::random::{Rng, reg};
use super::reference::Op;
use super::{Class, Drawn, Reg, SCRATCH, Src};
use spu_isa::{AtomOp, Space, Ty};

const TYS: [Ty; 14] = [
    Ty::U8,
    Ty::S8,
    Ty::B8,
    Ty::U16,
    Ty::S16,
    Ty::B16,
    Ty::U32,
    Ty::S32,
    Ty::B32,
    Ty::F32,
    Ty::U64,
    Ty::S64,
    Ty::B64,
    Ty::F64,
];

/// The register file an element of `ty` moves through: 8- and 16-bit values
/// through 16- or 32-bit registers, bit types through the float file of their
/// width too.
fn element_class(rng: &mut Rng, ty: Ty) -> Class {
    match ty {
        Ty::F32 => Class::F,
        Ty::F64 => Class::Fd,
        Ty::B32 if rng.chance(25) => Class::F,
        Ty::B64 if rng.chance(25) => Class::Fd,
        t if t.bits() <= 16 && rng.chance(30) => Class::R,
        t => Class::of(t),
    }
}

/// `count` distinct registers of `class`.
fn distinct(rng: &mut Rng, class: Class, count: usize) -> Vec<Reg> {
    let mut regs: Vec<Reg> = Vec::new();
    while regs.len() < count {
        let r = reg(rng, class);
        if !regs.contains(&r) {
            regs.push(r);
        }
    }
    regs
}

/// `{%a, %b}` for a vector, `%a` for one register.
fn list(regs: &[Reg]) -> String {
    let names: Vec<String> = regs.iter().map(Reg::to_string).collect();
    if regs.len() == 1 {
        names[0].clone()
    } else {
        format!("{{{}}}", names.join(", "))
    }
}

/// The address register of the thread's scratch in `space`.
fn base(rng: &mut Rng, space: Space) -> &'static str {
    match space {
        Space::Shared => "%a4",
        Space::Local => "%a5",
        _ if rng.chance(30) => "%t1",
        _ => "%a2",
    }
}

/// A random offset aligned to `size` for an access of `size` bytes in `limit`.
fn offset(rng: &mut Rng, size: usize, limit: usize) -> usize {
    rng.below(limit / size) * size
}

fn load(rng: &mut Rng) -> Drawn {
    let ldu = rng.chance(15);
    let space = if ldu {
        Space::Global
    } else {
        rng.pick(&[Space::Global, Space::Shared, Space::Local, Space::Param])
    };
    let ty = rng.pick(&TYS);
    let size = ty.bits() as usize / 8;
    let limit = if space == Space::Param { 8 } else { SCRATCH };
    let count = match rng.below(4) {
        0 if size * 2 <= limit => 2,
        1 if ty.bits() <= 32 && size * 4 <= limit => 4,
        _ => 1,
    };
    let off = offset(rng, size * count, limit);
    let class = element_class(rng, ty);
    let dsts = distinct(rng, class, count);
    let mut mods = String::new();
    if !ldu && rng.chance(15) {
        mods.push_str(".volatile");
    }
    mods.push_str(&format!(".{}", space.name()));
    if !ldu && space == Space::Global && mods == ".global" && rng.chance(40) {
        mods.push_str(rng.pick(&[".ca", ".cg", ".cs", ".lu", ".cv", ".nc"]));
    }
    if count > 1 {
        mods.push_str(&format!(".v{count}"));
    }
    let (address, at) = if space == Space::Param {
        let p = rng.below(super::PARAMS);
        let text = if off == 0 {
            format!("[P{p}]")
        } else {
            format!("[P{p}+{off}]")
        };
        (text, p * 8 + off)
    } else {
        (format!("[{}+{off}]", base(rng, space)), off)
    };
    let m = if ldu { "ldu" } else { "ld" };
    Drawn {
        op: Op::Load {
            space,
            ty,
            count,
            offset: at,
        },
        text: format!("{m}{mods}.{ty} {}, {address};", list(&dsts)),
        dsts,
        srcs: Vec::new(),
        pred: None,
        whole_warp: false,
    }
}

fn store(rng: &mut Rng) -> Drawn {
    let space = rng.pick(&[Space::Global, Space::Shared, Space::Local]);
    let ty = rng.pick(&TYS);
    let size = ty.bits() as usize / 8;
    let count = match rng.below(4) {
        0 => 2,
        1 if ty.bits() <= 32 => 4,
        _ => 1,
    };
    let off = offset(rng, size * count, SCRATCH);
    let class = element_class(rng, ty);
    let srcs: Vec<Reg> = (0..count).map(|_| reg(rng, class)).collect();
    let mut mods = String::new();
    if rng.chance(15) {
        mods.push_str(".volatile");
    }
    mods.push_str(&format!(".{}", space.name()));
    if space == Space::Global && mods == ".global" && rng.chance(40) {
        mods.push_str(rng.pick(&[".wb", ".cg", ".cs", ".wt"]));
    }
    if count > 1 {
        mods.push_str(&format!(".v{count}"));
    }
    Drawn {
        op: Op::Store {
            space,
            ty,
            count,
            offset: off,
        },
        text: format!(
            "st{mods}.{ty} [{}+{off}], {};",
            base(rng, space),
            list(&srcs)
        ),
        dsts: Vec::new(),
        srcs: srcs.into_iter().map(Src::Reg).collect(),
        pred: None,
        whole_warp: false,
    }
}

/// The types `atom.{op}` takes (the ISA's rule, after PTX).
fn atom_types(op: Option<AtomOp>) -> &'static [Ty] {
    match op {
        None => &[Ty::U32, Ty::S32, Ty::B32, Ty::U64, Ty::S64, Ty::B64],
        Some(AtomOp::Add) => &[Ty::U32, Ty::S32, Ty::U64, Ty::F32, Ty::F64],
        Some(AtomOp::Min | AtomOp::Max) => &[Ty::U32, Ty::S32, Ty::U64, Ty::S64],
        Some(AtomOp::Exch) => &[Ty::B32, Ty::B64, Ty::U32, Ty::S32],
        Some(AtomOp::And | AtomOp::Or | AtomOp::Xor) => &[Ty::B32, Ty::B64],
        Some(AtomOp::Inc | AtomOp::Dec) => &[Ty::U32],
    }
}

fn atomic(rng: &mut Rng) -> Drawn {
    let red = rng.chance(25);
    let space = if red {
        Space::Global
    } else {
        rng.pick(&[Space::Global, Space::Shared])
    };
    let op = if !red && rng.chance(20) {
        None
    } else {
        loop {
            let op = rng.pick(AtomOp::ALL);
            if !(red && op == AtomOp::Exch) {
                break Some(op);
            }
        }
    };
    let ty = rng.pick(atom_types(op));
    let off = offset(rng, ty.bits() as usize / 8, SCRATCH);
    let class = Class::of(ty);
    let mut srcs = vec![Src::Reg(reg(rng, class))];
    if op.is_none() {
        srcs.push(Src::Reg(reg(rng, class)));
    }
    let address = format!("[{}+{off}]", base(rng, space));
    let sources: Vec<String> = srcs.iter().map(Src::to_string).collect();
    let name = match op {
        Some(o) => o.name().to_string(),
        None => "cas".into(),
    };
    let (text, dsts) = if red {
        (
            format!("red.global.{name}.{ty} {address}, {};", sources.join(", ")),
            Vec::new(),
        )
    } else {
        let d = reg(rng, class);
        (
            format!(
                "atom.{}.{name}.{ty} {d}, {address}, {};",
                space.name(),
                sources.join(", ")
            ),
            vec![d],
        )
    };
    Drawn {
        op: Op::Atomic {
            space,
            op,
            ty,
            offset: off,
            returns: !red,
        },
        text,
        dsts,
        srcs,
        pred: None,
        whole_warp: false,
    }
}

/// One random memory instruction.
pub(crate) fn instruction(rng: &mut Rng) -> Drawn {
    match rng.below(10) {
        0..=3 => load(rng),
        4..=6 => store(rng),
        _ => atomic(rng),
    }
}
