//! The allocator on hand-built instruction lists: colouring, regions, pressure and
//! the bounds on its work.

use super::*;

fn inst(uses: &[u32], defs: &[u32]) -> Inst {
    Inst {
        uses: uses.to_vec(),
        defs: defs.to_vec(),
        partial_defs: Vec::new(),
    }
}

fn allocate(
    classes: &[Class],
    code: &[Inst],
    succ: &[Vec<usize>],
    registers: u32,
    predicates: u32,
) -> Result<Assignment, Pressure> {
    super::allocate(
        classes,
        &Code::from_insts(code, succ),
        registers,
        predicates,
    )
    .map_err(|f| match f {
        Failure::Pressure(p) => p,
        Failure::TooLarge { .. } => panic!("{f:?}"),
    })
}

/// Straight-line successors with an exit after the last instruction.
fn straight(n: usize) -> Vec<Vec<usize>> {
    (0..n).map(|i| vec![i + 1]).collect()
}

#[test]
fn many_declared_registers_and_instructions_cost_what_is_live() {
    // 65 536 registers, 2^19 instructions each using one of them: a bitset per
    // instruction would take 4 GiB; one live value per point takes nothing.
    let n = 1 << 16;
    let classes = vec![Class::Single; n];
    let mut code = Code::default();
    let count = 1usize << 19;
    for i in 0..count {
        let (prev, v) = (((i + n - 1) % n) as u32, (i % n) as u32);
        let uses: &[u32] = if i == 0 { &[] } else { &[prev] };
        code.push(uses, &[v], &[], &[i + 1]);
    }
    let a = super::allocate(&classes, &code, 128, 16).unwrap();
    assert_eq!(a.singles, 1);
    // All of them live at once: a pressure failure, found before the work of
    // their two billion pairs.
    let mut code = Code::default();
    let all: Vec<u32> = (0..n as u32).collect();
    for i in 0..n {
        code.push(&[i as u32], &[i as u32], &[], &[i + 1]);
    }
    code.push(&all, &[], &[], &[n + 1]);
    let Err(Failure::Pressure(p)) = super::allocate(&classes, &code, 128, 16) else {
        panic!("a pressure failure");
    };
    assert_eq!((p.live, p.needed, p.available), (n as u32, n as u32, 128));
}

