//! Global memory: every buffer of the kernel laid out in one flat, word-addressed
//! image with unmapped guard gaps, so an access outside every buffer (including the
//! null page and the space between buffers) is caught and reported. Also how
//! atomics apply to memory, global or shared.

use crate::exec::lanes::{self, Lanes, Wide};
use crate::sem::memory::{self as sem_memory, Atomic};
use spu_isa::Ty;

/// Byte address of the first buffer; addresses below it are never mapped.
pub const FIRST_BUFFER: u32 = 0x1_0000;
/// Buffers start on this alignment and are followed by at least this much unmapped
/// space.
pub const PAGE: u32 = 256;

/// Where one buffer lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub name: String,
    pub ty: Ty,
    /// Dimensions, outermost first.
    pub dims: Vec<u64>,
    /// Byte address of element 0.
    pub base: u32,
    /// Number of elements (of `ty`, packed: `len * ty.bytes()` bytes).
    pub len: u32,
}

impl Region {
    /// One past the last byte.
    pub fn end(&self) -> u32 {
        self.base + self.bytes()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u32 {
        self.len * self.ty.bytes()
    }

    /// Number of 32-bit words the elements occupy (the last one padded with zeros).
    pub fn words(&self) -> usize {
        self.bytes().div_ceil(4) as usize
    }
}

const NO_OWNER: u16 = u16::MAX;

/// The global memory image.
#[derive(Debug, Clone, Default)]
pub struct GlobalMemory {
    words: Vec<u32>,
    regions: Vec<Region>,
    /// Owning region of each page, or `NO_OWNER`.
    page_owner: Vec<u16>,
    /// Writes that gave a word a new value: the run's progress (`--spin-limit`)
    /// counts these, so failed compare-and-swaps and stores of the value already
    /// there do not keep a stuck kernel alive.
    changed: u64,
    /// The words given new values since a watch began (see [`GlobalMemory::watch`]).
    watch: Option<Box<Watch>>,
}

/// Which words got new values during a watch: first it learns the words a
/// kernel changes, then it looks for changes to words it has not seen.
#[derive(Debug, Clone, Default)]
struct Watch {
    /// One bit per word of memory: given a new value during the watch.
    seen: Vec<u64>,
    /// Distinct words changed so far.
    words: u64,
    /// Looking (after [`GlobalMemory::look`]): changes since, and how many of
    /// them went to words not changed before in the watch.
    looking: bool,
    changes: u64,
    fresh: u64,
}

/// What a watch saw (see [`GlobalMemory::watched`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watched {
    /// Distinct words changed since the watch began.
    pub words: u64,
    /// Looking for changes to new words (see [`GlobalMemory::look`]).
    pub looking: bool,
    /// Changes since looking began, and those to words not changed before.
    pub changes: u64,
    pub fresh: u64,
}

impl Watch {
    #[inline]
    fn note(&mut self, word: usize) {
        let (slot, bit) = (word / 64, 1u64 << (word % 64));
        let new = self.seen[slot] & bit == 0;
        self.seen[slot] |= bit;
        self.words += u64::from(new);
        if self.looking {
            self.changes += 1;
            self.fresh += u64::from(new);
        }
    }
}

/// Why a layout does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct LayoutError {
    pub needed_mib: u64,
    pub limit_mib: u64,
    /// Every buffer with its size in MiB (rounded up), in declaration order.
    pub buffers: Vec<(String, u64)>,
    /// The machine has room, but this process could not allocate it.
    pub host: bool,
}

impl LayoutError {
    fn describe(&self) -> String {
        let (needed, limit) = (self.needed_mib, self.limit_mib);
        if self.host {
            return format!(
                "buffers need {needed} MiB of global memory ({}), and this process could not allocate that much (a memory limit such as `ulimit -v`, or too little free memory); use smaller sizes, or run where more memory is free",
                largest(&self.buffers)
            );
        }
        format!(
            "buffers need {needed} MiB of global memory but the machine has {limit} MiB ({}); {}",
            largest(&self.buffers),
            remedy(needed)
        )
    }
}

