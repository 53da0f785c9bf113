//! Communication Buffers: one ping-pong pair per west->east or north->south link
//! between neighbouring units (thesis 2.2.1, Figure 2.3). The producer writes one
//! buffer while the consumer reads the other; a rendezvous on the link (or a global
//! blocksync) switches them. Each link counts accesses, words, bit toggles and the
//! syncs each side has made, for the energy model and for deadlock reports.

use crate::load::plan::Geometry;
use spu_isa::Side;

/// Which end of a link a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Producer,
    Consumer,
}

/// One link and its pair of buffers.
#[derive(Debug, Clone)]
pub struct Link {
    /// Unit indices at the two ends.
    pub producer: usize,
    pub consumer: usize,
    buffers: [Vec<u32>; 2],
    /// Index of the buffer the producer writes.
    write: usize,
    /// Words written into each buffer since it last became the write buffer
    /// (highest word index written plus one).
    written: [u32; 2],
    waiting: [bool; 2],
    /// Arrivals each end has made (producer, consumer), for deadlock reports.
    pub arrivals: [u64; 2],
    pub switches: u64,
    pub reads: u64,
    pub writes: u64,
    /// Bits that flipped in buffer cells on writes.
    pub write_toggles: u64,
    /// Bits that changed between consecutive words on the read port.
    pub read_toggles: u64,
    last_read: u32,
}

impl Link {
    pub fn new(producer: usize, consumer: usize, words: usize) -> Link {
        Link {
            producer,
            consumer,
            buffers: [vec![0; words], vec![0; words]],
            write: 0,
            written: [0; 2],
            waiting: [false; 2],
            arrivals: [0; 2],
            switches: 0,
            reads: 0,
            writes: 0,
            write_toggles: 0,
            read_toggles: 0,
            last_read: 0,
        }
    }

    /// Words in one buffer.
    pub fn words(&self) -> u32 {
        self.buffers[0].len() as u32
    }

    /// Reads a word of the consumer's buffer (the caller checked the index).
    pub fn read(&mut self, word: u32) -> u32 {
        let v = self.buffers[1 - self.write][word as usize];
        self.reads += 1;
        self.read_toggles += u64::from((v ^ self.last_read).count_ones());
        self.last_read = v;
        v
    }

    /// Writes a word of the producer's buffer (the caller checked the index).
    pub fn write(&mut self, word: u32, value: u32) {
        let cell = &mut self.buffers[self.write][word as usize];
        self.write_toggles += u64::from((*cell ^ value).count_ones());
        *cell = value;
        self.writes += 1;
        let w = &mut self.written[self.write];
        *w = (*w).max(word + 1);
    }

    /// Words the producer wrote into the buffer the consumer now reads (what a
    /// spill moves).
    pub fn readable_words(&self) -> u32 {
        self.written[1 - self.write]
    }

    /// Records an arrival; true when it completes a rendezvous (the caller then
    /// switches the link and releases both ends).
    pub fn arrive(&mut self, end: End) -> bool {
        let (me, other) = match end {
            End::Producer => (0, 1),
            End::Consumer => (1, 0),
        };
        self.waiting[me] = true;
        self.arrivals[me] += 1;
        if self.waiting[other] {
            self.waiting = [false; 2];
            true
        } else {
            false
        }
    }

    /// Takes back an arrival that will never be matched (a virtual IU whose
    /// producer has finished).
    pub fn withdraw(&mut self, end: End) {
        let i = match end {
            End::Producer => 0,
            End::Consumer => 1,
        };
        if self.waiting[i] {
            self.waiting[i] = false;
            self.arrivals[i] -= 1;
        }
    }

    /// True when an end is waiting for its partner.
    pub fn is_waiting(&self, end: End) -> bool {
        self.waiting[match end {
            End::Producer => 0,
            End::Consumer => 1,
        }]
    }

    /// Switches the pair: the consumer now reads what the producer wrote, and the
    /// producer writes into the buffer the consumer has finished with.
    pub fn switch(&mut self) {
        self.write ^= 1;
        self.written[self.write] = 0;
        self.switches += 1;
    }
}

/// A unit's link on each side (indexed by side code), if it has that CB port.
pub type Ports = [Option<usize>; 4];

/// Creates every west->east and north->south link and records each unit's ports
/// (`ports` has one entry per unit).
pub fn build_links(geo: Geometry, ports: &mut [Ports], words: u32) -> Vec<Link> {
    let mut links = Vec::new();
    let mut connect =
        |ports: &mut [Ports], producer: usize, out: Side, consumer: usize, input: Side| {
            ports[producer][out.code() as usize] = Some(links.len());
            ports[consumer][input.code() as usize] = Some(links.len());
            links.push(Link::new(producer, consumer, words as usize));
        };
    for y in 0..geo.rows {
        connect(
            ports,
            geo.boundary(Side::West, y),
            Side::East,
            geo.sm(0, y),
            Side::West,
        );
        for x in 0..geo.cols {
            let next = if x + 1 < geo.cols {
                geo.sm(x + 1, y)
            } else {
                geo.boundary(Side::East, y)
            };
            connect(ports, geo.sm(x, y), Side::East, next, Side::West);
        }
    }
    for x in 0..geo.cols {
        connect(
            ports,
            geo.boundary(Side::North, x),
            Side::South,
            geo.sm(x, 0),
            Side::North,
        );
        for y in 0..geo.rows {
            let next = if y + 1 < geo.rows {
                geo.sm(x, y + 1)
            } else {
                geo.boundary(Side::South, x)
            };
            connect(ports, geo.sm(x, y), Side::South, next, Side::North);
        }
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendezvous_hands_the_written_buffer_to_the_consumer() {
        let mut l = Link::new(0, 1, 8);
        l.write(0, 7);
        l.write(2, 9);
        assert!(!l.arrive(End::Producer));
        assert!(l.arrive(End::Consumer));
        l.switch();
        assert_eq!((l.read(0), l.read(2), l.readable_words()), (7, 9, 3));
        l.write(0, 1);
        assert_eq!(l.read(0), 7, "the producer writes the other buffer");
        assert_eq!(l.arrivals, [1, 1]);
        assert_eq!(l.write_toggles, 3 + 2 + 1);
    }

    #[test]
    fn withdrawn_arrivals_do_not_count() {
        let mut l = Link::new(0, 1, 8);
        assert!(!l.arrive(End::Consumer));
        l.withdraw(End::Consumer);
        assert!(!l.arrive(End::Producer));
        assert_eq!(l.arrivals, [1, 0]);
    }
}
