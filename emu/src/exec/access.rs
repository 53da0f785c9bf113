//! Loads, stores and atomics of a warp: addresses, their checks, and the words
//! moved in shared memory, parameters, CB ports, or (through the mode's
//! [`Global`]) global memory.
//!
//! Plain 32-bit accesses through a 32-bit base take the fast path: alignment and
//! bounds of the whole access from the OR, minimum and maximum of its addresses,
//! falling back to the lane-by-lane check only to name the first faulting lane
//! (for shared memory and CB ports, [`crate::exec::words`] forms, checks and
//! moves the words in one function, with the lane mask expanded by the caller).
//! Every other access (8-, 16- and 64-bit elements, vectors, 64-bit bases) goes
//! element by element.

use crate::exec::fault::{Dir, FaultKind};
use crate::exec::lanes::{self, Lanes, Wide, lanes_of};
use crate::exec::memory::{Counted, GlobalMemory, SharedWords, atomic_lanes};
use crate::exec::ops::{Mem, Op, Reg};
use crate::exec::space::{Access, Global, LaneFault, Local};
use crate::exec::warp::Warp;
use crate::exec::words::{cb_move, cb_word, check_bounded, gather, scatter, shared_word};
use crate::sem::memory::{Atomic, field, merge_field};
use spu_isa::{Side, Space, Ty};

/// A load or store `m` of the lanes of `exec` (not empty); addresses are left in
/// `addrs`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn memory<G: Global>(
    op: &Op,
    m: Mem,
    store: bool,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    if m.is_word() && !op.addr.wide {
        if m.space == Space::Shared && !local.shared.is_empty() {
            let size = local.shared_bytes;
            let on = lanes::expand(exec);
            shared_word(op, store, warp, local.shared, size, exec, &on, addrs)?;
            return Ok(Access::Shared);
        }
        if let Some(side) = m.space.cb_side() {
            let on = lanes::expand(exec);
            cb_word(
                op,
                m.space,
                side,
                store,
                warp,
                local.ports,
                exec,
                &on,
                addrs,
            )?;
            return Ok(Access::Cb);
        }
        let base = *warp.reg(usize::from(op.addr.base));
        let offset = op.addr.offset as u32;
        for l in 0..32 {
            addrs[l] = base[l].wrapping_add(offset);
        }
        return word(
            m.space, store, op.src[0], op.d, warp, local, global, exec, addrs,
        );
    }
    elements(op, m, store, warp, local, global, exec, addrs)
}

