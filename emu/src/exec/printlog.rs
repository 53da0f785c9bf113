//! What `printf` calls printed in a run, kept for after it: the texts by (block,
//! warp, lane, program order), so the output is the same whatever the order units
//! ran in, within [`OUTPUT_LIMIT`] bytes per run (past it the texts last in the
//! printing order are dropped and counted). The formatting is in
//! [`crate::exec::printf`].

use std::collections::BTreeMap;

/// Most bytes of output a run keeps (CUDA's printf buffer holds 1 MiB by default).
pub const OUTPUT_LIMIT: usize = 1 << 20;

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
    pub(super) fn add(&mut self, block: u64, warp: u32, lane: u32, text: Vec<u8>) {
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
        self.lock().take()
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
        log.add(3, 0, 0, big.clone());
        log.add(2, 0, 0, big.clone());
        log.add(1, 0, 0, big.clone());
        let p = log.take();
        assert_eq!((p.calls, p.dropped, p.text.len()), (3, 1, OUTPUT_LIMIT));
    }
}
