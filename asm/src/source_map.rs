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
pub(crate) struct Segment {
    pub(crate) out: Span,
    pub(crate) file: usize,
    /// Source offset of the first byte (direct text), or the invocation range
    /// (macro output).
    pub(crate) src: Span,
    /// The macro whose expansion produced this text, if any.
    pub(crate) expansion: Option<usize>,
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
    pub(crate) segments: Vec<Segment>,
    pub macros: Vec<MacroSite>,
    /// Each file's line index, built on first use, so looking up the line of every
    /// instruction stays linear in the source size.
    line_index: std::cell::RefCell<Vec<Option<std::rc::Rc<LineIndex>>>>,
}

/// Lines of a file sampled every [`LineIndex::STEP`] bytes: the line number and the
/// start of the line at each sample. A lookup counts the line ends between the
/// sample and the offset, so the index takes 8 bytes per 256 bytes of text however
/// short the lines are.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineIndex {
    /// (0-based line, start of that line) at offsets 0, STEP, 2*STEP, ...
    samples: Vec<(u32, u32)>,
}

impl LineIndex {
    const STEP: usize = 256;

    fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut samples = Vec::with_capacity(bytes.len() / Self::STEP + 1);
        let (mut line, mut start) = (0u32, 0u32);
        for (k, chunk) in bytes.chunks(Self::STEP).enumerate() {
            samples.push((line, start));
            let base = k * Self::STEP;
            for (i, b) in chunk.iter().enumerate() {
                if *b == b'\n' {
                    line = line.saturating_add(1);
                    start = (base + i + 1) as u32;
                }
            }
        }
        samples.push((line, start));
        LineIndex { samples }
    }

    /// 0-based line and the offset where it starts.
    fn find(&self, text: &str, offset: usize) -> (u32, usize) {
        let k = (offset / Self::STEP).min(self.samples.len() - 1);
        let (mut line, start) = self.samples[k];
        let mut start = start as usize;
        let from = (k * Self::STEP).min(offset);
        for (i, b) in text.as_bytes()[from..offset].iter().enumerate() {
            if *b == b'\n' {
                line += 1;
                start = from + i + 1;
            }
        }
        (line, start)
    }
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

    pub(crate) fn segment(&self, at: usize) -> Option<&Segment> {
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
        let index = {
            let mut cache = self.line_index.borrow_mut();
            if cache.len() < self.files.len() {
                cache.resize(self.files.len(), None);
            }
            cache[file]
                .get_or_insert_with(|| std::rc::Rc::new(LineIndex::new(&f.text)))
                .clone()
        };
        let (line, start) = index.find(&f.text, offset);
        (line + 1, (offset - start + 1) as u32)
    }
}
