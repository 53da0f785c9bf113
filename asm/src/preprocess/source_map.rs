//! Where preprocessed text came from: the files read, the segments of output
//! copied from them or produced by macro expansions, and the lookup from an
//! output offset back to a file, line and column.

use crate::lexer::Span;

/// One source file taking part in a preprocessed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The name diagnostics and the line table use.
    pub name: String,
    pub text: String,
}

/// Where a run of output bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) out: Span,
    pub(super) file: usize,
    /// Source offset of the first byte (direct text), or the invocation range
    /// (macro output).
    pub(super) src: Span,
    /// The macro whose expansion produced this text, if any.
    pub(super) expansion: Option<usize>,
}

/// A macro definition, for notes on diagnostics inside its expansions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroSite {
    pub name: String,
    pub file: usize,
    pub span: Span,
}

/// Maps offsets of the preprocessed text back to their files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
    pub(super) segments: Vec<Segment>,
    pub macros: Vec<MacroSite>,
    /// Offsets where each file's lines start, computed on first use, so looking up
    /// the line of every instruction stays linear in the source size.
    line_starts: std::cell::RefCell<Vec<Option<std::rc::Rc<[usize]>>>>,
}

/// A resolved position: file index and byte range in that file, plus the macro it
/// was expanded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: usize,
    pub span: Span,
    pub expansion: Option<usize>,
}

impl SourceMap {
    /// The origin of an output range (its start decides the file).
    pub fn origin(&self, span: &Span) -> Origin {
        let Some(seg) = self.segment(span.start) else {
            let end = self.files.first().map_or(0, |f| f.text.len());
            return Origin {
                file: 0,
                span: end..end,
                expansion: None,
            };
        };
        match seg.expansion {
            Some(m) => Origin {
                file: seg.file,
                span: seg.src.clone(),
                expansion: Some(m),
            },
            None => {
                let at = span.start.clamp(seg.out.start, seg.out.end);
                let start = seg.src.start + (at - seg.out.start);
                let end = span.end.clamp(at, seg.out.end);
                Origin {
                    file: seg.file,
                    span: start..start + (end - at),
                    expansion: None,
                }
            }
        }
    }

    pub(super) fn segment(&self, at: usize) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| s.out.end <= at);
        self.segments
            .get(i)
            .filter(|s| s.out.start <= at)
            .or_else(|| self.segments.get(i.saturating_sub(1)))
    }

    /// 1-based line and column of an offset in file `file`.
    pub fn line_col(&self, file: usize, offset: usize) -> (u32, u32) {
        let Some(f) = self.files.get(file) else {
            return (1, 1);
        };
        let offset = offset.min(f.text.len());
        let starts = {
            let mut cache = self.line_starts.borrow_mut();
            if cache.len() < self.files.len() {
                cache.resize(self.files.len(), None);
            }
            cache[file]
                .get_or_insert_with(|| {
                    std::iter::once(0)
                        .chain(f.text.match_indices('\n').map(|(i, _)| i + 1))
                        .collect()
                })
                .clone()
        };
        let line = starts.partition_point(|&s| s <= offset);
        let col = offset - starts[line - 1] + 1;
        (line as u32, col as u32)
    }
}
