//! Communication Buffer links: one ping-pong pair per west->east or north->south
//! link between neighbouring units (thesis 2.2.1, Figure 2.3). The two buffers live
//! in the units' ports ([`Port`]); a link here is the rendezvous protocol between its
//! two ends: who waits, how many syncs each end has made and which work made them
//! (for deadlock reports), and how often the pair switched.
//!
//! With several blocks per SM, links run between positions (see
//! [`crate::load::plan`]): a link between two slots of one SM is *inner* (a pair
//! carved from the SM's shared memory), one between slots of neighbouring SMs is a
//! lane of the physical CB on that side.

use crate::exec::cb::Port;
use crate::load::plan::{Geometry, WorkItem};
use spu_isa::Side;

/// The syncs one work item made at one end of a link, for deadlock reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRecord {
    pub item: WorkItem,
    pub count: u64,
    /// For code: the sync instructions and how many syncs each made.
    pub pcs: Vec<(u32, u64)>,
}

/// Which end of a link a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Producer,
    Consumer,
}

impl End {
    pub fn index(self) -> usize {
        match self {
            End::Producer => 0,
            End::Consumer => 1,
        }
    }
}

/// One link's rendezvous state.
#[derive(Debug, Clone)]
pub struct Link {
    /// Unit indices at the two ends.
    pub producer: usize,
    pub consumer: usize,
    /// The block slot of each end on its unit (0 but on an SM holding several
    /// blocks).
    pub producer_slot: usize,
    pub consumer_slot: usize,
    /// Both ends are slots of one SM: the pair lives in its shared memory.
    pub inner: bool,
    /// The side of the producer's port (east or south) and of the consumer's
    /// (west or north).
    pub out: Side,
    pub input: Side,
    waiting: [bool; 2],
    /// Arrivals each end has made (producer, consumer), for deadlock reports.
    pub arrivals: [u64; 2],
    pub switches: u64,
    /// Who made each end's arrivals, in order (producer, consumer).
    pub history: [Vec<SyncRecord>; 2],
}

impl Link {
    pub fn new(producer: usize, consumer: usize, out: Side, input: Side) -> Link {
        Link {
            producer,
            consumer,
            producer_slot: 0,
            consumer_slot: 0,
            inner: false,
            out,
            input,
            waiting: [false; 2],
            arrivals: [0; 2],
            switches: 0,
            history: [Vec::new(), Vec::new()],
        }
    }

    /// Notes who made an arrival: work `item`, at sync instruction `pc` for code.
    pub fn record(&mut self, end: End, item: WorkItem, pc: Option<u32>) {
        let history = &mut self.history[end.index()];
        let record = match history.last_mut() {
            Some(r) if r.item == item => r,
            _ => {
                history.push(SyncRecord {
                    item,
                    count: 0,
                    pcs: Vec::new(),
                });
                history.last_mut().expect("just pushed")
            }
        };
        record.count += 1;
        if let Some(pc) = pc {
            match record.pcs.iter_mut().find(|(p, _)| *p == pc) {
                Some((_, n)) => *n += 1,
                None => record.pcs.push((pc, 1)),
            }
        }
    }

    /// Records an arrival; true when it completes a rendezvous (the caller then
    /// switches the link and releases both ends).
    pub fn arrive(&mut self, end: End) -> bool {
        let me = end.index();
        self.waiting[me] = true;
        self.arrivals[me] += 1;
        if self.waiting[1 - me] {
            self.waiting = [false; 2];
            true
        } else {
            false
        }
    }

    /// Takes back an arrival that will never be matched (a virtual IU whose
    /// producer has finished).
    pub fn withdraw(&mut self, end: End) {
        let i = end.index();
        if self.waiting[i] {
            self.waiting[i] = false;
            self.arrivals[i] -= 1;
            let history = &mut self.history[i];
            if let Some(last) = history.last_mut() {
                last.count -= 1;
                if last.count == 0 {
                    history.pop();
                }
            }
        }
    }

    /// True when an end is waiting for its partner.
    pub fn is_waiting(&self, end: End) -> bool {
        self.waiting[end.index()]
    }
}

impl Link {
    /// Switches the pair: the consumer now reads what the producer wrote, and the
    /// producer writes into the buffer the consumer has finished with.
    pub fn switch(&mut self, producer: &mut Port, consumer: &mut Port) {
        self.switches += 1;
        producer.switch_with(consumer);
    }
}

