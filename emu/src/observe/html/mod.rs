//! The page that replays a run (`--html`): one self-contained HTML file whose
//! script and style are inline (the parts of `script/`, `page.css`, drawn with SVG
//! and canvas by the browser, no network, no server) and whose data is a JSON block
//! holding one run, or two for a comparison ([`record`], at the resolution
//! [`frames`] chooses; when each source line ran, [`when`]). Pages are read back for `spu-prof --compare A.html B.html
//! --html`.

pub mod frames;
pub mod record;
pub mod when;

pub use record::PageRun;
use serde::{Deserialize, Serialize};

/// What the data block of a page says it is.
pub const FORMAT: &str = "spu-page";
/// Version of the data layout, bumped on incompatible changes.
pub const VERSION: u32 = 1;

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
/// The script, in parts that each do one thing, inlined in this order into one
/// function (so they share its names; only `start.js` runs anything).
const SCRIPT: &[&str] = &[
    include_str!("script/core.js"),
    include_str!("script/machine.js"),
    include_str!("script/charts.js"),
    include_str!("script/player.js"),
    include_str!("script/panels.js"),
    include_str!("script/kernel.js"),
    include_str!("script/start.js"),
];
const DATA_OPEN: &str = r#"<script type="application/json" id="spu-data">"#;

/// The data of a page: one run, or two side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageData {
    pub format: String,
    pub version: u32,
    /// What each run is called on the page (`A: overlapped.html`), one per run.
    pub labels: Vec<String>,
    pub runs: Vec<PageRun>,
}

impl PageData {
    /// A page of one run.
    pub fn single(run: PageRun) -> PageData {
        PageData {
            format: FORMAT.to_string(),
            version: VERSION,
            labels: vec![String::new()],
            runs: vec![run],
        }
    }

    /// A page of two runs on one time axis.
    pub fn pair(a: (String, PageRun), b: (String, PageRun)) -> PageData {
        PageData {
            format: FORMAT.to_string(),
            version: VERSION,
            labels: vec![a.0, b.0],
            runs: vec![a.1, b.1],
        }
    }
}

/// Why a file is not a page this version can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("is not a page written by `--html` (it has no `spu-page` data block)")]
    NotAPage,
    #[error(
        "is a page of data version {found}, but this version reads version {VERSION}; write it again with `--html`"
    )]
    Version { found: u64 },
    #[error("has a damaged data block ({0}); write it again with `--html`")]
    Damaged(String),
    #[error(
        "has two data blocks (from line {first} and from line {second}), but a page has one; write it again with `--html`"
    )]
    TwoBlocks { first: usize, second: usize },
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page's script: reads the runs from the data block, draws each machine, its
/// launch, timelines and charts, and keeps them at the player's time. No libraries,
/// no network.
fn script() -> String {
    let mut s = String::from("'use strict';\n(function () {\n");
    for part in SCRIPT {
        s.push_str(part);
        s.push('\n');
    }
    s.push_str("})();\n");
    s
}

/// The page's HTML.
pub fn page(data: &PageData) -> String {
    // Plain structs with string keys and finite numbers: cannot fail.
    let json = serde_json::to_string(data).expect("page data serialises");
    // `<` only occurs inside JSON strings, where `\u003c` means the same; so the
    // block can never close itself early.
    let json = json.replace('<', "\\u003c");
    let title = match data.runs.as_slice() {
        [one] => one.title.clone(),
        runs => runs
            .iter()
            .map(|r| r.title.as_str())
            .collect::<Vec<_>>()
            .join(" vs "),
    };
    TEMPLATE
        .replace("{{TITLE}}", &escape_html(&title))
        .replace("/*{{STYLE}}*/", STYLE)
        .replace("/*{{SCRIPT}}*/", &script())
        .replace("{{DATA}}", &json)
}

/// The data of a page written by [`page`]: its one data block, in which an unknown
/// key is refused where it is met, as in statistics files.
pub fn read(text: &str) -> Result<PageData, PageError> {
    use crate::observe::json::{self, JsonError, Scalar};
    let start = text.find(DATA_OPEN).ok_or(PageError::NotAPage)? + DATA_OPEN.len();
    let (line0, column0) = position(text, start);
    let block_at = || format!("the block from line {line0}, column {column0}");
    let len = text[start..]
        .find("</script>")
        .ok_or_else(|| PageError::Damaged(format!("{} is not closed", block_at())))?;
    let block = &text[start..start + len];
    if let Some(second) = text[start + len..].find(DATA_OPEN) {
        let (second, _) = position(text, start + len + second);
        return Err(PageError::TwoBlocks {
            first: line0,
            second,
        });
    }
    // Where a position inside the block is in the page.
    let at = |line: usize, column: usize| match line {
        0 => block_at(),
        1 => format!("line {line0}, column {}", column0 + column - 1),
        _ => format!("line {}, column {column}", line0 + line - 1),
    };
    let syntax = |e: serde_json::Error| {
        let text = e.to_string();
        let what = text
            .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
            .unwrap_or(&text)
            .to_string();
        PageError::Damaged(format!("{}: {what}", at(e.line(), e.column())))
    };
    let top = json::check(block).map_err(|e| match e {
        JsonError::Syntax(e) => syntax(e),
        JsonError::Duplicate { key, line, column } => PageError::Damaged(format!(
            "{}: the key `{key}` is given twice in one object",
            at(line, column)
        )),
        JsonError::NotAnObject {
            found,
            line,
            column,
        } => PageError::Damaged(format!(
            "{}: it is {found}, not an object",
            at(line, column)
        )),
    })?;
    if top.get("format") != Some(&Scalar::Text(FORMAT.to_string())) {
        return Err(PageError::Damaged(format!(
            "{} has no `format` \"{FORMAT}\"",
            block_at()
        )));
    }
    match top.get("version") {
        Some(Scalar::Count(v)) if *v == u64::from(VERSION) => {}
        Some(Scalar::Count(found)) => return Err(PageError::Version { found: *found }),
        _ => {
            return Err(PageError::Damaged(format!(
                "{} has no `version`",
                block_at()
            )));
        }
    }
    let data: PageData = serde_json::from_str(json::strip_bom(block)).map_err(syntax)?;
    if data.runs.is_empty() || data.runs.len() != data.labels.len() {
        return Err(PageError::Damaged(format!("{} has no runs", block_at())));
    }
    Ok(data)
}

/// The 1-based line and column (in bytes) of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}
