//! The names an instruction may refer to: declared registers (with `.lo`/`.hi`
//! halves), labels, buffers, shared arrays, kernel parameters and PTX entry
//! parameters bound by `.bind`.

use crate::eval::ParamInfo;
use spu_isa::Ty;
use spu_isa::format::RegTy;
use std::collections::{HashMap, HashSet};

/// A declared register: its virtual register and its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegInfo {
    pub vreg: u32,
    pub ty: RegTy,
}

/// A register operand as written: which virtual register, which part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RegUse {
    pub(super) vreg: u32,
    pub(super) offset: u8,
    pub(super) part: bool,
}

/// Names an instruction may refer to.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// Register name (without `%`) -> first register and type.
    pub regs: HashMap<String, RegInfo>,
    /// Label names and their ids (positions are resolved after lowering).
    pub labels: HashMap<String, u32>,
    pub buffers: HashMap<String, u16>,
    pub shared: HashMap<String, u16>,
    pub params: Vec<ParamInfo>,
    /// A PTX entry's parameters that are not kernel parameters: bound by `.bind`
    /// to a buffer, a parameter or a constant.
    pub entry_args: HashMap<String, EntryArg>,
    /// A PTX entry's by-value struct parameters, bound field by field by `.bind`.
    pub entry_structs: HashMap<String, StructArg>,
    /// Names whose declaration failed (reported there): an instruction that uses
    /// one is not checked, as its errors would only repeat that one.
    pub poisoned: HashSet<String>,
    /// The same for register declarations: the base names (`r` of `%r<N>`).
    pub poisoned_regs: HashSet<String>,
    /// Device function names: one used as a value is a function pointer.
    pub funcs: HashSet<String>,
}

/// A PTX entry parameter read through its binding (see [`Scope::entry_args`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EntryArg {
    pub ty: Ty,
    pub bound: Bound,
}

/// A by-value struct parameter (`.param .align 8 .b8 p[24]`): its size and fields;
/// the bytes no field covers are zero.
#[derive(Debug, Clone, PartialEq)]
pub struct StructArg {
    pub bytes: u32,
    pub fields: Vec<Field>,
}

/// One field of a [`StructArg`]: its byte offset and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub offset: u32,
    pub arg: EntryArg,
}

/// What a PTX entry parameter stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// The address of this buffer (a pointer parameter).
    Buffer(String),
    /// The value of this kernel parameter.
    Param(String),
    /// This constant, as the parameter type's bits.
    Const(u64),
}

impl Scope {
    /// A register by name, with the part it names: `%rd1.lo` / `%rd1.hi` name the
    /// halves of a 64-bit one.
    pub(super) fn reg(&self, name: &str) -> Option<(RegInfo, RegUse)> {
        if let Some(r) = self.regs.get(name) {
            return Some((
                *r,
                RegUse {
                    vreg: r.vreg,
                    offset: 0,
                    part: false,
                },
            ));
        }
        let (base, half) = name.rsplit_once('.')?;
        let r = self.regs.get(base)?;
        match (r.ty, half) {
            (RegTy::Val(t), "lo" | "hi") if t.bits() == 64 => Some((
                RegInfo {
                    vreg: r.vreg,
                    ty: RegTy::Val(Ty::B32),
                },
                RegUse {
                    vreg: r.vreg,
                    offset: u8::from(half == "hi"),
                    part: true,
                },
            )),
            _ => None,
        }
    }
}
