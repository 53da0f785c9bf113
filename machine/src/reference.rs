//! The parameter reference, generated from [`PARAMS`] and [`PRESETS`]: the Markdown
//! page `machine/MACHINE.md`, and the terminal table `spu-emu --list-params` prints.

use super::{Machine, PARAMS, PRESETS};
use comfy_table::{ContentArrangement, Table, presets};

/// What the keys are and how to set them, for both forms.
const INTRO: &str = "A machine file is TOML with these keys (any subset; the rest keep their \
     defaults). Select one with `--machine FILE|PRESET`, then override single keys \
     with `--set KEY=VALUE`; `--grid PxQ`, `--boundary` and `--passes` are \
     shorthands for the first keys. Defaults describe the thesis's optimised SPU \
     (Table 6.1): a 4x4 grid of Fermi-class SMs at 700 MHz with 4 KiB CBs.";

/// The parameter reference page (`machine/MACHINE.md`), generated from [`PARAMS`].
pub fn reference_markdown() -> String {
    let defaults = Machine::default().entry_texts();
    let mut s = format!(
        "# Machine parameters\n\n\
         Generated from `machine/src/lib.rs`; do not edit by hand \
         (`UPDATE_MACHINE_MD=1 cargo test -p spu-machine machine_md` regenerates it).\n\n\
         {INTRO}\n\n\
         | key | default | unit | valid values | meaning |\n\
         |---|---|---|---|---|\n",
    );
    for (p, (_, default)) in PARAMS.iter().zip(&defaults) {
        s.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            p.key, default, p.unit, p.range, p.doc
        ));
    }
    s.push_str("\n## Presets\n\n| name | description |\n|---|---|\n");
    for p in PRESETS {
        s.push_str(&format!("| `{}` | {} |\n", p.name, p.description));
    }
    s
}

/// The same reference for a terminal: plain text, tables `width` columns wide with
/// the meaning wrapped and the unit and valid values under it, no Markdown.
pub fn reference_table(width: u16) -> String {
    let plain = |s: &str| s.replace('`', "");
    let defaults = Machine::default().entry_texts();
    let mut t = Table::new();
    t.load_style(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(vec!["key", "default", "meaning (unit; valid values)"]);
    for (p, (_, default)) in PARAMS.iter().zip(&defaults) {
        let unit = plain(p.unit);
        let valid = plain(&p.range.to_string());
        let values = if unit.is_empty() {
            valid
        } else {
            format!("{unit}; {valid}")
        };
        t.add_row(vec![
            p.key.to_string(),
            default.clone(),
            format!("{}\n({values})", plain(p.doc)),
        ]);
    }
    let mut presets_table = Table::new();
    presets_table
        .load_style(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(vec!["preset", "description"]);
    for p in PRESETS {
        presets_table.add_row(vec![p.name.to_string(), plain(p.description)]);
    }
    format!(
        "Machine parameters\n\n{}\n\n{t}\n\nPresets (--machine NAME)\n{presets_table}\n",
        wrap(&plain(INTRO), usize::from(width))
    )
}

/// Greedy word wrap.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}