/// Most global memory `memory.global_mib` may give (a 32-bit address space).
const MAX_GLOBAL_MIB: u64 = 4000;

/// The three largest buffers and a count of the rest: "`A` 1 144 MiB, `B` 12 MiB and 2 more".
fn largest(buffers: &[(String, u64)]) -> String {
    let mut v: Vec<&(String, u64)> = buffers.iter().collect();
    v.sort_by_key(|b| std::cmp::Reverse(b.1));
    let shown: Vec<String> = v
        .iter()
        .take(3)
        .map(|(name, mib)| format!("`{name}` {mib} MiB"))
        .collect();
    let mut text = shown.join(", ");
    if v.len() > 3 {
        text.push_str(&format!(" and {} more", v.len() - 3));
    }
    text
}

fn remedy(needed_mib: u64) -> String {
    if needed_mib <= MAX_GLOBAL_MIB {
        format!(
            "raise the limit with `--set memory.global_mib={needed_mib}` (in a machine file: `[memory] global_mib = {needed_mib}`), or use smaller sizes"
        )
    } else {
        format!(
            "that is more than the largest `memory.global_mib` ({MAX_GLOBAL_MIB} MiB, a 32-bit address space): use smaller sizes"
        )
    }
}

impl GlobalMemory {
    /// Lays out regions given as (name, type, dims, element count), in order.
    pub fn layout(
        buffers: Vec<(String, Ty, Vec<u64>, u64)>,
        limit_bytes: u64,
    ) -> Result<GlobalMemory, LayoutError> {
        let mut next = u64::from(FIRST_BUFFER);
        let mut placed = Vec::new();
        let mut sizes = Vec::new();
        for (name, ty, dims, len) in buffers {
            let bytes = len * u64::from(ty.bytes());
            sizes.push((name.clone(), bytes.div_ceil(1 << 20)));
            let base = next;
            next = (base + bytes + 2 * u64::from(PAGE) - 1) / u64::from(PAGE) * u64::from(PAGE)
                + u64::from(PAGE);
            placed.push((name, ty, dims, base, len));
        }
        let used = next - u64::from(FIRST_BUFFER);
        if used > limit_bytes || next > u64::from(u32::MAX) {
            return Err(LayoutError {
                needed_mib: used.div_ceil(1 << 20),
                limit_mib: limit_bytes >> 20,
                buffers: sizes,
                host: false,
            });
        }
        let words_len = (next / 4) as usize;
        let pages = (next / u64::from(PAGE)) as usize;
        let host_error = || LayoutError {
            needed_mib: used.div_ceil(1 << 20),
            limit_mib: limit_bytes >> 20,
            buffers: sizes.clone(),
            host: true,
        };
        let mut page_owner: Vec<u16> = Vec::new();
        page_owner
            .try_reserve_exact(pages)
            .map_err(|_| host_error())?;
        page_owner.resize(pages, NO_OWNER);
        let mut regions = Vec::new();
        for (i, (name, ty, dims, base, len)) in placed.into_iter().enumerate() {
            let region = Region {
                name,
                ty,
                dims,
                base: base as u32,
                len: len as u32,
            };
            let first = region.base / PAGE;
            let last = region.end().div_ceil(PAGE);
            for p in first..last {
                page_owner[p as usize] = i as u16;
            }
            regions.push(region);
        }
        // Allocated zeroed and fallibly, so a memory limit is an error rather
        // than an abort; the system gives zeroed pages it fills only when
        // written, so buffers the kernel never writes cost no memory. (A
        // fallible reservation followed by an infallible allocation is not
        // enough: a thread started earlier, such as the signal handlers', may
        // take its allocator arena in between.)
        let words: Vec<u32> =
            bytemuck::allocation::try_zeroed_vec(words_len).map_err(|()| host_error())?;
        Ok(GlobalMemory {
            words,
            regions,
            page_owner,
            changed: 0,
            watch: None,
        })
    }

