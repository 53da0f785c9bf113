//! Plain 32-bit loads and stores through a 32-bit base in shared memory and CB
//! ports, by the lanes of a mask expanded once by the caller (a basic block run
//! under one mask): one pass forms every lane's address and checks the active
//! ones (the lane-by-lane check of [`check_bounded`] runs only to name a faulting
//! lane), then the words move. The general path of [`crate::exec::access`] moves
//! its shared and CB words with the same functions, and checks the addresses of
//! every shared, parameter and CB access with [`check_bounded`].

use crate::exec::cb::Port;
use crate::exec::fault::{Dir, FaultKind};
use crate::exec::lanes::{self, Lanes, lanes_of};
use crate::exec::ops::{Op, Reg};
use crate::exec::space::LaneFault;
use crate::exec::warp::Warp;
use spu_isa::{Side, Space};

/// Forms the addresses of `op`'s plain 32-bit access through a 32-bit base in
/// every lane (left in `addrs`) and checks those of the lanes of `mask`, whose
/// expansion ([`lanes::expand`]) is `on`, against a space of `size` bytes in one
/// pass; [`check_bounded`] runs only to name the faulting lane.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn form_checked(
    op: &Op,
    space: Space,
    store: bool,
    warp: &Warp,
    size: u32,
    mask: u32,
    on: &Lanes,
    addrs: &mut Lanes,
) -> Result<(), LaneFault> {
    let offset = op.addr.offset as u32;
    let base = warp.reg(usize::from(op.addr.base));
    // Inactive lanes count as address 0, as in `lanes::or_at_least`.
    let (mut or, mut below) = (0u32, u32::MAX);
    for l in 0..32 {
        let a = base[l].wrapping_add(offset);
        addrs[l] = a;
        let v = a & on[l];
        or |= v;
        below &= v.wrapping_sub(size);
    }
    if or % 4 != 0 || size > 1 << 31 || !lanes::all_below(or, below) {
        check_bounded(space, addrs, mask, size, Dir::of(store))?;
    }
    Ok(())
}

/// A plain 32-bit shared-memory load or store through a 32-bit base, by the lanes
/// of `mask` (not empty), whose expansion ([`lanes::expand`]) is `on`, in a
/// shared space of `size` bytes held by `shared` (not empty): addresses formed
/// and checked by `form_checked` (left in `addrs`); a load writes the lanes of
/// `mask` of the destination. A basic block run under one mask expands it once
/// for all its accesses.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn shared_word(
    op: &Op,
    store: bool,
    warp: &mut Warp,
    shared: &mut [u32],
    size: u32,
    mask: u32,
    on: &Lanes,
    addrs: &mut Lanes,
) -> Result<(), LaneFault> {
    form_checked(op, Space::Shared, store, warp, size, mask, on, addrs)?;
    // The buffer's length is a power of two at least the space's size, and every
    // address was checked: masking the index changes nothing but spares a bounds
    // check per lane (and lets a load read every lane).
    let Some(wrap) = shared.len().checked_sub(1) else {
        return Ok(());
    };
    if store {
        scatter(shared, wrap, addrs, warp.reg(usize::from(op.src[0])), mask);
    } else {
        gather(shared, wrap, addrs, &mut warp.regs[usize::from(op.d)], mask);
    }
    Ok(())
}

/// Loads the words at the checked addresses `addrs` of the lanes of `mask` from
/// shared memory into `dst` (`wrap` as for [`scatter`]): with every lane active
/// every lane's word, else only the active lanes' (a gather of all 32 and a blend
/// cost more than a walk over the lanes of a partial mask).
#[inline(always)]
pub(crate) fn gather(shared: &[u32], wrap: usize, addrs: &Lanes, dst: &mut Lanes, mask: u32) {
    if mask == u32::MAX {
        for (d, &a) in dst.iter_mut().zip(addrs) {
            *d = shared[(a / 4) as usize & wrap];
        }
    } else {
        for l in lanes_of(mask) {
            dst[l] = shared[(addrs[l] / 4) as usize & wrap];
        }
    }
}

/// A plain 32-bit load or store through a 32-bit base in CB space `space`, the
/// port of `side`, by the lanes of `mask` (not empty), whose expansion is `on`:
/// the addresses formed and checked by `form_checked` (left in `addrs`), the
/// words moved by `cb_move`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn cb_word(
    op: &Op,
    space: Space,
    side: Side,
    store: bool,
    warp: &mut Warp,
    ports: &mut [Option<Port>; 4],
    mask: u32,
    on: &Lanes,
    addrs: &mut Lanes,
) -> Result<(), LaneFault> {
    let port = ports[side.code() as usize]
        .as_mut()
        .ok_or((FaultKind::NoCbPort { side }, mask.trailing_zeros()))?;
    form_checked(op, space, store, warp, port.words() * 4, mask, on, addrs)?;
    cb_move(port, side, store, op.src[0], op.d, warp, mask, addrs)
}

/// Stores register `data` to, or loads register `dst` from, the checked byte
/// addresses `addrs` of the lanes of `mask` of a CB `port` on `side` (a load
/// writes the lanes of `mask` of `dst` only, and none if it faults).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn cb_move(
    port: &mut Port,
    side: Side,
    store: bool,
    data: Reg,
    dst: Reg,
    warp: &mut Warp,
    mask: u32,
    addrs: &Lanes,
) -> Result<(), LaneFault> {
    if store {
        port.write_lanes(addrs, warp.reg(usize::from(data)), mask);
    } else {
        let reader = warp.index;
        port.read_lanes(addrs, mask, &mut warp.regs[usize::from(dst)], reader)
            .map_err(|lane| {
                let addr = addrs[lane as usize];
                let held = port.held();
                (FaultKind::UnwrittenCb { side, addr, held }, lane)
            })?;
    }
    Ok(())
}

/// Stores `v` at the checked word addresses `addrs` of the lanes of `mask` in
/// shared memory (`wrap` is its length less one: a power of two, so masking the
/// index spares a bounds check per lane).
#[inline(always)]
pub(crate) fn scatter(shared: &mut [u32], wrap: usize, addrs: &Lanes, v: &Lanes, mask: u32) {
    if mask == u32::MAX {
        for (&a, &x) in addrs.iter().zip(v) {
            shared[(a / 4) as usize & wrap] = x;
        }
    } else {
        for l in lanes_of(mask) {
            shared[(addrs[l] / 4) as usize & wrap] = v[l];
        }
    }
}

/// Alignment and bounds of an access to a space of `size` bytes.
pub(crate) fn check_bounded(
    space: Space,
    addrs: &Lanes,
    mask: u32,
    size: u32,
    dir: Dir,
) -> Result<(), LaneFault> {
    let (or, outside) = lanes::or_at_least(addrs, mask, size);
    if or % 4 == 0 && !outside {
        return Ok(());
    }
    for l in lanes_of(mask) {
        let addr = addrs[l];
        if addr % 4 != 0 {
            return Err((FaultKind::Misaligned { space, addr }, l as u32));
        }
        if addr >= size {
            return Err((
                FaultKind::OutOfRange {
                    space,
                    addr,
                    size,
                    dir,
                },
                l as u32,
            ));
        }
    }
    Ok(())
}
