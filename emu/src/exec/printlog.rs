//! What `printf` calls printed in a run, kept for after it: the texts by (block,
//! warp, lane, program order), so the output is the same whatever the order units
//! ran in, within a bound of bytes per run ([`OUTPUT_LIMIT`] by default; past it the texts last in the
//! printing order are dropped and counted; a text that would go at once is not
//! stored). The formatting is in [`crate::exec::printf`].

use std::collections::BinaryHeap;

/// Most bytes of output a run keeps by default: CUDA's default printf buffer
/// (`cudaLimitPrintfFifoSize`, 1 MiB); `--printf-limit` sets another.
pub const OUTPUT_LIMIT: usize = 1 << 20;

/// The largest bound `--printf-limit` takes, 32 MiB. The texts are held in memory
/// until the run ends: about one byte per kept byte, plus a [`Kept`] record
/// (32 bytes) per kept text, so a run whose calls print one byte each holds about
/// 34 bytes per kept byte (about 1.1 GiB at this bound).
pub const MAX_OUTPUT_LIMIT: usize = 1 << 25;

/// Dead bytes (of dropped texts) the text buffer holds at most past an eighth of
/// its live bytes before it is compacted.
const DEAD_SLACK: usize = 1 << 16;

/// One kept text: where it goes in the output (block, its order in the grid;
/// warp; lane; the order calls were made in, program order within a thread) and
/// where its bytes are in [`PrintLog::buf`]. Ordered by place in the output only.
#[derive(Debug, Clone, Copy)]
struct Kept {
    block: u64,
    seq: u64,
    warp: u32,
    lane: u32,
    off: u32,
    len: u32,
}

impl Kept {
    fn key(&self) -> (u64, u32, u32, u64) {
        (self.block, self.warp, self.lane, self.seq)
    }
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Kept {}
impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Kept {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The texts printed so far, bounded by `limit` bytes: when they exceed it the
/// last in output order go. This keeps the same texts whatever the order the
/// calls came in: a text is kept exactly when it and every text before it in the
/// output fit in the bound. Empty texts print nothing and are only counted.
///
/// The bytes are stored compactly: one buffer the texts are appended to (grown
/// by a sixteenth at a time, compacted when dropped texts leave more than an
/// eighth of it dead), and a max-heap of [`Kept`] records, so the last text in
/// output order is the one to drop.
#[derive(Debug)]
pub struct PrintLog {
    buf: Vec<u8>,
    kept: BinaryHeap<Kept>,
    bytes: usize,
    calls: u64,
    seq: u64,
    dropped: u64,
    dropped_bytes: u64,
    limit: usize,
    starved: u64,
}

impl Default for PrintLog {
    fn default() -> Self {
        PrintLog {
            buf: Vec::new(),
            kept: BinaryHeap::new(),
            bytes: 0,
            calls: 0,
            seq: 0,
            dropped: 0,
            dropped_bytes: 0,
            limit: OUTPUT_LIMIT,
            starved: 0,
        }
    }
}

/// What a run printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printed {
    /// The texts in output order.
    pub text: Vec<u8>,
    /// Calls (one per thread) made, and how many of their texts (and bytes) were
    /// dropped past `limit` bytes.
    pub calls: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
    pub limit: usize,
    /// Of the dropped texts, those the host had no memory for (a memory limit).
    pub starved: u64,
}

impl Printed {
    /// The note for standard error when texts were dropped.
    pub fn dropped_note(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            if self.starved > 0 {
                return format!(
                    "warning: {} of {} `printf` texts were dropped because this process could not allocate memory to keep them (a memory limit such as `ulimit -v`); raise the limit, or print less",
                    self.dropped, self.calls
                );
            }
            format!(
                "warning: `printf` output is limited to {} per run: the last {} of {} texts (in output order, {} in all) were dropped; raise the limit with `--printf-limit BYTES` (at most {}), or print less, e.g. from fewer threads",
                bytes_text(self.limit as u64),
                self.dropped,
                self.calls,
                bytes_text(self.dropped_bytes),
                bytes_text(MAX_OUTPUT_LIMIT as u64)
            )
        })
    }
}