/// The CB ports of every unit, per block slot (one slot but on SMs holding several
/// blocks), indexed by side code.
pub type SlotPorts = Vec<[Option<Port>; 4]>;

/// Creates every west->east and north->south link between neighbouring positions
/// and the ports of its two ends (`ports` has one entry per unit, with one set of
/// ports per slot).
pub fn build_links(geo: Geometry, ports: &mut [SlotPorts], words: u32) -> Vec<Link> {
    let mut links = Vec::new();
    let mut connect = |ports: &mut [SlotPorts],
                       (producer, ps): (usize, usize),
                       out: Side,
                       (consumer, cs): (usize, usize),
                       input: Side| {
        let l = links.len();
        ports[producer][ps][out.code() as usize] = Some(Port::new(l, words as usize));
        ports[consumer][cs][input.code() as usize] = Some(Port::new(l, words as usize));
        let mut link = Link::new(producer, consumer, out, input);
        link.producer_slot = ps;
        link.consumer_slot = cs;
        link.inner = producer == consumer;
        links.push(link);
    };
    let (p, q) = (geo.width(), geo.height());
    let pos = |x: u32, y: u32| geo.position(x, y);
    for y in 0..q {
        connect(
            ports,
            (geo.boundary(Side::West, y), 0),
            Side::East,
            pos(0, y),
            Side::West,
        );
        for x in 0..p {
            let next = if x + 1 < p {
                pos(x + 1, y)
            } else {
                (geo.boundary(Side::East, y), 0)
            };
            connect(ports, pos(x, y), Side::East, next, Side::West);
        }
    }
    for x in 0..p {
        connect(
            ports,
            (geo.boundary(Side::North, x), 0),
            Side::South,
            pos(x, 0),
            Side::North,
        );
        for y in 0..q {
            let next = if y + 1 < q {
                pos(x, y + 1)
            } else {
                (geo.boundary(Side::South, x), 0)
            };
            connect(ports, pos(x, y), Side::South, next, Side::North);
        }
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendezvous_completes_when_both_ends_arrive() {
        let mut l = Link::new(0, 1, Side::East, Side::West);
        assert!(!l.arrive(End::Producer));
        assert!(l.is_waiting(End::Producer));
        assert!(l.arrive(End::Consumer));
        assert!(!l.is_waiting(End::Producer));
        assert_eq!(l.arrivals, [1, 1]);
    }

    #[test]
    fn arrivals_are_recorded_by_work_item_and_instruction() {
        use crate::load::plan::Role;
        let mut l = Link::new(0, 1, Side::East, Side::West);
        let block = |bx| WorkItem {
            pass: bx,
            role: Role::Block { bx, by: 0 },
        };
        l.record(End::Producer, block(0), Some(7));
        l.record(End::Producer, block(0), Some(9));
        l.record(End::Producer, block(0), Some(7));
        l.record(End::Producer, block(1), Some(7));
        let h = &l.history[0];
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].count, h[0].pcs.clone()), (3, vec![(7, 2), (9, 1)]));
        assert_eq!((h[1].item, h[1].count), (block(1), 1));
        assert!(l.history[1].is_empty());
    }

    #[test]
    fn withdrawn_arrivals_do_not_count() {
        let mut l = Link::new(0, 1, Side::East, Side::West);
        assert!(!l.arrive(End::Consumer));
        let item = WorkItem {
            pass: 0,
            role: crate::load::plan::Role::Block { bx: 0, by: 0 },
        };
        l.record(End::Consumer, item, None);
        l.withdraw(End::Consumer);
        assert!(l.history[1].is_empty(), "the record goes with the arrival");
        assert!(!l.arrive(End::Producer));
        assert_eq!(l.arrivals, [1, 0]);
    }

    #[test]
    fn switching_moves_the_written_buffer_to_the_consumer() {
        let (mut p, mut c) = (Port::new(0, 4), Port::new(0, 4));
        p.write(1, 5);
        let mut l = Link::new(0, 1, Side::East, Side::West);
        l.switch(&mut p, &mut c);
        assert_eq!((c.buffer[1], c.written, l.switches), (5, 2, 1));
        assert_eq!(p.written, 0);
    }
}
