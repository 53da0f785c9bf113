//! A unit's end of a Communication Buffer link (thesis 2.2.1, Figure 2.3): the
//! buffer of the pair it currently uses. The producer end holds the buffer being
//! written, the consumer end the one being read; a switch of the link (timing
//! model) swaps the two. Each end counts its accesses, words and bit toggles for the
//! energy model.

use crate::exec::lanes::{Lanes, lanes_of};

/// One end of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// The link (index into the grid's links).
    pub link: usize,
    pub buffer: Vec<u32>,
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

    /// Reads the words of byte addresses `addrs` in the lanes of `mask` into `out`
    /// (the caller checked the addresses).
    pub fn read_lanes(&mut self, addrs: &Lanes, mask: u32, out: &mut Lanes) {
        for l in lanes_of(mask) {
            out[l] = self.read_word(addrs[l] / 4);
        }
    }

    /// Writes `values` to the byte addresses `addrs` in the lanes of `mask`, in lane
    /// order (the caller checked the addresses).
    pub fn write_lanes(&mut self, addrs: &Lanes, values: &Lanes, mask: u32) {
        for l in lanes_of(mask) {
            self.write(addrs[l] / 4, values[l]);
        }
    }

    /// Reads `n` consecutive words from word 0 (a spill).
    pub fn read_words(&mut self, n: u32) -> Vec<u32> {
        (0..n).map(|w| self.read_word(w)).collect()
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
    }

    /// Swaps buffers with the other end of the link at a switch: `self` is the
    /// producer end, `consumer` the consumer end. The consumer then reads what the
    /// producer wrote, and the producer writes into the buffer the consumer has
    /// finished with.
    pub fn switch_with(&mut self, consumer: &mut Port) {
        std::mem::swap(&mut self.buffer, &mut consumer.buffer);
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
        c.read_lanes(&addrs, 0b111, &mut out);
        assert_eq!((out[0], out[2], c.written), (7, 9, 3));
        p.write(0, 1);
        assert_eq!(c.buffer[0], 7, "the producer writes the other buffer");
        assert_eq!(p.write_toggles, 3 + 2 + 1);
        assert_eq!(c.reads, 3);
        assert_eq!(c.read_toggles, 3 + 3 + 2, "0 -> 7 -> 0 -> 9");
    }
}
