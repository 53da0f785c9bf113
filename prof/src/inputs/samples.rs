//! Checking a statistics file's sample series against its run, as the emulator
//! records them: one sample per interval of `samples.interval_cycles` (the last may
//! be partial; an interval doubled to keep the count bounded is written doubled),
//! every series the same length, and each counter's samples adding up to its total.

use super::{Damaged, damaged, known};
use spu_emu::observe::stats::Stats;

/// Checks `s.samples`, if any; `components` are the counter names the emulator writes.
pub(super) fn check_samples(s: &Stats, components: &[&str]) -> Result<(), Damaged> {
    let Some(samples) = &s.samples else {
        return Ok(());
    };
    let interval = samples.interval_cycles;
    if interval == 0 {
        return Err(damaged("`samples.interval_cycles` is 0"));
    }
    known("sampled counter", samples.components.keys(), components)?;
    let mut series = samples.components.iter();
    let Some((name, n)) = series.next().map(|(k, v)| (k, v.len())) else {
        return Ok(());
    };
    if let Some((other, m)) = series.map(|(k, v)| (k, v.len())).find(|(_, m)| *m != n) {
        return Err(damaged(format!(
            "the sample series have different lengths (`{name}` has {n}, `{other}` {m}); \
             every counter needs one sample per interval"
        )));
    }
    let intervals = s.cycles.div_ceil(interval);
    let n = n as u64;
    if n > intervals {
        return Err(damaged(format!(
            "{n} samples of {interval} cycles cover more than the run's {} cycles",
            s.cycles
        )));
    }
    if n < intervals {
        return Err(damaged(format!(
            "{n} samples of {interval} cycles cover only {} of the run's {} cycles; \
             the run has {intervals} intervals of {interval} cycles (the last may be partial)",
            u128::from(n) * u128::from(interval),
            s.cycles
        )));
    }
    // Every sampled counter, the idle and busy unit-cycles included, is the
    // difference of cumulative counts at the interval's ends, so its samples add
    // up to the run's total.
    for (name, series) in &samples.components {
        let sum: u128 = series.iter().map(|&v| u128::from(v)).sum();
        let total = s.counters.get(name).copied().unwrap_or(0);
        if sum != u128::from(total) {
            return Err(damaged(format!(
                "the `{name}` samples add up to {sum}, but `counters.{name}` is {total}"
            )));
        }
    }
    Ok(())
}
