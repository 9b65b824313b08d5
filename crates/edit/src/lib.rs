//! The edit engine: every rewrite is a set of span replacements on the original text
//! (pvl.md §9.2). Text outside all edits is copied byte for byte, comments included.

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

use front::span::Span;
use std::fmt;

/// One replacement of the byte range `span` by `text`. An empty span inserts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub lo: usize,
    pub hi: usize,
    pub text: String,
}

impl Edit {
    pub fn replace(span: Span, text: impl Into<String>) -> Edit {
        Edit { lo: span.start(), hi: span.end(), text: text.into() }
    }

    pub fn insert(at: usize, text: impl Into<String>) -> Edit {
        Edit { lo: at, hi: at, text: text.into() }
    }

    pub fn delete(span: Span) -> Edit {
        Edit::replace(span, "")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditError {
    Overlap { first: (usize, usize), second: (usize, usize) },
    OutOfBounds { lo: usize, hi: usize, len: usize },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Overlap { first, second } => write!(
                f,
                "internal error: overlapping edits {}..{} and {}..{}",
                first.0, first.1, second.0, second.1
            ),
            EditError::OutOfBounds { lo, hi, len } => {
                write!(f, "internal error: edit {lo}..{hi} outside a text of {len} bytes")
            }
        }
    }
}

impl std::error::Error for EditError {}

/// A set of non-overlapping edits over one text.
#[derive(Clone, Debug, Default)]
pub struct EditSet {
    edits: Vec<Edit>,
}

impl EditSet {
    pub fn new() -> EditSet {
        EditSet::default()
    }

    pub fn push(&mut self, e: Edit) {
        self.edits.push(e);
    }

    pub fn replace(&mut self, span: Span, text: impl Into<String>) {
        self.push(Edit::replace(span, text));
    }

    pub fn insert(&mut self, at: usize, text: impl Into<String>) {
        self.push(Edit::insert(at, text));
    }

    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    pub fn len(&self) -> usize {
        self.edits.len()
    }

    pub fn extend(&mut self, other: EditSet) {
        self.edits.extend(other.edits);
    }

    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    /// Where byte `off` of the original text ends up after applying the edits; `None` if it lies
    /// strictly inside a replaced range.
    pub fn map_offset(&self, off: usize) -> Option<usize> {
        let mut delta: isize = 0;
        for e in &self.edits {
            if e.hi <= off {
                delta += e.text.len() as isize - (e.hi - e.lo) as isize;
            } else if e.lo <= off && off < e.hi {
                // Inside a replaced range (or at its start, which the replacement consumes).
                return None;
            }
        }
        Some((off as isize + delta).max(0) as usize)
    }

    /// The ranges of the text after [`EditSet::apply`] that the edits wrote, in order.
    pub fn written_ranges(&self) -> Vec<(usize, usize)> {
        let mut sorted: Vec<(usize, &Edit)> = self.edits.iter().enumerate().collect();
        sorted.sort_by_key(|(i, e)| (e.lo, e.hi, *i));
        let mut delta: isize = 0;
        let mut out = Vec::with_capacity(sorted.len());
        for (_, e) in sorted {
            let lo = (e.lo as isize + delta) as usize;
            out.push((lo, lo + e.text.len()));
            delta += e.text.len() as isize - (e.hi - e.lo) as isize;
        }
        out
    }

    /// Apply to `src`. Edits must not overlap; insertions at the same offset keep their order.
    pub fn apply(&self, src: &str) -> Result<String, EditError> {
        let mut sorted: Vec<(usize, &Edit)> = self.edits.iter().enumerate().collect();
        sorted.sort_by_key(|(i, e)| (e.lo, e.hi, *i));
        let cuda = front::looks_like_cuda(src);
        if cuda {
            // Rewrites of the parts of a CUDA kernel's form that have no text (the clauses
            // `front::cuda::lower` derives): the user's own clause is rewritten, and the form
            // is derived again from the output.
            sorted.retain(|(_, e)| !(e.lo == 0 && e.hi == 0));
        }
        for (_, e) in &sorted {
            if e.lo > e.hi
                || e.hi > src.len()
                || !src.is_char_boundary(e.lo)
                || !src.is_char_boundary(e.hi)
            {
                return Err(EditError::OutOfBounds { lo: e.lo, hi: e.hi, len: src.len() });
            }
        }
        for w in sorted.windows(2) {
            let (a, b) = (w[0].1, w[1].1);
            // Two insertions at one point are fine; anything else sharing bytes is not.
            if b.lo < a.hi || (a.lo == b.lo && a.lo != a.hi && b.lo != b.hi) {
                return Err(EditError::Overlap { first: (a.lo, a.hi), second: (b.lo, b.hi) });
            }
        }
        let mut out = String::with_capacity(src.len() + 64);
        let mut pos = 0;
        // Optimizations write PVL; in a C/CUDA file their annotations go into comments.
        for (_, e) in sorted {
            out.push_str(&src[pos..e.lo]);
            if cuda {
                out.push_str(&front::cuda::emit::adapt(src, e.lo, e.hi, &e.text));
            } else {
                out.push_str(&e.text);
            }
            pos = e.hi;
        }
        out.push_str(&src[pos..]);
        Ok(out)
    }
}

