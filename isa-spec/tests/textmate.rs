//! The editor grammar is current and covers every instruction of the ISA table.

use std::path::Path;

fn path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode/syntaxes/spu.tmLanguage.json")
}

#[test]
fn grammar_file_is_current() {
    let fresh = spu_isa::textmate::grammar();
    if std::env::var_os("UPDATE_GRAMMAR").is_some() {
        std::fs::write(path(), &fresh).unwrap();
    }
    let on_disk = std::fs::read_to_string(path()).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "editors/vscode/syntaxes/spu.tmLanguage.json is stale; run `UPDATE_GRAMMAR=1 cargo test -p spu-isa --test textmate`"
    );
}

#[test]
fn grammar_covers_every_mnemonic_and_is_json() {
    let text = std::fs::read_to_string(path()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let instr = doc["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "keyword.instruction.spu")
        .expect("an instruction rule");
    let regex = instr["match"].as_str().unwrap();
    for row in spu_isa::TABLE {
        let escaped = row.mnemonic.replace('.', "\\.");
        assert!(
            regex.contains(&format!("|{escaped}|"))
                || regex.contains(&format!("({escaped}|"))
                || regex.contains(&format!("|{escaped})")),
            "`{}` is not highlighted",
            row.mnemonic
        );
    }
    for sp in spu_isa::Special::NAMES {
        assert!(text.contains(&sp.replace('.', "\\\\.")), "special %{sp}");
    }
}
