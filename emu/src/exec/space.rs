//! The memory an instruction reaches, as the execution core sees it: the unit's
//! own state ([`Local`]: shared memory, parameters, CB ports), global memory as
//! the execution mode provides it ([`Global`]), and the kind of access an
//! instruction made ([`Access`]), which the timing model prices.

use crate::exec::cb::Port;
use crate::exec::fault::FaultKind;
use crate::exec::lanes::{Lanes, Wide};
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Reg;
use crate::exec::warp::Warp;
use crate::sem::memory::Atomic;
use spu_isa::Ty;

/// A fault and the lane that caused it.
pub type LaneFault = (FaultKind, u32);

/// The unit-local state an instruction may touch.
#[derive(Debug)]
pub struct Local<'a> {
    /// Shared memory: a power-of-two number of words, at least `shared_bytes / 4`.
    pub shared: &'a mut [u32],
    /// Size of the block's shared space in bytes.
    pub shared_bytes: u32,
    pub params: &'a [u32],
    /// The local memory a thread may use, in bytes.
    pub local_bytes: u32,
    /// CB ports by side code.
    pub ports: &'a mut [Option<Port>; 4],
    /// The unit runs IU code (no FPU, SFU or shared memory, thesis Table 5.2).
    pub is_iu: bool,
}

/// Global memory as an execution mode provides it. Addresses reach it checked.
pub trait Global {
    /// The memory layout, for address checks.
    fn layout(&self) -> &GlobalMemory;
    /// The word at `addr` (in a buffer) as the issuing warp sees it now, after
    /// its earlier stores and atomics, also those that have not reached memory
    /// yet: what `printf` reads, at once, unlike loads.
    fn seen(&self, addr: u32) -> u32;
    /// Loads the lanes of `mask` into register `dst` of `warp`.
    fn load(&mut self, warp: &mut Warp, dst: Reg, addrs: &Lanes, mask: u32);
    /// Stores `data` in the lanes of `mask`.
    fn store(&mut self, addrs: &Lanes, data: &Lanes, mask: u32);
    /// Loads the 8- or 16-bit field of type `ty` at each lane's byte address in
    /// `bytes`, extended to 32 bits, into register `dst` of `warp`.
    fn load_narrow(&mut self, warp: &mut Warp, dst: Reg, ty: Ty, bytes: &Lanes, mask: u32);
    /// Stores the low 8 or 16 bits of `data` at each lane's byte address, lane by
    /// lane (so lanes writing bytes of one word all land).
    fn store_narrow(&mut self, ty: Ty, bytes: &Lanes, data: &Lanes, mask: u32);
    /// Atomics `atom` in the lanes of `mask`, in lane order, at checked and aligned
    /// addresses: `a` is the operand (the compare value of CAS), `b` the CAS swap
    /// value, both read as the atomic's type; the old values go to register `dst`
    /// (and the next one for 64-bit types), if any (`red` has none).
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        warp: &mut Warp,
        atom: Atomic,
        dst: Option<Reg>,
        addrs: &Lanes,
        a: &Wide,
        b: &Wide,
        mask: u32,
    );
}

/// What memory an instruction accessed; the addresses are in the caller's scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    None,
    Shared,
    Param,
    Cb,
    /// The thread's local memory (local data, call parameters); each lane moves
    /// `words` 32-bit words (2 for a 64-bit value or `.v2`, 4 for `.v4`).
    Local {
        store: bool,
        words: u8,
    },
    Global {
        store: bool,
        /// Words each lane moves (2 for a 64-bit value or `.v2`, 4 for `.v4`);
        /// aligned accesses never straddle a transaction, so the lanes' first
        /// addresses give the transactions.
        words: u8,
    },
    /// Global atomics (one transaction per executing lane), each lane's value
    /// `words` (1 or 2) words wide.
    Atomic {
        words: u8,
    },
    /// Shared-memory atomics: lanes on one word take effect one after another.
    SharedAtomic,
}

impl Access {
    /// True when the instruction accessed no memory.
    #[inline(always)]
    pub fn is_none(self) -> bool {
        matches!(self, Access::None)
    }

    /// True for a plain shared-memory load or store.
    #[inline(always)]
    pub fn is_shared(self) -> bool {
        matches!(self, Access::Shared)
    }
}