/// Layout facts of a file, used to make generated text look like its neighbours (pvl.md §9.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// One indentation unit (`"\t"` or some spaces).
    pub unit: String,
    /// `"\r\n"` if the file has any CRLF line, else `"\n"`.
    pub newline: &'static str,
}

impl Layout {
    pub fn detect(src: &str) -> Layout {
        let newline = if src.contains("\r\n") { "\r\n" } else { "\n" };
        let lines: Vec<&str> = src.lines().filter(|l| !l.trim().is_empty()).collect();
        let tabbed = lines.iter().filter(|l| l.starts_with('\t')).count();
        let spaced = lines.iter().filter(|l| l.starts_with(' ')).count();
        if tabbed > spaced {
            return Layout { unit: "\t".into(), newline };
        }
        // Most common positive difference between consecutive non-blank lines' indentation.
        let mut counts = std::collections::BTreeMap::new();
        let widths: Vec<usize> =
            lines.iter().map(|l| l.len() - l.trim_start_matches(' ').len()).collect();
        for w in widths.windows(2) {
            if w[1] > w[0] {
                *counts.entry(w[1] - w[0]).or_insert(0usize) += 1;
            }
        }
        let width =
            counts.iter().max_by_key(|(w, c)| (**c, std::cmp::Reverse(**w))).map_or(2, |(w, _)| *w);
        Layout { unit: " ".repeat(width), newline }
    }

    /// `n` indentation units.
    pub fn indent(&self, n: usize) -> String {
        self.unit.repeat(n)
    }
}

