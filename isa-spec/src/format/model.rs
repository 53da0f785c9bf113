//! The in-memory form of a `.bin` kernel: code, declarations, launch, DMA descriptors,
//! line table and labels. The assembler produces it, the ELF writer stores it, the
//! reader validates it back, and the loader and the disassembler consume it.

use crate::format::Expr;
use crate::names::{Side, Ty};

/// Register type of a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegTy {
    Val(Ty),
    Pred,
}

/// `.reg .f32 %f<32>;` (a range) or `.reg .u32 %i;` (one register).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegDecl {
    /// Name without the `%`.
    pub name: String,
    pub ty: RegTy,
    /// `Some(n)` for `%name<n>` (registers `%name0..%name{n-1}`).
    pub count: Option<u32>,
}

impl RegDecl {
    /// How many registers the declaration makes.
    pub fn len(&self) -> u32 {
        self.count.unwrap_or(1)
    }

    /// True for an empty range (`%r<0>`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `.param .u32 N = 256;`, `.param .f64 A = 2.5;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDecl {
    pub name: String,
    pub ty: Ty,
    /// Default value as a bit pattern of the parameter's width (a 32-bit
    /// parameter's high 32 bits are zero).
    pub default: Option<u64>,
}

/// Largest seed of a `random` initialiser: 2^53, as a seed is written in the
/// source as a number a double holds exactly.
pub const MAX_SEED: u64 = 1 << 53;

/// How a buffer is filled before the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Zeros,
    /// Every element is this value.
    Const(f64),
    /// Every element holds this bit pattern (within the element's width): an
    /// integer that a double cannot hold exactly (a 64-bit one above 2^53).
    ConstBits(u64),
    /// Element `i` (row-major) is `start + i * step`.
    Ramp {
        start: f64,
        step: f64,
    },
    /// Uniform in `[lo, hi)` from a seeded generator (integers: `[lo, hi]`); the
    /// seed is at most [`MAX_SEED`].
    Random {
        seed: u64,
        lo: f64,
        hi: f64,
    },
    /// Element `i` (row-major) holds bit pattern `i` of the list (within the
    /// element's width); elements past its end are zero (a PTX variable's
    /// `= {1, 2, 3}`, as C fills the rest of an array).
    Values(Vec<u64>),
}

/// `.global .f32 A[N][N] = zeros;`
#[derive(Debug, Clone, PartialEq)]
pub struct BufferDecl {
    pub name: String,
    pub ty: Ty,
    /// Dimensions, outermost first (row-major).
    pub dims: Vec<Expr>,
    pub init: Init,
}

/// `.shared .f32 tile[32][33];`
#[derive(Debug, Clone, PartialEq)]
pub struct SharedDecl {
    pub name: String,
    pub ty: Ty,
    /// Alignment of the array's first byte (`.shared .align 16`); 0 when not given.
    /// The array starts at least at a multiple of its element size and of 4 bytes.
    pub align: u32,
    pub dims: Vec<Expr>,
}

/// `.launch grid(X, Y, Z) block(X, Y, Z) iu(T);`
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub grid: [Expr; 3],
    pub block: [Expr; 3],
    /// Threads per Interface Unit.
    pub iu_threads: Expr,
}

impl Default for Launch {
    fn default() -> Self {
        Launch {
            grid: [Expr::constant(1), Expr::constant(1), Expr::constant(1)],
            block: [Expr::constant(1), Expr::constant(1), Expr::constant(1)],
            iu_threads: Expr::constant(32),
        }
    }
}

/// The fields of a DMA descriptor, in declaration and storage order.
pub const DMA_FIELDS: [&str; 9] = [
    "offset",
    "rows",
    "cols",
    "row_stride",
    "tile_stride",
    "iu_stride",
    "tiles",
    "delay",
    "iu_delay",
];

/// Fields a descriptor may leave out, and the value they then take (0).
pub const DMA_OPTIONAL: [&str; 3] = ["offset", "delay", "iu_delay"];

