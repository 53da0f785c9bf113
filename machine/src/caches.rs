//! The data caches' shape as the machine keys give it: an L1 and each L2 bank must
//! hold a whole number of sets (`cache.l*_ways` lines of `cache.line_bytes`), at
//! least one, or the configured size would not be the cache simulated.

use crate::{Machine, MachineError};

/// Sets of a cache of `kib` KiB in `banks` banks of `ways` lines of `line`
/// bytes per set: at least one; none without the cache (`kib` 0).
fn sets(kib: u32, ways: u32, line: u32, banks: u32) -> u32 {
    if kib == 0 {
        return 0;
    }
    let lines = u64::from(kib) * 1024 / u64::from(line.max(1)) / u64::from(banks.max(1));
    u32::try_from((lines / u64::from(ways.max(1))).max(1)).unwrap_or(u32::MAX)
}

impl Machine {
    /// The sets of each unit's L1 (0 without one).
    pub fn l1_sets(&self) -> u32 {
        sets(self.l1_kib, self.l1_ways, self.line_bytes, 1)
    }

    /// The sets of each of the L2's banks (0 without an L2).
    pub fn l2_bank_sets(&self) -> u32 {
        sets(self.l2_kib, self.l2_ways, self.line_bytes, self.l2_banks)
    }

    /// Refuses an L1, or an L2 bank, smaller than one set, naming the keys that
    /// make a set and the smallest size that holds one. A size of 0 (no cache) is
    /// always valid.
    pub fn check_caches(&self) -> Result<(), MachineError> {
        let line = u64::from(self.line_bytes);
        let caches = [
            (
                "cache.l1_kib",
                self.l1_kib,
                "of the L1",
                format!(
                    "`cache.l1_ways` ({}) x `cache.line_bytes` ({line})",
                    self.l1_ways
                ),
                u64::from(self.l1_ways) * line,
            ),
            (
                "cache.l2_kib",
                self.l2_kib,
                "for each of the L2's banks",
                format!(
                    "`cache.l2_banks` ({}) x `cache.l2_ways` ({}) x `cache.line_bytes` ({line})",
                    self.l2_banks, self.l2_ways
                ),
                u64::from(self.l2_banks) * u64::from(self.l2_ways) * line,
            ),
        ];
        for (key, kib, place, factors, set_bytes) in caches {
            let bytes = u64::from(kib) * 1024;
            if kib == 0 || (bytes >= set_bytes && bytes % set_bytes == 0) {
                continue;
            }
            let why = if bytes < set_bytes {
                format!(
                    "{kib} KiB is smaller than one set {place} ({factors} = {set_bytes} bytes); give `{key}` at least {} (or 0 for no cache), or make a set smaller",
                    set_bytes.div_ceil(1024)
                )
            } else {
                // The nearest sizes in whole KiB that hold whole sets.
                let whole = |k: &u64| (k * 1024) % set_bytes == 0;
                let below = (1..u64::from(kib)).rev().find(whole);
                let above = (u64::from(kib) + 1..=u64::from(kib) + set_bytes).find(whole);
                let sizes = match (below, above) {
                    (Some(b), Some(a)) => format!("{b} or {a}"),
                    (None, Some(a)) => a.to_string(),
                    _ => "a multiple of it".to_string(),
                };
                format!(
                    "{kib} KiB is not a whole number of sets {place} ({factors} = {set_bytes} bytes: {:.2} sets), and a cache holds whole sets; give `{key}` {sizes} (or 0 for no cache), or change the ways",
                    bytes as f64 / set_bytes as f64
                )
            };
            return Err(MachineError::BadValue {
                key: key.to_string(),
                why,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::preset;

    /// A cache smaller than one set is refused, naming the keys and the smallest
    /// size; that size itself is accepted.
    #[test]
    fn a_cache_smaller_than_one_set_is_refused() {
        let mut m = preset("gtx480").unwrap();
        assert_eq!(m.check_caches(), Ok(()));
        // 12 banks x 8 ways x 128 bytes = 12 KiB.
        m.set("cache.l2_kib=11").unwrap();
        let e = m.check_caches().unwrap_err().to_string();
        assert!(
            e.contains("`cache.l2_kib`")
                && e.contains("`cache.l2_banks` (12) x `cache.l2_ways` (8) x `cache.line_bytes` (128) = 12288 bytes")
                && e.contains("at least 12 "),
            "{e}"
        );
        m.set("cache.l2_kib=12").unwrap();
        assert_eq!(m.check_caches(), Ok(()));
        // 64 ways x 512 bytes = 32 KiB.
        m.set("cache.line_bytes=512").unwrap();
        m.set("cache.l2_kib=0").unwrap();
        m.set("cache.l1_ways=64").unwrap();
        let e = m.check_caches().unwrap_err().to_string();
        assert!(
            e.contains("`cache.l1_kib`: 16 KiB is smaller than one set of the L1")
                && e.contains("at least 32 "),
            "{e}"
        );
        m.set("cache.l1_kib=0").unwrap();
        assert_eq!(m.check_caches(), Ok(()));
    }

    /// A cache that is not a whole number of sets is refused (the sets were
    /// rounded down without a word), naming the nearest sizes that are.
    #[test]
    fn a_cache_of_part_of_a_set_is_refused() {
        let mut m = preset("gtx480").unwrap();
        // 3 ways x 128 bytes = 384 bytes: 16 KiB is 42.67 sets.
        m.set("cache.l1_ways=3").unwrap();
        let e = m.check_caches().unwrap_err().to_string();
        assert!(
            e.contains("`cache.l1_kib`: 16 KiB is not a whole number of sets of the L1")
                && e.contains("384 bytes: 42.67 sets")
                && e.contains("give `cache.l1_kib` 15 or 18"),
            "{e}"
        );
        m.set("cache.l1_kib=15").unwrap();
        assert_eq!(m.check_caches(), Ok(()));
    }
}