/// The indentation (leading spaces and tabs) of the line containing byte `off`.
pub fn indent_at(src: &str, off: usize) -> &str {
    let off = off.min(src.len());
    let start = src[..off].rfind('\n').map_or(0, |i| i + 1);
    let line = &src[start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// Byte offset of the start of the line containing `off`.
pub fn line_start(src: &str, off: usize) -> usize {
    let off = off.min(src.len());
    src[..off].rfind('\n').map_or(0, |i| i + 1)
}

/// Byte offset just after the line break ending the line containing `off` (or the text end).
pub fn line_end_incl(src: &str, off: usize) -> usize {
    let off = off.min(src.len());
    src[off..].find('\n').map_or(src.len(), |i| off + i + 1)
}

/// Whether `span` stands alone on its line(s): only whitespace before it and after it.
pub fn alone_on_line(src: &str, span: Span) -> bool {
    let ls = line_start(src, span.start());
    let le = line_end_incl(src, span.end());
    src[ls..span.start()].trim().is_empty() && src[span.end()..le].trim().is_empty()
}

/// Where code inserted at `at` goes: in a C/CUDA file, an offset inside an annotation comment
/// (a ghost statement `//@ assert …;` starts there) moves to the comment's start, or with
/// `after` to its end, so that the code stays code; elsewhere `at` itself.
pub fn code_point(src: &str, at: usize, after: bool) -> usize {
    if front::looks_like_cuda(src) {
        if let Some(c) = front::cuda::prep::prepare_comments(src)
            .into_iter()
            .find(|c| c.span.start() < at && at < c.span.end())
        {
            return if after { c.span.end() } else { c.span.start() };
        }
    }
    at
}

/// The span to delete to remove `span` (e.g. a consumed `gpuopt` statement): if it stands alone
/// on its line(s), the whole lines including indentation and line break; if more follows on its
/// line, the span and the spaces after it (so what follows takes its column); if it ends a line
/// after other text, the span and the spaces before it (so no line ends in spaces).
pub fn removal_span(src: &str, span: Span) -> Span {
    // In a C/CUDA file an annotation that is all of its comment (`//@ gpuopt …;`, `/*@ gpuopt …;
    // @*/`) goes with the comment.
    if front::looks_like_cuda(src) {
        if let Some(c) = front::cuda::prep::prepare_comments(src)
            .into_iter()
            .find(|c| c.body.contains(span) && c.body.text(src).trim() == span.text(src).trim())
        {
            return removal_span_plain(src, c.span);
        }
    }
    removal_span_plain(src, span)
}

fn removal_span_plain(src: &str, span: Span) -> Span {
    if alone_on_line(src, span) {
        return Span::new(line_start(src, span.start()), line_end_incl(src, span.end()));
    }
    let rest = &src[span.end()..line_end_incl(src, span.end())];
    let ws = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    if rest[ws..].trim().is_empty() {
        let before = &src[..span.start()];
        let back = before.len() - before.trim_end_matches([' ', '\t']).len();
        Span::new(span.start() - back, span.end())
    } else {
        Span::new(span.start(), span.end() + ws)
    }
}

/// Re-indent a multi-line `text`: every line after the first that starts with `from` gets that
/// prefix replaced by `to`; the first line is left as is (it continues a line at its target).
/// Blank lines stay blank (no trailing whitespace is generated).
pub fn reindent(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i == 0 {
            out.push_str(line);
            continue;
        }
        let body = line.trim_end_matches(['\n', '\r']);
        let eol = &line[body.len()..];
        if body.trim().is_empty() {
            out.push_str(eol);
        } else if let Some(rest) = body.strip_prefix(from) {
            out.push_str(to);
            out.push_str(rest);
            out.push_str(eol);
        } else {
            // Less indented than the block it came from (e.g. a comment at column 0): keep it.
            out.push_str(line);
        }
    }
    out
}

/// Indent every non-blank line of `text` with `prefix` and use `newline` between lines.
pub fn indent_lines(text: &str, prefix: &str, newline: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str(newline);
        }
        if !line.trim().is_empty() {
            out.push_str(prefix);
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_edit_set_is_identity() {
        let src = "class A {\r\n  // c\r\n}\n";
        assert_eq!(EditSet::new().apply(src).unwrap(), src);
    }

    #[test]
    fn replacements_apply_back_to_front() {
        let src = "a + b * c";
        let mut es = EditSet::new();
        es.replace(Span::new(0, 1), "x1");
        es.replace(Span::new(8, 9), "(c + 1)");
        es.insert(4, "");
        assert_eq!(es.apply(src).unwrap(), "x1 + b * (c + 1)");
    }

    #[test]
    fn overlap_is_an_error() {
        let mut es = EditSet::new();
        es.replace(Span::new(0, 3), "x");
        es.replace(Span::new(2, 4), "y");
        assert!(matches!(es.apply("abcdef"), Err(EditError::Overlap { .. })));
    }

    #[test]
    fn layout_detection() {
        assert_eq!(Layout::detect("a\n    b\n        c\n").unit, "    ");
        assert_eq!(Layout::detect("a\n\tb\n").unit, "\t");
        assert_eq!(Layout::detect("a\r\n  b\r\n").newline, "\r\n");
        assert_eq!(Layout::detect("x").unit, "  ");
    }

    #[test]
    fn removal_of_a_line() {
        let src = "  x;\n  gpuopt a;\n  y;\n";
        let sp = Span::new(7, 16);
        assert_eq!(sp.text(src), "gpuopt a;");
        let r = removal_span(src, sp);
        assert_eq!(r.text(src), "  gpuopt a;\n");
        // Followed on its line: the spaces after it go too, so what follows takes its column.
        let src = "  gpuopt a;  // why\n  y; gpuopt b;\n";
        assert_eq!(removal_span(src, Span::new(2, 11)).text(src), "gpuopt a;  ");
        assert!(!alone_on_line(src, Span::new(2, 11)));
        // Ending a line after code: the spaces before it go too.
        assert_eq!(removal_span(src, Span::new(25, 34)).text(src), " gpuopt b;");
    }

    #[test]
    fn reindent_block() {
        let t = "{\n    a;\n\n    b;\n  }";
        assert_eq!(reindent(t, "  ", "      "), "{\n        a;\n\n        b;\n      }");
    }
}