/// A number of bytes in words: "1 GiB", "1 MiB", "1 byte", "1 500 bytes".
fn bytes_text(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{} bytes", spu_io::numbers::grouped(n))
    }
}

impl PrintLog {
    pub(super) fn add(&mut self, block: u64, warp: u32, lane: u32, text: &[u8]) {
        self.calls += 1;
        self.seq += 1;
        if text.is_empty() {
            return;
        }
        let key = (block, warp, lane, self.seq);
        // Texts after this one in output order go first to make room; if it
        // still does not fit, it is the last in output order and goes itself.
        while self.bytes + text.len() > self.limit
            && self.kept.peek().is_some_and(|k| k.key() > key)
        {
            if let Some(k) = self.kept.pop() {
                self.bytes -= k.len as usize;
                self.drop_text(k.len as usize);
            }
        }
        if self.bytes + text.len() > self.limit {
            self.drop_text(text.len());
            return;
        }
        if self.buf.len() - self.bytes > self.bytes / 8 + DEAD_SLACK {
            self.compact();
        }
        // Room the host cannot give (a memory limit) drops the text, as the
        // bound does, rather than ending the run.
        let room = self.kept.len() < self.kept.capacity()
            || self
                .kept
                .try_reserve_exact(self.kept.len() / 16 + 64)
                .is_ok();
        if !room || !grow(&mut self.buf, text.len()) {
            self.starved += 1;
            self.drop_text(text.len());
            return;
        }
        let off = self.buf.len();
        self.buf.extend_from_slice(text);
        // The bound (at most MAX_OUTPUT_LIMIT) keeps offsets and lengths in u32.
        self.kept.push(Kept {
            block,
            seq: self.seq,
            warp,
            lane,
            off: off as u32,
            len: text.len() as u32,
        });
        self.bytes += text.len();
    }

    /// Moves the kept texts' bytes together, in place, dropping the dead ones.
    fn compact(&mut self) {
        let mut kept = std::mem::take(&mut self.kept).into_vec();
        kept.sort_unstable_by_key(|k| k.off);
        let mut end = 0;
        for k in &mut kept {
            let (off, len) = (k.off as usize, k.len as usize);
            self.buf.copy_within(off..off + len, end);
            k.off = end as u32;
            end += len;
        }
        self.buf.truncate(end);
        self.kept = BinaryHeap::from(kept);
    }

    fn drop_text(&mut self, bytes: usize) {
        self.dropped += 1;
        self.dropped_bytes += bytes as u64;
    }

    /// Takes what was printed, leaving the log empty (its bound stays).
    pub fn take(&mut self) -> Printed {
        let limit = self.limit;
        let log = std::mem::take(self);
        self.limit = limit;
        let mut text = Vec::with_capacity(log.bytes);
        for k in log.kept.into_sorted_vec() {
            text.extend_from_slice(&log.buf[k.off as usize..][..k.len as usize]);
        }
        Printed {
            text,
            calls: log.calls,
            dropped: log.dropped,
            dropped_bytes: log.dropped_bytes,
            limit,
            starved: log.starved,
        }
    }
}

/// Makes room in `buf` for `more` bytes, growing it by a sixteenth at least,
/// not doubling it, so its capacity stays close to what it holds; false when
/// the host cannot give it.
fn grow(buf: &mut Vec<u8>, more: usize) -> bool {
    buf.capacity() - buf.len() >= more
        || buf
            .try_reserve_exact(more.max(buf.len() / 16 + 4096))
            .is_ok()
}

/// A shared [`PrintLog`]: every unit of a run adds to it.
#[derive(Debug, Clone, Default)]
pub struct PrintSink(std::sync::Arc<std::sync::Mutex<PrintLog>>);

impl PrintSink {
    /// Takes what was printed, leaving the log empty.
    pub fn take(&self) -> Printed {
        self.lock().take()
    }

    /// Keeps at most `limit` bytes of output from now on.
    pub fn set_limit(&self, limit: usize) {
        self.lock().limit = limit;
    }

