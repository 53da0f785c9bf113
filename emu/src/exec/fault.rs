//! Run-time errors a kernel can cause (bad addresses, instructions an Interface Unit
//! lacks, deadlocks, running out of cycles), with the context a user needs to find
//! the bug: instruction, source line, unit, block, thread, address.

use crate::exec::warp::LOCAL_LIMIT_BYTES;
use spu_isa::Space;
use std::fmt;

/// What a faulting access did: load, store, or an atomic (which does both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Load,
    Store,
    Atomic,
}

impl Dir {
    /// A load or a store.
    pub fn of(store: bool) -> Dir {
        if store { Dir::Store } else { Dir::Load }
    }

    /// The access and its preposition: "load from", "store to", "atomic on".
    fn verb(self) -> &'static str {
        match self {
            Dir::Load => "load from",
            Dir::Store => "store to",
            Dir::Atomic => "atomic on",
        }
    }
}

/// What a thread did wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// A global address outside every buffer.
    Unmapped { addr: u32, dir: Dir },
    /// An access of `size` bytes that starts inside a buffer and runs past its end
    /// (a buffer of 8- or 16-bit elements whose size is not a multiple of 4).
    PastEnd { addr: u32, size: u32, dir: Dir },
    /// An address past the end of a bounded space (shared, param, CB).
    OutOfRange {
        space: Space,
        addr: u32,
        size: u32,
        dir: Dir,
    },
    /// An address that is not a multiple of 4.
    Misaligned { space: Space, addr: u32 },
    /// A 64-bit address register whose high word is not zero.
    WideAddress { hi: u32, lo: u32 },
    /// An access of `size` bytes (not 4) at an address that is not a multiple of it.
    MisalignedBy { space: Space, addr: u32, size: u32 },
    /// An instruction an Interface Unit has no hardware for (thesis Table 5.2).
    NotOnIu { what: &'static str },
    /// Execution ran past the last instruction (a path without `exit`).
    PastTheEnd { last: u32 },
    /// The host could not allocate `bytes` more for a thread's local memory
    /// (within what the run may use: a limit such as `ulimit -v`).
    HostMemory { bytes: u64 },
    /// A CB access or directional blocksync on a side where the unit has no link.
    NoCbPort { side: spu_isa::Side },
    /// A CB read of a word the producer has not written since the link last
    /// switched (the CB checker): stale data, usually from a missing sync. `held`
    /// is how many words of the buffer were written.
    UnwrittenCb {
        side: spu_isa::Side,
        addr: u32,
        held: u32,
    },
    /// A DMA storer's tile includes a CB word its producer has not written since
    /// the link last switched (the CB checker).
    DmaUnwritten {
        buffer: String,
        word: u32,
        tile: u64,
        held: u32,
    },
    /// A call past [`crate::exec::warp::MAX_CALL_DEPTH`] calls in progress (runaway
    /// recursion), of the function at instruction `target`.
    CallTooDeep { target: u32, depth: u32 },
    /// A call whose frame would start past the thread's local memory.
    FrameTooLarge {
        target: u32,
        base: u32,
        saved: u32,
        limit: u32,
    },
    /// A local access of a thread outside its local memory: `addr` is the address
    /// as the code gave it (relative to the running call's frame, which starts at
    /// byte `frame` of the thread's local memory).
    LocalOutOfRange {
        addr: u32,
        frame: u32,
        limit: u32,
        store: bool,
    },
    /// A `printf` that cannot be printed (a bad format, an argument outside memory).
    Printf { what: String },
    /// A DMA descriptor tile that reaches outside its buffer.
    DmaOutOfBounds {
        buffer: String,
        element: i64,
        len: u32,
        tile: u64,
    },
}

/// A result of the execution core's hot paths: the fault is boxed so that the
/// common, successful result stays small.
pub type Faulted<T> = Result<T, Box<Fault>>;