    /// Bytes the layout spans (buffers with their guard pages), written or not.
    pub fn bytes(&self) -> u64 {
        self.words.len() as u64 * 4
    }

    /// The buffers, in declaration order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region holding a 4-byte-aligned byte address, if any.
    #[inline]
    pub fn region_of(&self, addr: u32) -> Option<usize> {
        let owner = *self.page_owner.get((addr / PAGE) as usize)?;
        if owner == NO_OWNER {
            return None;
        }
        let r = &self.regions[usize::from(owner)];
        (addr >= r.base && addr < r.end()).then_some(usize::from(owner))
    }

    /// Reads a word the caller has checked with [`GlobalMemory::region_of`].
    #[inline]
    pub fn read(&self, addr: u32) -> u32 {
        self.words[(addr / 4) as usize]
    }

    /// Writes a word the caller has checked with [`GlobalMemory::region_of`].
    #[inline]
    pub fn write(&mut self, addr: u32, value: u32) {
        let i = (addr / 4) as usize;
        let word = &mut self.words[i];
        if *word != value {
            self.changed += 1;
            if let Some(watch) = self.watch.as_deref_mut() {
                watch.note(i);
            }
        }
        *word = value;
    }

    /// How many writes so far gave a word a new value.
    pub fn changed_words(&self) -> u64 {
        self.changed
    }

    /// Begins (again) to note which words get new values. A loop that only
    /// rewrites words it has already changed (a counter, a flag, an array it
    /// sweeps over and over) changes memory without getting anywhere; after
    /// [`GlobalMemory::look`], [`GlobalMemory::watched`] tells such a loop from
    /// one that reaches new words. One bit per word while the watch is on.
    pub fn watch(&mut self) {
        self.watch = Some(Box::new(Watch {
            seen: vec![0; self.words.len().div_ceil(64)],
            ..Watch::default()
        }));
    }

    /// From now on, counts changes, and changes to words the watch has not seen.
    pub fn look(&mut self) {
        if let Some(watch) = self.watch.as_deref_mut() {
            watch.looking = true;
        }
    }

    /// Stops noting words.
    pub fn unwatch(&mut self) {
        self.watch = None;
    }

    /// What the watch saw, while one is on.
    pub fn watched(&self) -> Option<Watched> {
        self.watch.as_ref().map(|w| Watched {
            words: w.words,
            looking: w.looking,
            changes: w.changes,
            fresh: w.fresh,
        })
    }

    /// The words holding a buffer's elements (packed little-endian; see
    /// [`crate::load::init::element`]).
    pub fn buffer(&self, index: usize) -> &[u32] {
        let r = &self.regions[index];
        let start = (r.base / 4) as usize;
        &self.words[start..start + r.words()]
    }

    /// The words holding a buffer's elements, writable.
    pub fn buffer_mut(&mut self, index: usize) -> &mut [u32] {
        let r = &self.regions[index];
        let start = (r.base / 4) as usize;
        &mut self.words[start..start + r.words()]
    }

    /// The region nearest to an unmapped address, for error messages.
    pub fn nearest(&self, addr: u32) -> Option<&Region> {
        self.regions.iter().min_by_key(|r| {
            if addr < r.base {
                r.base - addr
            } else {
                addr.saturating_sub(r.end() - 4)
            }
        })
    }
}

/// Memory that atomics apply to, a 32-bit word at a time, at checked addresses.
pub trait Words {
    fn read_word(&self, addr: u32) -> u32;
    fn write_word(&mut self, addr: u32, value: u32);
}

impl Words for GlobalMemory {
    fn read_word(&self, addr: u32) -> u32 {
        self.read(addr)
    }

    fn write_word(&mut self, addr: u32, value: u32) {
        self.write(addr, value);
    }
}

/// A block's shared memory (a power-of-two number of words, so masking an index
/// that was checked changes nothing).
#[derive(Debug)]
pub struct SharedWords<'a>(pub &'a mut [u32]);

