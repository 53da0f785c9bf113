//! The SPU instruction set as one table, and the `.bin` object format.
//!
//! Everything that knows about instructions derives from [`table::TABLE`]: the
//! encoder and decoder ([`Instr`]), the assembler's operand checks, the disassembler
//! ([`disasm`]), the timing and energy classes ([`class`]) and the reference page
//! `ISA.md` ([`reference`]).

pub mod class;
pub mod disasm;
pub mod format;
mod instr;
mod mods;
pub mod names;
pub mod reference;
pub mod sample;
pub mod table;
pub mod textmate;

pub use class::{EnergyClass, ExecClass, TimingClass, Units};
pub use instr::{
    EncodingError, Guard, Instr, MAX_PREDS, MAX_REGS, MAX_SYMBOLS, MAX_TARGET, NO_RECONV, Operand,
    SYMBOL_OFFSET_RANGE, SymbolRef, operand_regs, operand_type, pack_shfl_c,
};
pub use mods::Mods;
pub use names::{
    AtomOp, CacheOp, Cmp, FenceSem, Ftz, Half, MemLevel, Nc, Prec, PredTy, PrmtMode, Rnd, Sat,
    Scope, ShfDir, ShfMode, ShflMode, ShiftAmt, Side, Space, Special, TestpOp, To, Ty, TyClass,
    Uni, Vector, Volatile, VoteMode,
};
pub use table::{MAX_OPERANDS, Opcode, TABLE};
