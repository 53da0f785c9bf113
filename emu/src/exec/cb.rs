//! A unit's end of a Communication Buffer link (thesis 2.2.1, Figure 2.3): the
//! buffer of the pair it currently uses. The producer end holds the buffer being
//! written, the consumer end the one being read; a switch of the link (timing
//! model) swaps the two. Each end counts its accesses, words and bit toggles for the
//! energy model. Read toggles are counted per reader (each warp, and the unit's
//! engine), between consecutive words that reader takes from the port in its own
//! program order: the same count in every execution mode and for any thread count.
//!
//! Each buffer carries one bit per word saying whether the producer has written the
//! word since the buffer last became the producer's (the CB checker): a read of a
//! word without its bit is a read of stale data, which a missing sync causes.

use crate::exec::lanes::{Lanes, lanes_of};

/// The reader index of the unit's DMA engine or virtual IU in [`Port::read_word`].
pub const ENGINE: usize = 0;

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
    /// Warp accesses through this end (reads and writes of code).
    pub accesses: u64,
    /// Bits that changed between consecutive words one reader read through this
    /// end (see [`Port::read_word`]).
    pub read_toggles: u64,
    /// The last word each reader read: [`ENGINE`] and warp `w` at `w + 1`.
    last_read: Vec<u32>,
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
            accesses: 0,
            read_toggles: 0,
            write_toggles: 0,
            last_read: Vec::new(),
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

    /// Reads the words of byte addresses `addrs` in the lanes of `mask` into those
    /// lanes of `out`, leaving the others (the caller checked the addresses). With the checker on, a lane reading a
    /// word nobody wrote since the last switch stops the read: `Err(lane)`.
    /// `warp` is the reader's index in its block.
    #[inline(always)]
    pub fn read_lanes(
        &mut self,
        addrs: &Lanes,
        mask: u32,
        out: &mut Lanes,
        warp: u32,
    ) -> Result<(), u32> {
        if self.checked {
            for l in lanes_of(mask) {
                if !self.holds(addrs[l] / 4) {
                    return Err(l as u32);
                }
            }
        }
        self.accesses += 1;
        // `read_word` lane by lane, with the counts kept in locals.
        let reader = warp as usize + 1;
        if reader >= self.last_read.len() {
            self.last_read.resize(reader + 1, 0);
        }
        let (mut last, mut reads, mut toggles) = (self.last_read[reader], 0, 0);
        for l in lanes_of(mask) {
            let v = self.buffer[(addrs[l] / 4) as usize];
            toggles += u64::from((v ^ last).count_ones());
            last = v;
            reads += 1;
            out[l] = v;
        }
        self.last_read[reader] = last;
        self.reads += reads;
        self.read_toggles += toggles;
        Ok(())
    }

    /// Writes `values` to the byte addresses `addrs` in the lanes of `mask`, in lane
    /// order (the caller checked the addresses).
    #[inline(always)]
    pub fn write_lanes(&mut self, addrs: &Lanes, values: &Lanes, mask: u32) {
        self.accesses += 1;
        // `write` lane by lane, with the counts kept in locals.
        let (mut writes, mut toggles, mut written) = (0, 0, self.written);
        for l in lanes_of(mask) {
            let (word, value) = (addrs[l] / 4, values[l]);
            let cell = &mut self.buffer[word as usize];
            toggles += u64::from((*cell ^ value).count_ones());
            *cell = value;
            writes += 1;
            written = written.max(word + 1);
            self.valid[(word / 64) as usize] |= 1 << (word % 64);
        }
        self.writes += writes;
        self.write_toggles += toggles;
        self.written = written;
    }

    /// Reads `n` consecutive words from word 0 (a spill), with the bits saying
    /// which of them hold written data.
    pub fn read_words(&mut self, n: u32) -> (Vec<u32>, Vec<u64>) {
        let words = (0..n).map(|w| self.read_word(w, ENGINE)).collect();
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

    /// Reads one word for `reader` ([`ENGINE`], or warp `w` of the block as
    /// `w + 1`; the caller checked the index). Its toggles are the bits that
    /// changed since the word the same reader read last: the data path from the
    /// buffer to one warp's registers (or the engine) carries that reader's words
    /// in its program order, which every execution mode knows, whereas the
    /// interleaving of warps at the port is a timing detail.
    #[inline]
    pub fn read_word(&mut self, word: u32, reader: usize) -> u32 {
        let v = self.buffer[word as usize];
        if reader >= self.last_read.len() {
            self.last_read.resize(reader + 1, 0);
        }
        let last = &mut self.last_read[reader];
        self.reads += 1;
        self.read_toggles += u64::from((v ^ *last).count_ones());
        *last = v;
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
            c.read_lanes(&addrs, 0b111, &mut out, 0),
            Err(1),
            "word 1 unwritten"
        );
        assert_eq!(c.reads, 0, "a refused read reads nothing");
        c.checked = false;
        c.read_lanes(&addrs, 0b111, &mut out, 0).unwrap();
        assert_eq!((out[0], out[2], c.written), (7, 9, 3));
        p.write(0, 1);
        assert_eq!(c.buffer[0], 7, "the producer writes the other buffer");
        assert_eq!(p.write_toggles, 3 + 2 + 1);
        assert_eq!(c.reads, 3);
        assert_eq!(c.read_toggles, 3 + 3 + 2, "0 -> 7 -> 0 -> 9");
    }

    #[test]
    fn read_toggles_follow_each_reader_not_the_interleaving() {
        let mut c = Port::new(0, 4);
        c.checked = false;
        c.buffer.copy_from_slice(&[0b1, 0b10, 0b100, 0b1000]);
        let mut out = [0; 32];
        let at = |w: u32| -> Lanes { std::array::from_fn(|_| 4 * w) };
        // Warp 0 reads words 0 then 2, warp 1 reads 1 then 3; the order the two
        // interleave in does not change the count.
        let mut counts = Vec::new();
        for order in [
            [(0, 0), (0, 2), (1, 1), (1, 3)],
            [(0, 0), (1, 1), (0, 2), (1, 3)],
        ] {
            let mut p = c.clone();
            for (warp, word) in order {
                p.read_lanes(&at(word), 1, &mut out, warp).unwrap();
            }
            counts.push(p.read_toggles);
        }
        // Warp 0: 0 -> 0b1 -> 0b100 (1 + 2); warp 1: 0 -> 0b10 -> 0b1000 (1 + 2).
        assert_eq!(counts, [6, 6]);
        // The engine is a reader of its own.
        let mut p = c.clone();
        p.read_lanes(&at(3), 1, &mut out, 0).unwrap();
        p.read_word(3, ENGINE);
        assert_eq!(p.read_toggles, 1 + 1);
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
