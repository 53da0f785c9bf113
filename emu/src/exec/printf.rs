//! The built-in `vprintf` (the `printf` instruction): each thread's call formats
//! its format string (in global memory) with its argument buffer (in its local
//! memory, laid out as CUDA's `vprintf` takes it: each argument at the next multiple
//! of its size, `float`s promoted to `double`), as C's `printf` does. The texts are
//! kept in a [`PrintLog`] by (block, warp, lane, program order) and printed after
//! the run, so the output is the same whatever the order units ran in.
//!
//! Bounds: a format string of at most [`FORMAT_LIMIT`] bytes, widths and
//! precisions up to [`FIELD_LIMIT`], [`MAX_ARGS`] arguments per call (as CUDA: the
//! conversions past them are printed as written), and [`OUTPUT_LIMIT`] bytes of
//! output per run: past it the texts last in the printing order are dropped and
//! counted. A bad format is a fault of the thread that printed it.

use crate::exec::cformat::{ArgSource, format_c};
use crate::exec::fault::FaultKind;
use crate::exec::lanes::lanes_of;
use crate::exec::memory::{FIRST_BUFFER, GlobalMemory};
use crate::exec::space::LaneFault;
use crate::exec::warp::{LOCAL_LIMIT_BYTES, Warp};
use std::collections::BTreeMap;

/// Most bytes of one format string (its terminating zero excluded).
pub const FORMAT_LIMIT: usize = 4096;
/// Largest width or precision of a conversion.
pub const FIELD_LIMIT: i64 = 4096;
/// Most bytes of output a run keeps (CUDA's printf buffer holds 1 MiB by default).
pub const OUTPUT_LIMIT: usize = 1 << 20;
/// Most arguments one call takes, as CUDA's `printf`.
pub const MAX_ARGS: usize = 32;
/// Most bytes a `%s` argument may print.
pub const STRING_LIMIT: usize = 1 << 16;

/// Where a text goes in the output: block (its order in the grid), warp, lane and
/// the order calls were made in (program order within a thread).
type Key = (u64, u32, u32, u64);

/// The texts printed so far, bounded by [`OUTPUT_LIMIT`]: when they exceed it the
/// last in output order go. This keeps the same texts whatever the order the
/// calls came in: a text is kept exactly when it and every text before it in the
/// output fit in the bound.
#[derive(Debug, Default)]
pub struct PrintLog {
    kept: BTreeMap<Key, Vec<u8>>,
    bytes: usize,
    calls: u64,
    seq: u64,
}

/// What a run printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printed {
    /// The texts in output order.
    pub text: Vec<u8>,
    /// Calls (one per thread) made, and how many of their texts were dropped past
    /// [`OUTPUT_LIMIT`].
    pub calls: u64,
    pub dropped: u64,
}

impl Printed {
    /// The note for standard error when texts were dropped.
    pub fn dropped_note(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "warning: `printf` output is limited to {} MiB per run: the last {} of {} texts (in output order) were dropped; print less, e.g. from fewer threads",
                OUTPUT_LIMIT >> 20,
                self.dropped,
                self.calls
            )
        })
    }
}

impl PrintLog {
    fn add(&mut self, block: u64, warp: u32, lane: u32, text: Vec<u8>) {
        self.calls += 1;
        self.seq += 1;
        self.bytes += text.len();
        self.kept.insert((block, warp, lane, self.seq), text);
        while self.bytes > OUTPUT_LIMIT {
            match self.kept.pop_last() {
                Some((_, t)) => self.bytes -= t.len(),
                None => break,
            }
        }
    }

    /// Takes what was printed, leaving the log empty.
    pub fn take(&mut self) -> Printed {
        let log = std::mem::take(self);
        let dropped = log.calls - log.kept.len() as u64;
        Printed {
            text: log.kept.into_values().flatten().collect(),
            calls: log.calls,
            dropped,
        }
    }
}

/// A shared [`PrintLog`]: every unit of a run adds to it.
#[derive(Debug, Clone, Default)]
pub struct PrintSink(std::sync::Arc<std::sync::Mutex<PrintLog>>);

impl PrintSink {
    /// Takes what was printed, leaving the log empty.
    pub fn take(&self) -> Printed {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// A thread's local memory as `vprintf` reads it: frame-relative byte addresses.
struct LocalBytes<'a> {
    warp: &'a Warp,
    lane: usize,
}

impl LocalBytes<'_> {
    fn byte(&self, addr: u64) -> Result<u8, String> {
        let at = u64::from(self.warp.frame_base()) + addr;
        if at >= u64::from(LOCAL_LIMIT_BYTES) {
            return Err(format!(
                "its argument buffer reaches local address {addr}, past the {LOCAL_LIMIT_BYTES}-byte local memory of a thread"
            ));
        }
        let word = self
            .warp
            .local
            .get((at / 4) as usize)
            .map_or(0, |w| w[self.lane]);
        Ok((word >> (8 * (at % 4))) as u8)
    }

    fn value(&self, addr: u64, size: u64) -> Result<u64, String> {
        let mut v = 0u64;
        for i in 0..size {
            v |= u64::from(self.byte(addr + i)?) << (8 * i);
        }
        Ok(v)
    }
}

