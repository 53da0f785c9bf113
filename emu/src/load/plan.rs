//! Who does what in which pass. A launch of `Gx x Gy` blocks on `P x Q` SMs runs in
//! `ceil(Gx/P) x ceil(Gy/Q)` passes in row-major order (thesis 2.2.2, 4.1); block
//! `(bx, by)` runs in pass `(bx / P, by / Q)` on SM `(bx % P, by % Q)`. Around each
//! pass, every edge gets a boundary role:
//!
//! - on the launched grid's edge, the kernel's own boundary work (IU code or a DMA
//!   descriptor) with `%iuid` the block index along that edge;
//! - on an edge shared with a neighbouring pass, a virtual IU: the east/south side
//!   spills what it receives, the west/north side of the next pass restores it;
//! - in a partial pass (fewer block columns or rows than SMs), the idle SMs just past
//!   the last column or row take the east or south role (thesis 6.1.2).
//!
//! With several blocks per SM (`sm.fold_x` x `sm.fold_y` = `fx` x `fy`, see
//! `emu/RUNTIME.md`, Several blocks per SM) the same rules hold on a grid of
//! *positions*: a pass covers `P*fx x Q*fy` blocks, position `(x, y)` of the pass is
//! slot `(x % fx) + fx*(y % fy)` of SM `(x / fx, y / fy)`, and each boundary unit
//! has one lane per position along its edge (`fx` per north or south unit, `fy` per
//! east or west unit). A partial pass's east or south role goes to the SM of the
//! position past the last block, which runs it on its slot 0; the loader refuses
//! launches where that position is another slot ([`stranded_role`]).
//!
//! Units are numbered SMs first (row-major), then the lanes of the north, south,
//! east and west boundary units. A spill producer, and the completion of work, are
//! named by *agent*: a unit's slot 0 is the unit's own index, further SM slots come
//! after the units ([`Geometry::agent`]).

use crate::machine::{Boundary, UnitLabel};
use spu_isa::Side;

/// Identifies a spill stream: the producer pass and the position along its edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpillKey {
    /// `East` or `South`: the edge of the producing pass.
    pub side: Side,
    pub pass: u32,
    /// Row (east edge) or column (south edge) of the pass window, in positions.
    pub position: u32,
    /// The producing pass as (x, y), and the block whose output is spilled (for
    /// reports).
    pub at: [u32; 2],
    pub block: [u32; 2],
}

impl SpillKey {
    /// The stream leaving pass `(px, py)` on `side` at `position`.
    fn new(geo: Geometry, side: Side, [px, py]: [u32; 2], position: u32) -> SpillKey {
        let [nx, _] = geo.passes();
        let (p, q) = (geo.width(), geo.height());
        let block = if side == Side::East {
            [px * p + p - 1, py * q + position]
        } else {
            [px * p + position, py * q + q - 1]
        };
        SpillKey {
            side,
            pass: py * nx + px,
            position,
            at: [px, py],
            block,
        }
    }

    /// The block that reads the stream back in the next pass.
    pub fn consumer_block(&self) -> [u32; 2] {
        let [bx, by] = self.block;
        if self.side == Side::East {
            [bx + 1, by]
        } else {
            [bx, by + 1]
        }
    }
}

/// What a unit does for one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Run block `(bx, by)` of the launch.
    Block { bx: u32, by: u32 },
    /// The kernel's boundary work for `side` at position `iuid` of the launched
    /// grid: IU code or a DMA descriptor, depending on the machine.
    Boundary { side: Side, iuid: u32 },
    /// Virtual IU that spills each tile its producer (an agent, see
    /// [`Geometry::agent`]) hands over.
    Spill { key: SpillKey, producer: usize },
    /// Virtual IU that restores a spill stream, in order.
    Restore { key: SpillKey },
}

/// One piece of work for one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkItem {
    /// Pass index in row-major pass order.
    pub pass: u32,
    pub role: Role,
}

/// The grid's shape, the launch's, and the blocks one SM holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// SMs west to east and north to south.
    pub cols: u32,
    pub rows: u32,
    pub grid: [u32; 2],
    /// Block columns and rows one SM holds at once (`sm.fold_x`, `sm.fold_y`).
    pub fold: [u32; 2],
}