/// `.dma west B, offset=0, rows=32, cols=1, row_stride=K, tile_stride=1, iu_stride=32*K, tiles=K;`
/// An affine sequence of tile transfers between a buffer and one side's CBs
/// (thesis 7.2). All quantities are in elements, except `delay` and `iu_delay`:
/// the engine of IU index `i` first takes part in `delay + i * iu_delay`
/// rendezvous without transferring (the skew a global-sync wavefront needs).
#[derive(Debug, Clone, PartialEq)]
pub struct DmaDesc {
    pub side: Side,
    /// Buffer index.
    pub buffer: u16,
    /// Expressions for [`DMA_FIELDS`], in that order.
    pub fields: [Expr; 9],
}

/// A comparison of a precondition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// In storage order (the code is the index).
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    pub fn code(self) -> u8 {
        CmpOp::ALL.iter().position(|o| *o == self).unwrap_or(0) as u8
    }

    pub fn from_code(code: u8) -> Option<CmpOp> {
        CmpOp::ALL.get(usize::from(code)).copied()
    }

    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// `.assert N % 32 == 0, "N must be a multiple of the tile size";`: a condition on
/// the parameters the loader checks with their final values, refusing the run
/// with the message when it does not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Precondition {
    pub lhs: Expr,
    pub op: CmpOp,
    pub rhs: Expr,
    pub message: String,
}

impl Precondition {
    /// The condition as source text, parameters by name.
    pub fn display(&self, names: &dyn Fn(u16) -> String) -> String {
        format!(
            "{} {} {}",
            self.lhs.display(names),
            self.op.symbol(),
            self.rhs.display(names)
        )
    }

    /// The parameters the condition names, each once, in order of appearance.
    pub fn params(&self) -> Vec<u16> {
        let mut out = Vec::new();
        for n in self.lhs.nodes().iter().chain(self.rhs.nodes()) {
            if let crate::format::Node::Param(i) = n
                && !out.contains(i)
            {
                out.push(*i);
            }
        }
        out
    }
}

/// Where an instruction came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    /// Index into [`LineTable::files`].
    pub file: u16,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

/// PC -> source position, one entry per instruction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineTable {
    pub files: Vec<String>,
    pub locs: Vec<SourceLoc>,
}

/// A code label: name and instruction index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub name: String,
    pub pc: u32,
}

/// A whole kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// Entry name.
    pub name: String,
    /// Instruction words.
    pub code: Vec<u64>,
    /// First instruction Interface Units run; `None` means the kernel has no IU
    /// program, so IUs stay idle and take no part in blocksync.
    pub iu_entry: Option<u32>,
    pub regs: Vec<RegDecl>,
    pub params: Vec<ParamDecl>,
    pub shared: Vec<SharedDecl>,
    pub buffers: Vec<BufferDecl>,
    pub launch: Launch,
    pub dma: Vec<DmaDesc>,
    pub lines: LineTable,
    pub labels: Vec<Label>,
    /// `.assert` conditions on the parameters (format version 6).
    pub preconditions: Vec<Precondition>,
    /// Source register names and the instructions the assembler added (the optional
    /// section `.spu.debug`); empty when the declarations name every register and
    /// every instruction is a statement's own.
    pub debug: DebugInfo,
}

/// The slot of an instruction's guard predicate in [`RegName::slot`].
pub const GUARD_SLOT: u8 = 0xff;

/// The source name of one register an instruction names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegName {
    /// The operand (its index in the row) or [`GUARD_SLOT`].
    pub slot: u8,
    /// The register (or predicate) the operand names there: for a vector, the
    /// first register of the element.
    pub reg: u8,
    /// Index into [`DebugInfo::names`].
    pub name: u32,
}

/// What one instruction adds to the line table's story.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstrDebug {
    /// The assembler added this instruction to the statement of its line (the
    /// `mov` of an immediate the instruction cannot hold, a copy through a
    /// vector temporary, ...): the statement's executions are counted at its own
    /// instruction, not here.
    pub hidden: bool,
    /// The source names of the registers its operands name, where the
    /// declarations do not give them (registers the assembler allocated).
    pub regs: Vec<RegName>,
}