/// Alignment and mapping of a global access of `size` bytes (1, 2, 4 or 8) per
/// lane: each lane's address is a multiple of `size` (of 4 for 8-byte accesses,
/// which the caller checks whole), and all its bytes lie inside one buffer (a
/// buffer whose size is not a multiple of 4 ends inside its last word).
pub fn check_global(
    memory: &GlobalMemory,
    addrs: &Lanes,
    mask: u32,
    size: u32,
    dir: Dir,
) -> Result<(), LaneFault> {
    if mask == 0 {
        return Ok(());
    }
    let align = size.min(4);
    // Fast path: every lane in the region of the first one.
    let first = addrs[mask.trailing_zeros() as usize];
    if let Some(r) = memory.region_of(first & !3) {
        let r = &memory.regions()[r];
        let last_start = (r.end() + 1).saturating_sub(size);
        let (or, outside) = lanes::or_outside(addrs, mask, r.base, last_start);
        if or % align == 0 && !outside {
            return Ok(());
        }
    }
    for l in lanes_of(mask) {
        let addr = addrs[l];
        if addr % align != 0 {
            let space = Space::Global;
            let kind = if align == 4 {
                FaultKind::Misaligned { space, addr }
            } else {
                FaultKind::MisalignedBy { space, addr, size }
            };
            return Err((kind, l as u32));
        }
        match memory.region_of(addr & !3) {
            None => return Err((FaultKind::Unmapped { addr, dir }, l as u32)),
            Some(r) if addr as u64 + u64::from(size) > u64::from(memory.regions()[r].end()) => {
                return Err((FaultKind::PastEnd { addr, size, dir }, l as u32));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A 32-bit load into `dst` or store of `data` in the lanes of `mask` (not empty)
/// at the byte addresses `addrs`.
#[allow(clippy::too_many_arguments)]
#[inline]
fn word<G: Global>(
    space: Space,
    store: bool,
    data: Reg,
    dst: Reg,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    mask: u32,
    addrs: &Lanes,
) -> Result<Access, LaneFault> {
    match space {
        Space::Global => {
            check_global(global.layout(), addrs, mask, 4, Dir::of(store))?;
            if store {
                global.store(addrs, warp.reg(usize::from(data)), mask);
            } else {
                global.load(warp, dst, addrs, mask);
            }
            Ok(Access::Global { store, words: 1 })
        }
        Space::Shared => {
            check_bounded(space, addrs, mask, local.shared_bytes, Dir::of(store))?;
            let shared = &mut *local.shared;
            // The buffer's length is a power of two at least the space's size, and
            // every address was checked: masking the index changes nothing but
            // spares a bounds check per lane (and lets a load read every lane).
            let wrap = shared.len().wrapping_sub(1);
            if store {
                scatter(shared, wrap, addrs, warp.reg(usize::from(data)), mask);
            } else if !shared.is_empty() {
                gather(shared, wrap, addrs, &mut warp.regs[usize::from(dst)], mask);
            }
            Ok(Access::Shared)
        }
        Space::Local => {
            let index = local_words(warp, addrs, mask, store, local.local_bytes)?;
            if store {
                let v = *warp.reg(usize::from(data));
                for l in lanes_of(mask) {
                    warp.local[index[l] as usize][l] = v[l];
                }
            } else {
                let mut v = [0; 32];
                for l in lanes_of(mask) {
                    v[l] = warp.local[index[l] as usize][l];
                }
                lanes::write_masked(&mut warp.regs[usize::from(dst)], &v, mask);
            }
            Ok(Access::Local { store, words: 1 })
        }
        Space::Param => {
            let params = local.params;
            check_bounded(space, addrs, mask, params.len() as u32 * 4, Dir::of(store))?;
            let mut v = [0; 32];
            for l in lanes_of(mask) {
                v[l] = params[(addrs[l] / 4) as usize];
            }
            lanes::write_masked(&mut warp.regs[usize::from(dst)], &v, mask);
            Ok(Access::Param)
        }
        _ => {
            let lane0 = mask.trailing_zeros();
            let side = space.cb_side().unwrap_or(Side::North);
            let port = local.ports[side.code() as usize]
                .as_mut()
                .ok_or((FaultKind::NoCbPort { side }, lane0))?;
            check_bounded(space, addrs, mask, port.words() * 4, Dir::of(store))?;
            cb_move(port, side, store, data, dst, warp, mask, addrs)?;
            Ok(Access::Cb)
        }
    }
}

/// The word index in the thread's local memory of each lane's frame-relative byte
/// address (a multiple of 4), checked against the `limit` bytes of local memory a
/// thread has in this run; the warp's local memory grows to hold them.
fn local_words(
    warp: &mut Warp,
    addrs: &Lanes,
    mask: u32,
    store: bool,
    limit: u32,
) -> Result<Lanes, LaneFault> {
    let frame = warp.frame_base();
    let mut index = [0u32; 32];
    let mut top = 0;
    for l in lanes_of(mask) {
        let addr = addrs[l];
        if addr % 4 != 0 {
            let space = Space::Local;
            return Err((FaultKind::Misaligned { space, addr }, l as u32));
        }
        let offset = u64::from(frame) + u64::from(addr);
        if offset >= u64::from(limit) {
            let kind = FaultKind::LocalOutOfRange {
                addr,
                frame,
                limit,
                store,
            };
            return Err((kind, l as u32));
        }
        index[l] = (offset / 4) as u32;
        top = top.max(index[l] as usize + 1);
    }
    grow_local(warp, top, limit).map_err(|kind| (kind, mask.trailing_zeros()))?;
    Ok(index)
}

/// Grows the warp's local memory to at least `words` words (of every lane),
/// doubling as a vector does but never holding room past the `limit` bytes a
/// thread may use (that room is what the run's state estimate counts). Memory
/// the host cannot give is a fault of the run, not an abort.
pub fn grow_local(warp: &mut Warp, words: usize, limit: u32) -> Result<(), FaultKind> {
    let len = warp.local.len();
    if len < words {
        let room = (limit / 4) as usize;
        let want = (2 * len).min(room).max(words);
        let more = want.saturating_sub(warp.local.capacity());
        if warp.local.try_reserve_exact(more).is_err() {
            return Err(FaultKind::HostMemory {
                bytes: (more as u64).saturating_mul(128),
            });
        }
        warp.local.resize(words, [0; 32]);
    }
    Ok(())
}

/// The byte address `[base + offset]` of each lane of `exec` in `addrs`, checked
/// for an access of `size` bytes: with a 64-bit base the sum is taken in 64 bits
/// (PTX's address arithmetic: a base below zero plus an offset may land in the
/// space) and its high word must be zero, and the address must be a multiple of
/// `size`.
fn addresses(
    op: &Op,
    space: Space,
    size: u32,
    warp: &Warp,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<(), LaneFault> {
    let at = op.addr;
    let r = usize::from(at.base);
    for l in lanes_of(exec) {
        let lo = warp.reg(r)[l];
        let hi = if at.wide { warp.reg(r + 1)[l] } else { 0 };
        if hi != 0 {
            let full = (u64::from(hi) << 32 | u64::from(lo)).wrapping_add(at.offset as i64 as u64);
            // A local address a little below zero (`a[-1]` of an array at the
            // frame's start) is reported by the local check, as a negative one.
            let negative_local =
                space == Space::Local && (i64::from(i32::MIN)..0).contains(&(full as i64));
            if full >> 32 != 0 && !negative_local {
                let (hi, lo) = ((full >> 32) as u32, full as u32);
                return Err((FaultKind::WideAddress { hi, lo }, l as u32));
            }
            if negative_local {
                addrs[l] = full as u32;
                continue;
            }
        }
        addrs[l] = lo.wrapping_add(at.offset as u32);
    }
    for l in lanes_of(exec) {
        if addrs[l] % size != 0 {
            let addr = addrs[l];
            let kind = if size == 4 {
                FaultKind::Misaligned { space, addr }
            } else {
                FaultKind::MisalignedBy { space, addr, size }
            };
            return Err((kind, l as u32));
        }
    }
    Ok(())
}

/// A load or store of `m.count` elements of `m.ty` per lane, element by element
/// (8- and 16-bit ones extracted from or merged into their words), into or from
/// consecutive registers; a global access's transactions are those of all its
/// elements, queued once.
#[allow(clippy::too_many_arguments)]
fn elements<G: Global>(
    op: &Op,
    m: Mem,
    store: bool,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let (space, ty) = (m.space, m.ty);
    let elem = (ty.bits() / 8).max(1);
    let size = elem * u32::from(m.count);
    addresses(op, space, size, warp, exec, addrs)?;
    let (data, dst) = (op.src[0], op.d);
    let first = *addrs;
    let mut result = Access::None;
    if elem < 4 {
        for j in 0..m.count {
            *addrs = first.map(|a| a.wrapping_add(elem * u32::from(j)));
            let k = Reg::from(j);
            result = narrow(
                space,
                store,
                ty,
                data + k,
                dst + k,
                warp,
                local,
                global,
                exec,
                addrs,
            )?;
        }
    } else {
        for j in 0..size / 4 {
            let at: Lanes = std::array::from_fn(|l| first[l].wrapping_add(4 * j));
            let k = j as Reg;
            result = word(
                space,
                store,
                data + k,
                dst + k,
                warp,
                local,
                global,
                exec,
                &at,
            )?;
        }
    }
    *addrs = first;
    Ok(match result {
        Access::Global { store, .. } => Access::Global {
            store,
            words: size.div_ceil(4) as u8,
        },
        Access::Local { store, .. } => Access::Local {
            store,
            words: size.div_ceil(4) as u8,
        },
        other => other,
    })
}

/// An 8- or 16-bit access: loads extract the value from its word, stores merge it
/// into its word lane by lane (so lanes writing bytes of one word all land).
#[allow(clippy::too_many_arguments)]
fn narrow<G: Global>(
    space: Space,
    store: bool,
    ty: Ty,
    data: Reg,
    dst: Reg,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let bytes: Lanes = *addrs;
    let words: Lanes = bytes.map(|a| a & !3);
    if space == Space::Global {
        // Global memory may be deferred: the extraction and the merge happen where
        // the word is read, lane by lane, so lanes writing bytes of one word all land.
        check_global(global.layout(), &bytes, exec, ty.bits() / 8, Dir::of(store))?;
        if store {
            global.store_narrow(ty, &bytes, warp.reg(usize::from(data)), exec);
        } else {
            global.load_narrow(warp, dst, ty, &bytes, exec);
        }
        return Ok(Access::Global { store, words: 1 });
    }
    if !store {
        let result = word(space, false, 0, dst, warp, local, global, exec, &words)?;
        let d = usize::from(dst);
        for l in lanes_of(exec) {
            warp.regs[d][l] = field(ty, warp.regs[d][l], bytes[l]);
        }
        return Ok(result);
    }
    let source = *warp.reg(usize::from(data));
    let merge = |old: u32, l: usize| merge_field(ty, old, bytes[l], source[l]);
    match space {
        Space::Shared => {
            let shared = &mut *local.shared;
            check_bounded(space, &words, exec, local.shared_bytes, Dir::Store)?;
            for l in lanes_of(exec) {
                let i = (words[l] / 4) as usize;
                shared[i] = merge(shared[i], l);
            }
            Ok(Access::Shared)
        }
        Space::Local => {
            let index = local_words(warp, &words, exec, true, local.local_bytes)?;
            for l in lanes_of(exec) {
                let cell = &mut warp.local[index[l] as usize][l];
                *cell = merge(*cell, l);
            }
            Ok(Access::Local {
                store: true,
                words: 1,
            })
        }
        _ => {
            // A Communication Buffer: the field merges into the producer's word,
            // which then counts as written (the CB checker tracks whole words).
            let Some(side) = space.cb_side() else {
                // Parameter space is read-only: the table has no such store.
                return Ok(Access::None);
            };
            let lane0 = exec.trailing_zeros();
            let port = local.ports[side.code() as usize]
                .as_mut()
                .ok_or((FaultKind::NoCbPort { side }, lane0))?;
            check_bounded(space, &words, exec, port.words() * 4, Dir::Store)?;
            port.accesses += 1;
            for l in lanes_of(exec) {
                let w = words[l] / 4;
                let old = port.buffer[w as usize];
                port.write(w, merge(old, l));
            }
            Ok(Access::Cb)
        }
    }
}

/// An atomic for the lanes of `exec`. In shared memory it takes effect now; in
/// global memory the mode's [`Global`] applies it (an atomic of no lane is still
/// an access that waits for memory like any other).
#[allow(clippy::too_many_arguments)]
pub fn atomic<G: Global>(
    op: &Op,
    atom: Atomic,
    space: Space,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let words = atom.words();
    let size = 4 * u32::from(words);
    addresses(op, space, size, warp, exec, addrs)?;
    let mut va: Wide = [0; 32];
    let mut vb: Wide = [0; 32];
    for l in lanes_of(exec) {
        va[l] = crate::exec::apply::value(warp, op.src[0], atom.ty, l);
        vb[l] = crate::exec::apply::value(warp, op.src[1], atom.ty, l);
    }
    let dst = (op.d != crate::exec::ops::NO_REG).then_some(op.d);
    if space == Space::Shared {
        if exec == 0 {
            return Ok(Access::None);
        }
        // The last word of an 8-byte value must be inside the space too.
        let last = addrs.map(|x| x.wrapping_add(size - 4));
        check_bounded(space, addrs, exec, local.shared_bytes, Dir::Atomic)?;
        check_bounded(space, &last, exec, local.shared_bytes, Dir::Atomic)?;
        let mut shared = SharedWords(&mut *local.shared);
        let mut counted = Counted {
            words: &mut shared,
            changed: 0,
        };
        let old = atomic_lanes(&mut counted, atom, addrs, &va, &vb, exec);
        warp.shared_changes += counted.changed;
        if let Some(d) = dst {
            lanes::write_wide(&mut warp.regs, usize::from(d), &old, op.d_regs.min(2), exec);
        }
        return Ok(Access::SharedAtomic);
    }
    check_global(global.layout(), addrs, exec, size, Dir::Atomic)?;
    global.atomic(warp, atom, dst, addrs, &va, &vb, exec);
    Ok(Access::Atomic { words })
}