impl Geometry {
    /// The SM grid of `machine` running a launch of `grid` blocks.
    pub fn new(machine: &crate::machine::Machine, grid: [u32; 2]) -> Geometry {
        Geometry {
            cols: machine.grid_cols,
            rows: machine.grid_rows,
            grid,
            fold: if machine.is_gpu() {
                [1, 1]
            } else {
                machine.fold()
            },
        }
    }

    /// Positions (block columns) of a pass window.
    pub fn width(&self) -> u32 {
        self.cols * self.fold[0]
    }

    /// Positions (block rows) of a pass window.
    pub fn height(&self) -> u32 {
        self.rows * self.fold[1]
    }

    /// Block slots of one SM.
    pub fn slots(&self) -> usize {
        (self.fold[0] * self.fold[1]) as usize
    }

    /// Passes along x and y.
    pub fn passes(&self) -> [u32; 2] {
        [
            self.grid[0].div_ceil(self.width()),
            self.grid[1].div_ceil(self.height()),
        ]
    }

    /// The unit index of SM `(x, y)` (SM coordinates, not positions).
    pub fn sm(&self, x: u32, y: u32) -> usize {
        (y * self.cols + x) as usize
    }

    /// The SM and slot of position `(x, y)` of a pass window.
    pub fn position(&self, x: u32, y: u32) -> (usize, usize) {
        let [fx, fy] = self.fold;
        (self.sm(x / fx, y / fy), ((x % fx) + fx * (y % fy)) as usize)
    }

    /// The position within its SM of slot `slot`: (column, row).
    pub fn slot_offset(&self, slot: usize) -> [u32; 2] {
        let fx = self.fold[0] as usize;
        [(slot % fx) as u32, (slot / fx) as u32]
    }

    /// The SM slot that runs block `(bx, by)` of the launch.
    pub fn block_slot(&self, bx: u32, by: u32) -> usize {
        self.position(bx % self.width(), by % self.height()).1
    }

    /// The agent of slot `slot` of unit `unit`: the unit itself for slot 0, one
    /// index per further SM slot after the units.
    pub fn agent(&self, unit: usize, slot: usize) -> usize {
        if slot == 0 {
            unit
        } else {
            self.unit_count() + unit * (self.slots() - 1) + slot - 1
        }
    }

    /// The unit and block slot of agent `agent` (the inverse of [`Geometry::agent`]).
    pub fn agent_unit(&self, agent: usize) -> (usize, usize) {
        let units = self.unit_count();
        match agent.checked_sub(units) {
            Some(i) if self.slots() > 1 => (i / (self.slots() - 1), i % (self.slots() - 1) + 1),
            _ => (agent, 0),
        }
    }

    /// Agents: every unit, and every SM slot beyond the first.
    pub fn agents(&self) -> usize {
        self.unit_count() + (self.cols * self.rows) as usize * (self.slots() - 1)
    }

    /// Index of boundary unit (lane) `index` on `side`.
    pub fn boundary(&self, side: Side, index: u32) -> usize {
        let (p, q) = (self.width(), self.height());
        let base = self.cols * self.rows;
        (match side {
            Side::North => base + index,
            Side::South => base + p + index,
            Side::East => base + 2 * p + index,
            Side::West => base + 2 * p + q + index,
        }) as usize
    }

    /// Every unit's label, in unit order (boundary lanes by lane).
    pub fn labels(&self, boundary: Boundary) -> Vec<UnitLabel> {
        let mut labels = Vec::with_capacity(self.unit_count());
        for y in 0..self.rows {
            for x in 0..self.cols {
                labels.push(UnitLabel::Sm { x, y });
            }
        }
        for (side, count) in [
            (Side::North, self.width()),
            (Side::South, self.width()),
            (Side::East, self.height()),
            (Side::West, self.height()),
        ] {
            for index in 0..count {
                labels.push(match boundary {
                    Boundary::Iu => UnitLabel::Iu { side, index },
                    Boundary::Dma => UnitLabel::Dma { side, index },
                });
            }
        }
        labels
    }

    pub fn unit_count(&self) -> usize {
        (self.cols * self.rows + 2 * (self.width() + self.height())) as usize
    }
}