/// Debug information of the code: register names as the source wrote them
/// (`f2`, `i`, `rd3.hi`, `tmp0` for an assembler's temporary) and the
/// instructions the assembler added to statements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DebugInfo {
    /// Each name once, without `%`.
    pub names: Vec<String>,
    /// One entry per instruction, or none at all.
    pub instrs: Vec<InstrDebug>,
}

impl DebugInfo {
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// Whether instruction `pc` was added by the assembler to its line's statement.
    pub fn hidden(&self, pc: usize) -> bool {
        self.instrs.get(pc).is_some_and(|d| d.hidden)
    }

    /// The source name of register `reg` as operand `slot` of instruction `pc`
    /// names it.
    pub fn reg_name(&self, pc: usize, slot: u8, reg: u8) -> Option<&str> {
        let d = self.instrs.get(pc)?;
        let r = d.regs.iter().find(|r| r.slot == slot && r.reg == reg)?;
        self.names.get(r.name as usize).map(String::as_str)
    }
}

/// Where one register declaration lives in the register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegSlot {
    /// Index of the declaration in [`Module::regs`].
    pub decl: usize,
    /// First register (or predicate) of the declaration.
    pub start: u32,
    /// Registers each element spans: 1, or 2 for 64-bit types.
    pub elem_regs: u32,
    /// Number of elements.
    pub len: u32,
}

impl Module {
    /// The register file layout the declarations describe: general registers in
    /// declaration order, each declaration of a 64-bit type starting at an even
    /// register; predicates in declaration order.
    pub fn reg_layout(&self, pred: bool) -> Vec<RegSlot> {
        let mut next = 0u32;
        let mut out = Vec::new();
        for (decl, d) in self.regs.iter().enumerate() {
            if (d.ty == RegTy::Pred) != pred {
                continue;
            }
            let elem_regs = match d.ty {
                RegTy::Val(t) => u32::from(t.regs()),
                RegTy::Pred => 1,
            };
            next = next.next_multiple_of(elem_regs);
            out.push(RegSlot {
                decl,
                start: next,
                elem_regs,
                len: d.len(),
            });
            next = next.saturating_add(d.len().saturating_mul(elem_regs));
        }
        out
    }

    /// The name of the value spanning `regs` registers from general register
    /// `index` (or of predicate `index`): `f3` for the fourth of `%f<32>`, `rd2` for
    /// the third pair of `%rd<8>`, `rd2.hi` for its high half.
    pub fn reg_name(&self, index: u8, regs: u8, pred: bool) -> Option<String> {
        let index = u32::from(index);
        let regs = u32::from(regs);
        let slot = self
            .reg_layout(pred)
            .into_iter()
            .find(|s| index >= s.start && index < s.start + s.len * s.elem_regs)?;
        let decl = &self.regs[slot.decl];
        let k = (index - slot.start) / slot.elem_regs;
        let within = (index - slot.start) % slot.elem_regs;
        let base = match decl.count {
            Some(_) => format!("{}{k}", decl.name),
            None => decl.name.clone(),
        };
        match (slot.elem_regs, regs, within) {
            (e, r, 0) if e == r => Some(base),
            (2, 1, 0) => Some(format!("{base}.lo")),
            (2, 1, 1) => Some(format!("{base}.hi")),
            _ => None,
        }
    }

    /// Number of general registers the declarations span (alignment included).
    pub fn general_reg_count(&self) -> u32 {
        self.reg_layout(false)
            .last()
            .map_or(0, |s| s.start + s.len * s.elem_regs)
    }

    /// Number of predicate registers declared.
    pub fn pred_reg_count(&self) -> u32 {
        self.regs
            .iter()
            .filter(|d| d.ty == RegTy::Pred)
            .map(RegDecl::len)
            .sum()
    }

    /// Byte offsets of the parameters and the size of parameter space (see
    /// [`param_layout`](super::param_layout)).
    pub fn param_layout(&self) -> (Vec<u32>, u32) {
        super::param::param_layout(self.params.iter().map(|p| p.ty))
    }

    /// The name of parameter `index`.
    pub fn param_name(&self, index: u16) -> String {
        self.params
            .get(usize::from(index))
            .map_or_else(|| format!("param{index}"), |p| p.name.clone())
    }
}