impl Words for SharedWords<'_> {
    fn read_word(&self, addr: u32) -> u32 {
        self.0[(addr / 4) as usize & (self.0.len() - 1)]
    }

    fn write_word(&mut self, addr: u32, value: u32) {
        let i = (addr / 4) as usize & (self.0.len() - 1);
        self.0[i] = value;
    }
}

/// Words that count the writes that change one (a failed compare-and-swap
/// changes nothing).
#[derive(Debug)]
pub struct Counted<'a, M: Words> {
    pub words: &'a mut M,
    pub changed: u64,
}

impl<M: Words> Words for Counted<'_, M> {
    fn read_word(&self, addr: u32) -> u32 {
        self.words.read_word(addr)
    }

    fn write_word(&mut self, addr: u32, value: u32) {
        if self.words.read_word(addr) != value {
            self.changed += 1;
        }
        self.words.write_word(addr, value);
    }
}

/// Applies a warp's atomic `atom` to the checked and aligned addresses of the
/// lanes in `mask`, one lane after another in lane order, and returns each lane's
/// old value: the one place every execution mode applies atomics, in global and in
/// shared memory. `a` and `b` are the operands read as the atomic's type (a 64-bit
/// value spans the word at the address and the next one, low word first).
pub fn atomic_lanes<M: Words>(
    memory: &mut M,
    atom: Atomic,
    addrs: &Lanes,
    a: &Wide,
    b: &Wide,
    mask: u32,
) -> Wide {
    let wide = atom.words() == 2;
    let mut old = [0u64; 32];
    for l in lanes::lanes_of(mask) {
        let at = addrs[l];
        let hi = if wide { memory.read_word(at + 4) } else { 0 };
        let prev = crate::sem::read(
            atom.ty,
            u64::from(memory.read_word(at)) | u64::from(hi) << 32,
        );
        let new = sem_memory::atomic(atom, prev, a[l], b[l]);
        memory.write_word(at, new as u32);
        if wide {
            memory.write_word(at + 4, (new >> 32) as u32);
        }
        old[l] = prev;
    }
    old
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_limit_error_names_buffers_and_the_key() {
        let param = crate::machine::PARAMS
            .iter()
            .find(|p| p.key == "memory.global_mib")
            .unwrap();
        assert_eq!(
            param.range.to_string(),
            format!("an integer in 1..={MAX_GLOBAL_MIB}")
        );
        let big = |name: &str, mib: u64| (name.to_string(), Ty::F32, vec![mib << 18], mib << 18);
        let e = GlobalMemory::layout(
            vec![big("a", 10), big("b", 300), big("c", 20), big("d", 5)],
            256 << 20,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("buffers need 336 MiB of global memory but the machine has 256 MiB (`b` 300 MiB, `c` 20 MiB, `a` 10 MiB and 1 more); raise the limit with `--set memory.global_mib=336`"), "{e}");
        let e = GlobalMemory::layout(vec![big("huge", 5000)], 256 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("a 32-bit address space): use smaller sizes"),
            "{e}"
        );
    }

    #[test]
    fn buffers_are_separated_by_unmapped_gaps() {
        let m = GlobalMemory::layout(
            vec![
                ("a".into(), Ty::F32, vec![3], 3),
                ("b".into(), Ty::U32, vec![64], 64),
            ],
            1 << 20,
        )
        .unwrap();
        let (a, b) = (&m.regions()[0], &m.regions()[1]);
        assert_eq!(a.base, FIRST_BUFFER);
        assert!(b.base >= a.end() + PAGE && b.base % PAGE == 0);
        assert_eq!(m.region_of(a.base + 8), Some(0));
        assert_eq!(m.region_of(a.end()), None);
        assert_eq!(m.region_of(0), None);
        assert_eq!(m.region_of(b.end() - 4), Some(1));
        assert_eq!(m.region_of(b.end()), None);
        assert_eq!(m.region_of(u32::MAX - 3), None);
    }

    #[test]
    fn layout_respects_the_capacity() {
        let e = GlobalMemory::layout(vec![("a".into(), Ty::F32, vec![1 << 20], 1 << 20)], 1 << 20);
        assert!(e.is_err());
    }
}
