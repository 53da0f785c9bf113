//! The ISA table: one row per instruction with its mnemonic, opcode, encoding fields
//! (modifiers and operands, packed in row order), execution classes, modifier rules and
//! a one-line semantics doc. Encoder, decoder, assembler checks, disassembler, timing
//! and energy classes, `ISA.md` and the editor grammar are all derived from [`TABLE`].

use crate::class::ExecClass;
use crate::names::{Space, Ty};

mod rows;
mod rules;

pub use crate::mods::ModKind;
pub use rows::{Opcode, TABLE};
pub use rules::Rule;

/// Bits of the fixed header of every instruction word: opcode (8) and guard (6).
pub const HEADER_BITS: u32 = 14;
/// Most operands any row has.
pub const MAX_OPERANDS: usize = 6;
/// Width of an instruction word.
pub const WORD_BITS: u32 = 64;
/// Width of a general register index: 128 registers per thread.
pub const REG_BITS: u32 = 7;
/// Width of a predicate register index: 16 predicates per thread.
pub const PRED_BITS: u32 = 4;
/// Width of a code address (instruction index).
pub const TARGET_BITS: u32 = 24;

/// The shape of an operand field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandKind {
    /// A general register (7 bits); 64-bit and vector operands name the first of
    /// their aligned registers.
    Reg,
    /// A predicate register (4 bits).
    Pred,
    /// A predicate that may be negated, `%p` or `!%p` (1 + 4 bits).
    PredNeg,
    /// An optional predicate destination, `d|p` (1 + 4 bits).
    OptPred,
    /// A register or a 16-bit immediate (1 flag bit + 16 bits).
    RegOrImm,
    /// A register or an immediate 0..=255 (1 flag bit + 8 bits).
    RegOrSmall,
    /// The `c` operand of `shfl.sync`: a register, or an immediate whose clamp (bits
    /// 0..5) and segment mask (bits 8..13) are stored in 10 bits (1 + 10 bits).
    ShflC,
    /// A member mask: a register or the full mask `-1` (1 flag bit + 7 bits).
    Mask,
    /// An 8-bit immediate (the lookup table of `lop3`).
    Imm8,
    /// An address `[reg+imm16]` or `[imm16]`; the base may be a 64-bit register pair
    /// (1 + 1 + 7 + 16 bits).
    Mem,
    /// The source of `mov`: register, 32-bit immediate, special register, or the
    /// address of a buffer or shared array plus a byte offset (3 tag bits + 32 bits).
    MovSrc,
    /// A branch target (instruction index).
    Target,
}

impl OperandKind {
    /// Bits the field takes.
    pub const fn width(self) -> u32 {
        match self {
            OperandKind::Reg => REG_BITS,
            OperandKind::Pred => PRED_BITS,
            OperandKind::PredNeg | OperandKind::OptPred => 1 + PRED_BITS,
            OperandKind::RegOrImm => 1 + 16,
            OperandKind::RegOrSmall => 1 + 8,
            OperandKind::ShflC => 1 + 10,
            OperandKind::Mask => 1 + REG_BITS,
            OperandKind::Imm8 => 8,
            OperandKind::Mem => 2 + REG_BITS + 16,
            OperandKind::MovSrc => 3 + 32,
            OperandKind::Target => TARGET_BITS,
        }
    }

    /// What the operand is, for messages and the reference page.
    pub const fn describe(self) -> &'static str {
        match self {
            OperandKind::Reg => "register",
            OperandKind::Pred => "predicate",
            OperandKind::PredNeg => "predicate, possibly negated",
            OperandKind::OptPred => "optional predicate",
            OperandKind::RegOrImm => "register or immediate",
            OperandKind::RegOrSmall => "register or immediate 0..=255",
            OperandKind::ShflC => "register or clamp/segment immediate",
            OperandKind::Mask => "register or -1",
            OperandKind::Imm8 => "8-bit immediate",
            OperandKind::Mem => "address",
            OperandKind::MovSrc => "register, immediate, special register or symbol",
            OperandKind::Target => "label",
        }
    }

    /// True for kinds that may hold a general register.
    pub const fn takes_reg(self) -> bool {
        matches!(
            self,
            OperandKind::Reg
                | OperandKind::RegOrImm
                | OperandKind::RegOrSmall
                | OperandKind::ShflC
                | OperandKind::Mask
                | OperandKind::MovSrc
        )
    }
}