/// The zero-terminated string at global address `addr`, at most `limit` bytes.
fn global_string(
    memory: &GlobalMemory,
    addr: u64,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let word = u32::try_from(at & !3)
            .ok()
            .filter(|&w| memory.region_of(w).is_some());
        let Some(word) = word else {
            return Err(if at == addr {
                format!("{what} at address {addr:#x} is outside every buffer")
            } else {
                format!(
                    "{what} at address {addr:#x} runs past the end of its buffer without a terminating zero"
                )
            });
        };
        let b = (memory.read(word) >> (8 * (at % 4))) as u8;
        if b == 0 {
            return Ok(out);
        }
        if out.len() == limit {
            return Err(format!(
                "{what} at address {addr:#x} is longer than {limit} bytes"
            ));
        }
        out.push(b);
        at += 1;
    }
}

/// A `%s` argument below every buffer. A generic local address on the SPU is the
/// offset in the thread's frame, so 0 is a null pointer or a local array at the
/// frame's start (CUDA prints `(null)` only for the first); neither is printed.
fn local_string_error(addr: u64) -> String {
    let what = if addr == 0 {
        "is address 0: a null pointer, or a local array at the start of the frame (the SPU \
         cannot tell them apart)"
            .to_string()
    } else {
        format!(
            "at address {addr:#x} is below every buffer: a local array's address or a bad pointer"
        )
    };
    format!(
        "the `%s` argument {what}; the SPU's `%s` prints only strings in global memory: pass a \
         string constant or a `.global` buffer"
    )
}

/// Runs `printf` for the lanes of `exec`: the frame at `frame_bytes` holds the
/// format's address, the argument buffer's address and the result.
pub fn run(
    sink: &PrintSink,
    memory: &GlobalMemory,
    warp: &mut Warp,
    frame_bytes: u32,
    exec: u32,
) -> Result<(), LaneFault> {
    let fault = |what: String, l: usize| (FaultKind::Printf { what }, l as u32);
    let mut results = Vec::new();
    for l in lanes_of(exec) {
        let local = LocalBytes { warp, lane: l };
        let at = u64::from(frame_bytes);
        let (fmt, args) = (local.value(at, 8), local.value(at + 8, 8));
        let (fmt, args) = match (fmt, args) {
            (Ok(f), Ok(a)) => (f, a),
            (Err(e), _) | (_, Err(e)) => return Err(fault(e, l)),
        };
        if fmt == 0 {
            results.push((l, -1i32 as u32, None));
            continue;
        }
        let format = global_string(memory, fmt, FORMAT_LIMIT, "the format string")
            .map_err(|e| fault(e, l))?;
        let mut reader = Args {
            local: &local,
            base: args,
            next: 0,
            used: 0,
        };
        let text = format_c(&format, &mut reader, &mut |addr| {
            if addr < u64::from(FIRST_BUFFER) {
                return Err(local_string_error(addr));
            }
            global_string(memory, addr, STRING_LIMIT, "the `%s` argument")
        })
        .map_err(|e| fault(e, l))?;
        results.push((l, reader.used as u32, Some(text)));
    }
    let block = warp.print_order;
    let mut log = sink.0.lock().unwrap_or_else(|e| e.into_inner());
    for (l, count, text) in results {
        if let Some(t) = text {
            log.add(block, warp.index, l as u32, t);
        }
        store_result(warp, frame_bytes + 16, l, count).map_err(|e| fault(e, l))?;
    }
    Ok(())
}

/// Stores `vprintf`'s result in the frame.
fn store_result(warp: &mut Warp, addr: u32, lane: usize, value: u32) -> Result<(), String> {
    let at = u64::from(warp.frame_base()) + u64::from(addr);
    if at + 4 > u64::from(LOCAL_LIMIT_BYTES) {
        return Err(format!(
            "its result at local address {addr} is past the {LOCAL_LIMIT_BYTES}-byte local memory of a thread"
        ));
    }
    let index = (at / 4) as usize;
    if warp.local.len() <= index {
        warp.local.resize(index + 1, [0; 32]);
    }
    warp.local[index][lane] = value;
    Ok(())
}

struct Args<'a, 'b> {
    local: &'a LocalBytes<'b>,
    base: u64,
    next: u64,
    used: usize,
}

impl ArgSource for Args<'_, '_> {
    fn next(&mut self, size: u64) -> Result<u64, String> {
        let at = self.next.next_multiple_of(size);
        self.next = at + size;
        self.used += 1;
        self.local.value(self.base.wrapping_add(at), size)
    }

    fn used(&self) -> usize {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_bound_keeps_a_prefix_in_output_order() {
        let mut log = PrintLog::default();
        let big = vec![b'x'; OUTPUT_LIMIT / 2];
        // Arriving in reverse output order, the first two still win.
        log.add(3, 0, 0, big.clone());
        log.add(2, 0, 0, big.clone());
        log.add(1, 0, 0, big.clone());
        let p = log.take();
        assert_eq!((p.calls, p.dropped, p.text.len()), (3, 1, OUTPUT_LIMIT));
    }
}
