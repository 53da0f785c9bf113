//! Global memory in functional mode, by windows of a fixed number of cycles: a
//! unit's loads see memory as it was at the start of the window plus the unit's own
//! stores; stores and atomics of all units take effect at the end of the window, in
//! (cycle, unit, program) order, and a warp that issued an atomic waits until then
//! for the old value. The result does not depend on how units are spread over
//! threads.
//!
//! A unit's view of what it stored ([`StoreLog::read`]) also serves timing mode,
//! where `printf` reads strings at once while the stores before it wait for the
//! end of their window ([`crate::timing::effects`]).

use crate::exec::lanes::{
    Lanes, Wide, lane_toggles, lanes_of, wide_toggles, write_masked, write_wide,
};
use crate::exec::memory::{GlobalMemory, Words};
use crate::exec::ops::Reg;
use crate::exec::space::Global;
use crate::exec::warp::{Warp, WarpState};
use crate::sem::memory::Atomic;
use crate::sem::memory::{field, merge_field};
use spu_isa::Ty;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// One global store or atomic waiting for the end of the window.
#[derive(Debug, Clone)]
pub enum Logged {
    Store {
        addrs: Lanes,
        data: Lanes,
        mask: u32,
    },
    /// A warp's atomics (boxed: rarer and larger than stores).
    Atomic(Box<LoggedAtomic>),
    /// Words an engine writes, in order.
    Words(Vec<(u32, u32)>),
    /// An 8- or 16-bit store: each lane's field merged into its word in lane order.
    Narrow {
        ty: Ty,
        bytes: Lanes,
        data: Lanes,
        mask: u32,
    },
}

/// A warp's global atomics waiting for the end of the window.
#[derive(Debug, Clone)]
pub struct LoggedAtomic {
    pub warp: usize,
    pub atom: Atomic,
    pub dst: Option<Reg>,
    pub addrs: Lanes,
    pub a: Wide,
    pub b: Wide,
    pub mask: u32,
}

/// A unit's global stores and atomics of the current window, with the unit's own
/// view of what it stored.
#[derive(Debug, Clone, Default)]
pub struct StoreLog {
    /// (cycle, access), in program order (functional mode only).
    pub entries: Vec<(u64, Logged)>,
    /// The words the unit wrote in the window, as it wrote them.
    overlay: Overlay,
}

/// Words by byte address, kept by 128-byte line: a warp's store usually falls in
/// a few lines, so it looks up a few entries instead of one per lane.
#[derive(Debug, Clone, Default)]
struct Overlay {
    lines: HashMap<u32, Line, BuildHasherDefault<WordHasher>>,
}

/// The words of one line of the overlay, and which of them were written.
#[derive(Debug, Clone, Copy, Default)]
struct Line {
    words: [u32; 32],
    held: u32,
}

impl Line {
    #[inline(always)]
    fn set(&mut self, slot: usize, value: u32) {
        self.words[slot] = value;
        self.held |= 1 << slot;
    }
}

/// The line key and slot of byte address `addr`: one to one (the two low bits,
/// clear in a word address, go to the key's top bits).
#[inline(always)]
fn line_of(addr: u32) -> (u32, usize) {
    ((addr >> 7) | (addr & 3) << 25, ((addr >> 2) & 31) as usize)
}

impl Overlay {
    fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn get(&self, addr: u32) -> Option<u32> {
        let (key, slot) = line_of(addr);
        let line = self.lines.get(&key)?;
        (line.held >> slot & 1 != 0).then_some(line.words[slot])
    }

    fn line(&mut self, key: u32) -> &mut Line {
        self.lines.entry(key).or_default()
    }

    fn insert(&mut self, addr: u32, value: u32) {
        let (key, slot) = line_of(addr);
        self.line(key).set(slot, value);
    }

    /// Writes the words `data` at the addresses `addrs` of the lanes of `mask`,
    /// in lane order, looking a line up only when it changes from the last lane's.
    fn insert_lanes(&mut self, addrs: &Lanes, data: &Lanes, mask: u32) {
        let mut lanes = lanes_of(mask);
        let Some(first) = lanes.next() else {
            return;
        };
        let (mut key, slot) = line_of(addrs[first]);
        let mut line = self.line(key);
        line.set(slot, data[first]);
        for l in lanes {
            let (k, slot) = line_of(addrs[l]);
            if k != key {
                key = k;
                line = self.line(k);
            }
            line.set(slot, data[l]);
        }
    }