/// Which type an operand must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandTy {
    /// The instruction's `Type` modifier.
    Main,
    /// The `Type` modifier, times the `.v2`/`.v4` count when present (the data of
    /// vector loads and stores).
    MainVec,
    /// Twice the width of the `Type` modifier (`mul.wide`, `mad.wide`).
    Wide,
    /// The instruction's `SrcType` modifier.
    Src,
    /// Always `.u32`, every bit of it read (shift amounts, bit counts).
    U32,
    /// Always `.u32`, of which the operation reads only the low N bits (bit
    /// positions and lengths of `bfe`/`bfi`: 8, as PTX restricts them to 0..255;
    /// the lane of `shfl.sync`: 5).
    U32Low(u8),
    /// Always `.b32`.
    B32,
    /// A predicate.
    Pred,
    /// Not typed (labels, immediates of fixed meaning).
    None,
}

/// Whether the instruction writes or reads an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Def,
    Use,
}

/// One field of an instruction word after the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// A modifier. `allowed` is a bit mask over value codes; `optional` fields encode
    /// "absent" as 0 and value `v` as `v + 1`. A required modifier with a single
    /// allowed value takes no bits.
    Mod {
        kind: ModKind,
        allowed: u32,
        optional: bool,
    },
    /// An operand written in the source, in order.
    Operand {
        name: &'static str,
        kind: OperandKind,
        ty: OperandTy,
        role: Role,
    },
    /// The reconvergence point of a branch (immediate post-dominator), computed by the
    /// assembler, never written in the source. All ones means "none".
    Reconv,
}

impl Field {
    /// Bits the field takes.
    pub const fn width(&self) -> u32 {
        match self {
            Field::Mod {
                kind,
                allowed,
                optional,
            } => {
                if !*optional && allowed.count_ones() == 1 {
                    0
                } else {
                    kind.width(*optional)
                }
            }
            Field::Operand { kind, .. } => kind.width(),
            Field::Reconv => TARGET_BITS,
        }
    }
}

/// How the execution class of a row depends on its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecRule {
    /// The same for every form.
    Fixed(ExecClass),
    /// Chosen by the `Type` modifier: integer forms, `.f32` or `.f64`.
    ByType {
        int: ExecClass,
        f32: ExecClass,
        f64: ExecClass,
    },
    /// `cvt`: a conversion touching `.f64` needs the DP path, one touching `.f32` the FPU.
    Convert {
        int: ExecClass,
        f32: ExecClass,
        f64: ExecClass,
    },
    /// Chosen by the state space: global, shared, param, CB, local.
    BySpace {
        global: ExecClass,
        shared: ExecClass,
        param: ExecClass,
        cb: ExecClass,
        local: ExecClass,
    },
}

/// How an instruction moves control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flow {
    /// To the next instruction.
    Next,
    /// To its target operand, or (guarded) to the target or the next instruction.
    Branch,
    /// Ends the thread (guarded: the threads whose guard holds).
    Exit,
    /// Runs the device function at its target operand, then goes on with the next
    /// instruction (guarded: the threads whose guard holds call).
    Call,
    /// Waits for the other warps of the block (`bar.sync`), then goes on.
    Barrier,
    /// Waits for the other warps of the block and for other units (`bar.blocksync`),
    /// then goes on.
    BlockSync,
}

impl Flow {
    /// True when a straight-line run of instructions ends here: the next
    /// instruction is not simply the one that follows, or not right away.
    pub fn ends_block(self) -> bool {
        self != Flow::Next
    }
}