/// A partial pass's boundary role that a fold places where it cannot run: see
/// [`stranded_role`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrandedRole {
    /// `East` or `South`.
    pub side: Side,
    /// The pass as (x, y), its blocks as (columns, rows), and the role's position
    /// in the pass window.
    pub pass: [u32; 2],
    pub blocks: [u32; 2],
    pub position: [u32; 2],
    /// The SM (x, y) and slot the position belongs to.
    pub sm: [u32; 2],
    pub slot: usize,
}

/// The first boundary role of a partial pass that would not sit in slot 0 of an
/// SM holding no blocks. A partial pass hands its east (south) role to the
/// position just past its last block column (row); with a fold that position is
/// a slot of an SM, and an SM runs either its blocks or one boundary role, on its
/// slot 0's ports. So a role runs when its position is slot 0 of its SM (the
/// SM's other positions then lie past the last block too, so it holds no block):
/// east roles need `cols % fx == 0` and, with more than one block row, `fy == 1`;
/// south roles need `rows % fy == 0` and, with more than one block column, `fx == 1`.
pub fn stranded_role(geo: Geometry, boundary_sides: &[Side]) -> Option<StrandedRole> {
    let (p, q) = (geo.width(), geo.height());
    let [gx, gy] = geo.grid;
    let [nx, ny] = geo.passes();
    for py in 0..ny {
        for px in 0..nx {
            let cols = p.min(gx - px * p);
            let rows = q.min(gy - py * q);
            let east = (px + 1 == nx && cols < p && boundary_sides.contains(&Side::East))
                .then(|| (0..rows).map(move |y| (Side::East, [cols, y])));
            let south = (py + 1 == ny && rows < q && boundary_sides.contains(&Side::South))
                .then(|| (0..cols).map(move |x| (Side::South, [x, rows])));
            let roles = east
                .into_iter()
                .flatten()
                .chain(south.into_iter().flatten());
            for (side, [x, y]) in roles {
                let [fx, fy] = geo.fold;
                let slot = ((x % fx) + fx * (y % fy)) as usize;
                if slot != 0 {
                    return Some(StrandedRole {
                        side,
                        pass: [px, py],
                        blocks: [cols, rows],
                        position: [x, y],
                        sm: [x / fx, y / fy],
                        slot,
                    });
                }
            }
        }
    }
    None
}

