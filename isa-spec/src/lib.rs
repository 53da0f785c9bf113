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
pub mod names;
pub mod reference;
pub mod table;
pub mod textmate;

pub use class::{EnergyClass, ExecClass, TimingClass, Units};
pub use instr::{
    EncodingError, Guard, Instr, MAX_OPERANDS, MAX_PREDS, MAX_REGS, MAX_SYMBOLS, MAX_TARGET, Mods,
    NO_RECONV, Operand, SymbolRef,
};
pub use names::{AtomOp, Cmp, Half, Side, Space, Special, Ty};
pub use table::{Opcode, TABLE};