#[test]
fn work_past_the_bounds_is_refused_where_it_ran_out() {
    // 40 values live across a chain of 50 branches.
    let v = 40u32;
    let classes = vec![Class::Single; v as usize];
    let mut code = Code::default();
    for d in 0..v {
        code.push(&[], &[d], &[], &[d as usize + 1]);
    }
    let start = v as usize;
    for b in 0..50 {
        let pc = start + b;
        code.push(&[], &[], &[], &[pc + 1, start + 60]);
    }
    let uses: Vec<u32> = (0..v).collect();
    for pc in start + 50..=start + 60 {
        code.push(&uses, &[], &[], &[pc + 1]);
    }
    let small = |live_entries, pairs| Bounds {
        live_entries,
        pairs,
        kept_pairs: usize::MAX,
    };
    assert!(allocate_within(&classes, &code, 128, 16, BOUNDS).is_ok());
    let e = allocate_within(&classes, &code, 128, 16, small(1000, usize::MAX)).unwrap_err();
    assert!(
        matches!(e, Failure::TooLarge { what: "values live into blocks", at } if at >= start),
        "{e:?}"
    );
    let e = allocate_within(&classes, &code, 128, 16, small(usize::MAX, 500)).unwrap_err();
    assert!(
        matches!(
            e,
            Failure::TooLarge {
                what: "pairs of values live at the same time",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn short_lived_values_share_registers() {
    // 300 values, each written then read by the next instruction.
    let n = 300;
    let classes = vec![Class::Single; n];
    let code: Vec<Inst> = (0..n as u32)
        .map(|v| {
            if v == 0 {
                inst(&[], &[0])
            } else {
                inst(&[v - 1], &[v])
            }
        })
        .collect();
    let a = allocate(&classes, &code, &straight(n), 128, 16).unwrap();
    assert_eq!(
        a.singles, 1,
        "a read that dies where the next value is written shares its register"
    );
}

#[test]
fn values_live_together_get_distinct_aligned_registers() {
    // v0 single, v1 pair, v2 quad, v3 pair: all live until the last instruction.
    let classes = [Class::Single, Class::Pair, Class::Quad, Class::Pair];
    let code = vec![
        inst(&[], &[0]),
        inst(&[], &[1]),
        inst(&[], &[2]),
        inst(&[], &[3]),
        inst(&[0, 1, 2, 3], &[]),
    ];
    let a = allocate(&classes, &code, &straight(5), 128, 16).unwrap();
    assert_eq!(a.phys[2], 0, "quads come first");
    assert_eq!((a.phys[1] % 2, a.phys[3] % 2), (0, 0), "pairs are aligned");
    assert_ne!(a.phys[1], a.phys[3]);
    assert_eq!(a.phys[0], 8, "singles follow the pairs");
    assert_eq!(a.registers(), 9);
}

#[test]
fn a_value_live_around_a_loop_keeps_its_register() {
    // 0: v0 = ..   1: v1 = ..   2: v2 = v1 + v0   3: v1 = v2   4: if .. goto 2   5: use v0
    let classes = [Class::Single; 3];
    let code = vec![
        inst(&[], &[0]),
        inst(&[], &[1]),
        inst(&[1, 0], &[2]),
        inst(&[2], &[1]),
        inst(&[], &[]),
        inst(&[0], &[]),
    ];
    let succ = vec![vec![1], vec![2], vec![3], vec![4], vec![2, 5], vec![6]];
    let a = allocate(&classes, &code, &succ, 128, 16).unwrap();
    assert_ne!(a.phys[0], a.phys[1], "v0 is live across the loop");
    assert_ne!(a.phys[0], a.phys[2]);
    assert!(a.singles <= 3);
}

#[test]
fn values_of_two_divergent_paths_may_share_a_register() {
    // 0: branch to 1 or 3; 1: v0 = ..; 2: use v0, goto 5; 3: v1 = ..; 4: use v1; 5: exit
    let classes = [Class::Single; 2];
    let code = vec![
        inst(&[], &[]),
        inst(&[], &[0]),
        inst(&[0], &[]),
        inst(&[], &[1]),
        inst(&[1], &[]),
        inst(&[], &[]),
    ];
    let succ = vec![vec![1, 3], vec![2], vec![5], vec![4], vec![5], vec![6]];
    let a = allocate(&classes, &code, &succ, 128, 16).unwrap();
    assert_eq!(
        a.phys[0], a.phys[1],
        "per-thread liveness: the paths never overlap"
    );
}

#[test]
fn a_guarded_write_keeps_the_old_value_alive() {
    // v0 = ..; @p v0 = ..; use v0 (v1 must not take v0's register in between).
    let classes = [Class::Single; 2];
    let code = vec![
        inst(&[], &[0]),
        inst(&[], &[1]),
        Inst {
            uses: vec![1],
            defs: vec![],
            partial_defs: vec![0],
        },
        inst(&[0], &[]),
    ];
    let a = allocate(&classes, &code, &straight(4), 128, 16).unwrap();
    assert_ne!(a.phys[0], a.phys[1]);
}

#[test]
fn too_many_live_values_report_where_and_how_many() {
    let n = 130u32;
    let classes = vec![Class::Single; n as usize];
    let mut code: Vec<Inst> = (0..n).map(|v| inst(&[], &[v])).collect();
    code.push(inst(&(0..n).collect::<Vec<_>>(), &[]));
    let p = allocate(&classes, &code, &straight(code.len()), 128, 16).unwrap_err();
    assert_eq!(
        p.at,
        n as usize - 1,
        "the last write, after which all are live"
    );
    assert_eq!(p.live, 130);
    assert_eq!(p.needed, 130);
    assert!(!p.predicates);
    let preds = vec![Class::Pred; 17];
    let mut code: Vec<Inst> = (0..17).map(|v| inst(&[], &[v])).collect();
    code.push(inst(&(0..17).collect::<Vec<_>>(), &[]));
    let p = allocate(&preds, &code, &straight(code.len()), 128, 16).unwrap_err();
    assert!(p.predicates);
    assert_eq!((p.live, p.available), (17, 16));
}