    fn clear(&mut self) {
        self.lines.clear();
    }
}

/// Memory as a unit sees it, for atomics applied to its view.
struct View<'a> {
    memory: &'a GlobalMemory,
    log: &'a mut StoreLog,
}

impl Words for View<'_> {
    fn read_word(&self, addr: u32) -> u32 {
        self.log.read(self.memory, addr)
    }

    fn write_word(&mut self, addr: u32, value: u32) {
        self.log.overlay.insert(addr, value);
    }
}

impl StoreLog {
    /// The word at `addr` as this unit sees it.
    #[inline]
    pub fn read(&self, memory: &GlobalMemory, addr: u32) -> u32 {
        if self.overlay.is_empty() {
            memory.read(addr)
        } else {
            self.overlay.get(addr).unwrap_or_else(|| memory.read(addr))
        }
    }

    /// Logs words an engine writes at cycle `now`.
    pub fn words(&mut self, now: u64, words: Vec<(u32, u32)>) {
        for &(a, v) in &words {
            self.overlay.insert(a, v);
        }
        self.entries.push((now, Logged::Words(words)));
    }

    /// The unit's store of `data` at the word addresses `addrs` (lanes of `mask`):
    /// it sees the words from now on.
    pub fn note_store(&mut self, addrs: &Lanes, data: &Lanes, mask: u32) {
        self.overlay.insert_lanes(addrs, data, mask);
    }

    /// The unit's 8- or 16-bit store of `data` at the byte addresses `bytes`,
    /// merged into its words in lane order.
    pub fn note_narrow(
        &mut self,
        memory: &GlobalMemory,
        ty: Ty,
        bytes: &Lanes,
        data: &Lanes,
        mask: u32,
    ) {
        for l in lanes_of(mask) {
            let word = bytes[l] & !3;
            let new = merge_field(ty, self.read(memory, word), bytes[l], data[l]);
            self.overlay.insert(word, new);
        }
    }

    /// The unit's atomics, applied to its view in lane order (timing mode, where
    /// the warp goes on before they reach memory).
    pub fn note_atomic(
        &mut self,
        memory: &GlobalMemory,
        atom: Atomic,
        addrs: &Lanes,
        operands: [&Wide; 2],
        mask: u32,
    ) {
        let mut view = View { memory, log: self };
        let [a, b] = operands;
        crate::exec::memory::atomic_lanes(&mut view, atom, addrs, a, b, mask);
    }

    /// Forgets the window's accesses once they have been applied.
    pub fn clear(&mut self) {
        self.entries.clear();
        if !self.overlay.is_empty() {
            self.overlay.clear();
        }
    }
}

/// Global memory as a unit sees it in functional mode.
#[derive(Debug)]
pub struct Windowed<'a> {
    pub memory: &'a GlobalMemory,
    pub log: &'a mut StoreLog,
    /// Bit toggles of the words moved (added to the unit's traffic afterwards).
    pub toggles: u64,
    pub now: u64,
    /// The warp issuing (within its unit).
    pub warp: usize,
}

