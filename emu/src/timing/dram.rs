//! Off-chip memory timing: a fixed latency behind one bandwidth-limited queue that
//! every unit shares. Time inside the queue is kept in fixed-point sub-cycles so a
//! bandwidth like 253.4 bytes per cycle is honoured exactly and deterministically.

/// Sub-cycle resolution of the queue.
const SHIFT: u32 = 16;

/// The DRAM channel.
#[derive(Debug, Clone)]
pub struct Dram {
    latency: u64,
    /// Sub-cycles one byte occupies the channel.
    ticks_per_byte: u64,
    /// Sub-cycle at which the channel is next free.
    free_at: u64,
    /// Sub-cycles the channel has been busy.
    busy_ticks: u64,
    /// Cycle the last transaction completes.
    last_done: u64,
}

impl Dram {
    pub fn new(latency_cycles: u32, bytes_per_cycle: f64) -> Dram {
        Dram {
            latency: u64::from(latency_cycles),
            ticks_per_byte: (f64::from(1u32 << SHIFT) / bytes_per_cycle)
                .round()
                .max(1.0) as u64,
            free_at: 0,
            busy_ticks: 0,
            last_done: 0,
        }
    }

    /// A channel with no latency and no bandwidth limit (functional mode).
    pub fn untimed() -> Dram {
        Dram {
            latency: 0,
            ticks_per_byte: 0,
            free_at: 0,
            busy_ticks: 0,
            last_done: 0,
        }
    }

    /// Queues a transaction of `bytes` issued at cycle `now`; returns the cycle its
    /// data arrives (loads) or is written (stores).
    pub fn request(&mut self, now: u64, bytes: u32) -> u64 {
        let start = self.free_at.max(now << SHIFT);
        let service = u64::from(bytes) * self.ticks_per_byte;
        self.free_at = start + service;
        self.busy_ticks += service;
        let done = self.free_at.div_ceil(1 << SHIFT) + self.latency;
        self.last_done = self.last_done.max(done);
        done
    }

    /// Cycle by which every queued transaction has completed.
    pub fn drained_at(&self) -> u64 {
        self.last_done
    }

    /// Cycles the channel was transferring data.
    pub fn busy_cycles(&self) -> f64 {
        self.busy_ticks as f64 / f64::from(1u32 << SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_channel_costs_latency_plus_transfer() {
        let mut d = Dram::new(100, 32.0);
        assert_eq!(d.request(10, 32), 10 + 1 + 100);
    }

    #[test]
    fn back_to_back_requests_queue_at_the_bandwidth() {
        let mut d = Dram::new(0, 16.0);
        let last = (0..100).map(|_| d.request(0, 32)).max().unwrap();
        assert_eq!(last, 200);
        assert!((d.busy_cycles() - 200.0).abs() < 1e-9);
    }
}
