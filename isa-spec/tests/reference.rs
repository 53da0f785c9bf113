//! The checked-in `ISA.md` must equal what the table generates.

#[test]
fn isa_md_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ISA.md");
    let generated = spu_isa::reference::markdown();
    if std::env::var_os("UPDATE_ISA_MD").is_some() {
        std::fs::write(&path, &generated).expect("write ISA.md");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "isa-spec/ISA.md is stale: regenerate it with `UPDATE_ISA_MD=1 cargo test -p spu-isa --test reference`"
    );
}