/// One instruction of the ISA.
#[derive(Debug, Clone, Copy)]
pub struct InstrSpec {
    /// Mnemonic without modifiers; may contain dots (`bar.blocksync`, `and.pred`).
    pub mnemonic: &'static str,
    /// Opcode, unique across the table.
    pub opcode: u8,
    /// Fields after the header, in encoding and source order.
    pub fields: &'static [Field],
    /// Execution classes.
    pub exec: ExecRule,
    /// Extra modifier constraints.
    pub rules: &'static [Rule],
    /// How the instruction moves control: the assembler's control-flow graph and
    /// the emulator's basic blocks follow it.
    pub flow: Flow,
    /// One-line semantics.
    pub doc: &'static str,
    /// An example in source syntax.
    pub example: &'static str,
}

/// Fails to compile when a row is malformed: duplicate opcodes or mnemonics, fields
/// that overflow the 64-bit word, modifiers that allow values their field cannot hold.
const fn validate(table: &[InstrSpec]) {
    let mut i = 0;
    while i < table.len() {
        let row = &table[i];
        assert!(
            row.opcode != 0,
            "opcode 0 is reserved (an all-zero word is invalid)"
        );
        let mut j = i + 1;
        while j < table.len() {
            assert!(table[j].opcode != row.opcode, "two rows share an opcode");
            assert!(
                !const_str_eq(table[j].mnemonic, row.mnemonic),
                "two rows share a mnemonic"
            );
            j += 1;
        }
        let mut bits = HEADER_BITS;
        let mut operands = 0;
        let mut f = 0;
        while f < row.fields.len() {
            let field = &row.fields[f];
            bits += field.width();
            match field {
                Field::Mod { kind, allowed, .. } => {
                    assert!(*allowed != 0, "modifier allows no value");
                    assert!(
                        (*allowed as u64) < (1u64 << kind.names().len()),
                        "modifier allows a value outside its enumeration"
                    );
                }
                Field::Operand { .. } => operands += 1,
                Field::Reconv => {}
            }
            f += 1;
        }
        assert!(
            operands <= MAX_OPERANDS,
            "row has more operands than an instruction holds"
        );
        assert!(
            bits <= WORD_BITS,
            "row fields overflow the 64-bit instruction word"
        );
        i += 1;
    }
}

const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = validate(TABLE);

impl Opcode {
    /// The row of the table.
    pub fn spec(self) -> &'static InstrSpec {
        &TABLE[self as usize]
    }

    /// Position of the row in the table.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The row with this position.
    pub fn from_index(index: usize) -> Option<Opcode> {
        Opcode::ALL.get(index).copied()
    }

    /// The row with this mnemonic (the assembler's lookup of what it parsed).
    pub fn from_mnemonic(mnemonic: &str) -> Option<Opcode> {
        TABLE
            .iter()
            .position(|r| r.mnemonic == mnemonic)
            .and_then(Opcode::from_index)
    }

    /// The row encoded with this opcode byte.
    pub fn from_encoding(byte: u8) -> Option<Opcode> {
        TABLE
            .iter()
            .position(|r| r.opcode == byte)
            .and_then(Opcode::from_index)
    }

    /// Every row.
    pub fn all() -> impl Iterator<Item = Opcode> {
        Opcode::ALL.iter().copied()
    }
}

