//! The synchronisation warnings: what they flag and, as importantly, what they leave
//! alone (uniform conditions, registers reused for uniform values, synced sides).

fn warnings(src: &str) -> Vec<String> {
    let (_, w) = spu_asm::assemble("k.spu", src)
        .unwrap_or_else(|d| panic!("assembles:\n{}", d.render("k.spu", src)));
    w.items.iter().map(|d| d.message.clone()).collect()
}

fn kernel(body: &str) -> String {
    format!(
        ".global .u32 out[64] = zeros;\n.launch grid(2, 1) block(64) iu(32);\n\
         .entry k {{\n    .reg .u32 %r<8>;\n    .reg .pred %p<4>;\n{body}\n    exit;\n}}\n"
    )
}

#[test]
fn barrier_under_a_thread_dependent_branch_is_flagged() {
    let w = warnings(&kernel(
        "    mov.u32 %r0, %laneid;\n    setp.eq.u32 %p0, %r0, 0;\n    @%p0 bra L;\n    bar.sync;\nL:",
    ));
    assert_eq!(
        w,
        ["`bar.sync` may be reached by only some threads of the block"]
    );
}

#[test]
fn barrier_guarded_by_a_thread_dependent_predicate_is_flagged() {
    let w = warnings(&kernel(
        "    mov.u32 %r0, %tid.x;\n    add.u32 %r1, %r0, 3;\n    setp.lt.u32 %p1, %r1, 9;\n    @%p1 bar.sync;",
    ));
    assert_eq!(w.len(), 1, "{w:?}");
}

#[test]
fn barrier_under_a_block_uniform_branch_is_not_flagged() {
    let w = warnings(&kernel(
        "    mov.u32 %r0, %ctaid.x;\n    setp.eq.u32 %p0, %r0, 0;\n    @%p0 bra L;\n    bar.sync;\nL:\n    @%p0 bar.sync;",
    ));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn a_register_overwritten_with_a_uniform_value_is_uniform_again() {
    let w = warnings(&kernel(
        "    mov.u32 %r0, %tid.x;\n    mov.u32 %r2, out;\n    st.global.u32 [%r2], %r0;\n    \
         mov.u32 %r0, %ctaid.x;\n    setp.eq.u32 %p0, %r0, 0;\n    @%p0 bra L;\n    bar.sync;\nL:",
    ));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn barrier_after_reconvergence_is_not_flagged() {
    let w = warnings(&kernel(
        "    mov.u32 %r0, %tid.x;\n    setp.eq.u32 %p0, %r0, 0;\n    @%p0 bra L;\n    add.u32 %r1, %r0, 1;\nL:\n    bar.sync;",
    ));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn cb_access_on_a_side_never_synced_is_flagged_once_per_side() {
    let w = warnings(&kernel(
        "    ld.cb.west.u32 %r0, [0];\n    ld.cb.west.u32 %r1, [4];\n    ld.cb.north.u32 %r2, [0];\n    bar.blocksync.north;",
    ));
    assert_eq!(
        w,
        ["this code reads the west CB but never syncs on the west link"]
    );
}

#[test]
fn a_global_blocksync_syncs_every_side() {
    let w = warnings(&kernel(
        "    ld.cb.west.u32 %r0, [0];\n    st.cb.east.u32 [0], %r0;\n    bar.blocksync;",
    ));
    assert!(w.is_empty(), "{w:?}");
}
