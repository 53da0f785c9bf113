//! A unit's end of a Communication Buffer link (thesis 2.2.1, Figure 2.3): the
//! buffer of the pair it currently uses. The producer end holds the buffer being
//! written, the consumer end the one being read; a switch of the link (timing
//! model) swaps the two. Each end counts its accesses, words and bit toggles for the
//! energy model.
//!
//! Each buffer carries one bit per word saying whether the producer has written the
//! word since the buffer last became the producer's (the CB checker): a read of a
//! word without its bit is a read of stale data, which a missing sync causes.

use crate::exec::lanes::{Lanes, lanes_of};

/// One end of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// The link (index into the grid's links).
    pub link: usize,
    pub buffer: Vec<u32>,
    /// One bit per word of `buffer`: written by the producer since the buffer last
    /// became the producer's. Swaps with the buffer at a switch.
    valid: Vec<u64>,
    /// Code reads of words without their bit are errors (the CB checker).
    pub checked: bool,
    /// Producer end: words written since the last switch (highest word index
    /// written plus one). Consumer end: what the producer had written when the pair
    /// last switched (what a spill moves).
    pub written: u32,
    /// Words read and written through this end.
    pub reads: u64,
    pub writes: u64,
    /// Bits that changed between consecutive words read through this end.
    pub read_toggles: u64,
    last_read: u32,
    /// Bits that flipped in buffer cells on writes.
    pub write_toggles: u64,
}

impl Port {
    pub fn new(link: usize, words: usize) -> Port {
        Port {
            link,
            buffer: vec![0; words],
            valid: vec![0; words.div_ceil(64)],
            checked: true,
            written: 0,
            reads: 0,
            writes: 0,
            read_toggles: 0,
            write_toggles: 0,
            last_read: 0,
        }
    }

    /// Words in the buffer.
    pub fn words(&self) -> u32 {
        self.buffer.len() as u32
    }

    /// True when word `word` holds data the producer wrote since the buffer last
    /// became the producer's.
    #[inline]
    pub fn holds(&self, word: u32) -> bool {
        self.valid[(word / 64) as usize] >> (word % 64) & 1 != 0
    }

    /// Words of the buffer that hold written data.
    pub fn held(&self) -> u32 {
        self.valid.iter().map(|w| w.count_ones()).sum()
    }

    /// Reads the words of byte addresses `addrs` in the lanes of `mask` into `out`
    /// (the caller checked the addresses). With the checker on, a lane reading a
    /// word nobody wrote since the last switch stops the read: `Err(lane)`.
    #[inline]
    pub fn read_lanes(&mut self, addrs: &Lanes, mask: u32, out: &mut Lanes) -> Result<(), u32> {
        if self.checked {
            for l in lanes_of(mask) {
                if !self.holds(addrs[l] / 4) {
                    return Err(l as u32);
                }
            }
        }
        for l in lanes_of(mask) {
            out[l] = self.read_word(addrs[l] / 4);
        }
        Ok(())
    }

    /// Writes `values` to the byte addresses `addrs` in the lanes of `mask`, in lane
    /// order (the caller checked the addresses).
    pub fn write_lanes(&mut self, addrs: &Lanes, values: &Lanes, mask: u32) {
        for l in lanes_of(mask) {
            self.write(addrs[l] / 4, values[l]);
        }
    }

    /// Reads `n` consecutive words from word 0 (a spill), with the bits saying
    /// which of them hold written data.
    pub fn read_words(&mut self, n: u32) -> (Vec<u32>, Vec<u64>) {
        let words = (0..n).map(|w| self.read_word(w)).collect();
        let mut valid = self.valid[..n.div_ceil(64) as usize].to_vec();
        if let Some(last) = valid.last_mut()
            && n % 64 != 0
        {
            *last &= (1 << (n % 64)) - 1;
        }
        (words, valid)
    }