impl InstrSpec {
    /// The modifier fields, in order.
    pub fn modifiers(&self) -> impl Iterator<Item = (ModKind, u32, bool)> + '_ {
        self.fields.iter().filter_map(|f| match *f {
            Field::Mod {
                kind,
                allowed,
                optional,
            } => Some((kind, allowed, optional)),
            _ => None,
        })
    }

    /// The source operands, in order.
    pub fn operands(
        &self,
    ) -> impl Iterator<Item = (&'static str, OperandKind, OperandTy, Role)> + '_ {
        self.fields.iter().filter_map(|f| match *f {
            Field::Operand {
                name,
                kind,
                ty,
                role,
            } => Some((name, kind, ty, role)),
            _ => None,
        })
    }

    /// Number of source operands.
    pub fn operand_count(&self) -> usize {
        self.operands().count()
    }

    /// The modifier field of this kind, if the row has one.
    pub fn modifier(&self, kind: ModKind) -> Option<(u32, bool)> {
        self.modifiers()
            .find(|(k, _, _)| *k == kind)
            .map(|(_, a, o)| (a, o))
    }

    /// Bits the row uses in the instruction word.
    pub fn used_bits(&self) -> u32 {
        HEADER_BITS + self.fields.iter().map(Field::width).sum::<u32>()
    }

    /// The execution class of a form of this row.
    pub fn exec_class(
        &self,
        ty: Option<Ty>,
        src_ty: Option<Ty>,
        space: Option<Space>,
    ) -> ExecClass {
        match self.exec {
            ExecRule::Fixed(c) => c,
            ExecRule::ByType { int, f32, f64 } => match ty {
                Some(Ty::F32) => f32,
                Some(Ty::F64) => f64,
                _ => int,
            },
            ExecRule::Convert { int, f32, f64 } => {
                if ty == Some(Ty::F64) || src_ty == Some(Ty::F64) {
                    f64
                } else if ty == Some(Ty::F32) || src_ty == Some(Ty::F32) {
                    f32
                } else {
                    int
                }
            }
            ExecRule::BySpace {
                global,
                shared,
                param,
                cb,
                local,
            } => match space {
                Some(Space::Global) | None => global,
                Some(Space::Shared) => shared,
                Some(Space::Param) => param,
                Some(Space::Local) => local,
                Some(_) => cb,
            },
        }
    }

    /// Checks the row's modifier rules.
    pub fn check_rules(&self, mods: &crate::mods::Mods) -> Result<(), String> {
        self.rules.iter().try_for_each(|r| r.check(mods))
    }
}

/// The allowed values of a modifier mask, as spellings.
pub fn allowed_names(kind: ModKind, allowed: u32) -> Vec<&'static str> {
    kind.names()
        .iter()
        .enumerate()
        .filter(|(i, _)| allowed & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_fits_and_round_trips_its_lookups() {
        for op in Opcode::all() {
            let spec = op.spec();
            assert!(spec.used_bits() <= WORD_BITS, "{}", spec.mnemonic);
            assert_eq!(Opcode::from_mnemonic(spec.mnemonic), Some(op));
            assert_eq!(Opcode::from_encoding(spec.opcode), Some(op));
        }
    }

    #[test]
    fn fp_sfu_and_shared_forms_are_sm_only() {
        let add = Opcode::Add.spec();
        assert!(!add.exec_class(Some(Ty::F32), None, None).units.iu());
        assert!(add.exec_class(Some(Ty::S32), None, None).units.iu());
        let ld = Opcode::Ld.spec();
        assert!(
            !ld.exec_class(Some(Ty::F32), None, Some(Space::Shared))
                .units
                .iu()
        );
        assert!(
            ld.exec_class(Some(Ty::F32), None, Some(Space::CbNorth))
                .units
                .iu()
        );
        let cvt = Opcode::Cvt.spec();
        assert!(
            !cvt.exec_class(Some(Ty::S32), Some(Ty::F32), None)
                .units
                .iu()
        );
        assert_eq!(
            cvt.exec_class(Some(Ty::F32), Some(Ty::F64), None).timing,
            crate::TimingClass::Dp
        );
        assert!(
            add.exec_class(Some(Ty::S64), None, None).units.iu(),
            "IUs compute 64-bit addresses"
        );
    }

    #[test]
    fn single_valued_required_modifiers_take_no_bits() {
        let shfl = Opcode::ShflSync.spec();
        let ty = shfl.fields.iter().find(|f| {
            matches!(
                f,
                Field::Mod {
                    kind: ModKind::Type,
                    ..
                }
            )
        });
        assert_eq!(ty.map(Field::width), Some(0));
        assert_eq!(ModKind::Half.width(true), 2);
        assert_eq!(ModKind::Ftz.width(true), 1);
        assert_eq!(ModKind::Cmp.width(false), 5);
    }
}
