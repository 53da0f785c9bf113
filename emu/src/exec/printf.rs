//! The built-in `vprintf` (the `printf` instruction): each thread's call formats
//! its format string (in global memory) with its argument buffer (in its local
//! memory, laid out as CUDA's `vprintf` takes it: each argument at the next multiple
//! of its size, `float`s promoted to `double`), as C's `printf` does
//! ([`crate::exec::cformat`]). The texts go to the run's
//! [`crate::exec::printlog::PrintLog`] and are printed after the run.
//!
//! Bounds: a format string of at most [`FORMAT_LIMIT`] bytes, a `%s` argument of
//! at most [`STRING_LIMIT`]; the limits of one conversion are `cformat`'s and of
//! the run's output `printlog`'s. A bad format is a fault of the thread that
//! printed it.

use crate::exec::cformat::{ArgSource, format_c};
use crate::exec::fault::FaultKind;
use crate::exec::lanes::lanes_of;
use crate::exec::memory::{FIRST_BUFFER, GlobalMemory};
use crate::exec::printlog::PrintSink;
use crate::exec::space::LaneFault;
use crate::exec::warp::{LOCAL_LIMIT_BYTES, Warp};

/// Most bytes of one format string (its terminating zero excluded).
pub const FORMAT_LIMIT: usize = 4096;
/// Most bytes a `%s` argument may print.
pub const STRING_LIMIT: usize = 1 << 16;

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
    let mut log = sink.lock();
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