/// Every unit's work, in pass order. `boundary_sides` says which sides have
/// kernel boundary work (all four with IU code; the declared ones with DMA).
pub fn plan(geo: Geometry, boundary_sides: &[Side]) -> Vec<Vec<WorkItem>> {
    let (p, q) = (geo.width(), geo.height());
    let [gx, gy] = geo.grid;
    let [nx, ny] = geo.passes();
    let mut queues = vec![Vec::new(); geo.unit_count()];
    let at = |x: u32, y: u32| geo.position(x, y).0;
    let agent = |x: u32, y: u32| {
        let (u, slot) = geo.position(x, y);
        geo.agent(u, slot)
    };
    let has = |s: Side| boundary_sides.contains(&s);
    for py in 0..ny {
        for px in 0..nx {
            let pass = py * nx + px;
            let cols = p.min(gx - px * p);
            let rows = q.min(gy - py * q);
            let mut push = |unit: usize, role: Role| queues[unit].push(WorkItem { pass, role });
            for y in 0..rows {
                for x in 0..cols {
                    push(
                        at(x, y),
                        Role::Block {
                            bx: px * p + x,
                            by: py * q + y,
                        },
                    );
                }
            }
            for x in 0..cols {
                let north = geo.boundary(Side::North, x);
                if py == 0 {
                    if has(Side::North) {
                        push(
                            north,
                            Role::Boundary {
                                side: Side::North,
                                iuid: px * p + x,
                            },
                        );
                    }
                } else {
                    let key = SpillKey::new(geo, Side::South, [px, py - 1], x);
                    push(north, Role::Restore { key });
                }
                if py + 1 < ny {
                    let key = SpillKey::new(geo, Side::South, [px, py], x);
                    let producer = agent(x, q - 1);
                    push(geo.boundary(Side::South, x), Role::Spill { key, producer });
                } else if has(Side::South) {
                    // A partial pass hands the south role to the idle SM below it.
                    let unit = if rows == q {
                        geo.boundary(Side::South, x)
                    } else {
                        at(x, rows)
                    };
                    push(
                        unit,
                        Role::Boundary {
                            side: Side::South,
                            iuid: px * p + x,
                        },
                    );
                }
            }
            for y in 0..rows {
                let west = geo.boundary(Side::West, y);
                if px == 0 {
                    if has(Side::West) {
                        push(
                            west,
                            Role::Boundary {
                                side: Side::West,
                                iuid: py * q + y,
                            },
                        );
                    }
                } else {
                    let key = SpillKey::new(geo, Side::East, [px - 1, py], y);
                    push(west, Role::Restore { key });
                }
                if px + 1 < nx {
                    let key = SpillKey::new(geo, Side::East, [px, py], y);
                    let producer = agent(p - 1, y);
                    push(geo.boundary(Side::East, y), Role::Spill { key, producer });
                } else if has(Side::East) {
                    let unit = if cols == p {
                        geo.boundary(Side::East, y)
                    } else {
                        at(cols, y)
                    };
                    push(
                        unit,
                        Role::Boundary {
                            side: Side::East,
                            iuid: py * q + y,
                        },
                    );
                }
            }
        }
    }
    queues
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(queues: &[Vec<WorkItem>], f: impl Fn(&Role) -> bool) -> usize {
        queues.iter().flatten().filter(|i| f(&i.role)).count()
    }

    #[test]
    fn unit_numbering_covers_sms_and_the_boundary() {
        let g = Geometry {
            cols: 3,
            rows: 5,
            grid: [1, 1],
            fold: [1, 1],
        };
        assert_eq!(g.unit_count(), 15 + 2 * 3 + 2 * 5);
        assert_eq!(g.boundary(Side::West, 4), g.unit_count() - 1);
    }

    #[test]
    fn one_pass_has_only_real_boundary_roles() {
        let g = Geometry {
            cols: 4,
            rows: 4,
            grid: [4, 4],
            fold: [1, 1],
        };
        let q = plan(g, &[Side::North, Side::South, Side::East, Side::West]);
        assert_eq!(count(&q, |r| matches!(r, Role::Block { .. })), 16);
        assert_eq!(count(&q, |r| matches!(r, Role::Boundary { .. })), 16);
        assert_eq!(
            count(&q, |r| matches!(
                r,
                Role::Spill { .. } | Role::Restore { .. }
            )),
            0
        );
    }

    #[test]
    fn inner_pass_edges_get_virtual_ius() {
        // 8x8 blocks on 4x4: 2x2 passes; two inner vertical and two inner horizontal
        // edge segments of 4 units each.
        let g = Geometry {
            cols: 4,
            rows: 4,
            grid: [8, 8],
            fold: [1, 1],
        };
        let q = plan(g, &[Side::North, Side::South, Side::East, Side::West]);
        assert_eq!(count(&q, |r| matches!(r, Role::Spill { .. })), 16);
        assert_eq!(count(&q, |r| matches!(r, Role::Restore { .. })), 16);
        assert_eq!(count(&q, |r| matches!(r, Role::Boundary { .. })), 32);
        for queue in &q {
            assert!(
                queue.windows(2).all(|w| w[0].pass < w[1].pass),
                "one item per pass, in order"
            );
        }
    }

    #[test]
    fn a_fold_places_neighbouring_blocks_in_the_slots_of_one_sm() {
        // 8x4 blocks on a 2x2 SPU with 2x2 blocks per SM: a pass covers 4x4
        // blocks, so 2x1 passes; block (5, 2) is position (1, 2) of pass (1, 0):
        // slot 1 + 2*0 = 1 of SM (0, 1).
        let g = Geometry {
            cols: 2,
            rows: 2,
            grid: [8, 4],
            fold: [2, 2],
        };
        assert_eq!(g.passes(), [2, 1]);
        assert_eq!(g.position(1, 2), (g.sm(0, 1), 1));
        assert_eq!(g.block_slot(5, 2), 1);
        assert_eq!(g.slot_offset(3), [1, 1]);
        // Boundary lanes: 4 north, 4 south, 4 east, 4 west.
        assert_eq!(g.unit_count(), 4 + 16);
        assert_eq!(g.boundary(Side::West, 3), g.unit_count() - 1);
        // Agents: the units, then slots 1..3 of each SM; and back.
        assert_eq!(g.agents(), g.unit_count() + 4 * 3);
        for u in 0..4 {
            for slot in 0..4 {
                assert_eq!(g.agent_unit(g.agent(u, slot)), (u, slot));
            }
        }
        let q = plan(g, &[Side::North, Side::South, Side::East, Side::West]);
        // Each SM runs four blocks per pass, in the order of its slots.
        let blocks: Vec<[u32; 2]> = q[g.sm(0, 1)]
            .iter()
            .filter_map(|i| match i.role {
                Role::Block { bx, by } => Some([bx, by]),
                _ => None,
            })
            .collect();
        assert_eq!(
            blocks,
            vec![
                [0, 2],
                [1, 2],
                [0, 3],
                [1, 3],
                [4, 2],
                [5, 2],
                [4, 3],
                [5, 3]
            ]
        );
        // One inner vertical pass edge of 4 lanes: 4 spills, 4 restores; the
        // spiller of lane 2 waits for slot 1 + 2*0 of SM (1, 1).
        assert_eq!(count(&q, |r| matches!(r, Role::Spill { .. })), 4);
        assert_eq!(count(&q, |r| matches!(r, Role::Restore { .. })), 4);
        let producer = q[g.boundary(Side::East, 2)]
            .iter()
            .find_map(|i| match i.role {
                Role::Spill { producer, .. } => Some(producer),
                _ => None,
            });
        assert_eq!(producer, Some(g.agent(g.sm(1, 1), 1)));
    }

    #[test]
    fn partial_passes_give_the_boundary_role_to_idle_sms() {
        // 10x10 blocks on 4x4: the last pass column has 2 columns, so SM (2, y)
        // stores the east edge there.
        let g = Geometry {
            cols: 4,
            rows: 4,
            grid: [10, 10],
            fold: [1, 1],
        };
        let q = plan(g, &[Side::North, Side::South, Side::East, Side::West]);
        let east_on_sm = q[g.sm(2, 0)]
            .iter()
            .filter(|i| {
                matches!(
                    i.role,
                    Role::Boundary {
                        side: Side::East,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(east_on_sm, 3, "once per pass row");
        let south_on_sm = q[g.sm(0, 2)]
            .iter()
            .filter(|i| {
                matches!(
                    i.role,
                    Role::Boundary {
                        side: Side::South,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(south_on_sm, 3, "once per pass column");
    }

    #[test]
    fn a_partial_pass_strands_a_boundary_role_only_off_slot_0() {
        let all = [Side::North, Side::South, Side::East, Side::West];
        let geo = |grid, fold| Geometry {
            cols: 2,
            rows: 1,
            grid,
            fold,
        };
        // 2x2 blocks, 2x1 fold on 2x1 SMs: the 4x1 window's last column is 2
        // wide, so the east role sits at (2, 0), slot 0 of SM (1, 0).
        assert_eq!(stranded_role(geo([2, 2], [2, 1]), &all), None);
        let q = plan(geo([2, 2], [2, 1]), &all);
        let east: Vec<u32> = q[1]
            .iter()
            .filter_map(|i| match i.role {
                Role::Boundary {
                    side: Side::East,
                    iuid,
                } => Some(iuid),
                _ => None,
            })
            .collect();
        assert_eq!(east, vec![0, 1], "SM (1, 0) stores both rows' tokens");
        assert!(q[0].iter().all(|i| matches!(i.role, Role::Block { .. })));
        // 3 columns: position (3, 0) is slot 1 of SM (1, 0), beside block (2, y).
        assert_eq!(
            stranded_role(geo([3, 2], [2, 1]), &all),
            Some(StrandedRole {
                side: Side::East,
                pass: [0, 0],
                blocks: [3, 1],
                position: [3, 0],
                sm: [1, 0],
                slot: 1,
            })
        );
        // Without boundary work on the east side nothing is stranded.
        assert_eq!(
            stranded_role(geo([3, 2], [2, 1]), &[Side::North, Side::West]),
            None
        );
        // A 2x2 fold: the east roles of rows 0 and 1 share SM (1, 0); row 1's
        // sits in slot 2.
        let g = Geometry {
            cols: 2,
            rows: 2,
            grid: [2, 4],
            fold: [2, 2],
        };
        let r = stranded_role(g, &all).unwrap();
        assert_eq!((r.side, r.position, r.slot), (Side::East, [2, 1], 2));
    }
}