impl Global for Windowed<'_> {
    fn layout(&self) -> &GlobalMemory {
        self.memory
    }

    fn seen(&self, addr: u32) -> u32 {
        self.log.read(self.memory, addr)
    }

    fn load(&mut self, warp: &mut Warp, dst: Reg, addrs: &Lanes, mask: u32) {
        let mut v = [0; 32];
        for l in lanes_of(mask) {
            v[l] = self.log.read(self.memory, addrs[l]);
        }
        self.toggles += lane_toggles(&v, mask);
        write_masked(&mut warp.regs[usize::from(dst)], &v, mask);
    }

    fn load_narrow(&mut self, warp: &mut Warp, dst: Reg, ty: Ty, bytes: &Lanes, mask: u32) {
        let mut v = [0; 32];
        for l in lanes_of(mask) {
            v[l] = self.log.read(self.memory, bytes[l] & !3);
        }
        self.toggles += lane_toggles(&v, mask);
        let d = &mut warp.regs[usize::from(dst)];
        for l in lanes_of(mask) {
            d[l] = field(ty, v[l], bytes[l]);
        }
    }

    fn store_narrow(&mut self, ty: Ty, bytes: &Lanes, data: &Lanes, mask: u32) {
        // Each lane's word is stored on its own: no toggles between lanes.
        self.log.note_narrow(self.memory, ty, bytes, data, mask);
        self.log.entries.push((
            self.now,
            Logged::Narrow {
                ty,
                bytes: *bytes,
                data: *data,
                mask,
            },
        ));
    }

    fn store(&mut self, addrs: &Lanes, data: &Lanes, mask: u32) {
        self.log.note_store(addrs, data, mask);
        self.toggles += lane_toggles(data, mask);
        self.log.entries.push((
            self.now,
            Logged::Store {
                addrs: *addrs,
                data: *data,
                mask,
            },
        ));
    }

    fn atomic(
        &mut self,
        warp: &mut Warp,
        atom: Atomic,
        dst: Option<Reg>,
        addrs: &Lanes,
        a: &Wide,
        b: &Wide,
        mask: u32,
    ) {
        // The warp waits for the end of the window, also after a `red` (which
        // returns nothing): its later loads must see its own atomic.
        warp.state = WarpState::AtMemory;
        self.log.entries.push((
            self.now,
            Logged::Atomic(Box::new(LoggedAtomic {
                warp: self.warp,
                atom,
                dst,
                addrs: *addrs,
                a: *a,
                b: *b,
                mask,
            })),
        ));
    }
}

/// Applies one logged access of unit `unit` at the end of a window: memory
/// changes, and an atomic's old values reach its warp, which runs again.
/// `warps` are the warps of the unit's code, `toggles` its toggle count.
pub fn apply(
    entry: Logged,
    warps: Option<&mut Vec<Warp>>,
    toggles: &mut u64,
    memory: &mut GlobalMemory,
) {
    match entry {
        Logged::Store { addrs, data, mask } => {
            for l in lanes_of(mask) {
                memory.write(addrs[l], data[l]);
            }
        }
        Logged::Words(words) => {
            for (a, v) in words {
                memory.write(a, v);
            }
        }
        Logged::Narrow {
            ty,
            bytes,
            data,
            mask,
        } => {
            for l in lanes_of(mask) {
                let word = bytes[l] & !3;
                memory.write(word, merge_field(ty, memory.read(word), bytes[l], data[l]));
            }
        }
        Logged::Atomic(at) => {
            let LoggedAtomic {
                warp,
                atom,
                dst,
                addrs,
                a,
                b,
                mask,
            } = *at;
            let old = crate::exec::memory::atomic_lanes(memory, atom, &addrs, &a, &b, mask);
            *toggles += wide_toggles(&old, mask, atom.words());
            if let Some(w) = warps.and_then(|ws| ws.get_mut(warp)) {
                if let Some(dst) = dst {
                    write_wide(&mut w.regs, usize::from(dst), &old, atom.words(), mask);
                }
                if w.state == WarpState::AtMemory {
                    w.state = WarpState::Running;
                }
            }
        }
    }
}

/// A fast hash for word addresses (keys the program computes, not an adversary's).
#[derive(Debug, Clone, Copy, Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(v)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlay_keeps_each_address_apart_and_the_last_write() {
        let mut o = Overlay::default();
        assert!(o.is_empty());
        let addrs: Lanes = std::array::from_fn(|l| 0x1000 + 64 * l as u32);
        let data: Lanes = std::array::from_fn(|l| l as u32 + 1);
        o.insert_lanes(&addrs, &data, 0xffff_0001);
        assert_eq!(o.get(0x1000), Some(1));
        assert_eq!(o.get(0x1040), None, "lane 1 is not in the mask");
        assert_eq!(o.get(0x1000 + 64 * 31), Some(32));
        // Addresses differing only in their low bits or by a line are distinct.
        o.insert(0x1001, 7);
        o.insert(0x1080, 8);
        assert_eq!(o.get(0x1080), Some(8));
        assert_eq!(
            (o.get(0x1000), o.get(0x1001), o.get(0x1002)),
            (Some(1), Some(7), None)
        );
        // Lanes to the same word: the last in lane order wins.
        o.insert_lanes(&[0x2000; 32], &data, u32::MAX);
        assert_eq!(o.get(0x2000), Some(32));
        o.clear();
        assert!(o.is_empty() && o.get(0x1000).is_none());
    }
}