/// A fault at one thread of one warp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub pc: u32,
    /// Index of the warp within its block.
    pub warp: u32,
    pub lane: u32,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = |store: bool| Dir::of(store).verb();
        match self {
            FaultKind::Unmapped { addr, dir } => write!(
                f,
                "global {} address {addr:#010x}, which is outside every buffer",
                dir.verb()
            ),
            FaultKind::PastEnd { addr, size, dir } => write!(
                f,
                "global {} a {size}-byte value at address {addr:#010x}, which runs past the end of a buffer",
                match dir {
                    Dir::Load => "load of",
                    Dir::Store => "store of",
                    Dir::Atomic => "atomic on",
                }
            ),
            FaultKind::OutOfRange {
                space,
                addr,
                size,
                dir,
            } => write!(
                f,
                "{space} {} byte address {addr:#x}, past the end of the {size}-byte {space} space",
                dir.verb()
            ),
            FaultKind::Misaligned { space, addr } => write!(
                f,
                "{space} access at byte address {addr:#x}, which is not a multiple of 4"
            ),
            FaultKind::WideAddress { hi, lo } => write!(
                f,
                "the 64-bit address (register plus offset) is {hi:#x}_{lo:08x}, above 4 GiB (SPU addresses are 32-bit)"
            ),
            FaultKind::MisalignedBy { space, addr, size } => write!(
                f,
                "{size}-byte {space} access at byte address {addr:#x}, which is not a multiple of {size}"
            ),
            FaultKind::NotOnIu { what } => write!(
                f,
                "an Interface Unit reached an instruction that needs {what}, which IUs do not have (thesis Table 5.2)"
            ),
            FaultKind::HostMemory { bytes } => write!(
                f,
                "the emulator could not allocate {bytes} more bytes for the warp's local memory (a memory limit such as `ulimit -v`, or too little free memory)"
            ),
            FaultKind::PastTheEnd { last } => write!(
                f,
                "a thread ran past the last instruction ({last} instructions) without reaching `exit`"
            ),
            FaultKind::NoCbPort { side } => write!(
                f,
                "this unit has no {side} Communication Buffer port (an IU has one port, towards the grid; data flows west->east and north->south)"
            ),
            FaultKind::UnwrittenCb { side, addr, held } => write!(
                f,
                "CB read of word {} (byte address {addr:#x}) on the {side} link, which its producer has not written since the link last switched ({})",
                addr / 4,
                match held {
                    0 => "it wrote nothing".to_string(),
                    1 => "it wrote 1 other word".to_string(),
                    n => format!("it wrote {n} other words"),
                }
            ),
            FaultKind::DmaUnwritten {
                buffer,
                word,
                tile,
                held,
            } => write!(
                f,
                "the DMA storer's tile {tile} for `{buffer}` includes CB word {word}, which its producer has not written since the link last switched (it wrote {})",
                if *held == 1 {
                    "1 word".to_string()
                } else {
                    format!("{held} words")
                }
            ),
            FaultKind::CallTooDeep { target, depth } => write!(
                f,
                "a call of the function at instruction {target} would be call {} in progress; calls nest at most {depth} deep",
                depth + 1
            ),
            FaultKind::FrameTooLarge {
                target,
                base,
                saved,
                limit,
            } => write!(
                f,
                "a call of the function at instruction {target} would start its local frame at byte {base}, and with the {saved} bytes of registers the calls in progress keep, pass the {limit}-byte local memory a thread has in this run"
            ),
            FaultKind::LocalOutOfRange {
                addr,
                frame,
                limit,
                store,
            } => match i32::try_from(*addr) {
                // Written as a signed value: `[%r-16]` with `%r` = 0 is -16, not 2^32 - 16.
                Err(_) => write!(
                    f,
                    "local {} address {} of the running call's frame, which is negative (local addresses are frame-relative; this frame starts at byte {frame})",
                    verb(*store),
                    *addr as i32
                ),
                Ok(_) => write!(
                    f,
                    "local {} address {addr} of the running call's frame (byte {} of the thread's local memory, as the frame starts at byte {frame}), past {}",
                    verb(*store),
                    u64::from(*frame) + u64::from(*addr),
                    local_memory(*limit)
                ),
            },
            FaultKind::Printf { what } => write!(f, "`printf`: {what}"),
            FaultKind::DmaOutOfBounds {
                buffer,
                element,
                len,
                tile,
            } => write!(
                f,
                "the DMA descriptor's tile {tile} reaches element {element} of `{buffer}`, which has {len} elements"
            ),
        }
    }
}

impl FaultKind {
    /// How to fix it, in one line.
    pub fn help(&self) -> &'static str {
        match self {
            FaultKind::Unmapped { .. }
            | FaultKind::PastEnd { .. }
            | FaultKind::OutOfRange { .. } => {
                "check the index computation and the bounds test before the access"
            }
            FaultKind::Misaligned { .. } => {
                "addresses are byte addresses of 32-bit words: scale indices by 4 (shl.u32 %r, %i, 2)"
            }
            FaultKind::WideAddress { .. } => {
                "form 64-bit addresses from 32-bit ones (cvta, mul.wide, add.s64 of a buffer address) so the high word stays zero"
            }
            FaultKind::MisalignedBy { .. } => {
                "align 8-, 16- and 64-bit and vector accesses to their size (a .v4.f32 access to 16 bytes)"
            }
            FaultKind::NotOnIu { .. } => {
                "keep IU code (after `.iu`) to integer, CB, global and control instructions"
            }
            FaultKind::PastTheEnd { .. } => {
                "end every path of the kernel (and of the IU code) with `exit`"
            }
            FaultKind::HostMemory { .. } => {
                "raise the memory limit, run fewer threads at once (a smaller --grid or block) or use less local memory per thread"
            }
            FaultKind::NoCbPort { .. } => {
                "north IUs write south, west IUs write east, south IUs read north, east IUs read west"
            }
            FaultKind::UnwrittenCb { .. } => {
                "a read sees what the producer wrote before the last sync both ends made on the link; check the syncs on both sides (`--no-cb-check` turns this check off)"
            }
            FaultKind::DmaUnwritten { .. } => {
                "the descriptor's rows x cols must match the words the SM writes into the CB before each sync (`--no-cb-check` turns this check off)"
            }
            FaultKind::CallTooDeep { .. } => {
                "check the recursion's base case; deep recursion must become a loop"
            }
            FaultKind::FrameTooLarge { .. } | FaultKind::LocalOutOfRange { .. } => {
                "check the index of the local array; make large per-thread arrays `.global` buffers indexed by thread"
            }
            FaultKind::Printf { .. } => {
                "give `printf` a string literal as its format, with one argument of the right type per conversion"
            }
            FaultKind::DmaOutOfBounds { .. } => {
                "check offset, row_stride, tile_stride, iu_stride and tiles against the buffer's size"
            }
        }
    }
}

/// The local memory a thread has in a run of `limit` bytes each, as a fault names
/// it: less than [`LOCAL_LIMIT_BYTES`] only where the run's state would otherwise
/// pass the emulator's limit, which the message says with its fix.
pub fn local_memory(limit: u32) -> String {
    if limit >= LOCAL_LIMIT_BYTES {
        return format!("the {limit}-byte local memory of a thread");
    }
    format!(
        "the {limit} bytes of local memory a thread has in this run: the run holds so many threads at once that the emulator's limits on a run's memory (its state alone, and its state with the buffers) leave each only that much of its {LOCAL_LIMIT_BYTES} bytes; use a smaller --grid, fewer threads per block or smaller buffers"
    )
}
