//! Byte spans into the source text.

use std::fmt;
use std::hash::{Hash, Hasher};

/// A half-open byte range `[lo, hi)` into the text a node was parsed from.
///
/// Equality and hashing deliberately ignore the position: every AST type derives `PartialEq`,
/// and we want that derived equality to be *structural* (`a[tid]` on line 3 equals `a[tid]` on
/// line 9). Transformations compare expressions this way all the time. When the position itself
/// matters, compare [`Span::range`] or use [`Span::same_place`].
#[derive(Clone, Copy, Default)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub const DUMMY: Span = Span { lo: 0, hi: 0 };

    pub fn new(lo: usize, hi: usize) -> Span {
        Span { lo: lo as u32, hi: hi as u32 }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.lo as usize..self.hi as usize
    }

    pub fn start(self) -> usize {
        self.lo as usize
    }

    pub fn end(self) -> usize {
        self.hi as usize
    }

    pub fn len(self) -> usize {
        (self.hi - self.lo) as usize
    }

    pub fn is_empty(self) -> bool {
        self.hi == self.lo
    }

    /// Whether this is [`Span::DUMMY`], the span of a node with no text of its own. (`==` on
    /// spans is always true, so that trees compare by shape: it cannot tell.)
    pub fn is_dummy(self) -> bool {
        self.lo == 0 && self.hi == 0
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    pub fn contains(self, other: Span) -> bool {
        self.lo <= other.lo && other.hi <= self.hi
    }

    pub fn contains_offset(self, off: usize) -> bool {
        self.start() <= off && off < self.end()
    }

    /// Positional equality (the derived `==` is structural and always true).
    pub fn same_place(self, other: Span) -> bool {
        self.lo == other.lo && self.hi == other.hi
    }

    pub fn text(self, src: &str) -> &str {
        src.get(self.range()).unwrap_or("")
    }
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl Eq for Span {}

impl Hash for Span {
    fn hash<H: Hasher>(&self, _state: &mut H) {}
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.lo, self.hi)
    }
}

/// 1-based line and column (column in Unicode scalar values) of byte offsets.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i + 1);
            }
        }
        LineIndex { starts }
    }

    /// 1-based line number of a byte offset.
    pub fn line(&self, off: usize) -> usize {
        match self.starts.binary_search(&off) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Byte offset where 1-based `line` starts, if it exists.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 1-based (line, column); the column counts chars.
    pub fn line_col(&self, src: &str, off: usize) -> (usize, usize) {
        let line = self.line(off);
        let start = self.starts[line - 1];
        let off = off.min(src.len());
        let col = src.get(start..off).map(|s| s.chars().count()).unwrap_or(off - start);
        (line, col + 1)
    }
}
