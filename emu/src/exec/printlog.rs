//! What `printf` calls printed in a run, kept for after it: the texts by (block,
//! warp, lane, program order), so the output is the same whatever the order units
//! ran in, within a bound of bytes per run ([`OUTPUT_LIMIT`] by default; past it the texts last in the
//! printing order are dropped and counted; a text that would go at once is not
//! stored). The formatting is in [`crate::exec::printf`].

use std::collections::BTreeMap;

/// Most bytes of output a run keeps by default: CUDA's default printf buffer
/// (`cudaLimitPrintfFifoSize`, 1 MiB); `--printf-limit` sets another.
pub const OUTPUT_LIMIT: usize = 1 << 20;

/// The largest bound `--printf-limit` takes (the texts are held in memory until
/// the run ends).
pub const MAX_OUTPUT_LIMIT: usize = 1 << 30;

/// Where a text goes in the output: block (its order in the grid), warp, lane and
/// the order calls were made in (program order within a thread).
type Key = (u64, u32, u32, u64);

/// The texts printed so far, bounded by `limit` bytes: when they exceed it the
/// last in output order go. This keeps the same texts whatever the order the
/// calls came in: a text is kept exactly when it and every text before it in the
/// output fit in the bound. Empty texts print nothing and are only counted.
#[derive(Debug)]
pub struct PrintLog {
    kept: BTreeMap<Key, Vec<u8>>,
    bytes: usize,
    calls: u64,
    seq: u64,
    dropped: u64,
    dropped_bytes: u64,
    limit: usize,
}

impl Default for PrintLog {
    fn default() -> Self {
        PrintLog {
            kept: BTreeMap::new(),
            bytes: 0,
            calls: 0,
            seq: 0,
            dropped: 0,
            dropped_bytes: 0,
            limit: OUTPUT_LIMIT,
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
}

impl Printed {
    /// The note for standard error when texts were dropped.
    pub fn dropped_note(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
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
        format!("{} bytes", crate::observe::report::grouped(n))
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
        if self.bytes + text.len() > self.limit
            && self.kept.last_key_value().is_none_or(|(k, _)| *k < key)
        {
            // Last in output order and past the bound: it would go at once.
            self.drop_text(text.len());
            return;
        }
        self.bytes += text.len();
        self.kept.insert(key, text.to_vec());
        while self.bytes > self.limit {
            match self.kept.pop_last() {
                Some((_, t)) => {
                    self.bytes -= t.len();
                    self.drop_text(t.len());
                }
                None => break,
            }
        }
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
        Printed {
            text: log.kept.into_values().flatten().collect(),
            calls: log.calls,
            dropped: log.dropped,
            dropped_bytes: log.dropped_bytes,
            limit,
        }
    }
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
        assert!(log.kept.is_empty());
        let p = log.take();
        assert_eq!((p.calls, p.dropped, p.text.len()), (1000, 0, 0));
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