    /// Writes back spilled `words` from word 0 (a restore): the words the spill
    /// found written are written again, the others stay unwritten.
    pub fn restore_words(&mut self, words: &[u32], valid: &[u64]) {
        for (i, &w) in words.iter().enumerate() {
            self.write(i as u32, w);
        }
        for (mine, &theirs) in self.valid.iter_mut().zip(valid) {
            *mine = theirs;
        }
        for mine in self.valid.iter_mut().skip(valid.len()) {
            *mine = 0;
        }
    }

    /// Reads one word (the caller checked the index).
    pub fn read_word(&mut self, word: u32) -> u32 {
        let v = self.buffer[word as usize];
        self.reads += 1;
        self.read_toggles += u64::from((v ^ self.last_read).count_ones());
        self.last_read = v;
        v
    }

    /// Writes one word (the caller checked the index).
    pub fn write(&mut self, word: u32, value: u32) {
        let cell = &mut self.buffer[word as usize];
        self.write_toggles += u64::from((*cell ^ value).count_ones());
        *cell = value;
        self.writes += 1;
        self.written = self.written.max(word + 1);
        self.valid[(word / 64) as usize] |= 1 << (word % 64);
    }

    /// Swaps buffers with the other end of the link at a switch: `self` is the
    /// producer end, `consumer` the consumer end. The consumer then reads what the
    /// producer wrote, and the producer writes into the buffer the consumer has
    /// finished with.
    pub fn switch_with(&mut self, consumer: &mut Port) {
        std::mem::swap(&mut self.buffer, &mut consumer.buffer);
        std::mem::swap(&mut self.valid, &mut consumer.valid);
        self.valid.fill(0);
        consumer.written = self.written;
        self.written = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_hands_the_written_buffer_to_the_consumer() {
        let (mut p, mut c) = (Port::new(0, 8), Port::new(0, 8));
        p.write(0, 7);
        p.write(2, 9);
        p.switch_with(&mut c);
        let mut out = [0; 32];
        let addrs: Lanes = std::array::from_fn(|l| 4 * l as u32);
        assert_eq!(
            c.read_lanes(&addrs, 0b111, &mut out),
            Err(1),
            "word 1 unwritten"
        );
        assert_eq!(c.reads, 0, "a refused read reads nothing");
        c.checked = false;
        c.read_lanes(&addrs, 0b111, &mut out).unwrap();
        assert_eq!((out[0], out[2], c.written), (7, 9, 3));
        p.write(0, 1);
        assert_eq!(c.buffer[0], 7, "the producer writes the other buffer");
        assert_eq!(p.write_toggles, 3 + 2 + 1);
        assert_eq!(c.reads, 3);
        assert_eq!(c.read_toggles, 3 + 3 + 2, "0 -> 7 -> 0 -> 9");
    }

    #[test]
    fn the_checker_tracks_words_written_since_the_last_switch() {
        let (mut p, mut c) = (Port::new(0, 100), Port::new(0, 100));
        p.write(70, 1);
        assert!(p.holds(70) && !c.holds(70));
        p.switch_with(&mut c);
        assert!(c.holds(70) && !c.holds(69) && !p.holds(70));
        assert_eq!(c.held(), 1);
        // The next switch hands the consumer the other buffer, which holds only
        // what the producer wrote since.
        p.write(3, 2);
        p.switch_with(&mut c);
        assert!(c.holds(3) && !c.holds(70));
        assert_eq!(p.held(), 0, "the producer's new buffer starts unwritten");
    }

    #[test]
    fn spills_and_restores_keep_which_words_were_written() {
        let (mut p, mut c) = (Port::new(0, 70), Port::new(0, 70));
        p.write(1, 5);
        p.write(66, 6);
        p.switch_with(&mut c);
        let (words, valid) = c.read_words(70);
        assert_eq!((words.len(), words[66]), (70, 6));
        let mut r = Port::new(1, 70);
        r.write(2, 9);
        r.restore_words(&words, &valid);
        assert!(r.holds(1) && r.holds(66) && !r.holds(2) && !r.holds(0));
        let (_, part) = c.read_words(66);
        assert_eq!(part, vec![2, 0], "bits past the spilled words are dropped");
    }
}