    /// The log, to add to (also from a poisoned lock: the texts stay valid).
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, PrintLog> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
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
        log.add(3, 0, 0, &big);
        log.add(2, 0, 0, &big);
        log.add(1, 0, 0, &big);
        let p = log.take();
        assert_eq!((p.calls, p.dropped, p.text.len()), (3, 1, OUTPUT_LIMIT));
        assert_eq!(p.dropped_bytes, OUTPUT_LIMIT as u64 / 2);
    }

    #[test]
    fn empty_texts_are_counted_but_not_kept() {
        let mut log = PrintLog::default();
        for t in 0..1000 {
            log.add(0, 0, t, b"");
        }
        assert!(log.kept.is_empty() && log.buf.is_empty());
        let p = log.take();
        assert_eq!((p.calls, p.dropped, p.text.len()), (1000, 0, 0));
    }

    #[test]
    fn kept_texts_cost_about_one_byte_each() {
        // In output order: the buffer holds what is kept and little more.
        let mut log = PrintLog {
            limit: 4_000_000,
            ..PrintLog::default()
        };
        for i in 0..50_000u32 {
            log.add(0, 0, i, &[b'x'; 100]);
        }
        assert_eq!(log.bytes, 4_000_000);
        assert!(
            log.buf.capacity() <= 4_000_000 / 10 * 11 + 8192,
            "{}",
            log.buf.capacity()
        );
        assert!(
            log.kept.capacity() <= 40_000 / 10 * 11 + 64,
            "{}",
            log.kept.capacity()
        );
        assert_eq!(std::mem::size_of::<Kept>(), 32);

        // Out of output order, dropping texts already kept: dead bytes are
        // compacted away before they reach an eighth of the live ones.
        let mut log = PrintLog {
            limit: 4_000_000,
            ..PrintLog::default()
        };
        for i in 0..60_000u64 {
            log.add(6 - i % 7, (i / 7) as u32, 0, &[b'x'; 100]);
        }
        assert_eq!(log.bytes, 4_000_000);
        assert!(
            log.buf.capacity() <= 4_000_000 / 4 * 5 + 2 * DEAD_SLACK,
            "{}",
            log.buf.capacity()
        );
        let p = log.take();
        assert_eq!(p.text.len(), 4_000_000);
        assert_eq!((p.calls, p.dropped_bytes), (60_000, 2_000_000));
    }

    #[test]
    fn the_kept_texts_are_the_first_in_output_order_after_compaction() {
        let mut log = PrintLog {
            limit: 1000,
            ..PrintLog::default()
        };
        // Later blocks first, then earlier ones push them out (compacting).
        for block in (0..200u64).rev() {
            for lane in 0..3 {
                log.add(block, 0, lane, format!("{block:03}{lane}").as_bytes());
            }
        }
        let p = log.take();
        let want: String = (0..84u64)
            .flat_map(|b| (0..3).map(move |l| format!("{b:03}{l}")))
            .collect::<String>()[..1000]
            .to_string();
        assert_eq!(String::from_utf8(p.text).unwrap(), want);
        assert_eq!(p.dropped_bytes, 600 * 4 - 1000);
    }

    #[test]
    fn a_text_past_a_full_bound_is_dropped_and_the_note_says_how_to_raise_it() {
        let mut log = PrintLog {
            limit: 10,
            ..PrintLog::default()
        };
        for t in 0..5 {
            log.add(0, 0, t, b"abcd");
        }
        // Only the first two are kept, and the log holds no more.
        assert_eq!(log.kept.len(), 2);
        let p = log.take();
        assert_eq!(p.text, b"abcdabcd");
        assert_eq!((p.calls, p.dropped, p.dropped_bytes), (5, 3, 12));
        assert_eq!(log.limit, 10);
        let note = p.dropped_note().unwrap();
        assert!(note.contains("limited to 10 bytes per run: the last 3 of 5 texts (in output order, 12 bytes in all) were dropped; raise the limit with `--printf-limit BYTES`"), "{note}");
    }
}
