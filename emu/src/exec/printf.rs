//! The built-in `vprintf` (the `printf` instruction): each thread's call formats
//! its format string (in global memory, as the thread sees it: after its own
//! stores, also those the memory system has not applied yet) with its argument
//! buffer (in its local memory, laid out as CUDA's `vprintf` takes it: each
//! argument at the next multiple of its size, `float`s promoted to `double`), as
//! C's `printf` does
//! ([`crate::exec::cformat`]). The texts go to the run's
//! [`crate::exec::printlog::PrintLog`] and are printed after the run.
//!
//! Bounds: a format string of at most [`FORMAT_LIMIT`] bytes, a `%s` argument of
//! at most [`STRING_LIMIT`] (with a precision, at most that many bytes are read,
//! and need no terminating zero, as in C); the limits of one conversion are `cformat`'s and of
//! the run's output `printlog`'s. A bad format is a fault of the thread that
//! printed it.

use crate::exec::cformat::{ArgSource, format_c_into};
use crate::exec::fault::FaultKind;
use crate::exec::lanes::lanes_of;
use crate::exec::memory::FIRST_BUFFER;
use crate::exec::printlog::PrintSink;
use crate::exec::space::{Global, LaneFault};
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
        let at = u64::from(self.warp.frame_base()) + addr;
        if at % 4 == 0 && size % 4 == 0 && at + size <= u64::from(LOCAL_LIMIT_BYTES) {
            // Whole words (every argument `vprintf` reads is aligned to its size).
            let word = |i: u64| {
                let w = self.warp.local.get(((at + i) / 4) as usize);
                u64::from(w.map_or(0, |w| w[self.lane]))
            };
            return Ok((0..size / 4).fold(0, |v, k| v | word(4 * k) << (32 * k)));
        }
        let mut v = 0u64;
        for i in 0..size {
            v |= u64::from(self.byte(addr + i)?) << (8 * i);
        }
        Ok(v)
    }
}

/// The zero-terminated string at global address `addr`, at most `limit` bytes, as
/// the thread sees memory (after its own stores, also those still on their way),
/// read a word at a time within the buffer that holds `addr`. With `stop` (a `%s`
/// precision), at most that many bytes are read and need no terminating zero.
fn global_string(
    memory: &impl Global,
    addr: u64,
    limit: usize,
    stop: Option<usize>,
    what: &str,
) -> Result<Vec<u8>, String> {
    let layout = memory.layout();
    let region = u32::try_from(addr)
        .ok()
        .and_then(|a| layout.region_of(a & !3));
    let Some(region) = region else {
        return Err(format!(
            "{what} at address {addr:#x} is outside every buffer"
        ));
    };
    // Every word that starts in the buffer is readable (the last one is padded).
    let end = u64::from(layout.regions()[region].end()).next_multiple_of(4);
    let mut out = Vec::with_capacity(32);
    let mut at = addr;
    while at < end {
        let word = memory.seen((at & !3) as u32);
        for shift in (at % 4)..4 {
            if stop == Some(out.len()) {
                return Ok(out);
            }
            let b = (word >> (8 * shift)) as u8;
            if b == 0 {
                return Ok(out);
            }
            if out.len() == limit {
                return Err(format!(
                    "{what} at address {addr:#x} is longer than {limit} bytes"
                ));
            }
            out.push(b);
        }
        at = (at & !3) + 4;
    }
    // A precision that ends exactly at the buffer's end needs no terminator.
    if stop == Some(out.len()) {
        return Ok(out);
    }
    Err(format!(
        "{what} at address {addr:#x} runs past the end of its buffer without a terminating zero"
    ))
}

/// A `%s` argument below every buffer. A generic shared or local address on the
/// SPU is an offset in the block's shared memory or the thread's frame, so such an
/// argument is a shared or local array's address or a bad pointer, and 0 may also
/// be a null pointer (CUDA prints `(null)` only for that); none is printed.
fn local_string_error(addr: u64) -> String {
    let what = if addr == 0 {
        "is address 0, which is not in global memory: a null pointer, or a shared or local \
         array at offset 0 (the SPU cannot tell them apart)"
            .to_string()
    } else {
        format!(
            "at address {addr:#x} is below every buffer, so not in global memory: a shared or \
             local array's address, or a bad pointer"
        )
    };
    format!(
        "the `%s` argument {what}; the SPU's `%s` prints only strings in global memory: pass a \
         string constant or a `.global` buffer"
    )
}

/// Runs `printf` for the lanes of `exec`: the frame at `frame_bytes` holds the
/// format's address, the argument buffer's address and the result (in the
/// `limit` bytes of local memory a thread has in this run).
pub fn run(
    sink: &PrintSink,
    memory: &impl Global,
    warp: &mut Warp,
    frame_bytes: u32,
    exec: u32,
    limit: u32,
) -> Result<(), LaneFault> {
    let fault = |what: String, l: usize| (FaultKind::Printf { what }, l as u32);
    // Per lane: its result and the range of its text in `texts`.
    let mut results = Vec::new();
    let mut texts = Vec::new();
    // The lanes of a call mostly share their format and strings: each is read
    // once (memory does not change between the lanes of one instruction).
    let mut format: Option<(u64, Vec<u8>)> = None;
    let mut string: Option<(u64, Option<usize>, Vec<u8>)> = None;
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
        if format.as_ref().is_none_or(|f| f.0 != fmt) {
            let text = global_string(memory, fmt, FORMAT_LIMIT, None, "the format string")
                .map_err(|e| fault(e, l))?;
            format = Some((fmt, text));
        }
        let format = format.as_ref().map_or(&[][..], |f| &f.1[..]);
        let mut reader = Args {
            local: &local,
            base: args,
            next: 0,
            used: 0,
        };
        let start = texts.len();
        format_c_into(
            format,
            &mut reader,
            &mut |addr, stop| {
                if addr < u64::from(FIRST_BUFFER) {
                    return Err(local_string_error(addr));
                }
                if let Some((at, at_stop, s)) = &string
                    && (*at, *at_stop) == (addr, stop)
                {
                    return Ok(s.clone());
                }
                let what = "the `%s` argument";
                let s = global_string(memory, addr, STRING_LIMIT, stop, what)?;
                string = Some((addr, stop, s.clone()));
                Ok(s)
            },
            &mut texts,
        )
        .map_err(|e| fault(e, l))?;
        results.push((l, reader.used as u32, Some(start..texts.len())));
    }
    let block = warp.print_order;
    let mut log = sink.lock();
    for (l, count, text) in results {
        if let Some(t) = text {
            log.add(block, warp.index, l as u32, &texts[t]);
        }
        store_result(warp, frame_bytes + 16, l, count, limit).map_err(|e| fault(e, l))?;
    }
    Ok(())
}

/// Stores `vprintf`'s result in the frame.
fn store_result(
    warp: &mut Warp,
    addr: u32,
    lane: usize,
    value: u32,
    limit: u32,
) -> Result<(), String> {
    let at = u64::from(warp.frame_base()) + u64::from(addr);
    if at + 4 > u64::from(limit) {
        return Err(format!(
            "its result at local address {addr} is past {}",
            crate::exec::fault::local_memory(limit)
        ));
    }
    let index = (at / 4) as usize;
    crate::exec::access::grow_local(warp, index + 1, limit).map_err(|k| k.to_string())?;
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
